//! Where the last fingerprint of each app is kept between runs, so that an
//! app that changed while the host was not running is reported as drift
//! too: the [`AppFingerprintStore`] trait and [`FileAppFingerprintStore`].
//!
//! A binding remembers the apps it read in its own memory (see
//! [`Binding::read_app`](crate::Binding::read_app)); with a store set on
//! its [`Definition::app_fingerprint_store`](crate::Definition::app_fingerprint_store),
//! its first read of an app is compared with the fingerprint the store
//! kept for the same server and URI (by an earlier binding, process or
//! run), and every new fingerprint is saved.
//!
//! The server is named by a key derived from the transport's endpoint
//! digest (the whole URL of an HTTP server; the program, arguments,
//! directory and environment of a stdio one), never by the binding's name,
//! which two configurations may give to two different servers. A transport
//! that names no endpoint keeps the fingerprints in memory only.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::canonical::{hex, Encoder};
use crate::error::{normalize_message, Error, FailureClass};
use crate::files::{json_reason, read_bounded, write_private};

/// The most fingerprints a [`FileAppFingerprintStore`] keeps (the least
/// recently saved go first).
pub const MAX_STORED_APP_FINGERPRINTS: usize = 512;
/// The largest fingerprint file read or written: 1 MiB.
pub const MAX_APP_FINGERPRINT_FILE_BYTES: u64 = 1024 * 1024;
/// The domain tag of a server key.
const SERVER_DOMAIN: &str = "mcp-stack/app-server/v1";

/// Keeps the last fingerprint of each app, per server and `ui://` URI,
/// between bindings, processes and runs.
///
/// `server` is an opaque key of 64 lowercase hex digits that identifies the
/// server (a SHA-256 derived from its transport's endpoint), never the
/// binding's name; `fingerprint` is an [`AppResource::fingerprint`]. A
/// store that fails
/// costs the comparison with the earlier run (a `tracing` warning), never
/// the read.
///
/// [`AppResource::fingerprint`]: crate::catalog::apps::AppResource::fingerprint
#[async_trait]
pub trait AppFingerprintStore: Send + Sync + fmt::Debug {
    /// The last fingerprint saved for the app `uri` of `server`, if any.
    async fn load(&self, server: &str, uri: &str) -> Result<Option<String>, Error>;
    /// Keeps `fingerprint` as the last one of the app `uri` of `server`.
    async fn save(&self, server: &str, uri: &str, fingerprint: &str) -> Result<(), Error>;
}

/// The key of the server a transport reaches, from its endpoint digest: a
/// domain-separated SHA-256, in hex, so that the file says nothing of the
/// digest other parts of the crate use.
pub(crate) fn server_key(endpoint_digest: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    let mut e = Encoder::new(&mut h);
    e.str(SERVER_DOMAIN);
    e.put(endpoint_digest);
    drop(e);
    hex(&h.finalize())
}

/// Fingerprints in one JSON file, of at most
/// [`MAX_STORED_APP_FINGERPRINTS`] entries and
/// [`MAX_APP_FINGERPRINT_FILE_BYTES`] bytes, the least recently saved
/// dropped first.
///
/// The file is readable by its owner alone (mode `0600`, its directory
/// created `0700` when missing) and replaced whole on every save (written
/// to a fresh file, then renamed), so a reader never sees half of it.
/// A file that is not one of these (not JSON, another shape, too large)
/// is read as empty with a `tracing` warning that names the file, never
/// its content, and is replaced by the next save; an entry that is not
/// well formed is skipped. Saves through one store are serialized; two
/// processes that save at once each write a whole file, and the last one
/// wins.
#[derive(Debug, Clone)]
pub struct FileAppFingerprintStore {
    path: PathBuf,
    lock: Arc<Mutex<()>>,
}

impl FileAppFingerprintStore {
    /// A store in the file `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileAppFingerprintStore { path: path.into(), lock: Arc::default() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The file's shape.
#[derive(Serialize, Deserialize, Default)]
struct FingerprintFile {
    version: u32,
    /// Oldest first.
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
struct Entry {
    server: String,
    uri: String,
    fingerprint: String,
}

impl Entry {
    fn is_well_formed(&self) -> bool {
        let hex64 =
            |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        hex64(&self.server)
            && hex64(&self.fingerprint)
            && self.uri.starts_with("ui://")
            && self.uri.len() <= super::MAX_APP_URI_BYTES
    }
}

fn store_error(e: io::Error) -> Error {
    Error::new(
        FailureClass::TransportClosed,
        format!("the app fingerprint store failed: {}", normalize_message(&e.to_string(), 256)),
    )
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> io::Result<T> + Send + 'static) -> Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| store_error(io::Error::other(e.to_string())))?
        .map_err(store_error)
}

/// The entries of the file at `path`: none when there is no file, or it
/// is not a fingerprint file (then a warning names the file and what is
/// wrong, never what it holds).
fn read_entries(path: &Path) -> io::Result<Vec<Entry>> {
    let body = match read_bounded(path, MAX_APP_FINGERPRINT_FILE_BYTES, "app fingerprint file") {
        Ok(Some(body)) => body,
        Ok(None) => return Ok(Vec::new()),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            tracing::warn!(
                file = %path.display(),
                "the app fingerprint file is over {MAX_APP_FINGERPRINT_FILE_BYTES} bytes: read as empty"
            );
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let file: FingerprintFile = match serde_json::from_slice(&body) {
        Ok(file) => file,
        Err(e) => {
            tracing::warn!(
                file = %path.display(),
                "the app fingerprint file is not one ({}): read as empty",
                json_reason(&e)
            );
            return Ok(Vec::new());
        }
    };
    let total = file.entries.len();
    let mut entries: Vec<Entry> = file.entries.into_iter().filter(Entry::is_well_formed).collect();
    if entries.len() < total {
        tracing::warn!(
            file = %path.display(),
            "skipped {} malformed entries of the app fingerprint file",
            total - entries.len()
        );
    }
    let over = entries.len().saturating_sub(MAX_STORED_APP_FINGERPRINTS);
    entries.drain(..over);
    Ok(entries)
}

/// `entries` as the file's bytes, dropping the oldest until it fits.
fn encode(mut entries: Vec<Entry>) -> io::Result<Vec<u8>> {
    let over = entries.len().saturating_sub(MAX_STORED_APP_FINGERPRINTS);
    entries.drain(..over);
    loop {
        let file = FingerprintFile { version: 1, entries };
        let body = serde_json::to_vec_pretty(&file).map_err(|e| io::Error::other(json_reason(&e)))?;
        if body.len() as u64 <= MAX_APP_FINGERPRINT_FILE_BYTES || file.entries.is_empty() {
            return Ok(body);
        }
        entries = file.entries;
        // At most MAX_APP_URI_BYTES per URI: a few rounds at worst.
        let half = entries.len().div_ceil(8);
        entries.drain(..half);
    }
}

#[async_trait]
impl AppFingerprintStore for FileAppFingerprintStore {
    async fn load(&self, server: &str, uri: &str) -> Result<Option<String>, Error> {
        let (path, server, uri) = (self.path.clone(), server.to_owned(), uri.to_owned());
        blocking(move || {
            let entries = read_entries(&path)?;
            Ok(entries.into_iter().rev().find(|e| e.server == server && e.uri == uri).map(|e| e.fingerprint))
        })
        .await
    }

    async fn save(&self, server: &str, uri: &str, fingerprint: &str) -> Result<(), Error> {
        let entry =
            Entry { server: server.to_owned(), uri: uri.to_owned(), fingerprint: fingerprint.to_owned() };
        if !entry.is_well_formed() {
            return Err(Error::new(
                FailureClass::InvalidArguments,
                "an app fingerprint is saved with a 64-digit hex server key and fingerprint and a ui:// URI",
            ));
        }
        let (path, lock) = (self.path.clone(), self.lock.clone());
        blocking(move || {
            let _turn = lock.lock().unwrap_or_else(|e| e.into_inner());
            let mut entries = read_entries(&path)?;
            entries.retain(|e| e.server != entry.server || e.uri != entry.uri);
            entries.push(entry);
            let body = encode(entries)?;
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => PathBuf::from("."),
            };
            write_private(&dir, &path, &body)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> String {
        server_key(&[n; 32])
    }

    fn print(n: usize) -> String {
        format!("{n:064x}")
    }

    #[test]
    fn server_keys_are_hex_and_differ_by_endpoint() {
        assert_eq!(key(1).len(), 64);
        assert_ne!(key(1), key(2));
        assert_eq!(key(1), key(1));
    }

    #[tokio::test]
    async fn keeps_the_last_fingerprint_per_server_and_uri() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileAppFingerprintStore::new(dir.path().join("sub").join("fingerprints.json"));
        assert_eq!(store.load(&key(1), "ui://a").await.unwrap(), None, "no file is no error");
        store.save(&key(1), "ui://a", &print(1)).await.unwrap();
        store.save(&key(2), "ui://a", &print(2)).await.unwrap();
        store.save(&key(1), "ui://a", &print(3)).await.unwrap();
        assert_eq!(store.load(&key(1), "ui://a").await.unwrap(), Some(print(3)));
        assert_eq!(store.load(&key(2), "ui://a").await.unwrap(), Some(print(2)));
        assert_eq!(store.load(&key(1), "ui://b").await.unwrap(), None);
        // Another store on the same file sees them: the next run.
        let again = FileAppFingerprintStore::new(store.path());
        assert_eq!(again.load(&key(1), "ui://a").await.unwrap(), Some(print(3)));
        let e = store.save("binding-name", "ui://a", &print(1)).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::InvalidArguments);
        // Nothing left over from the atomic writes.
        let names: Vec<_> =
            std::fs::read_dir(dir.path().join("sub")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["fingerprints.json"]);
    }

    #[tokio::test]
    async fn is_bounded_and_drops_the_least_recently_saved() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileAppFingerprintStore::new(dir.path().join("f.json"));
        let entry = |i: usize| Entry { server: key(1), uri: format!("ui://app/{i}"), fingerprint: print(i) };
        let full = (0..MAX_STORED_APP_FINGERPRINTS).map(entry).collect();
        std::fs::write(store.path(), encode(full).unwrap()).unwrap();
        store.save(&key(1), "ui://app/0", &print(100_000)).await.unwrap();
        for i in 0..3 {
            let i = MAX_STORED_APP_FINGERPRINTS + i;
            store.save(&key(1), &format!("ui://app/{i}"), &print(i)).await.unwrap();
        }
        // Saving app 0 again made it the newest: 1, 2 and 3 went.
        assert_eq!(store.load(&key(1), "ui://app/0").await.unwrap(), Some(print(100_000)));
        for gone in 1..=3 {
            assert_eq!(store.load(&key(1), &format!("ui://app/{gone}")).await.unwrap(), None);
        }
        assert_eq!(store.load(&key(1), "ui://app/4").await.unwrap(), Some(print(4)));
        let last = MAX_STORED_APP_FINGERPRINTS + 2;
        assert_eq!(store.load(&key(1), &format!("ui://app/{last}")).await.unwrap(), Some(print(last)));

        // Long URIs: the file stays within its byte bound, the newest kept.
        let long = format!("ui://{}", "x".repeat(super::super::MAX_APP_URI_BYTES - 8));
        let long_entry =
            |i: usize| Entry { server: key(2), uri: format!("{long}{i:03}"), fingerprint: print(i) };
        let body = encode((0..MAX_STORED_APP_FINGERPRINTS).map(long_entry).collect()).unwrap();
        assert!(body.len() as u64 <= MAX_APP_FINGERPRINT_FILE_BYTES, "{}", body.len());
        let kept: FingerprintFile = serde_json::from_slice(&body).unwrap();
        assert!(kept.entries.len() > MAX_STORED_APP_FINGERPRINTS / 4, "{}", kept.entries.len());
        assert!(kept.entries.last() == Some(&long_entry(MAX_STORED_APP_FINGERPRINTS - 1)));
    }

    #[tokio::test]
    async fn a_bad_file_reads_as_empty_and_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileAppFingerprintStore::new(dir.path().join("f.json"));
        for bad in [
            b"{not json \"secret-sentinel\"".to_vec(),
            br#"{"version":1,"entries":"secret-sentinel"}"#.to_vec(),
            vec![b' '; MAX_APP_FINGERPRINT_FILE_BYTES as usize + 1],
        ] {
            std::fs::write(store.path(), &bad).unwrap();
            assert_eq!(store.load(&key(1), "ui://a").await.unwrap(), None);
        }
        // One malformed entry costs only itself.
        let good = Entry { server: key(1), uri: "ui://a".into(), fingerprint: print(7) };
        let bad = Entry { server: "name".into(), uri: "ui://b".into(), fingerprint: print(8) };
        let file = FingerprintFile { version: 1, entries: vec![bad, good] };
        std::fs::write(store.path(), serde_json::to_vec(&file).unwrap()).unwrap();
        assert_eq!(store.load(&key(1), "ui://a").await.unwrap(), Some(print(7)));
        std::fs::write(store.path(), b"garbage").unwrap();
        store.save(&key(1), "ui://a", &print(9)).await.unwrap();
        assert_eq!(store.load(&key(1), "ui://a").await.unwrap(), Some(print(9)));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_file_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let store = FileAppFingerprintStore::new(dir.path().join("new").join("f.json"));
        store.save(&key(1), "ui://a", &print(1)).await.unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(store.path()), 0o600);
        assert_eq!(mode(&dir.path().join("new")), 0o700);
    }
}
