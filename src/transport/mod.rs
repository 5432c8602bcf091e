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
//! - A failure that concerns one request alone (an HTTP exchange refused
//!   with an error status, a reply stream that broke and could not be
//!   resumed, a reply that does not answer it, a stdio reply split over
//!   lines) is reported as [`Inbound::RequestFailed`] for that request's
//!   id; the connection goes on. The engine ignores it for a request that
//!   already ended, so a transport that cannot tell whether the reply it
//!   delivered was usable (an HTTP JSON body) reports the failure after it:
//!   the request ends at once either way, never at its deadline.
//! - A message that arrived where it may not be delivered (an HTTP response
//!   stream carries its own request's response and no other) is dropped and
//!   reported as [`Inbound::Dropped`], a warning; a flood of them is
//!   reported a few times, not once each.
//! - A server that forgot the session (HTTP 404 on a request that carried
//!   `Mcp-Session-Id`) is reported as [`Inbound::SessionExpired`]; see
//!   [`SessionExpired`] for what the engine and the binding do with it.
//! - A transport that carries the negotiated protocol version outside the
//!   messages (HTTP's `MCP-Protocol-Version` header) learns it through
//!   [`MessageSender::negotiated`], which the connection calls when the
//!   handshake installs an era.
//!
//! A [`TransportFactory`] makes connections; a binding keeps one so that it
//! can dial again after a connection is lost. To add a transport of your
//! own, implement it outside the crate: see [Adding a
//! transport](TransportFactory#adding-a-transport).

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;

use crate::compat::Tolerance;
use crate::error::{Error, FailureClass};
use crate::protocol::RequestId;

pub(crate) mod framing;
pub use framing::FrameReader;
#[cfg(feature = "http")]
pub mod http;
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
        /// At most 256 bytes from its start, so that the
        /// engine can tell which request, if any, the frame answered.
        prefix: String,
        /// How many bytes the frame had (at least; reading stopped counting
        /// precisely once the frame was known to be damaged).
        bytes: u64,
    },
    /// The request `id` failed in the transport (an HTTP error status, a
    /// reply stream that broke and could not be resumed, a reply over the
    /// body bound). That call alone ends, with `class` and `message` (and
    /// `http_status`, which the call's error carries as
    /// [`Error::http_status`]); the connection goes on.
    RequestFailed {
        /// The request that failed.
        id: RequestId,
        /// How it failed: `indeterminate` when the server may have acted on
        /// it, `remote_http`, `limit_exceeded`, `auth_required`, ….
        class: FailureClass,
        /// A bounded description without credentials.
        message: String,
        /// The HTTP status that made the request fail, when one did.
        http_status: Option<u16>,
        /// How long the server asked to wait before trying again (its
        /// `Retry-After`), when it said; the call's error carries it as
        /// [`Error::retry_after`].
        retry_after: Option<std::time::Duration>,
    },
    /// A whole message the transport read and dropped on purpose, because
    /// it may not be delivered where it arrived (a response on another
    /// request's response stream); `reason` is a bounded description, which
    /// the connection reports as a warning. The connection goes on. A
    /// transport bounds how many it reports in a flood.
    Dropped {
        /// Why it was dropped.
        reason: String,
    },
    /// The server no longer knows the session this connection was using
    /// (HTTP 404 on a request that carried `Mcp-Session-Id`). The request
    /// `id`, when there is one, was refused and not processed, so it may be
    /// sent again once the handshake has been run again on the same
    /// connection. See [`SessionExpired`].
    SessionExpired {
        /// The refused request, or `None` when a notification or a response
        /// was refused.
        id: Option<RequestId>,
    },
    /// The session id changed: the server assigned one, or said the one in
    /// use is gone. Informational: the connection reports it to the host
    /// (as an event) and goes on; [`Inbound::SessionExpired`] is what ends
    /// a refused request.
    Session(SessionChange),
}

/// What happened to an HTTP session id ([`Inbound::Session`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChange {
    /// The server assigned this id (in the `initialize` response), or
    /// replaced the one the connection started with.
    Assigned(SessionId),
    /// The server no longer knows this id (it answered 404 to a request
    /// that carried it).
    Expired(SessionId),
}

/// A streamable HTTP session id (`Mcp-Session-Id`). Whoever holds it can
/// speak in the session, so it is a secret: `Debug` and serialization show
/// `<redacted>`, and while any copy lives the redaction point scrubs it
/// from every error, event and log. [`SessionId::expose`] gives the value
/// to code that keeps it (to resume the session later with
/// [`HttpBuilder::session_id`](http::HttpBuilder::session_id)).
#[derive(Clone)]
pub struct SessionId {
    value: Arc<str>,
    _known: Arc<crate::redact::Registration>,
}

impl SessionId {
    /// The id, for code that keeps it. Never log it.
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// A session id `value`, for a transport with sessions to report in
    /// [`Inbound::Session`]. From now on, while any copy lives, `value` is
    /// scrubbed from every error, event and log.
    pub fn new(value: &str) -> Self {
        SessionId { value: Arc::from(value), _known: Arc::new(crate::redact::register(value)) }
    }
}

impl PartialEq for SessionId {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for SessionId {}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionId(<redacted>)")
    }
}

impl serde::Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("<redacted>")
    }
}

/// The marker an error carries as its source when its request was refused
/// because the server forgot the session ([`Inbound::SessionExpired`]).
///
/// The connection ends such a call with class `transport_closed` and this
/// source; `is_session_expired` recognises it. The binding reacts by
/// running the `initialize` handshake again on the same connection (the
/// transport has dropped the old session id, so the server issues a new one)
/// and sending the refused request once more: it was not processed, so this
/// is not a replay. Calls in flight whose reply streams died with the old
/// session are reported by the transport as [`Inbound::RequestFailed`] with
/// class `indeterminate`, and are never sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, thiserror::Error)]
#[error("the server no longer knows the session; the request was not processed")]
pub struct SessionExpired;

/// Whether `error` ended a request that the server refused because it forgot
/// the session (see [`SessionExpired`]).
pub(crate) fn is_session_expired(error: &Error) -> bool {
    std::error::Error::source(error).is_some_and(|source| source.is::<SessionExpired>())
}

/// The HTTP headers that mirror one request (2026-07-28: `Mcp-Method`,
/// `Mcp-Name`, `Mcp-Param-*`), as `(name, value)` with values already
/// encoded. Built by the era (`crate::era::Era::wire_headers`) and handed
/// to [`MessageSender::send_request`] of a transport that
/// [carries them](MessageSender::carries_headers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireHeaders(pub Vec<(String, String)>);

impl WireHeaders {
    /// Whether there is no header.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How much of a damaged frame's start a transport keeps for diagnosis.
pub(crate) const DAMAGED_PREFIX_BYTES: usize = 256;

/// Why [`MessageSender::send_batch`] stopped.
#[derive(Debug)]
pub struct BatchError {
    /// How many messages, from the first, were delivered whole.
    pub sent: usize,
    /// Why the next one was not.
    pub error: Error,
}

/// The writing half of a connection.
#[async_trait]
pub trait MessageSender: Send + Sync + 'static {
    /// Sends one message (a complete JSON-RPC object, serialized). The
    /// transport adds its own framing.
    ///
    /// An error means the message was not delivered: the connection fails
    /// a request whose send failed `transport_closed` (safe to send again),
    /// unless the error's class is `indeterminate` (it may have reached the
    /// server). A failed notification or reply is only a warning.
    async fn send(&self, message: String) -> Result<(), Error>;

    /// Sends several messages queued together, in order, each as
    /// [`MessageSender::send`] would. A stream transport writes them in one
    /// go (stdio: one system call for a batch of small messages). On an
    /// error, [`BatchError::sent`] says how many were delivered whole
    /// before it; the one after them failed with [`BatchError::error`],
    /// and the rest were not sent. The default sends them one by one.
    async fn send_batch(&self, messages: &[String]) -> Result<(), BatchError> {
        for (sent, message) in messages.iter().enumerate() {
            self.send(message.clone()).await.map_err(|error| BatchError { sent, error })?;
        }
        Ok(())
    }

    /// Sends `message` at once, from the caller's task, when the transport
    /// can take all of it without waiting: `Ok(())` when it was delivered
    /// whole, `Err(message)`, handed back, when nothing of it was (the
    /// connection then sends it with [`MessageSender::send`], from its
    /// writer). It must never deliver part of a message, and never wait.
    ///
    /// The connection asks this only of a lone message (nothing queued for
    /// its writer, no other request in flight), which then costs no
    /// wake-up of the writer's task. Declining is always correct, and is
    /// the default; stdio takes a message that fits one atomic pipe write.
    fn try_send(&self, message: String) -> Result<(), String> {
        Err(message)
    }

    /// [`MessageSender::try_send`] for a request and the HTTP headers that
    /// mirror it (called with headers only when
    /// [`MessageSender::carries_headers`] says so), without waiting:
    /// `Ok(None)` when the transport took it whole, as
    /// [`MessageSender::send_request`] would have; `Ok(Some(exchange))`
    /// when it took it and left the rest of its exchange (sending it and
    /// reading its reply) for the caller's task to run ([`Exchange`]);
    /// `Err`, both handed back, when it did not take it. The default takes
    /// a request without headers through `try_send` and declines one with
    /// headers. Streamable HTTP hands back the request's exchange when it
    /// can start one without waiting.
    fn try_send_request(
        &self,
        message: String,
        headers: WireHeaders,
    ) -> Result<Option<Exchange>, (String, WireHeaders)> {
        if headers.is_empty() {
            self.try_send(message).map(|()| None).map_err(|message| (message, headers))
        } else {
            Err((message, headers))
        }
    }

    /// Whether this transport sends [`WireHeaders`] (HTTP). The default,
    /// `false`, spares a connection building headers nobody reads for every
    /// request, and lets its requests be written in batches
    /// ([`MessageSender::send_batch`]): a request with headers goes on its
    /// own.
    fn carries_headers(&self) -> bool {
        false
    }

    /// Sends one request with the HTTP headers that mirror it. The default
    /// ignores the headers (a transport that has none). Called with headers
    /// only when [`MessageSender::carries_headers`] says so.
    async fn send_request(&self, message: String, headers: WireHeaders) -> Result<(), Error> {
        let _ = headers;
        self.send(message).await
    }

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

    /// Ends the connection without waiting for the server to finish its
    /// work: the client abandoned requests (cancelled them at their
    /// deadline, or dropped them) that the server may still be running, and
    /// a polite close would wait for that work (a stdio server that exits
    /// at the end of its input only once its requests are done). Bounded
    /// and idempotent like [`close`](Self::close), which it defaults to; the
    /// stdio transport gives the child a moment to exit and then signals
    /// its process group at once instead of waiting out the grace.
    async fn close_abandoning(&self) -> Result<(), Error> {
        self.close().await
    }

    /// The handshake settled on `protocol_version`. Transports that carry
    /// the version outside the messages record it here (streamable HTTP
    /// sends it as `MCP-Protocol-Version` on every later request); the
    /// default does nothing. Called by the connection whenever an era is
    /// installed, before any message of that era is sent, and with an empty
    /// version when the era is reset (a modern probe the server did not
    /// understand): the transport then forgets the version. Must not block.
    fn negotiated(&self, protocol_version: &str) {
        let _ = protocol_version;
    }

    /// The tolerances this connection needed, a subset of its factory's
    /// [`TransportFactory::tolerances`]: `legacy_sse` when an
    /// `http::HttpFactory` connection fell back to HTTP+SSE. The default:
    /// none. Read when the handshake is done, into
    /// [`SessionInfo::transport_tolerances`]; the binding reports it in the
    /// [`Catalog::applied_tolerances`] of the generations it discovers over
    /// this connection. Asked of the connection, not the factory, so that
    /// bindings sharing a factory each see what their own connection needed.
    ///
    /// [`SessionInfo::transport_tolerances`]: crate::session::SessionInfo::transport_tolerances
    /// [`Catalog::applied_tolerances`]: crate::catalog::Catalog::applied_tolerances
    fn applied_tolerances(&self) -> Vec<Tolerance> {
        Vec::new()
    }
}

/// The reading half of a connection.
#[async_trait]
pub trait MessageReceiver: Send + 'static {
    /// Receives the next message. `Ok(None)` is the clean end of the
    /// connection. A damaged frame is returned as [`Inbound::Damaged`], never
    /// as an error.
    async fn recv(&mut self) -> Result<Option<Inbound>, Error>;

    /// Called once by the connection before it reads: the way to hand a
    /// response or a notification straight to the connection, from the
    /// task that read it (see [`DirectSink`]). The default ignores it: everything
    /// goes through [`MessageReceiver::recv`].
    fn take_direct_sink(&mut self, sink: DirectSink) {
        let _ = sink;
    }
}

/// The rest of a request's exchange, which a transport leaves to the
/// task of the caller waiting for the reply
/// ([`MessageSender::try_send_request`]): sending the request and reading
/// what comes back on its exchange (an HTTP `POST` and its response),
/// delivered as any inbound message is.
///
/// The connection polls it from the caller's task while the caller waits,
/// so that a lone request costs no task of its own (spawning one, and the
/// wake-ups across tasks and threads that come with it). An exchange
/// should end once it delivered the reply; when the reply comes another
/// way first (the connection failed the call), what is left of the
/// exchange runs on a task of its own. When the caller gives up, the
/// exchange is dropped, which must abandon the request as
/// [`MessageSender::cancel`] would (streamable HTTP: its response stream
/// is closed).
#[must_use = "an exchange does nothing unless polled"]
pub struct Exchange(std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>);

impl Exchange {
    /// An exchange that runs `work`.
    pub fn new(work: impl std::future::Future<Output = ()> + Send + 'static) -> Self {
        Exchange(Box::pin(work))
    }
}

impl std::future::Future for Exchange {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchange").finish_non_exhaustive()
    }
}

/// A connection's way to take a message from the transport's task that
/// read it, sparing the hop through [`MessageReceiver::recv`] and the
/// connection's reader task (a queue item and a wake-up per message).
///
/// It takes what the connection handles without waiting: a response
/// (completing its call) and a notification (handed to the binding). A
/// request from the server, or a message that does not parse, is handed
/// back for `recv`. What one stream carries must reach the connection in
/// order (a call's progress before its result): once a message of a stream
/// went through `recv`, every later one of that stream must too. Streamable
/// HTTP uses it for reply streams, until a message is handed back.
#[derive(Clone)]
pub struct DirectSink(Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl DirectSink {
    pub(crate) fn new(take: impl Fn(&str) -> bool + Send + Sync + 'static) -> DirectSink {
        DirectSink(Arc::new(take))
    }

    /// Hands `text` to the connection: `true` when it was taken (a
    /// response completed its call, or was ignored as the reader would have
    /// ignored it; a notification was handled); `false` when it must go
    /// through [`MessageReceiver::recv`] instead (a request from the
    /// server, a text that does not parse, or a connection no longer open),
    /// and so must everything after it on the same stream.
    pub fn deliver(&self, text: &str) -> bool {
        (self.0)(text)
    }
}

impl fmt::Debug for DirectSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectSink").finish_non_exhaustive()
    }
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
    /// Told `true` when an authorization flow starts on this connection
    /// and `false` when it ends, so that the binding can show the state
    /// `authenticating` meanwhile. Must not block.
    pub authenticating: Option<Arc<dyn Fn(bool) + Send + Sync>>,
}

impl fmt::Debug for ConnectConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectConfig")
            .field("binding", &self.binding)
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("diagnostics", &self.diagnostics.is_some())
            .field("authenticating", &self.authenticating.is_some())
            .finish()
    }
}

impl ConnectConfig {
    /// Settings with the crate's default bounds.
    pub fn new(binding: impl Into<String>) -> Self {
        ConnectConfig {
            binding: binding.into(),
            max_frame_bytes: crate::config::limits::DEFAULT_MAX_FRAME_BYTES,
            max_body_bytes: crate::config::limits::DEFAULT_MAX_BODY_BYTES,
            diagnostics: None,
            authenticating: None,
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
///
/// # Adding a transport
///
/// A transport is added outside the crate, with the public traits alone:
/// implement this trait, whose [`connect`](Self::connect) returns a
/// [`Transport`] of your own [`MessageSender`] and [`MessageReceiver`], and
/// give the factory to a binding with
/// [`Definition::with_factory`](crate::Definition::with_factory). Keep the
/// rules in the [module docs](self). The example to copy is
/// `examples/unix_socket/` (`transport.rs`): newline-delimited JSON over a
/// Unix-domain socket, in about 200 lines, with tests against a real server
/// on a socket (`tests/interop/unix_socket.rs`, run by
/// `scripts/interop.sh`). A transport over a byte stream reads with
/// [`FrameReader`], which bounds each line by
/// [`ConnectConfig::max_frame_bytes`] and reports damaged lines as the
/// crate's own transports do. Only [`kind`](Self::kind),
/// [`redacted_origin`](Self::redacted_origin), `connect`,
/// [`MessageSender::send`], [`MessageSender::close`] and
/// [`MessageReceiver::recv`] must be written; every other method has a
/// default that is right for a transport carrying all messages on one
/// stream without sessions.
///
/// # The hooks of a `send`/`recv`/`is_connected`/`close` transport
///
/// A transport trait of the shape other MCP clients use (one object with
/// `send`, `recv`, `is_connected`, `close`, `reset_session`, `end_session`,
/// `cancel_request` and `supports_session_recovery`) maps onto this one:
///
/// - `send` / `recv`: [`MessageSender::send`] and
///   [`MessageReceiver::recv`], on two halves so that a write never waits on
///   a read. `recv` returns an [`Inbound`], not a string: a damaged frame is
///   [`Inbound::Damaged`] and the connection goes on.
/// - `is_connected`: no method. A connection is up until its receiver
///   returns `Ok(None)` (a clean end) or an error (a broken one); the
///   connection engine sees that first, fails the requests in flight (with
///   `indeterminate` when they were sent), and the binding reports it as its
///   state ([`Binding::status`](crate::Binding::status)) and dials again
///   through the factory. A polled flag would only race with that.
/// - `close`: [`MessageSender::close`] (graceful, bounded, idempotent; the
///   receiver then ends), and [`MessageSender::close_abandoning`] when
///   requests were abandoned and the server need not finish them.
/// - `reset_session`: no method. A transport with sessions that learns the
///   server forgot its session drops the session id itself and reports
///   [`Inbound::SessionExpired`]; the binding runs the handshake again on
///   the same connection and sends the refused request once more (see
///   [`SessionExpired`]). Session ids the server assigns are reported as
///   [`Inbound::Session`] ([`SessionId::new`]). A transport without
///   sessions has nothing to do.
/// - `end_session`: part of [`MessageSender::close`] (streamable HTTP sends
///   its `DELETE` there); a binding whose handshake fails closes the
///   connection.
/// - `cancel_request`: [`MessageSender::cancel`], which by default sends
///   the era's `notifications/cancelled`.
/// - `supports_session_recovery`: no method; a transport that can report
///   [`Inbound::SessionExpired`] gets the recovery.
///
/// Two optional hooks spare a transport's messages a task hop, for speed
/// only (the defaults are always correct): [`MessageSender::try_send`] /
/// [`MessageSender::try_send_request`] take a lone message from the
/// caller's task without waiting (a request may leave its [`Exchange`] for
/// that task to run), and
/// [`MessageReceiver::take_direct_sink`] gives the transport a
/// [`DirectSink`] that takes a response or notification from the task that
/// read it, bypassing `recv`.
#[async_trait]
pub trait TransportFactory: Send + Sync + 'static {
    /// Names the transport: `"stdio"`, `"streamable_http"`, `"sse"`,
    /// `"http"` (streamable HTTP with a legacy fallback), `"memory"`.
    fn kind(&self) -> &'static str;

    /// Whether each request and its reply travel on an exchange of their
    /// own (an HTTP `POST` and its response): closing that exchange cancels
    /// the request, and what arrives on it belongs to it. No for a transport
    /// that carries every message on one stream (stdio, memory), where
    /// messages must be told apart by their ids.
    fn exchange_per_request(&self) -> bool {
        matches!(self.kind(), "streamable_http" | "http" | "sse")
    }

    /// Whether the transport sends the HTTP headers that mirror a request
    /// ([`WireHeaders`]): streamable HTTP does; stdio, memory and the legacy
    /// HTTP+SSE transport do not.
    fn carries_headers(&self) -> bool {
        matches!(self.kind(), "streamable_http" | "http")
    }

    /// A display origin without credentials.
    fn redacted_origin(&self) -> RedactedOrigin;

    /// The network origin whose connections this factory's bindings share
    /// with other bindings to it, if any: a host connects at most so many
    /// bindings to one origin at once
    /// ([`HostBuilder::max_concurrent_connects_per_origin`]). The default:
    /// [`TransportFactory::redacted_origin`] for the HTTP kinds
    /// (`streamable_http`, `http`, `sse`: bindings to one origin share its
    /// connection pool, and over HTTP/1.1 each request at once needs a
    /// connection of its own), none for the others (a stdio server is a
    /// process of its own). A transport of one's own to a network server
    /// returns its origin here.
    ///
    /// [`HostBuilder::max_concurrent_connects_per_origin`]: crate::host::HostBuilder::max_concurrent_connects_per_origin
    fn connection_origin(&self) -> Option<RedactedOrigin> {
        matches!(self.kind(), "streamable_http" | "http" | "sse").then(|| self.redacted_origin())
    }

    /// A SHA-256 over what identifies the server this factory reaches (the
    /// whole URL of an HTTP server; the program, arguments, directory and
    /// environment of a stdio one), so that bindings to the same server
    /// share the public results it lets clients cache (see
    /// [`crate::cache`]). Never shown anywhere. The default, `None`, shares
    /// nothing: each binding keeps its results to itself.
    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        None
    }

    /// Establishes one connection.
    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error>;

    /// The compatibility tolerances a connection made by this factory may
    /// need: a deviation from the specification the factory is configured to
    /// bend for (an `http::HttpFactory` with its HTTP+SSE fallback on:
    /// [`Tolerance::LegacySse`]). The default: none.
    ///
    /// The profile decides: [`Definition::validate`] (run by
    /// `Binding::connect`) refuses, with `invalid_config`, a factory that
    /// may apply a tolerance its definition's profile does not allow.
    ///
    /// Which of them a connection actually needed, its sender says
    /// ([`MessageSender::applied_tolerances`]).
    ///
    /// [`Definition::validate`]: crate::Definition::validate
    fn tolerances(&self) -> Vec<Tolerance> {
        Vec::new()
    }

    /// What this factory knows of why its last connection did not finish
    /// starting, for the `startup_timeout` error of a dial
    /// ([`Dialer`](crate::era::Dialer)): bounded, normalized text that
    /// holds no secret. A stdio factory names what the server last wrote on
    /// stderr and the environment it was given. The default: nothing.
    fn startup_hint(&self) -> Option<String> {
        None
    }
}
