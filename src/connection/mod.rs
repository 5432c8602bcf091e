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
//!   [`Era::serves_server_requests`]) is dropped: no handler sees it, and
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
//!   ([`Inbound::RequestFailed`]) ends that call alone; a request refused
//!   because the server forgot the session ([`Inbound::SessionExpired`]) ends
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
//! [`Connection::start`] spawns two tasks: a writer, which owns the transport's
//! sending half so that a caller dropped mid-write can never leave half a
//! message on the wire, and a reader, which dispatches. Server requests are
//! handled on their own tasks, at most [`MAX_CONCURRENT_SERVER_REQUESTS`] at a
//! time; beyond that the server gets an error reply at once.
//!
//! # Replies to the server are bounded
//!
//! Every reply to a server request (a `ping`'s, a handler's, a refusal) waits
//! for the writer in one queue of at most [`MAX_REPLY_BACKLOG`] replies,
//! never in a task of its own. A server that keeps sending requests while it
//! does not read what the client writes (a stdio server that does not read
//! its stdin, an HTTP server that holds the `POST`s that carry the answers)
//! fills it. The reader then stops reading, which pushes back on the server,
//! and waits up to [`REPLY_STALL`] for room; when none comes, the connection
//! ends with `limit_exceeded` (and its calls, as always when a connection
//! breaks, with `indeterminate`). A handler's task keeps its permit until its
//! reply is queued, so the tasks stay bounded too: whatever the server sends,
//! the connection holds at most [`MAX_REPLY_BACKLOG`] replies and
//! [`MAX_CONCURRENT_SERVER_REQUESTS`] handler tasks.

pub mod era;

use async_trait::async_trait;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot, watch, Semaphore};

use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::jsonrpc::{codes, EnvelopeError, TooDeep, MAX_MESSAGE_DEPTH};
use crate::protocol::progress::CancelledParams;
use crate::protocol::{methods, ErrorObject, Message, Notification, Outcome, Request, RequestId, Response};
use crate::request::{McpRequest, McpResponse};
use crate::transport::{Inbound, MessageSender, Transport, WireHeaders};
use era::{Era, InputRequired, Reply, Unnegotiated};

/// Server requests handled at once per connection.
pub const MAX_CONCURRENT_SERVER_REQUESTS: usize = 16;
/// Outgoing messages queued for the writer before senders wait.
pub const OUTBOUND_QUEUE: usize = 256;
/// Replies to server requests queued for the writer, at most; see
/// [the module docs](self#replies-to-the-server-are-bounded).
pub const MAX_REPLY_BACKLOG: usize = 64;
/// How long the reader waits for room in a full reply backlog (reading
/// nothing meanwhile) before the connection ends with `limit_exceeded`.
pub const REPLY_STALL: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a failed write waits for the reader to report the connection's
/// end before the write error is reported instead.
pub const WRITE_FAILURE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
/// How many times one request is sent again after the server asked for
/// input (`input_required`, 2026-07-28) before it fails `limit_exceeded`.
/// All rounds stay inside the call's one deadline.
pub const MAX_INPUT_ROUNDS: usize = 8;
/// How many times a request whose reply was lost is sent again, when the
/// era re-issues it ([`Era::reissue_on_loss`]).
pub const MAX_REISSUES: usize = 2;
/// The longest warning text passed to [`InboundHandler::warning`].
pub const MAX_WARNING_BYTES: usize = 512;

/// A request's extension the connection fills with the JSON-RPC id it gives
/// the request (the last one, when a request is sent again): for what must
/// recognise messages that name the request, such as the notifications of a
/// `subscriptions/listen` stream, stamped with its id.
#[derive(Debug, Clone, Default)]
pub(crate) struct AssignedId(Arc<Mutex<Option<RequestId>>>);

impl AssignedId {
    /// The id given, once the request was made.
    pub(crate) fn get(&self) -> Option<RequestId> {
        self.0.lock().expect("assigned id lock").clone()
    }

    fn set(&self, id: &RequestId) {
        *self.0.lock().expect("assigned id lock") = Some(id.clone());
    }
}

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
}

/// An [`InboundHandler`] that serves nothing and logs warnings.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInbound;

impl InboundHandler for NoInbound {}

/// A JSON-RPC error the server answered with, kept as an error's source so
/// that callers can read its code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("server error {code}: {message}")]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The server's message, bounded and normalized.
    pub message: String,
    /// The error's `data`, if any.
    pub data: Option<Value>,
}

impl RpcError {
    /// The classified error of the legacy era: `not_found` for an unknown
    /// method or resource, `remote_tool_error` otherwise, with `self` as its
    /// source.
    pub fn into_error(self) -> Error {
        let class = match self.code {
            codes::METHOD_NOT_FOUND | codes::RESOURCE_NOT_FOUND => FailureClass::NotFound,
            _ => FailureClass::RemoteToolError,
        };
        Error::new(class, &self.message).with_source(self)
    }
}

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
}

/// One message for the writer, with the HTTP headers that mirror it and,
/// for a request, its id (so that the writer can tell a request that was
/// written from one that was not).
struct Outbound {
    text: String,
    headers: WireHeaders,
    id: Option<RequestId>,
}

struct Shared {
    outbound: mpsc::Sender<Outbound>,
    /// Replies to server requests, for the writer: the bounded backlog.
    replies: mpsc::Sender<String>,
    sender: Arc<dyn MessageSender>,
    pending: Mutex<HashMap<RequestId, Pending>>,
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
}

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
        let shared = Arc::new(Shared {
            outbound,
            replies,
            sender: transport.sender.clone(),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            era: RwLock::new(Arc::new(Unnegotiated)),
            state,
            inbound,
            serving: Mutex::new(HashMap::new()),
            last_served: AtomicU64::new(0),
            unserved: AtomicU64::new(0),
        });
        tokio::spawn(write_loop(Arc::downgrade(&shared), transport.sender, outbound_rx, replies_rx));
        tokio::spawn(read_loop(shared.clone(), transport.receiver));
        Connection { _life: Arc::new(LastHandle(shared.clone())), shared }
    }

    /// Installs the era the handshake chose, and tells the transport the
    /// negotiated version ([`MessageSender::negotiated`]) before anything of
    /// that era is sent.
    pub fn set_era(&self, era: Arc<dyn Era>) {
        let version = era.protocol_version().to_string();
        *self.shared.era.write().expect("era lock") = era;
        if !version.is_empty() {
            self.shared.sender.negotiated(&version);
        }
    }

    /// Puts the connection back before any era (after a modern probe the
    /// server did not understand), and tells the transport so
    /// ([`MessageSender::negotiated`] with an empty version).
    pub fn reset_era(&self) {
        *self.shared.era.write().expect("era lock") = Arc::new(Unnegotiated);
        self.shared.sender.negotiated("");
    }

    /// The era in force.
    pub fn era(&self) -> Arc<dyn Era> {
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
    /// than [`MAX_REPLY_BACKLOG`]: a diagnostic of a server that does not read.
    pub fn reply_backlog(&self) -> usize {
        MAX_REPLY_BACKLOG - self.shared.replies.capacity()
    }

    /// Sends a request and waits for its result. Dropping the future cancels
    /// the request on the wire.
    pub async fn request(&self, method: &str, params: Map<String, Value>) -> Result<Value, Error> {
        self.shared.clone().call(McpRequest::new(method, params)).await
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
        if let Err(e) = self.shared.sender.close().await {
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

    async fn enqueue(&self, text: String) -> Result<(), Error> {
        self.enqueue_with(text, WireHeaders::default(), None).await
    }

    async fn enqueue_with(
        &self,
        text: String,
        headers: WireHeaders,
        id: Option<RequestId>,
    ) -> Result<(), Error> {
        self.outbound
            .send(Outbound { text, headers, id })
            .await
            .map_err(|_| Error::new(FailureClass::TransportClosed, "connection writer has stopped"))
    }

    /// The writer is about to hand request `id` to the transport: marks it
    /// written. `false` when nobody waits for it any more (its caller gave
    /// up, or the connection ended): then it is not sent at all.
    fn mark_written(&self, id: &RequestId) -> bool {
        match self.pending.lock().expect("pending lock").get_mut(id) {
            Some(pending) => {
                pending.written = true;
                true
            }
            None => false,
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

    /// One request as the era wants it: sent, its result read
    /// ([`Era::reply`]), and, when the server asks for input
    /// (`input_required`), the input gathered through the inbound handler
    /// and the request sent again with a new id, at most
    /// [`MAX_INPUT_ROUNDS`] times.
    async fn call(self: Arc<Self>, mut req: McpRequest) -> Result<Value, Error> {
        let era = self.era.read().expect("era lock").clone();
        let result = self.clone().request_reissuing(&*era, &req).await?;
        let mut reply = era.reply(&req.method, result)?;
        let mut rounds = 0usize;
        loop {
            let input = match reply {
                Reply::Complete(result) => return Ok(result),
                Reply::InputRequired(input) => input,
            };
            let method = &req.method;
            if !methods::accepts_input_required(method) {
                return Err(Error::new(
                    FailureClass::ServerProtocol,
                    format!("the server asked for input on {method}, which may not ask for any"),
                ));
            }
            rounds += 1;
            if rounds > MAX_INPUT_ROUNDS {
                return Err(Error::new(
                    FailureClass::LimitExceeded,
                    format!("the server still asked for input after {MAX_INPUT_ROUNDS} rounds of {method}"),
                ));
            }
            self.fulfil(&mut req, input).await?;
            let result = self.clone().request_reissuing(&*era, &req).await?;
            reply = era.reply(&req.method, result)?;
        }
    }

    /// [`Shared::request`], sent again with a new id (at most
    /// [`MAX_REISSUES`] times) when its reply was lost while the connection
    /// stayed up and the era re-issues such a request
    /// ([`Era::reissue_on_loss`]).
    async fn request_reissuing(self: Arc<Self>, era: &dyn Era, req: &McpRequest) -> Result<Value, Error> {
        let mut reissued = 0;
        loop {
            match self.clone().request(req.clone()).await {
                Err(e)
                    if e.class() == FailureClass::Indeterminate
                        && reissued < MAX_REISSUES
                        && era.reissue_on_loss(&req.method)
                        && self.check_open().is_ok() =>
                {
                    reissued += 1;
                    tracing::debug!(target: "mcp_stack::connection", "re-issuing {}: {e}", req.method);
                }
                other => return other,
            }
        }
    }

    /// Turns `req` into the next round: its original params, the answers
    /// under the server's keys as `inputResponses`, and `requestState`
    /// echoed as it came (omitted when none came).
    async fn fulfil(&self, req: &mut McpRequest, input: InputRequired) -> Result<(), Error> {
        let mut responses = Map::new();
        for (key, request) in input.input_requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_string();
            if !methods::is_input_request(&method) {
                return Err(Error::new(
                    FailureClass::ServerProtocol,
                    format!(
                        "the server asked for input with {:?}, which is not an input request",
                        normalize_message(&method, 64)
                    ),
                ));
            }
            let request_params = request.get("params").cloned();
            match self.inbound.request(&method, request_params).await {
                Ok(result) => {
                    responses.insert(key, result);
                }
                Err(e) => {
                    let class = match e.code {
                        codes::METHOD_NOT_FOUND => FailureClass::ServerProtocol,
                        _ => FailureClass::RemoteToolError,
                    };
                    return Err(Error::new(
                        class,
                        format!("the server's {method} input request was refused: {}", e.message),
                    ));
                }
            }
        }
        let again = req.params_mut();
        again.remove("inputResponses");
        again.remove("requestState");
        if !responses.is_empty() {
            again.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = input.request_state {
            again.insert("requestState".into(), state);
        }
        Ok(())
    }

    /// Sends one request with a new id and waits for its reply.
    async fn request(self: Arc<Self>, mut req: McpRequest) -> Result<Value, Error> {
        self.check_open_to_send()?;
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        if let Some(slot) = req.extensions.get::<AssignedId>() {
            slot.set(&id);
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id.clone(), Pending { tx, written: false });
        let mut guard = PendingGuard { shared: self.clone(), id: id.clone(), sent: false, done: false };
        // `finish` marks the state closed before it drains the table: if it
        // ran between the check above and the insert, it missed this entry,
        // and nobody would ever answer it. Seeing the state still open here
        // means any later `finish` will find the entry.
        self.check_open_to_send()?;

        // The caller's `mcp.request` span (crate::layer::trace), when there
        // is one, learns the id and version this send goes out with.
        let span = tracing::Span::current();
        span.record("jsonrpc.request.id", tracing::field::display(&id));
        let headers = {
            let era = self.era.read().expect("era lock");
            if !era.protocol_version().is_empty() {
                span.record("mcp.protocol.version", era.protocol_version());
            }
            era.decorate(&mut req);
            era.wire_headers(&req)
        };
        let method = req.method.as_str();
        let params = req.params();
        let params = if params.is_empty() && method == methods::PING { None } else { Some(params) };
        let text = request_json(&id, method, params);
        tracing::trace!(target: "mcp_stack::wire", %id, method, bytes = text.len(), "request sent");
        self.enqueue_with(text, headers, Some(id.clone())).await?;
        guard.sent = true;

        let outcome = rx.await;
        guard.done = true;
        tracing::trace!(target: "mcp_stack::wire", %id, ok = matches!(outcome, Ok(Ok(_))), "reply");
        match outcome {
            Ok(result) => result,
            // Our entry was dropped without an answer; it had been sent, so
            // its outcome is unknown (unless the connection was closed on
            // purpose).
            Err(_) => Err(match &*self.state.borrow() {
                ConnectionState::Closed { class, message } => unanswered(*class, message, true),
                ConnectionState::Open => {
                    Error::new(FailureClass::Indeterminate, "connection lost before the reply")
                }
            }),
        }
    }

    fn complete(&self, response: Response) {
        let pending = self.pending.lock().expect("pending lock").remove(&response.id);
        let Some(pending) = pending else {
            self.warn(format!("ignored a reply to unknown request id {}", response.id));
            return;
        };
        let result = match response.outcome {
            Outcome::Result(value) => Ok(value),
            Outcome::Error(e) => Err(self.era.read().expect("era lock").classify_error(RpcError {
                code: e.code,
                message: normalize_message(&e.message, MAX_WARNING_BYTES),
                data: e.data.map(|mut data| {
                    crate::redact::scrub_value(&mut data);
                    data
                }),
            })),
        };
        let _ = pending.tx.send(result);
    }

    fn fail(&self, id: &RequestId, error: Error) -> bool {
        let pending = self.pending.lock().expect("pending lock").remove(id);
        match pending {
            Some(p) => {
                let _ = p.tx.send(Err(error));
                true
            }
            None => false,
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
    }
}

/// How a request that got no reply ends when the connection ended with
/// `class` (`why`); `left` says whether the request may have reached the
/// server. The one place that decides what a caller may do next:
///
/// - a close on purpose (`shutdown`) and an authorization failure keep their
///   class: the server was not asked to act, and the caller needs to know;
/// - a request that may have left ends `indeterminate` (it may have acted);
/// - one that never left ends `transport_closed`, the class that promises
///   it is safe to send again.
fn unanswered(class: FailureClass, why: &str, left: bool) -> Error {
    match class {
        FailureClass::Shutdown => Error::new(class, with_reply_context("connection closed", why, left)),
        auth if auth.is_auth() => Error::new(auth, with_reply_context("connection ended", why, left)),
        _ if left => Error::new(
            FailureClass::Indeterminate,
            format!("connection ended before the reply ({class}: {why})"),
        ),
        _ => Error::new(
            FailureClass::TransportClosed,
            format!("not sent: the connection ended first ({class}: {why})"),
        ),
    }
}

/// `why` as it is for a request that never left; for one that did, what
/// happened to it before the reply.
fn with_reply_context(what: &str, why: &str, left: bool) -> String {
    match left {
        true => format!("{what} before the reply ({why})"),
        false => why.to_string(),
    }
}

/// Removes a call's pending entry when its future is dropped early, and
/// cancels it on the wire if it had been sent.
struct PendingGuard {
    shared: Arc<Shared>,
    id: RequestId,
    sent: bool,
    done: bool,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let removed = self.shared.pending.lock().expect("pending lock").remove(&self.id);
        // A request the writer had not written yet is never written (the
        // writer skips it): nothing to cancel.
        let written = removed.is_some_and(|pending| pending.written);
        if !(written && self.sent) || self.shared.check_open().is_err() {
            return;
        }
        let notice = self.shared.era.read().expect("era lock").cancel_notice(&self.id);
        let notice = notice.map(|n| Message::Notification(n).to_json());
        let shared = self.shared.clone();
        let id = self.id.clone();
        // Cancel through the writer so the notice is ordered after the
        // request; a transport with its own way (closing a stream) is asked
        // directly when the era has no notice.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                match notice {
                    Some(text) => {
                        let _ = shared.enqueue(text).await;
                    }
                    None => {
                        let _ = shared.sender.cancel(&id, None).await;
                    }
                }
            });
        }
    }
}

/// What the writer takes next.
enum Next {
    Reply(String),
    Message(Outbound),
}

/// Writes what the connection sends, in order, replies to the server first.
///
/// - A request is written only while its caller still waits for it (else it
///   is skipped), and marked written first ([`Shared::mark_written`]).
/// - A request the transport refused to send ends at once with
///   `transport_closed` (the transport's error means it was not delivered;
///   `indeterminate` when the transport says it may have been), and the
///   connection ends: a transport that cannot send a request is gone. The
///   requests still queued behind it were never written, so they end
///   `transport_closed` too.
/// - A notification or a reply that fails to send is a warning, not the end
///   of the connection: over HTTP each message is its own exchange, and a
///   transport that is really gone shows it on the next request or on its
///   reader.
async fn write_loop(
    shared: std::sync::Weak<Shared>,
    sender: Arc<dyn MessageSender>,
    mut rx: mpsc::Receiver<Outbound>,
    mut replies: mpsc::Receiver<String>,
) {
    loop {
        let next = tokio::select! {
            biased;
            Some(text) = replies.recv() => Next::Reply(text),
            Some(outbound) = rx.recv() => Next::Message(outbound),
            else => return,
        };
        let (sent, id) = match next {
            Next::Reply(text) => (sender.send(text).await, None),
            Next::Message(Outbound { text, headers, id }) => {
                if let Some(id) = &id {
                    let Some(shared) = shared.upgrade() else { return };
                    if !shared.mark_written(id) {
                        continue;
                    }
                }
                let sent = match headers.is_empty() {
                    true => sender.send(text).await,
                    false => sender.send_request(text, headers).await,
                };
                (sent, id)
            }
        };
        let Err(e) = sent else { continue };
        let Some(shared) = shared.upgrade() else { return };
        let Some(id) = id else {
            if shared.check_open().is_ok() {
                shared.warn(format!("a notification or reply to the server could not be sent: {e}"));
            }
            continue;
        };
        // Taken out of the table, so that the connection's end (below, or
        // the reader's) does not fail it `indeterminate`: it was not sent.
        let failed = shared.pending.lock().expect("pending lock").remove(&id);
        // A failed write usually means the server is gone, and the reader
        // is about to see the end of its output with a better diagnosis
        // (a child's exit status and last stderr lines). Give it a moment
        // to say so, and report that with the write error's class.
        let mut state = shared.state.subscribe();
        let closed = state.wait_for(|s| *s != ConnectionState::Open);
        let _ = tokio::time::timeout(WRITE_FAILURE_GRACE, closed).await;
        let ended = shared.state.borrow().clone();
        shared.finish(e.class(), e.message());
        if let Some(failed) = failed {
            // The write error says whether the request may have left
            // (`indeterminate`) or was refused for authorization; a close
            // on purpose meanwhile wins; the reader's diagnosis, when it
            // came first, is the better message.
            let (class, why) = match ended {
                ConnectionState::Closed { class: FailureClass::Shutdown, message } => {
                    (FailureClass::Shutdown, message)
                }
                ConnectionState::Closed { message, .. } if !e.class().is_auth() => (e.class(), message),
                _ => (e.class(), e.message().to_string()),
            };
            let _ = failed.tx.send(Err(unanswered(class, &why, e.class() == FailureClass::Indeterminate)));
        }
        // What is still queued was never written: `finish` failed those
        // requests `transport_closed`, and nothing more is sent.
        rx.close();
        return;
    }
}

async fn read_loop(shared: Arc<Shared>, mut receiver: Box<dyn crate::transport::MessageReceiver>) {
    let permits = Arc::new(Semaphore::new(MAX_CONCURRENT_SERVER_REQUESTS));
    loop {
        // Stop reading once the connection was closed on purpose.
        let mut state = shared.state.subscribe();
        let next = tokio::select! {
            next = receiver.recv() => next,
            _ = state.wait_for(|s| *s != ConnectionState::Open) => return,
        };
        match next {
            Ok(Some(Inbound::Frame(text))) => {
                if !dispatch(&shared, &permits, &text).await {
                    return;
                }
            }
            Ok(Some(Inbound::Damaged { reason, prefix, bytes })) => {
                shared.warn(format!("dropped a damaged frame of {bytes} bytes: {reason}"));
                if let Some(id) = sniff_id(&prefix) {
                    let error = Error::new(
                        FailureClass::LimitExceeded,
                        format!("the reply ({bytes} bytes) was dropped: {reason}"),
                    );
                    shared.fail(&id, error);
                }
            }
            Ok(Some(Inbound::Dropped { reason })) => shared.warn(reason),
            Ok(Some(Inbound::RequestFailed { id, class, message })) => {
                shared.fail(&id, Error::new(class, message));
            }
            Ok(Some(Inbound::SessionExpired { id })) => match id {
                Some(id) => {
                    let error = Error::new(
                        FailureClass::TransportClosed,
                        "the server no longer knows the session (HTTP 404); the request was not processed",
                    )
                    .with_source(crate::transport::SessionExpired);
                    shared.fail(&id, error);
                }
                None => shared.warn("the server no longer knows the session (HTTP 404)".to_string()),
            },
            Ok(None) => {
                shared.finish(FailureClass::TransportClosed, "the server closed the connection");
                return;
            }
            Err(e) => {
                shared.finish(e.class(), e.message());
                return;
            }
        }
    }
}

/// Handles one frame. Returns `false` when the connection ended meanwhile
/// (the reply backlog stayed full).
async fn dispatch(shared: &Arc<Shared>, permits: &Arc<Semaphore>, text: &str) -> bool {
    match Message::parse(text) {
        Ok(Message::Response(response)) => shared.complete(response),
        Ok(Message::Notification(notification)) => {
            if notification.method == methods::NOTIFICATIONS_CANCELLED {
                stop_served(shared, &notification);
            }
            shared.inbound.notification(notification)
        }
        Ok(Message::Request(request)) => return serve(shared, permits, request).await,
        Err(EnvelopeError::TooDeep(deep)) => return too_deep(shared, deep).await,
        Err(EnvelopeError::ResultAndError(id)) => {
            let error =
                Error::new(FailureClass::ServerProtocol, "the response carries both result and error");
            if !shared.fail(&id, error) {
                shared.warn(format!("ignored a contradictory reply to unknown id {id}"));
            }
        }
        Err(e) => {
            shared.warn(format!("dropped a damaged message: {e}"));
            // A reply that serde refuses (a lone surrogate in a string, say)
            // ends its own call now rather than at its deadline.
            if let Some(id) = sniff_reply_id(text) {
                shared.fail(
                    &id,
                    Error::new(FailureClass::ServerProtocol, format!("the reply was damaged: {e}")),
                );
            }
        }
    }
    true
}

/// A message deeper than [`MAX_MESSAGE_DEPTH`]: a reply ends its call with
/// `limit_exceeded` and the [`TooDeep`] as the source (which keeps the raw
/// result for a caller that reads it piece by piece); a server request gets
/// an "invalid request" error (when the era serves any); anything else is a
/// warning.
async fn too_deep(shared: &Arc<Shared>, deep: TooDeep) -> bool {
    match (deep.method(), deep.id().cloned()) {
        (None, Some(id)) => {
            let error = Error::new(
                FailureClass::LimitExceeded,
                format!("the reply nests deeper than {MAX_MESSAGE_DEPTH} levels"),
            )
            .with_source(deep);
            if !shared.fail(&id, error) {
                shared.warn(format!("ignored a reply to unknown id {id} that nests too deep"));
            }
        }
        (Some(method), Some(id)) => {
            if !shared.admit_server_request(method) {
                return true;
            }
            shared.warn(format!("refused a server request {method:?} that nests too deep"));
            let text = format!("the request nests deeper than {MAX_MESSAGE_DEPTH} levels");
            let error = ErrorObject::new(codes::INVALID_REQUEST, text);
            return shared.reply_from_reader(Response::error(id, error)).await;
        }
        (method, None) => {
            let what = method.map(|m| format!(" {m:?}")).unwrap_or_default();
            shared.warn(format!("dropped a message{what} that nests deeper than {MAX_MESSAGE_DEPTH} levels"));
        }
    }
    true
}

/// Serves one server request: `ping` and refusals are answered by the
/// reader itself, through the reply backlog; the rest on a handler task.
/// Returns `false` when the connection ended meanwhile.
async fn serve(shared: &Arc<Shared>, permits: &Arc<Semaphore>, request: Request) -> bool {
    if !shared.admit_server_request(&request.method) {
        return true;
    }
    if request.method == methods::PING {
        return shared.reply_from_reader(Response::result(request.id, Value::Object(Map::new()))).await;
    }
    let Ok(permit) = permits.clone().try_acquire_owned() else {
        let error = ErrorObject::new(codes::INTERNAL_ERROR, "too many concurrent server requests");
        return shared.reply_from_reader(Response::error(request.id, error)).await;
    };
    let id = request.id.clone();
    let number = shared.last_served.fetch_add(1, Ordering::Relaxed) + 1;
    let serving = Serving { shared: shared.clone(), id: id.clone(), number };
    let task_shared = shared.clone();
    // Locked across the spawn, so that a task that ends at once removes its
    // entry after it was made, not before.
    let mut table = shared.serving.lock().expect("serving lock");
    let task = tokio::spawn(async move {
        let _serving = serving;
        let outcome = task_shared.inbound.request(&request.method, request.params).await;
        let response = match outcome {
            Ok(result) => Response::result(request.id, result),
            Err(error) => Response::error(request.id, error),
        };
        // The permit is kept until the reply is queued, so that handler
        // tasks stay bounded however long the backlog stays full.
        task_shared.reply_from_task(response).await;
        drop(permit);
    });
    table.insert(id, (number, task.abort_handle()));
    true
}

impl Shared {
    /// Whether the era serves a server request of `method`; when it does
    /// not, the request is dropped, with a warning for the 1st, 2nd, 4th, …
    /// one (a flood gives a few).
    fn admit_server_request(&self, method: &str) -> bool {
        let era = self.era.read().expect("era lock").clone();
        if era.serves_server_requests() {
            return true;
        }
        let dropped = self.unserved.fetch_add(1, Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            self.warn(format!(
                "dropped the server's request {:?} unanswered: in protocol version {} a server asks only \
                 through input_required results ({dropped} such requests dropped so far)",
                normalize_message(method, 64),
                era.protocol_version()
            ));
        }
        false
    }

    /// Queues a reply the reader makes. When the backlog is full the reader
    /// waits for room (reading nothing, which pushes back on the server), up
    /// to [`REPLY_STALL`]; then the connection ends with `limit_exceeded`.
    /// Returns `false` when the connection has ended.
    async fn reply_from_reader(&self, response: Response) -> bool {
        let text = Message::Response(response).to_json();
        let permit = match self.replies.try_reserve() {
            Ok(permit) => permit,
            Err(mpsc::error::TrySendError::Closed(())) => return false,
            Err(mpsc::error::TrySendError::Full(())) => {
                let mut state = self.state.subscribe();
                tokio::select! {
                    room = tokio::time::timeout(REPLY_STALL, self.replies.reserve()) => match room {
                        Ok(Ok(permit)) => permit,
                        Ok(Err(_)) => return false,
                        Err(_) => {
                            let text = format!(
                                "the server sent requests faster than it read the replies: {MAX_REPLY_BACKLOG} \
                                 replies waited {} s for the writer",
                                REPLY_STALL.as_secs()
                            );
                            self.finish(FailureClass::LimitExceeded, &text);
                            return false;
                        }
                    },
                    _ = state.wait_for(|s| *s != ConnectionState::Open) => return false,
                }
            }
        };
        permit.send(text);
        true
    }

    /// Queues a handler's reply, waiting for room as long as the connection
    /// is open.
    async fn reply_from_task(&self, response: Response) {
        let text = Message::Response(response).to_json();
        let mut state = self.state.subscribe();
        tokio::select! {
            _ = self.replies.send(text) => {}
            _ = state.wait_for(|s| *s != ConnectionState::Open) => {}
        }
    }
}

/// A served request's entry in [`Shared::serving`], removed when its task
/// ends or is stopped (the task's future, which holds this, is dropped).
struct Serving {
    shared: Arc<Shared>,
    id: RequestId,
    number: u64,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let mut table = self.shared.serving.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if table.get(&self.id).is_some_and(|(number, _)| *number == self.number) {
            table.remove(&self.id);
        }
    }
}

/// Stops the server request a `notifications/cancelled` names, if it is
/// still being served. One that already ended, or that was never seen, is
/// ignored, as the specification allows.
fn stop_served(shared: &Shared, notification: &Notification) {
    let Some(params) = notification.params.clone() else { return };
    let Ok(CancelledParams { request_id: Some(id), .. }) = serde_json::from_value(params) else { return };
    let entry = shared.serving.lock().expect("serving lock").remove(&id);
    if let Some((_, task)) = entry {
        task.abort();
    }
}

/// Finds the `"id"` of a frame from its first bytes, when it is there: the
/// common envelopes put it early. A best effort that never guesses: anything
/// that is not plainly an integer or a simple string gives `None`.
fn sniff_id(prefix: &str) -> Option<RequestId> {
    let at = prefix.find("\"id\"")?;
    let rest = prefix[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        let end = s.find('"')?;
        let id = &s[..end];
        return (!id.contains('\\')).then(|| RequestId::String(id.to_string()));
    }
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    let after = rest[digits.len()..].chars().next()?;
    if !(after == ',' || after == '}' || after.is_whitespace()) {
        return None;
    }
    digits.parse().ok().map(RequestId::Number)
}

/// Finds the id of a damaged *reply*: only from the part before its
/// `"result"` or `"error"` member, and never in a frame that names a
/// `"method"` there (a server request's id is in another id space).
fn sniff_reply_id(text: &str) -> Option<RequestId> {
    let end = ["\"result\"", "\"error\""].iter().filter_map(|k| text.find(k)).min()?;
    let head = &text[..end];
    if head.contains("\"method\"") {
        return None;
    }
    sniff_id(head)
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
        let shared = self.shared.clone();
        ResponseFuture {
            inner: Box::pin(async move { shared.call(req).await.map(McpResponse::new) }),
        }
    }
}

/// A JSON-RPC request's text, serialized from borrowed parts: the same text
/// as `Message::Request(Request::new(..)).to_json()`, without building (and
/// copying the params into) an owned [`Request`].
fn request_json(id: &RequestId, method: &str, params: Option<&Map<String, Value>>) -> String {
    #[derive(serde::Serialize)]
    struct RequestRef<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Map<String, Value>>,
    }
    let envelope = RequestRef { jsonrpc: crate::protocol::jsonrpc::JSONRPC_VERSION, id, method, params };
    serde_json::to_string(&envelope).expect("JSON-RPC envelopes always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_request_text_is_the_owned_requests() {
        let params: Map<String, Value> =
            serde_json::from_value(serde_json::json!({ "name": "echo", "arguments": { "m": "hé\"llo" } }))
                .unwrap();
        for id in [RequestId::Number(7), RequestId::String("a\"b".into())] {
            for params in [None, Some(&params)] {
                let owned = Request::new(id.clone(), "tools/call", params.cloned().map(Value::Object));
                assert_eq!(request_json(&id, "tools/call", params), Message::Request(owned).to_json());
            }
        }
    }

    /// An era that adds to every request.
    #[derive(Debug)]
    struct Stamping;

    impl Era for Stamping {
        fn protocol_version(&self) -> &str {
            "test"
        }
        fn decorate(&self, req: &mut McpRequest) {
            req.params_mut().insert("stamp".into(), Value::Bool(true));
        }
    }

    #[tokio::test]
    async fn a_decorating_era_copies_shared_params_and_leaves_the_callers_alone() {
        use tower_service::Service;
        let (client, mut server) = crate::transport::memory::duplex(1 << 20);
        let mut connection = Connection::start(client, Arc::new(NoInbound));
        connection.set_era(Arc::new(Stamping));
        // One request kept by the caller (as the retry layer keeps one to
        // send again) and sent twice.
        let kept = McpRequest::with_value("tools/call", serde_json::json!({ "name": "echo" }));
        let calls = async {
            let mut other = connection.clone();
            let (a, b) = tokio::join!(connection.call(kept.clone()), other.call(kept.clone()));
            [a, b]
        };
        let answer = async {
            for _ in 0..2 {
                let Ok(Some(Inbound::Frame(text))) = server.receiver.recv().await else {
                    panic!("a request")
                };
                let Ok(Message::Request(req)) = Message::parse(&text) else { panic!("a request: {text}") };
                let params = req.params.expect("params");
                assert_eq!(params, serde_json::json!({ "name": "echo", "stamp": true }));
                let reply = Message::Response(Response::result(req.id, Value::Object(Map::new())));
                server.sender.send(reply.to_json()).await.unwrap();
            }
        };
        let (results, ()) = tokio::join!(calls, answer);
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        assert_eq!(kept.params().get("stamp"), None, "the caller's request is not touched");
    }

    /// A sender that holds the request `first` until released and then
    /// fails it, fails every `notifications/fail`, and passes the rest on.
    struct Gate {
        inner: Arc<dyn MessageSender>,
        entered: Arc<tokio::sync::Notify>,
        release: Arc<tokio::sync::Notify>,
    }

    #[async_trait]
    impl MessageSender for Gate {
        async fn send(&self, message: String) -> Result<(), Error> {
            if message.contains("\"method\":\"first\"") {
                self.entered.notify_one();
                self.release.notified().await;
                return Err(Error::new(FailureClass::TransportClosed, "the pipe broke"));
            }
            if message.contains("\"method\":\"notifications/fail\"") {
                return Err(Error::new(FailureClass::Indeterminate, "the POST failed"));
            }
            self.inner.send(message).await
        }
        async fn close(&self) -> Result<(), Error> {
            self.inner.close().await
        }
    }

    #[derive(Default)]
    struct Warnings(Mutex<Vec<String>>);

    impl InboundHandler for Warnings {
        fn warning(&self, text: String) {
            self.0.lock().unwrap().push(text);
        }
    }

    /// A connection over a [`Gate`], and the server's side (which answers
    /// every request with `{}` while `answer` is set).
    fn gated(
        inbound: Arc<dyn InboundHandler>,
        answer: bool,
    ) -> (Connection, Arc<tokio::sync::Notify>, Arc<tokio::sync::Notify>, tokio::task::JoinHandle<()>) {
        let (client, server) = crate::transport::memory::duplex(1 << 20);
        let entered = Arc::new(tokio::sync::Notify::new());
        let release = Arc::new(tokio::sync::Notify::new());
        let gate = Gate { inner: client.sender, entered: entered.clone(), release: release.clone() };
        let transport = Transport { sender: Arc::new(gate), receiver: client.receiver };
        let connection = Connection::start(transport, inbound);
        let Transport { sender, mut receiver } = server;
        let peer = tokio::spawn(async move {
            while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
                if let (true, Ok(Message::Request(req))) = (answer, Message::parse(&text)) {
                    let reply = Message::Response(Response::result(req.id, Value::Object(Map::new())));
                    if sender.send(reply.to_json()).await.is_err() {
                        return;
                    }
                }
            }
        });
        (connection, entered, release, peer)
    }

    type Call = tokio::task::JoinHandle<Result<Value, Error>>;

    /// Starts request `first` and, once the [`Gate`] holds it in the
    /// writer, request `second`, queued behind it.
    async fn first_and_second_queued(connection: &Connection, entered: &tokio::sync::Notify) -> (Call, Call) {
        let start = |method: &'static str| {
            let c = connection.clone();
            tokio::spawn(async move { c.request(method, Map::new()).await })
        };
        let first = start("first");
        entered.notified().await;
        let second = start("second");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        (first, second)
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_the_transport_could_not_send_and_those_queued_behind_it_end_transport_closed() {
        let (connection, entered, release, _peer) = gated(Arc::new(NoInbound), true);
        let (first, second) = first_and_second_queued(&connection, &entered).await;
        release.notify_one();
        let first = first.await.unwrap().unwrap_err();
        assert_eq!(first.class(), FailureClass::TransportClosed, "{first}");
        assert!(first.message().contains("not sent"), "{first}");
        let second = second.await.unwrap().unwrap_err();
        assert_eq!(second.class(), FailureClass::TransportClosed, "never written, so retry-safe: {second}");
        assert!(matches!(connection.state(), ConnectionState::Closed { .. }));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_ends_fails_written_requests_indeterminate_and_queued_ones_transport_closed() {
        let (connection, entered, _release, peer) = gated(Arc::new(NoInbound), false);
        let (first, second) = first_and_second_queued(&connection, &entered).await;
        // The server goes away while `first` is being written and `second`
        // waits behind it.
        peer.abort();
        let first = first.await.unwrap().unwrap_err();
        assert_eq!(first.class(), FailureClass::Indeterminate, "it was being written: {first}");
        let second = second.await.unwrap().unwrap_err();
        assert_eq!(second.class(), FailureClass::TransportClosed, "it never left: {second}");
        assert!(second.message().contains("not sent"), "{second}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_notification_that_fails_to_send_is_a_warning_and_the_connection_goes_on() {
        let warnings = Arc::new(Warnings::default());
        let (connection, _entered, _release, _peer) = gated(warnings.clone(), true);
        connection.notify("notifications/fail", None).await.expect("queued");
        let result = connection.request("after", Map::new()).await.expect("the connection goes on");
        assert_eq!(result, Value::Object(Map::new()));
        assert_eq!(connection.state(), ConnectionState::Open);
        let warnings = warnings.0.lock().unwrap().clone();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("could not be sent") && warnings[0].contains("the POST failed"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_request_without_a_reply_keeps_shutdown_and_auth_and_is_indeterminate_only_if_it_left() {
        for left in [false, true] {
            let e = unanswered(FailureClass::Shutdown, "closed by the host", left);
            assert_eq!(e.class(), FailureClass::Shutdown, "{e}");
            let e = unanswered(FailureClass::AuthRequired, "needs authorization", left);
            assert_eq!(e.class(), FailureClass::AuthRequired, "{e}");
            assert!(e.message().contains("needs authorization"), "{e}");
        }
        let e = unanswered(FailureClass::TransportClosed, "the child exited", true);
        assert_eq!(e.class(), FailureClass::Indeterminate, "it may have acted: {e}");
        assert!(e.message().contains("the child exited"), "{e}");
        let e = unanswered(FailureClass::ServerProtocol, "bad frame", false);
        assert_eq!(e.class(), FailureClass::TransportClosed, "safe to send again: {e}");
        assert!(e.message().starts_with("not sent") && e.message().contains("server_protocol"), "{e}");
    }

    #[test]
    fn sniffs_plain_ids_only() {
        assert_eq!(sniff_id(r#"{"jsonrpc":"2.0","id":42,"result":{"#), Some(RequestId::Number(42)));
        assert_eq!(sniff_id(r#"{"id" : "abc","#), Some(RequestId::String("abc".into())));
        assert_eq!(sniff_id(r#"{"jsonrpc":"2.0","result":"#), None);
        assert_eq!(sniff_id(r#"{"id":4"#), None);
        assert_eq!(sniff_id(r#"{"id":"a\"b","#), None);
    }

    #[test]
    fn sniffs_reply_ids_only_before_the_result() {
        let bad = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"\ud800"}]}}"#;
        assert_eq!(sniff_reply_id(bad), Some(RequestId::Number(7)));
        // The id after the result could be anyone's: no guess.
        assert_eq!(sniff_reply_id(r#"{"result":{"items":[{"id":3}]},"id":9}"#), None);
        // A server request's id is not ours.
        assert_eq!(sniff_reply_id(r#"{"jsonrpc":"2.0","id":0,"method":"x","params":{"result":1"#), None);
        assert_eq!(sniff_reply_id(r#"{"jsonrpc":"2.0","id":0,"method":"x"}"#), None);
    }
}
