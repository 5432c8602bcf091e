//! [`RedisTokenStore`]: tokens in a Redis server, so that every replica of
//! a host uses what one of them was granted.

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use std::fmt;
use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use url::Url;

use super::store::{binding_key, origin, tokens_from_json, tokens_to_json, MAX_TOKEN_FILE_BYTES};
use super::{AuthError, TokenStore, Tokens};
use crate::error::normalize_message;
use crate::files::hex_name;

/// How long tokens with a refresh token are kept after their last save
/// when nothing says otherwise: 30 days.
pub const DEFAULT_REFRESH_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);

/// A [`TokenStore`] in a Redis server (features `oauth` and `redis`): the
/// tokens one replica of a host was granted are the ones every replica
/// sends, so a gateway behind a load balancer authorizes once, not once per
/// replica.
///
/// # Layout
///
/// One string per server origin at `{prefix}:tokens:{sha256(origin)}`,
/// holding the same JSON a [`FileStore`](super::FileStore) file does (it
/// names its origin, and is refused for another). Redis expires it when it
/// can no longer be used: at the access token's expiry when there is no
/// refresh token, else [`DEFAULT_REFRESH_LIFETIME`] (or
/// [`with_refresh_lifetime`](Self::with_refresh_lifetime)) after the last
/// save, since a refresh token's own lifetime is not said. A
/// pre-registered client's binding to its issuer is
/// `{prefix}:client-issuer:{sha256(origin, client id)}`, kept without
/// expiry, as the file store keeps it.
///
/// The values are the tokens themselves: give the Redis server the care a
/// secret store needs (a password, TLS with `rediss://`, no persistence
/// others can read). Errors never quote a token or the URL. Each command is
/// bounded by 250 ms.
///
/// Two replicas that refresh the same tokens at the same moment both ask
/// the authorization server; one rotation wins the store. An authorization
/// server that revokes a rotated refresh token on reuse then makes the
/// other replica authorize again.
#[derive(Clone)]
pub struct RedisTokenStore {
    connection: ConnectionManager,
    prefix: String,
    refresh_lifetime: Duration,
}

impl fmt::Debug for RedisTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTokenStore")
            .field("prefix", &self.prefix)
            .field("refresh_lifetime", &self.refresh_lifetime)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> AuthError {
    AuthError::Store(io::Error::other(format!(
        "the Redis token store failed: {}",
        normalize_message(&e.to_string(), 256)
    )))
}

impl RedisTokenStore {
    /// Connects to the Redis server at `url`, as
    /// [`RedisCache::connect`](crate::cache::RedisCache::connect) does.
    pub async fn connect(url: &str) -> Result<RedisTokenStore, crate::Error> {
        Ok(RedisTokenStore {
            connection: crate::cache::redis::connect(url).await?,
            prefix: "mcp-stack".into(),
            refresh_lifetime: DEFAULT_REFRESH_LIFETIME,
        })
    }

    /// Keys start with `prefix` and a colon instead of `mcp-stack:`.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long tokens with a refresh token are kept after their last
    /// save (the authorization server's refresh token lifetime, when known).
    pub fn with_refresh_lifetime(mut self, lifetime: Duration) -> Self {
        self.refresh_lifetime = lifetime;
        self
    }

    fn key(&self, server: &Url) -> String {
        format!("{}:tokens:{}", self.prefix, hex_name(&origin(server)))
    }

    fn client_issuer_key(&self, server: &Url, client_id: &str) -> String {
        format!("{}:client-issuer:{}", self.prefix, hex_name(&binding_key(server, client_id)))
    }

    /// When Redis may forget `tokens` (milliseconds since the epoch).
    fn expires_ms(&self, tokens: &Tokens) -> u64 {
        let at = match (&tokens.refresh_token, tokens.expires_at) {
            (None, Some(at)) => at,
            _ => SystemTime::now() + self.refresh_lifetime,
        };
        at.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
    }
}

#[async_trait]
impl TokenStore for RedisTokenStore {
    async fn load(&self, server: &Url) -> Result<Option<Tokens>, AuthError> {
        let mut connection = self.connection.clone();
        let body: Option<Vec<u8>> =
            redis::cmd("GET").arg(self.key(server)).query_async(&mut connection).await.map_err(failed)?;
        let Some(body) = body else { return Ok(None) };
        if body.len() as u64 > MAX_TOKEN_FILE_BYTES {
            return Err(AuthError::Store(io::Error::new(
                io::ErrorKind::InvalidData,
                "stored tokens too large",
            )));
        }
        tokens_from_json(&body, &origin(server)).map(Some).map_err(AuthError::Store)
    }

    async fn save(&self, server: &Url, tokens: &Tokens) -> Result<(), AuthError> {
        let body = tokens_to_json(server, tokens)?;
        let expires = self.expires_ms(tokens);
        let mut connection = self.connection.clone();
        let now = crate::cache::redis::now_ms();
        if expires <= now {
            // Already unusable: nothing to keep, nor to leave behind.
            return self.remove(server).await;
        }
        let () = redis::cmd("SET")
            .arg(self.key(server))
            .arg(body)
            .arg("PXAT")
            .arg(expires)
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn remove(&self, server: &Url) -> Result<(), AuthError> {
        let mut connection = self.connection.clone();
        let () =
            redis::cmd("DEL").arg(self.key(server)).query_async(&mut connection).await.map_err(failed)?;
        Ok(())
    }

    async fn load_client_issuer(&self, server: &Url, client_id: &str) -> Result<Option<String>, AuthError> {
        let mut connection = self.connection.clone();
        let key = self.client_issuer_key(server, client_id);
        let body: Option<Vec<u8>> =
            redis::cmd("GET").arg(key).query_async(&mut connection).await.map_err(failed)?;
        let Some(body) = body.filter(|b| b.len() as u64 <= MAX_TOKEN_FILE_BYTES) else { return Ok(None) };
        let wire: serde_json::Value = serde_json::from_slice(&body).map_err(|_| {
            AuthError::Store(io::Error::new(io::ErrorKind::InvalidData, "stored client binding"))
        })?;
        if wire["origin"] != origin(server).as_str() || wire["clientId"] != client_id {
            return Err(AuthError::Store(io::Error::new(
                io::ErrorKind::InvalidData,
                "the stored client binding is for another client",
            )));
        }
        Ok(wire["issuer"].as_str().map(str::to_owned))
    }

    async fn save_client_issuer(&self, server: &Url, client_id: &str, issuer: &str) -> Result<(), AuthError> {
        let body = serde_json::json!({ "origin": origin(server), "clientId": client_id, "issuer": issuer });
        let mut connection = self.connection.clone();
        let () = redis::cmd("SET")
            .arg(self.client_issuer_key(server, client_id))
            .arg(body.to_string())
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        Ok(())
    }
}
