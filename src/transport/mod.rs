//! Raw message I/O: the bottom of every binding's stack.
//!
//! A [`Transport`] moves whole JSON-RPC messages as text, in both directions,
//! and knows nothing of ids or methods; the connection engine
//! ([`crate::connection`]) does the correlation and dispatch. It is split into
//! a [`MessageSender`] and a [`MessageReceiver`] so that writing a request
//! never waits on reading and the other way round (a server blocked writing
//! to a full pipe must not deadlock a client blocked writing to it).
//!
//! The rules every transport keeps:
//!
//! - One damaged message is not the end of the connection. A frame that is
//!   over [`ConnectConfig::max_frame_bytes`] or not text is reported as
//!   [`Inbound::Damaged`] and skipped, without ever being held whole; the
//!   receiver then returns the next one.
//! - `Ok(None)` from [`MessageReceiver::recv`] is the clean end of the
//!   connection and `Err` a broken one; both end it, so they are reserved for
//!   the connection really being over.
//! - [`MessageSender::close`] is graceful, bounded in time and idempotent.
//!
//! A [`TransportFactory`] makes connections; a binding keeps one so that it
//! can dial again after a connection is lost.

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;

use crate::error::Error;
use crate::protocol::RequestId;

pub mod framing;
pub mod memory;
pub mod stdio;

/// One live connection, split into its two directions.
pub struct Transport {
    /// Writes messages to the server.
    pub sender: Arc<dyn MessageSender>,
    /// Reads messages from the server.
    pub receiver: Box<dyn MessageReceiver>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").finish_non_exhaustive()
    }
}

/// What a receiver read: a frame to parse, or a damaged one it skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// One whole message, as text.
    Frame(String),
    /// A frame that could not be delivered (over the frame bound, or not
    /// UTF-8). It was skipped; the connection goes on.
    Damaged {
        /// Why it was skipped.
        reason: String,
        /// At most [`DAMAGED_PREFIX_BYTES`] bytes from its start, so that the
        /// engine can tell which request, if any, the frame answered.
        prefix: String,
        /// How many bytes the frame had (at least; reading stopped counting
        /// precisely once the frame was known to be damaged).
        bytes: u64,
    },
}

/// How much of a damaged frame's start a transport keeps for diagnosis.
pub const DAMAGED_PREFIX_BYTES: usize = 256;

/// The writing half of a connection.
#[async_trait]
pub trait MessageSender: Send + Sync + 'static {
    /// Sends one message (a complete JSON-RPC object, serialized). The
    /// transport adds its own framing.
    async fn send(&self, message: String) -> Result<(), Error>;

    /// Tells the server that the request `id` is abandoned.
    ///
    /// `notice` is the era's cancellation message (a serialized
    /// `notifications/cancelled`), or `None` when the era cancels by other
    /// means. Message-oriented transports send the notice; a transport that
    /// can close the request's own stream (HTTP on 2026-07-28) may do that
    /// instead. Best effort: a failure here is not reported to the caller,
    /// whose call has already ended.
    async fn cancel(&self, id: &RequestId, notice: Option<String>) -> Result<(), Error> {
        let _ = id;
        match notice {
            Some(notice) => self.send(notice).await,
            None => Ok(()),
        }
    }

    /// Ends the connection gracefully. Bounded in time and idempotent; after
    /// it returns, the receiver yields `Ok(None)` or an error.
    async fn close(&self) -> Result<(), Error>;
}

/// The reading half of a connection.
#[async_trait]
pub trait MessageReceiver: Send + 'static {
    /// Receives the next message. `Ok(None)` is the clean end of the
    /// connection. A damaged frame is returned as [`Inbound::Damaged`], never
    /// as an error.
    async fn recv(&mut self) -> Result<Option<Inbound>, Error>;
}

/// Per-connection settings a factory needs.
#[derive(Clone)]
pub struct ConnectConfig {
    /// The binding's name, for diagnostics.
    pub binding: String,
    /// The largest message accepted, in bytes.
    pub max_frame_bytes: usize,
    /// The largest HTTP response body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Receives diagnostic lines the server writes outside the protocol (a
    /// stdio child's stderr). Must not block.
    pub diagnostics: Option<Arc<dyn Fn(String) + Send + Sync>>,
}

impl fmt::Debug for ConnectConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectConfig")
            .field("binding", &self.binding)
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("diagnostics", &self.diagnostics.is_some())
            .finish()
    }
}

impl ConnectConfig {
    /// Settings with the crate's default bounds.
    pub fn new(binding: impl Into<String>) -> Self {
        ConnectConfig {
            binding: binding.into(),
            max_frame_bytes: crate::limits::DEFAULT_MAX_FRAME_BYTES,
            max_body_bytes: crate::limits::DEFAULT_MAX_BODY_BYTES,
            diagnostics: None,
        }
    }
}

/// A display origin that never holds credentials: no user info, no query, no
/// path secrets, no argv beyond the program name.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct RedactedOrigin(String);

impl RedactedOrigin {
    /// Wraps text the caller has already redacted. Transports build their
    /// origin with the constructors of their own module instead.
    pub fn from_redacted(text: impl Into<String>) -> Self {
        RedactedOrigin(text.into())
    }

    /// The origin as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RedactedOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RedactedOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedactedOrigin({:?})", self.0)
    }
}

/// Makes connections to one server.
///
/// A binding keeps its factory for its whole life and calls
/// [`TransportFactory::connect`] once per connection: at start and after
/// every loss. It is a `tower::MakeService` in spirit, kept as a plain trait
/// so that it can be stored as `Arc<dyn TransportFactory>`.
#[async_trait]
pub trait TransportFactory: Send + Sync + 'static {
    /// Names the transport: `"stdio"`, `"streamable_http"`, `"sse"`,
    /// `"memory"`.
    fn kind(&self) -> &'static str;

    /// A display origin without credentials.
    fn redacted_origin(&self) -> RedactedOrigin;

    /// Establishes one connection.
    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error>;
}
