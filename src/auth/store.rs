//! Where tokens live between runs: the [`TokenStore`] trait, an in-memory
//! [`MemoryStore`] and a [`FileStore`].
//!
//! Tokens are kept per server origin (scheme, host and port): one MCP
//! server's tokens are never offered to another origin. The file store
//! writes one file per origin, named by the SHA-256 of the origin, readable
//! by the owner alone (mode `0600`, in a directory created `0700`),
//! replaced atomically (written to a fresh file, then renamed), and read
//! back only up to [`MAX_TOKEN_FILE_BYTES`].

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use url::Url;

use super::error::json_reason;
use super::{AuthError, Secret};
use crate::files::{hex_name, read_bounded, write_private};

/// The largest token file read.
pub(crate) const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// The tokens of one server origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The access token.
    pub access_token: Secret,
    /// `Bearer` (or `DPoP`).
    pub token_type: String,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<Secret>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (or requested, when the response did not say).
    pub scope: Option<String>,
    /// The issuer that issued them: tokens of another issuer are not reused.
    pub issuer: Option<String>,
}

impl Tokens {
    /// Whether these tokens may be sent after discovery named `issuer`:
    /// tokens are kept per authorization server, so those of another (or of
    /// an unrecorded) issuer are not.
    pub fn is_for(&self, issuer: &str) -> bool {
        self.issuer.as_deref() == Some(issuer)
    }

    /// Whether the access token is DPoP-bound (`token_type` `DPoP`,
    /// case-insensitive as RFC 6749 §5.1 says), so it is sent with the
    /// `DPoP` scheme and a proof (RFC 9449 §7.1).
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("DPoP")
    }

    /// Whether the access token expires within `margin` of `now` (false
    /// when no expiry is known).
    pub fn expires_within(&self, margin: Duration, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now + margin)
    }
}

/// Keeps tokens per server origin.
#[async_trait]
pub trait TokenStore: Send + Sync + fmt::Debug {
    /// The tokens for `server`'s origin, if any.
    async fn load(&self, server: &Url) -> Result<Option<Tokens>, AuthError>;
    /// Keeps `tokens` for `server`'s origin, replacing what was there.
    async fn save(&self, server: &Url, tokens: &Tokens) -> Result<(), AuthError>;
    /// Forgets the tokens for `server`'s origin (no error if there were none).
    async fn remove(&self, server: &Url) -> Result<(), AuthError>;

    /// The issuer that the pre-registered client `client_id` of `server`'s
    /// origin was bound to on its first use, if any. The binding outlives
    /// the tokens ([`TokenStore::remove`] keeps it): it is what keeps the
    /// client's secret from a different authorization server later.
    ///
    /// The default keeps nothing, so a store that does not implement it
    /// leaves the binding to the process that made it.
    async fn load_client_issuer(&self, server: &Url, client_id: &str) -> Result<Option<String>, AuthError> {
        let _ = (server, client_id);
        Ok(None)
    }

    /// Keeps the binding of the pre-registered client `client_id` of
    /// `server`'s origin to `issuer`.
    async fn save_client_issuer(&self, server: &Url, client_id: &str, issuer: &str) -> Result<(), AuthError> {
        let _ = (server, client_id, issuer);
        Ok(())
    }

    /// Waits, bounded, until this process alone may refresh `server`'s
    /// tokens among all that share the store, and holds that until the
    /// lock is released (or expires). After taking it, the flow reads the
    /// tokens again: when another replica refreshed meanwhile, its tokens
    /// are used and the token endpoint is not asked, so a refresh token is
    /// never sent twice (an authorization server that revokes a reused
    /// refresh token would otherwise send the loser back to a full
    /// authorization).
    ///
    /// `Ok(None)`: the store needs no lock (the default, right for a store
    /// one process owns). An error (the store unreachable, the wait over
    /// its bound) lets the flow refresh without the lock.
    async fn lock_refresh(&self, server: &Url) -> Result<Option<Box<dyn RefreshLock>>, AuthError> {
        let _ = server;
        Ok(None)
    }
}

/// A replica's hold on refreshing one origin's tokens, from
/// [`TokenStore::lock_refresh`]. Released explicitly after the refreshed
/// tokens are saved; a holder that dies without releasing loses it when
/// its store's lock expires.
#[async_trait]
pub trait RefreshLock: Send + Sync + fmt::Debug {
    /// Lets other replicas refresh again, if the lock is still this one's
    /// (a lock that expired and was taken by another is left alone).
    async fn release(self: Box<Self>);
}

/// The key of a client binding: the origin and the client id.
pub(super) fn binding_key(server: &Url, client_id: &str) -> String {
    format!("{}\n{client_id}", origin(server))
}

pub(super) fn origin(server: &Url) -> String {
    server.origin().ascii_serialization()
}

/// Tokens for this process only.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    tokens: Arc<Mutex<HashMap<String, Tokens>>>,
    client_issuers: Arc<Mutex<HashMap<String, String>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TokenStore for MemoryStore {
    async fn load(&self, server: &Url) -> Result<Option<Tokens>, AuthError> {
        Ok(self.tokens.lock().unwrap_or_else(|e| e.into_inner()).get(&origin(server)).cloned())
    }

    async fn save(&self, server: &Url, tokens: &Tokens) -> Result<(), AuthError> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner()).insert(origin(server), tokens.clone());
        Ok(())
    }

    async fn remove(&self, server: &Url) -> Result<(), AuthError> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner()).remove(&origin(server));
        Ok(())
    }

    async fn load_client_issuer(&self, server: &Url, client_id: &str) -> Result<Option<String>, AuthError> {
        let issuers = self.client_issuers.lock().unwrap_or_else(|e| e.into_inner());
        Ok(issuers.get(&binding_key(server, client_id)).cloned())
    }

    async fn save_client_issuer(&self, server: &Url, client_id: &str, issuer: &str) -> Result<(), AuthError> {
        let mut issuers = self.client_issuers.lock().unwrap_or_else(|e| e.into_inner());
        issuers.insert(binding_key(server, client_id), issuer.to_owned());
        Ok(())
    }
}

/// Tokens in files, one per server origin, in a directory the caller names.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store in `dir` (created `0700` on first save if missing).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The file that holds `server`'s tokens.
    pub fn path_for(&self, server: &Url) -> PathBuf {
        self.dir.join(format!("{}.json", hex_name(&origin(server))))
    }
}

/// A pre-registered client's binding to its issuer, in its own file beside
/// the tokens (removing tokens keeps it).
#[derive(Serialize, Deserialize)]
struct ClientIssuerFile {
    origin: String,
    client_id: String,
    issuer: String,
}

impl FileStore {
    fn client_issuer_path(&self, server: &Url, client_id: &str) -> PathBuf {
        self.dir.join(format!("client-{}.json", hex_name(&binding_key(server, client_id))))
    }
}

fn read_client_issuer(path: &Path, origin: &str, client_id: &str) -> io::Result<Option<String>> {
    let Some(body) = read_bounded(path, MAX_TOKEN_FILE_BYTES, "client binding file")? else {
        return Ok(None);
    };
    let wire: ClientIssuerFile = serde_json::from_slice(&body).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidData, format!("client binding file: {}", json_reason(&e)))
    })?;
    if wire.origin != origin || wire.client_id != client_id {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "client binding file is for another client"));
    }
    Ok(Some(wire.issuer))
}

/// The file format; private so that no other code serializes a secret.
#[derive(Serialize, Deserialize)]
struct TokenFile {
    origin: String,
    access_token: String,
    token_type: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_at: Option<u64>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    issuer: Option<String>,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> Result<T, AuthError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AuthError::Store(io::Error::other(e.to_string())))?
        .map_err(AuthError::Store)
}

fn read_file(path: &Path, origin: &str) -> io::Result<Option<Tokens>> {
    let Some(body) = read_bounded(path, MAX_TOKEN_FILE_BYTES, "token file")? else { return Ok(None) };
    tokens_from_json(&body, origin).map(Some)
}

/// The stored form of `server`'s tokens (the token file's, and a Redis
/// value's): JSON that names the origin it is for.
pub(super) fn tokens_to_json(server: &Url, tokens: &Tokens) -> Result<Vec<u8>, AuthError> {
    let wire = TokenFile {
        origin: origin(server),
        access_token: tokens.access_token.expose().to_owned(),
        token_type: tokens.token_type.clone(),
        refresh_token: tokens.refresh_token.as_ref().map(|s| s.expose().to_owned()),
        expires_at: tokens.expires_at.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_secs()),
        scope: tokens.scope.clone(),
        issuer: tokens.issuer.clone(),
    };
    serde_json::to_vec(&wire).map_err(|e| AuthError::Store(io::Error::other(json_reason(&e))))
}

/// Tokens read back from their stored form; refused when they are for
/// another origin than `origin`. The error never quotes them.
pub(super) fn tokens_from_json(body: &[u8], origin: &str) -> io::Result<Tokens> {
    let wire: TokenFile = serde_json::from_slice(body).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidData, format!("stored tokens: {}", json_reason(&e)))
    })?;
    if wire.origin != origin {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the stored tokens are for another origin"));
    }
    Ok(Tokens {
        access_token: Secret::new(wire.access_token),
        token_type: wire.token_type,
        refresh_token: wire.refresh_token.map(Secret::new),
        expires_at: wire.expires_at.map(|s| UNIX_EPOCH + Duration::from_secs(s)),
        scope: wire.scope,
        issuer: wire.issuer,
    })
}

#[async_trait]
impl TokenStore for FileStore {
    async fn load(&self, server: &Url) -> Result<Option<Tokens>, AuthError> {
        let (path, origin) = (self.path_for(server), origin(server));
        blocking(move || read_file(&path, &origin)).await
    }

    async fn save(&self, server: &Url, tokens: &Tokens) -> Result<(), AuthError> {
        let body = tokens_to_json(server, tokens)?;
        let (dir, path) = (self.dir.clone(), self.path_for(server));
        blocking(move || write_private(&dir, &path, &body)).await
    }

    async fn remove(&self, server: &Url) -> Result<(), AuthError> {
        let path = self.path_for(server);
        blocking(move || crate::files::remove(&path)).await
    }

    async fn load_client_issuer(&self, server: &Url, client_id: &str) -> Result<Option<String>, AuthError> {
        let path = self.client_issuer_path(server, client_id);
        let (origin, client_id) = (origin(server), client_id.to_owned());
        blocking(move || read_client_issuer(&path, &origin, &client_id)).await
    }

    async fn save_client_issuer(&self, server: &Url, client_id: &str, issuer: &str) -> Result<(), AuthError> {
        let wire = ClientIssuerFile {
            origin: origin(server),
            client_id: client_id.to_owned(),
            issuer: issuer.to_owned(),
        };
        let body =
            serde_json::to_vec(&wire).map_err(|e| AuthError::Store(io::Error::other(json_reason(&e))))?;
        let (dir, path) = (self.dir.clone(), self.client_issuer_path(server, client_id));
        blocking(move || write_private(&dir, &path, &body)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn tokens(access: &str) -> Tokens {
        Tokens {
            access_token: Secret::new(access),
            token_type: "Bearer".into(),
            refresh_token: Some(Secret::new("refresh-sentinel")),
            expires_at: Some(UNIX_EPOCH + Duration::from_secs(1_900_000_000)),
            scope: Some("read write".into()),
            issuer: Some("https://as.example.com".into()),
        }
    }

    async fn round_trip(store: &dyn TokenStore) {
        let a = url("https://mcp.example.com/mcp");
        let same_origin = url("https://mcp.example.com:443/other");
        let b = url("https://mcp.example.com:8443/mcp");
        assert_eq!(store.load(&a).await.unwrap(), None);
        store.save(&a, &tokens("access-sentinel-a")).await.unwrap();
        store.save(&b, &tokens("access-sentinel-b")).await.unwrap();
        assert_eq!(store.load(&same_origin).await.unwrap(), Some(tokens("access-sentinel-a")));
        assert_eq!(store.load(&b).await.unwrap(), Some(tokens("access-sentinel-b")));
        store.save(&a, &tokens("access-sentinel-new")).await.unwrap();
        assert_eq!(store.load(&a).await.unwrap().unwrap().access_token.expose(), "access-sentinel-new");
        store.remove(&a).await.unwrap();
        store.remove(&a).await.unwrap();
        assert_eq!(store.load(&a).await.unwrap(), None);
        assert!(store.load(&b).await.unwrap().is_some());
        let shown = format!("{store:?} {:?}", store.load(&b).await.unwrap());
        assert!(!shown.contains("sentinel"), "{shown}");

        // A client's binding to its issuer: per origin and client, and kept
        // when the tokens go.
        assert_eq!(store.load_client_issuer(&a, "app").await.unwrap(), None);
        store.save_client_issuer(&a, "app", "https://as.example.com").await.unwrap();
        store.remove(&a).await.unwrap();
        assert_eq!(
            store.load_client_issuer(&same_origin, "app").await.unwrap().as_deref(),
            Some("https://as.example.com")
        );
        assert_eq!(store.load_client_issuer(&a, "other-app").await.unwrap(), None);
        assert_eq!(store.load_client_issuer(&b, "app").await.unwrap(), None);
    }

    #[test]
    fn tokens_belong_to_their_issuer_and_know_their_expiry() {
        let t = tokens("a");
        assert!(t.is_for("https://as.example.com"));
        assert!(!t.is_for("https://other.example.com"));
        assert!(!Tokens { issuer: None, ..t.clone() }.is_for("https://as.example.com"));
        let at = t.expires_at.unwrap();
        assert!(!t.expires_within(Duration::from_secs(60), at - Duration::from_secs(61)));
        assert!(t.expires_within(Duration::from_secs(60), at - Duration::from_secs(60)));
        assert!(!Tokens { expires_at: None, ..t }.expires_within(Duration::MAX / 4, at));
    }

    #[tokio::test]
    async fn memory_store_keeps_tokens_per_origin() {
        round_trip(&MemoryStore::new()).await;
    }

    #[tokio::test]
    async fn file_store_keeps_tokens_per_origin() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("tokens"));
        round_trip(&store).await;
        // One file per origin and one per client binding, nothing left over
        // from the atomic writes.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("tokens"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(names.iter().filter(|n| n.starts_with("client-")).count(), 1, "{names:?}");
        assert!(!names.iter().any(|n| n.starts_with('.')), "{names:?}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn file_store_files_are_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("tokens"));
        let server = url("https://mcp.example.com/mcp");
        store.save(&server, &tokens("access-sentinel")).await.unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&store.path_for(&server)), 0o600);
        assert_eq!(mode(&dir.path().join("tokens")), 0o700);
    }

    #[tokio::test]
    async fn file_store_refuses_bad_files_without_quoting_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let server = url("https://mcp.example.com/mcp");
        let path = store.path_for(&server);
        std::fs::write(&path, br#"{"origin":"https://mcp.example.com","access_token":["access-sentinel"]}"#)
            .unwrap();
        let err = store.load(&server).await.unwrap_err();
        assert!(!format!("{err} {err:?}").contains("sentinel"));
        std::fs::write(
            &path,
            br#"{"origin":"https://evil.example.com","access_token":"t","token_type":"Bearer"}"#,
        )
        .unwrap();
        assert!(matches!(store.load(&server).await, Err(AuthError::Store(_))));
        std::fs::write(&path, vec![b' '; MAX_TOKEN_FILE_BYTES as usize + 1]).unwrap();
        assert!(matches!(store.load(&server).await, Err(AuthError::Store(_))));
    }
}
