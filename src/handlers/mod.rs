//! [`Handlers`]: the host's services for what a server starts on its own.
//!
//! Each handler is a `tower::Service`, boxed as a `BoxCloneSyncService`, so
//! a host can wrap its own in layers (a timeout, a rate limit, an audit log)
//! before installing it, and test it alone like any other service. When the
//! server cancels its request (`notifications/cancelled`), the call's future
//! is dropped: a handler stops at its next `.await` and nothing is answered
//! (see [`crate::connection`]). For the common case an async closure is
//! enough:
//!
//! ```
//! use mcp_stack::handlers::{ElicitResult, Handlers, SampleResult};
//! use mcp_stack::protocol::Root;
//!
//! let handlers = Handlers::default()
//!     .elicitation(|req| async move {
//!         // Show `req.message` to a person and ask; here: accept the defaults.
//!         Ok(ElicitResult::accept(req.defaults()))
//!     })
//!     .sampling(|req| async move {
//!         Ok(SampleResult::text("my-model", format!("{} messages read", req.messages.len())))
//!     })
//!     .with_roots(vec![Root::new("file:///home/me/project")])
//!     .log(|msg| async move {
//!         eprintln!("[{}] {}", msg.level, msg.text);
//!         Ok(())
//!     });
//! assert!(handlers.elicitation.is_some());
//! ```
//!
//! A tower service plugs in the same way, layers and all:
//!
//! ```
//! use std::time::Duration;
//! use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
//! use tower::ServiceBuilder;
//!
//! let svc = ServiceBuilder::new()
//!     .timeout(Duration::from_secs(60))
//!     .service_fn(|_req: ElicitRequest| async { Ok::<_, mcp_stack::Error>(ElicitResult::decline()) });
//! let handlers = Handlers::default().elicitation_service(svc);
//! # drop(handlers);
//! ```
//!
//! # What installing a handler does
//!
//! A client capability is advertised in `initialize` only when its handler
//! is installed here **and** the [`Definition`]'s
//! [`AllowedCapabilities`] allows it for that server: the handlers say what
//! the host can do, the definition says what this server may ask for. A
//! server request for a capability that was not advertised is answered
//! "method not found".
//!
//! | handler | advertises | serves |
//! | --- | --- | --- |
//! | `elicitation` | `elicitation.form` (and `elicitation.url` with [`ElicitationModes::url`]) | `elicitation/create` |
//! | `sampling` | `sampling` (and `sampling.tools` with [`Handlers::sampling_tools`], `sampling.context` with [`Handlers::sampling_context`]) | `sampling/createMessage` |
//! | `roots` | `roots.listChanged` | `roots/list` |
//! | `log` | nothing (logging is a server capability) | `notifications/message`, and turns logs on with `logging/setLevel` |
//!
//! A handler that calls back through its own binding (a sampling handler
//! calling a tool, say) holds a clone of the [`Binding`], and the binding
//! holds the handler: the two then keep each other alive, and only
//! [`Binding::close`] ends the connection (and a stdio child). Close such a
//! binding explicitly.
//!
//!
//! # Sampling
//!
//! Sampling: a server asks the host's model for a completion.
//!
//! The binding receives `sampling/createMessage`, checks it against the
//! binding's budgets, hands a [`SampleRequest`] to the host's sampling
//! service and sends back its [`SampleResult`]. Every refusal is
//! `sampling_over_budget` (or, for a request that breaks the protocol,
//! `-32602`), before the host's model is asked anything:
//!
//! - **Size.** At most [`Limits::max_sampling_messages`] messages, and the
//!   system prompt plus the messages at most
//!   [`Limits::max_sampling_request_bytes`] as JSON. A conversation is
//!   refused, not trimmed: a model given part of a conversation answers a
//!   different question.
//! - **Tokens.** The server's `maxTokens` is capped at
//!   [`Limits::max_sampling_tokens`]; the handler sees the granted figure in
//!   [`SampleRequest::max_tokens`] (and the server's in
//!   [`SampleRequest::requested_max_tokens`]). A server never raises the
//!   ceiling.
//! - **Concurrency.** At most [`Limits::max_sampling_concurrency`] requests
//!   are served at once per binding; one more is refused at once instead of
//!   queued (the server is waiting, and a queue would only hide the
//!   overload).
//! - **Depth.** At most [`Limits::max_sampling_depth`]; see below.
//! - **Tools.** `tools`, `toolChoice` and `tool_use` / `tool_result` blocks
//!   are accepted only when the host declared `sampling.tools`
//!   ([`Handlers::sampling_tools`]); otherwise the request is refused with
//!   `-32602`, as the specification forbids a server to send them.
//!
//! The host's service is bounded by [`Timeouts::request`].
//!
//! ## Depth: what it can and cannot see
//!
//! A sampling handler may itself call the server (a tool, a prompt) through
//! the binding, and the server may answer that call by sampling again: a
//! chain that, unchecked, recurses until something breaks. The binding
//! numbers the links:
//!
//! - While the host's sampling service runs for a request at depth *n*, the
//!   task it runs on carries *n* in a task-local ([`sampling_depth`](crate::layer::sampling_depth::sampling_depth)).
//! - A request the binding sends from such a task (any [`Binding`] method:
//!   `call_tool`, `get_prompt`, `request`, … on this binding or another) is
//!   recorded as "in flight at depth *n*" until its reply.
//! - A sampling request that arrives while requests are in flight at depths
//!   *n₁…nₖ* gets depth max(*nᵢ*) + 1; with none in flight, depth 1.
//!
//! It **can** see chains that run through [`Binding`] methods on the task
//! the handler was called on (or on tasks it propagates the depth to with
//! [`with_sampling_depth`](crate::layer::sampling_depth::with_sampling_depth)), across bindings too.
//!
//! It **cannot** see:
//!
//! - which in-flight request a sampling request belongs to: the legacy
//!   protocol does not say. It charges the deepest one, so an unrelated
//!   sampling request arriving during a deep chain is counted deeper than
//!   it is (refused too early, never too late, among what it sees);
//! - work a handler spawns onto another task without
//!   [`with_sampling_depth`](crate::layer::sampling_depth::with_sampling_depth), or requests sent through a clone of
//!   [`Binding::service`] or another client: they carry no depth, so a
//!   chain through them restarts at 1;
//! - chains that leave the host: a server that asks another server, which
//!   samples from some other client.
//!
//! [`Limits::max_sampling_messages`]: crate::Limits::max_sampling_messages
//! [`Limits::max_sampling_request_bytes`]: crate::Limits::max_sampling_request_bytes
//! [`Limits::max_sampling_tokens`]: crate::Limits::max_sampling_tokens
//! [`Limits::max_sampling_concurrency`]: crate::Limits::max_sampling_concurrency
//! [`Limits::max_sampling_depth`]: crate::Limits::max_sampling_depth
//! [`Timeouts::request`]: crate::Timeouts::request
//! [`Handlers::sampling_tools`]: crate::handlers::Handlers::sampling_tools
//! [`Handlers::sampling_context`]: crate::handlers::Handlers::sampling_context
//! [`Binding`]: crate::Binding
//! [`Binding::service`]: crate::Binding::service
//!
//!
//! # Elicitation
//!
//! Elicitation: a server asks a person, through the host, for input.
//!
//! The binding receives `elicitation/create`, checks it, hands an
//! [`ElicitRequest`] to the host's elicitation service, checks the answer
//! and only then replies. In order:
//!
//! 1. **Mode.** Form mode is served when the host declared it; URL mode
//!    when the host declared it *and* the negotiated protocol is 2025-11-25
//!    or later (earlier revisions have form mode only). Any other mode is
//!    refused with `-32602`, as the specification asks.
//! 2. **Bounds, refused, never trimmed.** The message, and in URL mode the
//!    URL and the elicitation id, must each fit
//!    [`Limits::max_elicit_message_bytes`]; the schema must fit
//!    [`Limits::max_elicit_schema_bytes`] and [`Limits::max_schema_depth`].
//!    A request over a bound is refused (`elicitation_invalid`, `-32602` to
//!    the server) instead of shortened: a person reads the prompt and acts
//!    on it, and a prompt cut short can say something its server never said
//!    ("do not delete" → "do").
//! 3. **Schema.** The requested schema must be an object schema that
//!    compiles. It is compiled offline: a `$ref` to anything outside the
//!    schema is an error, never a fetch.
//! 4. **The wait.** The host's service is given [`Timeouts::elicitation`];
//!    past it the server is told `cancel` and the binding reports
//!    `elicitation_timeout`.
//! 5. **The answer.** An accepted form answer is validated against the
//!    requested schema (formats included) *before* it is sent. An answer
//!    that breaks the schema is not sent: the server gets an error
//!    (`-32603`, class `elicitation_invalid`) and the host's
//!    [`Event::ElicitationResolved`] says why. A URL-mode accept carries no
//!    content (the specification keeps URL-mode data out of the client), so
//!    an accept with content is refused the same way.
//!
//! The URL of a URL-mode request is passed to the host as data. It is
//! bounded, but this crate never vets, resolves or opens it: whether it is
//! safe to show or to open is the host's decision, and nothing the server
//! says can make that decision for it.
//!
//! Decline and cancel are answers, sent as such; the binding's event names
//! them with their failure classes (`elicitation_declined`,
//! `elicitation_cancelled`) so that an observer can count them. A handler
//! may also fail with an [`Error`] of those classes, which is sent as the
//! matching action.
//!
//! `notifications/elicitation/complete` for a URL elicitation this binding
//! accepted becomes [`Event::ElicitationComplete`]; the specification asks
//! a client to ignore ids it does not know, and it does.
//!
//! [`Limits::max_elicit_message_bytes`]: crate::Limits::max_elicit_message_bytes
//! [`Limits::max_elicit_schema_bytes`]: crate::Limits::max_elicit_schema_bytes
//! [`Limits::max_schema_depth`]: crate::Limits::max_schema_depth
//! [`Timeouts::elicitation`]: crate::Timeouts::elicitation
//! [`Event::ElicitationResolved`]: crate::Event::ElicitationResolved
//! [`Event::ElicitationComplete`]: crate::Event::ElicitationComplete
//!
//!
//! # Roots
//!
//! Roots: the directories a host lets a server work in.
//!
//! `roots/list` is answered from the host's roots service within
//! [`Timeouts::request`]. A root whose URI is not `file://` (the only scheme
//! the specification allows) is left out with a warning event rather than
//! sent. When the host's roots change, [`Binding::notify_roots_changed`]
//! tells the server, which then asks again.
//!
//! [`Timeouts::request`]: crate::Timeouts::request
//! [`Binding::notify_roots_changed`]: crate::Binding::notify_roots_changed
//!
//!
//! # Logging
//!
//! Server logs: `notifications/message` to the host's log service.
//!
//! - **Turning logs on.** A server sends logs once it is given a level, so
//!   the binding sends `logging/setLevel` at [`Definition::log_level`] right
//!   after the handshake, and only when a log handler is installed *and*
//!   the server advertises `logging`: there is no point turning logs on
//!   with nowhere to deliver them. [`Binding::set_log_level`] changes it
//!   later.
//! - **Bounds.** A record's text (the `data` string, or the JSON of any
//!   other `data`) is cut to [`Limits::max_log_message_bytes`] with control
//!   characters replaced, so a log line can neither flood a terminal nor
//!   forge lines in it ([`LogMessage::truncated`] says when it was cut). A
//!   record below the binding's level (a server that ignores `setLevel`) or
//!   with an unknown level is not delivered to the handler.
//! - **A flood cannot stall the connection.** The connection's reader only
//!   queues a record (a bounded queue of 256) and moves on; the
//!   log service runs on a task of its own, one record at a time. When it
//!   falls behind and the queue is full, the newest record is dropped and
//!   counted ([`Binding::dropped_logs`], [`Status::dropped_logs`]): the
//!   queued records stay in order, and a server that floods loses its own
//!   excess, never another call's reply.
//!
//! Every record is also reported as [`Event::ServerLog`] (through the event
//! queue, with its own drop count), whether or not a log handler is
//! installed.
//!
//! [`Definition::log_level`]: crate::Definition::log_level
//! [`Binding::set_log_level`]: crate::Binding::set_log_level
//! [`Binding::dropped_logs`]: crate::Binding::dropped_logs
//! [`Status::dropped_logs`]: crate::Status::dropped_logs
//! [`Limits::max_log_message_bytes`]: crate::Limits::max_log_message_bytes
//! [`Event::ServerLog`]: crate::Event::ServerLog
//!
//! [`Binding`]: crate::Binding
//! [`Binding::close`]: crate::Binding::close
//! [`Definition`]: crate::Definition
//! [`AllowedCapabilities`]: crate::AllowedCapabilities

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use tower::util::BoxCloneSyncService;
use tower::ServiceExt;
use tower_service::Service;

mod elicitation;
pub(crate) mod inbound;
mod logging;
mod roots;
mod rpc;
mod sampling;

use crate::error::{BoxError, Error};
use crate::events::{Event, EventHandler};
use crate::protocol::roots::Root;
pub use elicitation::{
    ElicitAction, ElicitRequest, ElicitResult, ElicitationMode, ElicitationModes, ElicitationService,
};
pub(crate) use inbound::MAX_RESOURCE_URI_BYTES;
pub use logging::{LogMessage, LogService};
pub use roots::{root_for_path, ListRoots, RootsService};
pub use sampling::{sampling_denied, SampleRequest, SampleResult, SamplingService};

/// The host's services for what a server starts on its own: elicitation,
/// sampling, roots, logs and the binding's events. See the
/// [module docs](self) for what each one advertises.
#[derive(Clone, Default)]
pub struct Handlers {
    /// Serves elicitation. `None`: the capability is not advertised.
    pub elicitation: Option<ElicitationService>,
    /// The elicitation modes declared when `elicitation` is installed.
    pub elicitation_modes: ElicitationModes,
    /// Serves sampling. `None`: the capability is not advertised.
    pub sampling: Option<SamplingService>,
    /// Declares `sampling.tools`: the host's model can use tools, so a
    /// server may send `tools`, `toolChoice` and `tool_use` / `tool_result`
    /// blocks. Off by default; such a request is refused when it is off.
    pub sampling_tools: bool,
    /// Declares `sampling.context`: the host honours `includeContext`
    /// (`thisServer`, `allServers`) in the server's sampling requests. Off
    /// by default; a server should then ask for no context.
    pub sampling_context: bool,
    /// Supplies roots. `None`: the capability is not advertised.
    pub roots: Option<RootsService>,
    /// Receives server log messages. `None`: they are only reported as
    /// events, and `logging/setLevel` is not sent.
    pub log: Option<LogService>,
    /// Receives the binding's events. `None` discards them.
    pub event: Option<EventHandler>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("elicitation_modes", &self.elicitation_modes)
            .field("sampling", &self.sampling.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .field("sampling_context", &self.sampling_context)
            .field("roots", &self.roots.is_some())
            .field("log", &self.log.is_some())
            .field("event", &self.event.is_some())
            .finish()
    }
}

fn boxed<S, Req>(svc: S) -> BoxCloneSyncService<Req, S::Response, Error>
where
    S: Service<Req> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    Req: 'static,
{
    BoxCloneSyncService::new(svc.map_err(|e: S::Error| Error::from_boxed(e.into())))
}

impl Handlers {
    /// Handlers with an event handler.
    pub fn with_events(mut self, f: impl Fn(Event) + Send + Sync + 'static) -> Self {
        self.event = Some(Arc::new(f));
        self
    }

    /// Serves elicitation with an async closure.
    pub fn elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, Error>> + Send + 'static,
    {
        self.elicitation_service(tower::service_fn(f))
    }

    /// Serves elicitation with a tower service (any error type a
    /// `BoxError` holds; an [`Error`] inside keeps its class, tower's
    /// `Elapsed` becomes `deadline`).
    pub fn elicitation_service<S>(mut self, svc: S) -> Self
    where
        S: Service<ElicitRequest, Response = ElicitResult> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.elicitation = Some(boxed(svc));
        self
    }

    /// Declares the elicitation modes the handler carries out (form only by
    /// default).
    pub fn elicitation_modes(mut self, modes: ElicitationModes) -> Self {
        self.elicitation_modes = modes;
        self
    }

    /// Serves sampling with an async closure.
    pub fn sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(SampleRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<SampleResult, Error>> + Send + 'static,
    {
        self.sampling_service(tower::service_fn(f))
    }

    /// Serves sampling with a tower service.
    pub fn sampling_service<S>(mut self, svc: S) -> Self
    where
        S: Service<SampleRequest, Response = SampleResult> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.sampling = Some(boxed(svc));
        self
    }

    /// Declares (or withdraws) `sampling.tools`.
    pub fn sampling_tools(mut self, declared: bool) -> Self {
        self.sampling_tools = declared;
        self
    }

    /// Declares (or withdraws) `sampling.context`.
    pub fn sampling_context(mut self, declared: bool) -> Self {
        self.sampling_context = declared;
        self
    }

    /// Supplies roots with an async closure.
    pub fn roots<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ListRoots) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, Error>> + Send + 'static,
    {
        self.roots_service(tower::service_fn(f))
    }

    /// Supplies roots with a tower service.
    pub fn roots_service<S>(mut self, svc: S) -> Self
    where
        S: Service<ListRoots, Response = Vec<Root>> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.roots = Some(boxed(svc));
        self
    }

    /// Supplies a fixed list of roots.
    pub fn with_roots(self, roots: Vec<Root>) -> Self {
        let roots = Arc::new(roots);
        self.roots(move |_| {
            let roots = roots.clone();
            async move { Ok(roots.as_ref().clone()) }
        })
    }

    /// Receives log messages with an async closure.
    pub fn log<F, Fut>(self, f: F) -> Self
    where
        F: Fn(LogMessage) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        self.log_service(tower::service_fn(f))
    }

    /// Receives log messages with a tower service.
    pub fn log_service<S>(mut self, svc: S) -> Self
    where
        S: Service<LogMessage, Response = ()> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.log = Some(boxed(svc));
        self
    }
}
