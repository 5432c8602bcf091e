//! [`RedisTokenStore`]: tokens in a Redis server, so that every replica of
//! a host uses what one of them was granted.

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use url::Url;

use super::sealed::SealingKey;
use super::store::{
    binding_key, origin, tokens_from_json, tokens_to_json, RefreshLock, MAX_TOKEN_FILE_BYTES,
};
use super::{AuthError, TokenStore, Tokens};
use crate::cache::redis::{bounded, now_ms, RedisFailure, DEFAULT_REDIS_TIMEOUT};
use crate::files::hex_name;
use crate::store_record::{self, Kind, Unreadable};

/// How long tokens with a refresh token are kept after their last save
/// when nothing says otherwise: 30 days.
pub const DEFAULT_REFRESH_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);

/// How long a replica holds the refresh lock of an origin unless it
/// releases it first (see [`RedisTokenStore::with_refresh_lock`]): 15 s.
pub const DEFAULT_REFRESH_LOCK: Duration = Duration::from_secs(15);

/// How often a replica waiting for another's refresh looks again.
const LOCK_POLL: Duration = Duration::from_millis(50);

/// Releases a lock only when it still holds this holder's token.
const RELEASE: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

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
/// Each value starts with a format tag (`mcs`, the format version, a kind
/// byte). Without a key the rest is the tokens themselves: give the Redis
/// server the care a secret store needs (a password, TLS with
/// `rediss://`, no persistence others can read), or give the store a key
/// ([`encrypt_with`](Self::encrypt_with)) and the values are sealed with
/// AES-256-GCM.
///
/// # Refreshing once across replicas
///
/// A refresh takes a lock first, `{prefix}:refresh-lock:{sha256(origin)}`
/// (`SET … NX PX`, [`DEFAULT_REFRESH_LOCK`] or
/// [`with_refresh_lock`](Self::with_refresh_lock)), released only by its
/// holder (a Lua script compares its random token). A replica that finds
/// it taken waits (polling, at most the lock's lifetime and a second) and
/// then reads the tokens again: the holder's refreshed tokens are used,
/// and the same refresh token is never sent twice, which an authorization
/// server that revokes on reuse would answer by revoking both.
///
/// # Faults
///
/// Each command is bounded by 250 ms and each operation by
/// [`DEFAULT_REDIS_TIMEOUT`](crate::cache::DEFAULT_REDIS_TIMEOUT) (or
/// [`with_timeout`](Self::with_timeout)): a paused, restarting or absent
/// server fails the call in time with [`AuthError::Store`] whose
/// `io::ErrorKind` says why (`TimedOut`, `ConnectionAborted`, or
/// `StorageFull` for a server at `maxmemory` with `noeviction`); tokens
/// that cannot be written are an error of that save, never a silent loss.
/// Errors never quote a token, a stored value or the URL.
///
/// Tokens read back are checked before use: a value of a newer format
/// version, that is not this crate's, over 64 KiB, for another origin,
/// sealed when this store has no key, not sealed when it has one, or that
/// does not open with its key (another key, moved from another key name,
/// tampered with) is a miss, with a `tracing` warning that names only the
/// reason. A client's issuer binding that cannot be read so is an error
/// instead: going on could show the client's secret to another server.
#[derive(Clone)]
pub struct RedisTokenStore {
    connection: ConnectionManager,
    prefix: String,
    refresh_lifetime: Duration,
    timeout: Duration,
    refresh_lock: Duration,
    key: Option<Arc<SealingKey>>,
}

impl fmt::Debug for RedisTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTokenStore")
            .field("prefix", &self.prefix)
            .field("refresh_lifetime", &self.refresh_lifetime)
            .field("timeout", &self.timeout)
            .field("refresh_lock", &self.refresh_lock)
            .field("encrypted", &self.key.is_some())
            .finish_non_exhaustive()
    }
}

fn failed(e: RedisFailure) -> AuthError {
    AuthError::Store(io::Error::new(e.io_kind(), format!("the Redis token store failed: {e}")))
}

impl RedisTokenStore {
    /// Connects to the Redis server at `url`, as
    /// [`RedisCache::connect`](crate::cache::RedisCache::connect) does.
    pub async fn connect(url: &str) -> Result<RedisTokenStore, crate::Error> {
        Ok(RedisTokenStore {
            connection: crate::cache::redis::connect(url).await?,
            prefix: "mcp-stack".into(),
            refresh_lifetime: DEFAULT_REFRESH_LIFETIME,
            timeout: DEFAULT_REDIS_TIMEOUT,
            refresh_lock: DEFAULT_REFRESH_LOCK,
            key: None,
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

    /// Bounds each operation (default
    /// [`DEFAULT_REDIS_TIMEOUT`](crate::cache::DEFAULT_REDIS_TIMEOUT)).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a replica may hold the refresh lock of an origin (default
    /// [`DEFAULT_REFRESH_LOCK`]): longer than a refresh takes (one token
    /// request, and discovery on a replica's first), short enough that a
    /// replica that dies holding it delays the others little.
    pub fn with_refresh_lock(mut self, lifetime: Duration) -> Self {
        self.refresh_lock = lifetime;
        self
    }

    /// Encrypts tokens (and client issuer bindings) at rest with
    /// AES-256-GCM under `key`, 32 bytes the host supplies (from its secret
    /// manager; every replica gives the same key). Each value gets a fresh
    /// random nonce and is bound to its key name, so a value copied under
    /// another key does not open. Values that are not sealed, or sealed
    /// under another key, are misses (tokens) or errors (issuer bindings),
    /// never quoted: changing the key costs one authorization.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), mcp_stack::Error> {
    /// use mcp_stack::auth::RedisTokenStore;
    /// let key: [u8; 32] = [0x42; 32]; // from the host's secret manager
    /// let store = RedisTokenStore::connect("redis://127.0.0.1:6379").await?.encrypt_with(&key);
    /// # Ok(()) }
    /// ```
    pub fn encrypt_with(mut self, key: &[u8; 32]) -> Self {
        self.key = Some(Arc::new(SealingKey::new(key)));
        self
    }

    fn key(&self, server: &Url) -> String {
        format!("{}:tokens:{}", self.prefix, hex_name(&origin(server)))
    }

    fn client_issuer_key(&self, server: &Url, client_id: &str) -> String {
        format!("{}:client-issuer:{}", self.prefix, hex_name(&binding_key(server, client_id)))
    }

    fn lock_key(&self, server: &Url) -> String {
        format!("{}:refresh-lock:{}", self.prefix, hex_name(&origin(server)))
    }

    /// When Redis may forget `tokens` (milliseconds since the epoch).
    fn expires_ms(&self, tokens: &Tokens) -> u64 {
        let at = match (&tokens.refresh_token, tokens.expires_at) {
            (None, Some(at)) => at,
            _ => SystemTime::now() + self.refresh_lifetime,
        };
        at.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
    }

    /// The value stored under `name` for `payload`: sealed when the store
    /// has a key.
    fn encode(
        &self,
        name: &str,
        (plain, sealed): (Kind, Kind),
        payload: &[u8],
    ) -> Result<Vec<u8>, AuthError> {
        match &self.key {
            None => Ok(store_record::wrap(plain, payload)),
            Some(key) => {
                let sealed_payload = key
                    .seal(&associated(sealed, name), payload)
                    .ok_or_else(|| AuthError::Store(io::Error::other("the system's random source failed")))?;
                Ok(store_record::wrap(sealed, &sealed_payload))
            }
        }
    }

    /// The payload of the value under `name`, if this store may trust it.
    fn decode(&self, name: &str, (plain, sealed): (Kind, Kind), value: &[u8]) -> Result<Vec<u8>, Unreadable> {
        // A sealed value is the plaintext, a nonce and a tag.
        let (kind, payload) = store_record::open(value, MAX_TOKEN_FILE_BYTES as usize + 64)?;
        match (&self.key, kind) {
            (None, k) if k == plain => Ok(payload.to_vec()),
            (None, k) if k == sealed => Err(Unreadable::Sealed),
            (Some(_), k) if k == plain => Err(Unreadable::NotSealed),
            (Some(key), k) if k == sealed => key.open(&associated(sealed, name), payload),
            _ => Err(Unreadable::OtherKind),
        }
    }
}

/// What a sealed value is bound to: its header and its key name.
fn associated(kind: Kind, name: &str) -> Vec<u8> {
    let mut aad = store_record::header(kind).to_vec();
    aad.extend_from_slice(name.as_bytes());
    aad
}

const TOKENS: (Kind, Kind) = (Kind::Tokens, Kind::SealedTokens);
const CLIENT_ISSUER: (Kind, Kind) = (Kind::ClientIssuer, Kind::SealedClientIssuer);

/// A refresh lock held in Redis: released by a script that deletes it only
/// while it still holds this holder's random token.
struct RedisRefreshLock {
    connection: ConnectionManager,
    key: String,
    token: String,
    timeout: Duration,
}

impl fmt::Debug for RedisRefreshLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisRefreshLock").finish_non_exhaustive()
    }
}

#[async_trait]
impl RefreshLock for RedisRefreshLock {
    async fn release(self: Box<Self>) {
        let RedisRefreshLock { mut connection, key, token, timeout } = *self;
        let released = bounded(timeout, async {
            redis::cmd("EVAL")
                .arg(RELEASE)
                .arg(1)
                .arg(&key)
                .arg(&token)
                .query_async::<i64>(&mut connection)
                .await
        })
        .await;
        if let Err(e) = released {
            // It expires on its own.
            tracing::debug!(target: "mcp_stack::auth", "could not release the refresh lock: {e}");
        }
    }
}

#[async_trait]
impl TokenStore for RedisTokenStore {
    async fn load(&self, server: &Url) -> Result<Option<Tokens>, AuthError> {
        let mut connection = self.connection.clone();
        let name = self.key(server);
        let body: Option<Vec<u8>> = match bounded(self.timeout, async {
            redis::cmd("GET").arg(&name).query_async(&mut connection).await
        })
        .await
        {
            Ok(body) => body,
            Err(e) if e.is_wrong_type() => {
                store_record::skipped("token store", Unreadable::OtherKind);
                None
            }
            Err(e) => return Err(failed(e)),
        };
        let Some(body) = body else { return Ok(None) };
        let tokens = self
            .decode(&name, TOKENS, &body)
            .and_then(|json| tokens_from_json(&json, &origin(server)).map_err(|_| Unreadable::Invalid));
        match tokens {
            Ok(tokens) => Ok(Some(tokens)),
            Err(why) => {
                store_record::skipped("token store", why);
                Ok(None)
            }
        }
    }

    async fn save(&self, server: &Url, tokens: &Tokens) -> Result<(), AuthError> {
        let expires = self.expires_ms(tokens);
        if expires <= now_ms() {
            // Already unusable: nothing to keep, nor to leave behind.
            return self.remove(server).await;
        }
        let name = self.key(server);
        let body = self.encode(&name, TOKENS, &tokens_to_json(server, tokens)?)?;
        let mut connection = self.connection.clone();
        bounded(self.timeout, async {
            redis::cmd("SET")
                .arg(&name)
                .arg(body)
                .arg("PXAT")
                .arg(expires)
                .query_async::<()>(&mut connection)
                .await
        })
        .await
        .map_err(failed)
    }

    async fn remove(&self, server: &Url) -> Result<(), AuthError> {
        let mut connection = self.connection.clone();
        let name = self.key(server);
        bounded(self.timeout, async { redis::cmd("DEL").arg(&name).query_async::<()>(&mut connection).await })
            .await
            .map_err(failed)
    }

    async fn load_client_issuer(&self, server: &Url, client_id: &str) -> Result<Option<String>, AuthError> {
        let mut connection = self.connection.clone();
        let name = self.client_issuer_key(server, client_id);
        let body: Option<Vec<u8>> =
            bounded(self.timeout, async { redis::cmd("GET").arg(&name).query_async(&mut connection).await })
                .await
                .map_err(failed)?;
        let Some(body) = body else { return Ok(None) };
        let unreadable = |why: Unreadable| {
            AuthError::Store(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the stored client binding is {why}"),
            ))
        };
        let json = self.decode(&name, CLIENT_ISSUER, &body).map_err(unreadable)?;
        let wire: serde_json::Value =
            serde_json::from_slice(&json).map_err(|_| unreadable(Unreadable::Invalid))?;
        if wire["origin"] != origin(server).as_str() || wire["clientId"] != client_id {
            return Err(AuthError::Store(io::Error::new(
                io::ErrorKind::InvalidData,
                "the stored client binding is for another client",
            )));
        }
        Ok(wire["issuer"].as_str().map(str::to_owned))
    }

    async fn save_client_issuer(&self, server: &Url, client_id: &str, issuer: &str) -> Result<(), AuthError> {
        let json = serde_json::json!({ "origin": origin(server), "clientId": client_id, "issuer": issuer });
        let name = self.client_issuer_key(server, client_id);
        let body = self.encode(&name, CLIENT_ISSUER, json.to_string().as_bytes())?;
        let mut connection = self.connection.clone();
        bounded(self.timeout, async {
            redis::cmd("SET").arg(&name).arg(body).query_async::<()>(&mut connection).await
        })
        .await
        .map_err(failed)
    }

    async fn lock_refresh(&self, server: &Url) -> Result<Option<Box<dyn RefreshLock>>, AuthError> {
        let mut random = [0u8; 16];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut random)
            .map_err(|_| AuthError::Store(io::Error::other("the system's random source failed")))?;
        let token: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let key = self.lock_key(server);
        let ttl_ms = self.refresh_lock.as_millis().max(1) as u64;
        // Past the lock's lifetime a holder's lock is gone, released or not.
        let give_up = tokio::time::Instant::now() + self.refresh_lock + Duration::from_secs(1);
        let mut connection = self.connection.clone();
        loop {
            let taken: redis::Value = bounded(self.timeout, async {
                redis::cmd("SET")
                    .arg(&key)
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async(&mut connection)
                    .await
            })
            .await
            .map_err(failed)?;
            if matches!(taken, redis::Value::Okay) {
                let lock = RedisRefreshLock { connection, key, token, timeout: self.timeout };
                return Ok(Some(Box::new(lock)));
            }
            if tokio::time::Instant::now() + LOCK_POLL > give_up {
                return Err(AuthError::Store(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "another replica held the refresh lock past its lifetime",
                )));
            }
            tokio::time::sleep(LOCK_POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_under_their_name_and_key() {
        // The encoding alone, without a server: a store needs a connection,
        // so these are the functions it calls.
        let key = SealingKey::new(&[1; 32]);
        let name = "mcp-stack:tokens:aa";
        let sealed = key.seal(&associated(Kind::SealedTokens, name), b"{\"t\":\"SECRET\"}").unwrap();
        assert_eq!(key.open(&associated(Kind::SealedTokens, name), &sealed).unwrap(), b"{\"t\":\"SECRET\"}");
        assert!(key.open(&associated(Kind::SealedTokens, "mcp-stack:tokens:bb"), &sealed).is_err());
        assert!(key.open(&associated(Kind::SealedClientIssuer, name), &sealed).is_err());
    }
}
