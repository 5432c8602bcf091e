//! `UnixSocketFactory`: an MCP transport over a Unix-domain socket, written
//! only against the public API of `mcp_stack::transport`, as a model for a
//! transport of your own. Copy this file and change the stream.
//!
//! The wire is the stdio transport's: one JSON-RPC message per line
//! (newline-delimited JSON), in both directions, on one stream socket. A
//! server that speaks MCP over stdio can be put on a socket with `socat`:
//!
//! ```text
//! socat UNIX-LISTEN:/tmp/mcp.sock,fork EXEC:'npx -y @modelcontextprotocol/server-everything stdio'
//! ```
//!
//! What a transport must do, and how this one does it (the rules are in the
//! docs of `mcp_stack::transport`):
//!
//! - [`TransportFactory::connect`] makes one connection; the binding calls
//!   it at start and again after every loss. A socket that is missing or
//!   refuses is an error at once, of class `transport_closed`, naming the
//!   path and what went wrong; the binding decides whether to dial again.
//! - The [`MessageSender`] writes one message a line. A send that was
//!   cancelled halfway (its future dropped) leaves part of a line on the
//!   wire: the next send ends that line first, so the server skips one
//!   damaged line instead of reading two messages run together.
//! - The [`MessageReceiver`] reads lines with the crate's [`FrameReader`],
//!   which bounds each line by `ConnectConfig::max_frame_bytes` while it is
//!   read and hands back an over-long or non-UTF-8 line as
//!   `Inbound::Damaged` (the connection goes on). The end of the stream is
//!   `Ok(None)` after a close and a `transport_closed` error otherwise: a
//!   server that went away ends the calls in flight at once.
//! - [`MessageSender::close`] is bounded and idempotent: it half-closes the
//!   socket (the server reads the end of its input and exits) and tells the
//!   receiver to stop, which then returns `Ok(None)` and drops its half, so
//!   the socket is closed.

use async_trait::async_trait;
use mcp_stack::transport::{
    ConnectConfig, FrameReader, Inbound, MessageReceiver, MessageSender, RedactedOrigin, Transport,
    TransportFactory,
};
use mcp_stack::{Error, FailureClass};
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::sync::{Mutex, Notify};

/// How long [`MessageSender::close`] waits for the half-close to be written.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Makes connections to an MCP server listening on a Unix-domain socket.
#[derive(Debug, Clone)]
pub struct UnixSocketFactory {
    path: PathBuf,
    origin: RedactedOrigin,
}

impl UnixSocketFactory {
    /// A factory for the socket at `path`. Nothing is checked until a
    /// connection is made.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        // A path holds no credential, so it is shown whole.
        let origin = RedactedOrigin::from_redacted(format!("unix:{}", path.display()));
        UnixSocketFactory { path, origin }
    }
}

#[async_trait]
impl TransportFactory for UnixSocketFactory {
    fn kind(&self) -> &'static str {
        "unix"
    }

    // Every message travels on the one stream and carries no HTTP headers:
    // the defaults of `exchange_per_request` and `carries_headers` (false
    // for a kind that is not HTTP) are right, so they are not overridden.

    fn redacted_origin(&self) -> RedactedOrigin {
        self.origin.clone()
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let stream = UnixStream::connect(&self.path).await.map_err(|e| {
            let why = match e.kind() {
                ErrorKind::NotFound => "no socket at this path (is the server listening?)",
                ErrorKind::ConnectionRefused => "nothing listens on this socket",
                ErrorKind::PermissionDenied => "no permission to connect to this socket",
                _ => "could not connect",
            };
            Error::new(FailureClass::TransportClosed, format!("{}: {why}: {e}", self.origin))
                .with_binding(&config.binding)
                .with_source(e)
        })?;
        let (read, write) = stream.into_split();
        let shared = Arc::new(Shared {
            origin: self.origin.clone(),
            binding: config.binding.clone(),
            closing: AtomicBool::new(false),
            closed: Notify::new(),
        });
        Ok(Transport {
            sender: Arc::new(UnixSender {
                write: Mutex::new(Writer { half: Some(write), dirty: false }),
                shared: shared.clone(),
            }),
            receiver: Box::new(UnixReceiver {
                reader: Some(FrameReader::new(read, config.max_frame_bytes)),
                shared,
            }),
        })
    }
}

/// What the two halves of one connection share.
struct Shared {
    origin: RedactedOrigin,
    binding: String,
    /// Set by `close`: the end of the stream is then the clean end.
    closing: AtomicBool,
    /// Wakes a receiver waiting for a line when `close` is called.
    closed: Notify,
}

impl Shared {
    fn error(&self, detail: impl std::fmt::Display) -> Error {
        Error::new(FailureClass::TransportClosed, format!("{}: {detail}", self.origin))
            .with_binding(&self.binding)
    }
}

struct Writer {
    /// `None` once closed.
    half: Option<OwnedWriteHalf>,
    /// A write began and did not finish: the server may hold part of a line.
    dirty: bool,
}

struct UnixSender {
    write: Mutex<Writer>,
    shared: Arc<Shared>,
}

#[async_trait]
impl MessageSender for UnixSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        if message.contains('\n') {
            return Err(Error::new(
                FailureClass::Framing,
                "message contains a newline, which would split its line",
            )
            .with_binding(&self.shared.binding));
        }
        let mut writer = self.write.lock().await;
        let Writer { half, dirty } = &mut *writer;
        let Some(half) = half.as_mut() else {
            return Err(self.shared.error("transport closed"));
        };
        let failed = |e: std::io::Error| self.shared.error(format_args!("writing to the server failed: {e}"));
        if *dirty {
            half.write_all(b"\n").await.map_err(failed)?;
        }
        *dirty = true;
        let mut line = message.into_bytes();
        line.push(b'\n');
        half.write_all(&line).await.map_err(failed)?;
        *dirty = false;
        Ok(())
    }

    async fn close(&self) -> Result<(), Error> {
        self.shared.closing.store(true, Ordering::SeqCst);
        // Bounded: a send stuck on a full socket holds the lock, and the
        // receiver is told to stop whether or not the half-close was written.
        if let Ok(mut writer) = tokio::time::timeout(CLOSE_GRACE, self.write.lock()).await {
            if let Some(mut half) = writer.half.take() {
                let _ = tokio::time::timeout(CLOSE_GRACE, half.shutdown()).await;
            }
        }
        // A permit is kept if the receiver is not waiting right now; it also
        // checks `closing` before it waits.
        self.shared.closed.notify_one();
        Ok(())
    }
}

struct UnixReceiver {
    /// `None` once the connection has ended (dropping it closes our half).
    reader: Option<FrameReader<OwnedReadHalf>>,
    shared: Arc<Shared>,
}

#[async_trait]
impl MessageReceiver for UnixReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        if self.shared.closing.load(Ordering::SeqCst) {
            self.reader = None;
            return Ok(None);
        }
        let Some(reader) = self.reader.as_mut() else { return Ok(None) };
        // `next_frame` is cancel-safe: a close that wins the race loses no
        // bytes that matter (the connection is over anyway).
        let read = tokio::select! {
            read = reader.next_frame() => read,
            () = self.shared.closed.notified() => Ok(None),
        };
        let end = match read {
            Ok(Some(inbound)) => return Ok(Some(inbound)),
            Ok(None) => "the server closed the connection".to_string(),
            Err(e) => format!("reading from the server failed: {e}"),
        };
        self.reader = None;
        if self.shared.closing.load(Ordering::SeqCst) {
            return Ok(None);
        }
        Err(self.shared.error(end))
    }
}
