//! The JSON-RPC engine over one [`Transport`]: the bottom service of every
//! binding's stack.
//!
//! A [`Connection`] correlates request ids with responses, dispatches what the
//! server sends on its own (notifications, and requests such as `ping` or
//! `sampling/createMessage`) to an [`InboundHandler`], and is a
//! `tower::Service<McpRequest>` that the layers above wrap.
//!
//! # Rules it keeps
//!
//! - One damaged message is a warning, not the end: a frame that is not JSON,
//!   not a JSON-RPC envelope, or over the frame bound is reported to
//!   [`InboundHandler::warning`] and dropped. If a damaged frame's first bytes
//!   name the id of a pending request, that request alone ends
//!   (`limit_exceeded` for an oversized reply, `server_protocol` otherwise),
//!   so its caller does not wait for its deadline.
//! - A response carrying both `result` and `error` ends its call with
//!   `server_protocol`.
//! - A reply to an id nobody is waiting for is ignored with a warning.
//! - The server's `ping` is answered here, whatever handler is installed.
//! - A server request in an era that serves none (2026-07-28:
//!   `Era::serves_server_requests`) is dropped: no handler sees it, and
//!   no response is sent. A warning says so for the 1st, 2nd, 4th, 8th, …
//!   such request, so that a flood of them gives a few warnings.
//! - A server request the server then cancels (`notifications/cancelled`
//!   naming its id) is stopped: its handler's future is dropped, which ends
//!   whatever the handler was doing, and no reply is sent, as the
//!   specification asks. The notification still reaches
//!   [`InboundHandler::notification`].
//! - Dropping a call's future before its reply removes it and tells the server
//!   (the era's cancellation: `notifications/cancelled` on legacy).
//! - A failure the transport reports for one request
//!   ([`Inbound::RequestFailed`](crate::transport::Inbound::RequestFailed)) ends that call alone; a request refused
//!   because the server forgot the session ([`Inbound::SessionExpired`](crate::transport::Inbound::SessionExpired)) ends
//!   with `transport_closed` and the [`SessionExpired`] marker as its source,
//!   for the binding to re-initialize and send it again.
//! - When the connection ends, every call that was written to the transport
//!   ends `indeterminate` (it may or may not have taken effect, so it must
//!   not be replayed) unless the connection was closed on purpose, which
//!   ends them with `shutdown`. A call still queued for the writer was never
//!   written: it ends `transport_closed`, and is never written later.
//! - A request the transport fails to send ends `transport_closed` (the
//!   transport's error means it was not delivered; `indeterminate` when the
//!   transport says it may have been), and the connection ends. A
//!   notification or reply that fails to send is a warning
//!   ([`InboundHandler::warning`]), not the end of the connection: over HTTP
//!   every message is its own exchange, and one failed `POST` of a
//!   notification says nothing about the next request.
//! - A call that finds the connection already ended is not sent, and ends
//!   `transport_closed` (or `shutdown` after a close on purpose), whatever
//!   broke the connection. So for a request, `transport_closed` means "never
//!   left the client" and `indeterminate` "left, outcome unknown": the
//!   distinction the retry policy ([`crate::layer::retry`]) rests on.
//!
//! # Tasks
//!
//! [`SessionExpired`]: crate::transport::SessionExpired
//!
//! A connection runs two tasks: a reader, which dispatches, started with
//! it, and a writer, which owns the transport's sending half so that a
//! caller dropped mid-write can never leave half a message on the wire,
//! started the first time a message waits for it. A lone message (nothing
//! queued for the writer, no other request in flight) is written by its
//! caller instead, when the transport can take all of it at once without
//! waiting ([`MessageSender::try_send`]): that write has no await to be
//! dropped at, and spares waking the writer. Server requests are
//! handled on their own tasks, at most 16 at a
//! time; beyond that the server gets an error reply at once.
//!
//! # Replies to the server are bounded
//!
//! Every reply to a server request (a `ping`'s, a handler's, a refusal) waits
//! for the writer in one queue of at most 64 replies,
//! never in a task of its own. A server that keeps sending requests while it
//! does not read what the client writes (a stdio server that does not read
//! its stdin, an HTTP server that holds the `POST`s that carry the answers)
//! fills it. The reader then stops reading, which pushes back on the server,
//! and waits up to 10 s for room; when none comes, the connection
//! ends with `limit_exceeded` (and its calls, as always when a connection
//! breaks, with `indeterminate`). A handler's task keeps its permit until its
//! reply is queued, so the tasks stay bounded too: whatever the server sends,
//! the connection holds at most 64 replies and
//! 16 handler tasks.

mod call;
pub(crate) mod era;
mod error;
mod reader;
mod rounds;
pub(crate) use rounds::{answer_input_requests, InputGiven};
#[cfg(test)]
mod tests;
mod writer;

use async_trait::async_trait;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{ErrorObject, Message, Notification, RequestId};
use crate::request::{McpRequest, McpResponse};
use crate::transport::{DirectSink, MessageSender, Transport, WireHeaders};
use era::{Era, Unnegotiated};
use error::unanswered;
use reader::read_loop;

pub(crate) use call::AssignedId;
pub use error::RpcError;

/// Server requests handled at once per connection.
pub(crate) const MAX_CONCURRENT_SERVER_REQUESTS: usize = 16;
/// Outgoing messages queued for the writer before senders wait.
pub(crate) const OUTBOUND_QUEUE: usize = 256;
/// Replies to server requests queued for the writer, at most; see
/// [the module docs](self#replies-to-the-server-are-bounded).
pub(crate) const MAX_REPLY_BACKLOG: usize = 64;
/// How long the reader waits for room in a full reply backlog (reading
/// nothing meanwhile) before the connection ends with `limit_exceeded`.
pub(crate) const REPLY_STALL: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a failed write waits for the reader to report the connection's
/// end before the write error is reported instead.
pub(crate) const WRITE_FAILURE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
/// How many times one request is sent again after the server asked for
/// input (`input_required`, 2026-07-28) before it fails `limit_exceeded`.
/// All rounds stay inside the call's one deadline.
pub(crate) const MAX_INPUT_ROUNDS: usize = 8;
/// How many times a request whose reply was lost is sent again, when the
/// era re-issues it ([`Era::reissue_on_loss`]).
pub(crate) const MAX_REISSUES: usize = 2;
/// The longest warning text passed to [`InboundHandler::warning`].
pub(crate) const MAX_WARNING_BYTES: usize = 512;

/// What the server sends on its own initiative, delivered by the connection.
///
/// `notification` and `warning` are called on the reader task: they must not
/// block (hand work off through a bounded channel). `request` runs on its own
/// task.
#[async_trait]
pub trait InboundHandler: Send + Sync + 'static {
    /// Serves one server request (other than `ping`, which the connection
    /// answers). The default answers "method not found": a host that
    /// installed no handler for a method does not serve it.
    async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let _ = params;
        Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("method not found: {method}")))
    }

    /// Receives one server notification. Must not block.
    fn notification(&self, notification: Notification) {
        let _ = notification;
    }

    /// Receives a bounded description of a tolerated defect (a damaged frame,
    /// a reply to an unknown id). Must not block.
    fn warning(&self, text: String) {
        tracing::warn!(target: "mcp_stack::connection", "{text}");
    }

    /// Learns that the HTTP session id changed ([`Inbound::Session`]).
    /// Must not block. The default does nothing.
    ///
    /// [`Inbound::Session`]: crate::transport::Inbound::Session
    fn session(&self, change: crate::transport::SessionChange) {
        let _ = change;
    }
}

/// An [`InboundHandler`] that serves nothing and logs warnings.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInbound;

impl InboundHandler for NoInbound {}

/// Whether the connection is still usable, and if not, why.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectionState {
    /// Messages flow.
    Open,
    /// The connection ended; the class and message say how.
    Closed {
        /// `shutdown` for an intended close, otherwise why it broke.
        class: FailureClass,
        /// A bounded description.
        message: String,
    },
}

struct Pending {
    tx: oneshot::Sender<Result<Value, Error>>,
    /// Whether the writer has handed the request to the transport. Until
    /// then it provably never left the client: a connection that ends
    /// meanwhile fails it `transport_closed`, not `indeterminate`.
    written: bool,
    /// A list request's bound on its reply's entries, applied while the
    /// reply is parsed (see `protocol::bounded_list`).
    bound: Option<crate::protocol::bounded_list::ListBound>,
}

/// One message for the writer, with the HTTP headers that mirror it and,
/// for a request, its id (so that the writer can tell a request that was
/// written from one that was not). Queued boxed: a tokio queue allocates
/// its first block of 32 slots when it is made, so an idle connection held
/// 32 of these (2.3 KB) for nothing; boxed, 256 bytes, for an allocation
/// per queued message (a lone message is written without the queue).
struct Outbound {
    text: String,
    headers: WireHeaders,
    id: Option<RequestId>,
}

/// What the writer's task takes when it starts ([`Shared::start_writer`]).
struct WriterParts {
    sender: Arc<dyn MessageSender>,
    outbound: mpsc::Receiver<Box<Outbound>>,
    replies: mpsc::Receiver<String>,
}

struct Shared {
    /// This connection, for the writer's task to hold weakly.
    this: std::sync::Weak<Shared>,
    /// The writer's task's parts until it starts: the first time a message
    /// waits for it, not before (most stdio connections used one call at a
    /// time never need it; see `Shared::write_at_once`).
    writer: Mutex<Option<WriterParts>>,
    outbound: mpsc::Sender<Box<Outbound>>,
    /// Replies to server requests, for the writer: the bounded backlog.
    replies: mpsc::Sender<String>,
    sender: Arc<dyn MessageSender>,
    pending: Mutex<HashMap<RequestId, Pending>>,
    /// Whether a request was abandoned after it was written (its caller
    /// dropped it, at its deadline or on purpose) without its reply: the
    /// server may still be running it, so closing does not wait for it
    /// ([`MessageSender::close_abandoning`]).
    abandoned: AtomicBool,
    /// Messages handed to the writer (`outbound`) that it has not yet
    /// written or dropped: while there are any, nothing is written at once
    /// past them (`Shared::write_at_once`).
    queued: AtomicUsize,
    next_id: AtomicI64,
    era: RwLock<Arc<dyn Era>>,
    state: watch::Sender<ConnectionState>,
    inbound: Arc<dyn InboundHandler>,
    /// The server requests being served, by id, for the server to cancel.
    /// An entry lives as long as its task; the tasks are bounded by the
    /// permits for concurrent server requests, and so is this table. The
    /// number tells apart two requests a careless server gave one id.
    serving: Mutex<HashMap<RequestId, (u64, tokio::task::AbortHandle)>>,
    last_served: AtomicU64,
    /// Server requests dropped because the era serves none.
    unserved: AtomicU64,
    /// What runs once when the connection ends ([`Connection::on_end`]).
    /// Only the crate registers here, one entry per layer that watches the
    /// connection (the reconnect layer's), so it stays as small as that.
    on_end: Mutex<Vec<EndHook>>,
}

type EndHook = Box<dyn FnOnce() + Send>;

/// The JSON-RPC engine over one transport. Cheap to clone; every clone talks
/// over the same connection.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
    _life: Arc<LastHandle>,
}

/// Closes the connection when the last [`Connection`] handle is dropped, so
/// that a forgotten binding cannot leave a child process running.
struct LastHandle(Arc<Shared>);

impl Drop for LastHandle {
    fn drop(&mut self) {
        self.0.finish(FailureClass::Shutdown, "every handle to the connection was dropped");
        let sender = self.0.sender.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = sender.close().await;
            });
        }
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("state", &*self.shared.state.borrow())
            .field("pending", &self.pending_count())
            .finish()
    }
}

impl Connection {
    /// Starts the engine over `transport`, delivering what the server sends
    /// on its own to `inbound`. Must be called within a tokio runtime.
    pub fn start(transport: Transport, inbound: Arc<dyn InboundHandler>) -> Connection {
        let (outbound, outbound_rx) = mpsc::channel(OUTBOUND_QUEUE);
        let (replies, replies_rx) = mpsc::channel(MAX_REPLY_BACKLOG);
        let (state, _) = watch::channel(ConnectionState::Open);
        let writer =
            WriterParts { sender: transport.sender.clone(), outbound: outbound_rx, replies: replies_rx };
        let shared = Arc::new_cyclic(|this| Shared {
            this: this.clone(),
            writer: Mutex::new(Some(writer)),
            outbound,
            replies,
            sender: transport.sender.clone(),
            pending: Mutex::new(HashMap::new()),
            abandoned: AtomicBool::new(false),
            queued: AtomicUsize::new(0),
            next_id: AtomicI64::new(1),
            era: RwLock::new(Arc::new(Unnegotiated)),
            state,
            inbound,
            serving: Mutex::new(HashMap::new()),
            last_served: AtomicU64::new(0),
            unserved: AtomicU64::new(0),
            on_end: Mutex::new(Vec::new()),
        });
        let mut receiver = transport.receiver;
        let weak = Arc::downgrade(&shared);
        receiver.take_direct_sink(DirectSink::new(move |text| {
            weak.upgrade().is_some_and(|shared| shared.take_direct(text))
        }));
        tokio::spawn(read_loop(shared.clone(), receiver));
        Connection { _life: Arc::new(LastHandle(shared.clone())), shared }
    }

    /// Runs `hook` once when the connection ends, for whatever reason, or
    /// at once if it has ended. It runs on the thread that ended the
    /// connection, so it must not block: the reconnect layer's starts its
    /// supervisor there, which is what lets a connection that never breaks
    /// cost no supervisor task.
    pub(crate) fn on_end(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = self.shared.on_end.lock().expect("end hooks lock");
        // Read under the hooks' lock: `finish` records the end before it
        // takes that lock, so a hook is either taken by `finish` or run here.
        if *self.shared.state.borrow() == ConnectionState::Open {
            hooks.push(Box::new(hook));
            return;
        }
        drop(hooks);
        hook();
    }

    /// Installs the era the handshake chose, and tells the transport the
    /// negotiated version ([`MessageSender::negotiated`]) before anything of
    /// that era is sent.
    pub(crate) fn set_era(&self, era: Arc<dyn Era>) {
        let version = era.protocol_version().to_string();
        *self.shared.era.write().expect("era lock") = era;
        if !version.is_empty() {
            self.shared.sender.negotiated(&version);
        }
    }

    /// Puts the connection back before any era (after a modern probe the
    /// server did not understand), and tells the transport so
    /// ([`MessageSender::negotiated`] with an empty version).
    pub(crate) fn reset_era(&self) {
        *self.shared.era.write().expect("era lock") = Arc::new(Unnegotiated);
        self.shared.sender.negotiated("");
    }

    /// The era in force.
    pub(crate) fn era(&self) -> Arc<dyn Era> {
        self.shared.era.read().expect("era lock").clone()
    }

    /// The compatibility tolerances this connection's transport needed
    /// ([`MessageSender::applied_tolerances`]): `legacy_sse` after an
    /// automatic HTTP connection fell back to HTTP+SSE.
    pub fn applied_tolerances(&self) -> Vec<crate::compat::Tolerance> {
        self.shared.sender.applied_tolerances()
    }

    /// The connection's state now.
    pub fn state(&self) -> ConnectionState {
        self.shared.state.borrow().clone()
    }

    /// A receiver that sees the state change (for example to learn that the
    /// connection was lost without making a call).
    pub fn watch_state(&self) -> watch::Receiver<ConnectionState> {
        self.shared.state.subscribe()
    }

    /// How many calls await their reply. Bounded by the concurrency limit of
    /// the stack above; a diagnostic.
    pub fn pending_count(&self) -> usize {
        self.shared.pending.lock().expect("pending lock").len()
    }

    /// How many replies to server requests wait for the writer: never more
    /// than 64: a diagnostic of a server that does not read.
    pub fn reply_backlog(&self) -> usize {
        MAX_REPLY_BACKLOG - self.shared.replies.capacity()
    }

    /// Sends a request and waits for its result. Dropping the future cancels
    /// the request on the wire.
    pub async fn request(&self, method: &str, params: Map<String, Value>) -> Result<Value, Error> {
        self.shared.clone().call(McpRequest::new(method, params)).await.map(|response| response.result)
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.shared.check_open()?;
        let text = Message::Notification(Notification::new(method, params)).to_json();
        self.shared.enqueue(text).await
    }

    /// Closes the connection on purpose: calls still pending end with
    /// `shutdown`, and the transport is closed (for stdio, the child and its
    /// process group are ended). Idempotent.
    pub async fn close(&self) {
        self.shared.finish(FailureClass::Shutdown, "connection closed");
        let closed = match self.shared.abandoned.load(std::sync::atomic::Ordering::Relaxed) {
            true => self.shared.sender.close_abandoning().await,
            false => self.shared.sender.close().await,
        };
        if let Err(e) = closed {
            tracing::debug!(target: "mcp_stack::connection", "closing transport: {e}");
        }
    }
}

impl Shared {
    fn check_open(&self) -> Result<(), Error> {
        match &*self.state.borrow() {
            ConnectionState::Open => Ok(()),
            ConnectionState::Closed { class, message } => Err(Error::new(*class, message)),
        }
    }

    /// Like `check_open`, for a request about to be sent: a connection that
    /// ended for any reason but a close on purpose reports `transport_closed`,
    /// the class that promises the request never left the client.
    fn check_open_to_send(&self) -> Result<(), Error> {
        match &*self.state.borrow() {
            ConnectionState::Open => Ok(()),
            ConnectionState::Closed { class, message } => Err(unanswered(*class, message, false)),
        }
    }

    fn warn(&self, text: String) {
        self.inbound.warning(normalize_message(&text, MAX_WARNING_BYTES));
    }

    /// Ends the connection once: records why, and ends every pending call.
    fn finish(&self, class: FailureClass, message: &str) {
        let first = self.state.send_if_modified(|state| match state {
            ConnectionState::Open => {
                *state =
                    ConnectionState::Closed { class, message: normalize_message(message, MAX_WARNING_BYTES) };
                true
            }
            ConnectionState::Closed { .. } => false,
        });
        if !first {
            return;
        }
        let drained: Vec<Pending> =
            self.pending.lock().expect("pending lock").drain().map(|(_, pending)| pending).collect();
        for pending in drained {
            let _ = pending.tx.send(Err(unanswered(class, message, pending.written)));
        }
        let hooks = std::mem::take(&mut *self.on_end.lock().expect("end hooks lock"));
        for hook in hooks {
            hook();
        }
    }
}

/// The future a [`Connection`] returns from `call`.
pub struct ResponseFuture {
    inner: Pin<Box<dyn Future<Output = Result<McpResponse, Error>> + Send>>,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture(..)")
    }
}

impl Future for ResponseFuture {
    type Output = Result<McpResponse, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl tower_service::Service<McpRequest> for Connection {
    type Response = McpResponse;
    type Error = Error;
    type Future = ResponseFuture;

    /// Ready while the connection is open; a closed connection is fatal for
    /// this service (a new connection is a new service: see the reconnect
    /// layer).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(self.shared.check_open())
    }

    fn call(&mut self, req: McpRequest) -> ResponseFuture {
        // `Shared::call`'s future boxed as it is: wrapped in an `async`
        // block it was 1,056 bytes, past glibc's per-thread cache (1,032),
        // so that every call's box made `malloc` sort its free chunks
        // (`malloc_consolidate`). Release build, 2026-12-04: 952 bytes.
        ResponseFuture { inner: Box::pin(self.shared.clone().call(req)) }
    }
}
