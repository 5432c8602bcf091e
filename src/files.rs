//! Private files the client keeps between runs (tokens, task records): read
//! back bounded, written whole or not at all, readable by their owner
//! alone.

use std::io::{self, Read as _, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A file's bytes, `None` when there is none; one over `max` bytes is
/// `InvalidData` naming `what`, never read past `max + 1`.
pub(crate) fn read_bounded(path: &Path, max: u64, what: &str) -> io::Result<Option<Vec<u8>>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut body = Vec::new();
    file.take(max + 1).read_to_end(&mut body)?;
    if body.len() as u64 > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{what} too large")));
    }
    Ok(Some(body))
}

/// Replaces `path` (in `dir`, created `0700` if missing) with `body`,
/// atomically: written to a fresh file of mode `0600`, synced, then
/// renamed over it. A failure leaves the old file as it was.
pub(crate) fn write_private(dir: &Path, path: &Path, body: &[u8]) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        builder.mode(0o700);
        options.mode(0o600);
    }
    builder.create(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp =
        dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    let result = options.open(&tmp).and_then(|mut file| {
        file.write_all(body)?;
        file.sync_all()
    });
    match result.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Removes `path`; one that is not there is no error.
pub(crate) fn remove(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The SHA-256 of `text`, in lowercase hex: a file name that says nothing
/// of what it is for.
pub(crate) fn hex_name(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A serde_json error, reduced to what cannot quote the input.
pub(crate) fn json_reason(err: &serde_json::Error) -> String {
    let category = match err.classify() {
        serde_json::error::Category::Io => "I/O error",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "wrong shape",
        serde_json::error::Category::Eof => "unexpected end",
    };
    format!("{category} at line {} column {}", err.line(), err.column())
}
