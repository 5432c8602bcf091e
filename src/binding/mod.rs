//! [`Binding`]: a live, named connection to one server, built from a
//! [`Definition`] as a stack of tower layers, with user layers inside it.

mod apps;
mod authenticating;
mod builder;
mod catalog;
mod connect;
pub(crate) use connect::redialing_in;
mod definition;
mod operations;
mod skills;
mod stack;
mod status;
mod subscriptions;
mod tasks;
mod transitions;

use crate::events::{Event, EventStream, State};
use crate::handlers::{Handlers, MAX_RESOURCE_URI_BYTES};
pub use builder::{BindingBuilder, UserLayer};
pub use definition::Definition;
pub use stack::{BindingFuture, BindingService, StackParts};
pub use status::Status;
pub use tasks::{TaskHandle, TaskStart};

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use crate::catalog::{BuildContext, CatalogCell, CatalogGuard, CatalogService, ChangeFeed};
use crate::config::limits::{Limits, Timeouts};
use crate::content::{PromptResult, ResourceResult, ToolResult};
use crate::era::{ChangeStyle, Dialer, Era};
use crate::error::{Error, FailureClass};
pub(crate) use crate::events::EventBus;
use crate::handlers::inbound::{client_capabilities, BindingInbound, ServerSide};
use crate::layer::cache::{CacheLayer, CacheState};
use crate::layer::reconnect::{Reconnect, ReconnectLayer, Report};
use crate::layer::trace::{ModelNames, Trace};
use crate::layer::{
    deadline::{Deadline, DeadlineLayer},
    progress::ProgressRouter,
    retry::SafeRetry,
    sampling_depth::SamplingDepthLayer,
    tool_filter::ToolFilterLayer,
};
use crate::protocol::completion::{CompleteResult, CompletionReference};
use crate::protocol::logging::LoggingLevel;
use crate::protocol::prompts::Prompt;
use crate::protocol::resources::{Resource, ResourceTemplate};
use crate::protocol::tools::Tool;
use crate::request::{CallOpts, McpRequest, McpResponse};
use crate::session::SessionInfo;
use crate::transport::ConnectConfig;
use transitions::Lifecycle;

pub(crate) use crate::request::MAX_WARNINGS;
/// The most values [`Binding::complete`] keeps (the specification's own
/// maximum per response).
pub(crate) const MAX_COMPLETION_VALUES: usize = 100;
/// The longest completion value kept, in bytes; a longer one is dropped
/// (a cut value would complete to something the server never offered).
pub(crate) const MAX_COMPLETION_VALUE_BYTES: usize = 1024;
/// The most bytes of completion values [`Binding::complete`] keeps in all.
pub(crate) const MAX_COMPLETION_BYTES: usize = 64 << 10;
/// The longest resource URI [`Binding::subscribe`] accepts.
pub(crate) const MAX_SUBSCRIPTION_URI_BYTES: usize = MAX_RESOURCE_URI_BYTES;

/// A list read from a server, with the defects tolerated while reading it:
/// a whole list (every page), or one page of it with the cursor of the
/// next ([`Binding::list_tools_page`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing<T> {
    /// The entries that were valid, in server order.
    pub items: Vec<T>,
    /// Bounded descriptions of what was dropped or cut short.
    pub warnings: Vec<String>,
    /// One page: the cursor of the next page, if the server has one
    /// (opaque, at most 4 KiB). Always `None` for a whole list.
    pub next_cursor: Option<String>,
}

/// A live, named connection to one server. Cheap to clone; clones share the
/// connection.
///
/// # The stack
///
/// Outermost first, each position chosen for a reason. Every layer passes
/// readiness through as tower's middleware do, except where said.
///
/// Around all of it, each request gets its `tracing` span
/// ([`crate::layer::trace`]: binding, method, tool and model name, request
/// id; `INFO` for tool calls, `DEBUG` for the rest), opened first so that
/// a refusal, a wait and a retry all show inside it; the catalog's own
/// reads get one too. With [`Definition::trace_context`] set, it also
/// writes the W3C `traceparent` into the request's `_meta`.
///
/// 1. [`ToolFilterLayer`]: refuses a call to a filtered tool
///    (`tool_unavailable`) before anything else happens: no deadline, no
///    progress route, no place at the gate, no permit, nothing on the wire,
///    and nothing seen by user layers. `tools/list` results pass through it
///    last, so what a caller lists is what the filter permits.
/// 2. [`DeadlineLayer`]: fixes one absolute deadline when the call enters
///    (the caller's [`CallOpts`], a timeout counting from this moment, or
///    `Timeouts::request`). Everything below — a second try after a -32020,
///    waiting for a user layer's capacity, the tool-call gate, a
///    concurrency permit, a reconnect, retries and their delays, the
///    exchange, bounding the result — is inside it. On expiry it drops
///    everything below at once, which releases the gate and the permit and
///    cancels on the wire.
/// 3. The catalog's call checks ([`crate::catalog`]): a `tools/call` is
///    checked against the adopted generation (`tool_schema_changed` before
///    any I/O when a waiting candidate changes the tool) and its structured
///    result validated against the tool's output schema on the way up; on
///    2026-07-28 over HTTP the tool's `x-mcp-header` arguments go down as
///    typed `Mcp-Param-*` headers, and a -32020 makes the catalog look
///    again and the call go once more, inside the same deadline. A call of a
///    tool safe to run twice ([`Definition::repeatable_tools`]) is marked
///    for the retry layer (12).
/// 4. The sampling-depth layer ([`layer::sampling_depth`](crate::layer::sampling_depth)): counts a request made from the host's
///    sampling service in its chain until the reply, and passes the depth
///    down as a typed extension (see [Sampling](crate::handlers#sampling)). It reads a task-local,
///    so it runs here, on the caller's task, before anything can move the
///    call to another one.
/// 5. The entry point: the stack below is driven to readiness *inside* each
///    call's future (tower's `svc.clone().oneshot(req)`), so that every wait
///    of the layers below counts against the deadline above while each of
///    them passes readiness through. Everything above it is always ready,
///    which is why a refusal (1, 3) is immediate whatever the connection is
///    doing.
/// 6. **User layers** ([`BindingBuilder::layer`]), the first added
///    outermost. See [User layers](#user-layers).
/// 7. [`ResultLimitLayer`]: bounds results (what it did travels up as typed
///    marks), above everything that holds a shared resource: by the time it
///    walks a large result, the reply has come up through the gate and the
///    concurrency limit, which have let the next call go.
/// 8. [`CacheLayer`]: serves a list or a
///    read from the cache while the server says it is fresh, and keeps what
///    the server lets clients keep (see [`crate::cache`]). Below the result
///    limit, so that a result from a store is bounded again; above the
///    gate and the permits, so that a hit holds neither for long.
/// 9. [`ProgressLayer`]: attaches the token and registers its route before
///    the call can queue at the gate or be sent, so no report can arrive
///    before its route exists; the route lives exactly as long as the call.
/// 10. [`ToolCallGateLayer`]: one tool call at a time unless
///     [`Definition::allow_parallel_calls`]. The one layer that does not pass
///     readiness through: it takes the gate *before* asking the concurrency
///     limit for a permit, so queued tool calls hold no permit and listing,
///     reading and ping are never held behind a long tool call (see
///     [`crate::layer::tool_gate`]).
/// 11. `ConcurrencyLimit` (tower's): at most
///     `Limits::max_concurrent_requests` in flight, just above the
///     connection, so a permit covers the exchange, not a wait at the gate.
/// 12. `Retry` (tower's) with [`SafeRetry`]: repeats a request after a
///     failure that may pass: one refused unprocessed (HTTP 429 or 503,
///     after its `Retry-After`) or never sent, and, for what is safe to
///     repeat and the tools [`Definition::repeatable_tools`] names, a lost
///     reply, 408 or another 5xx; never a JSON-RPC error or a tool error
///     (see [`crate::layer::retry`]). Below the
///     concurrency limit, so a retry keeps its caller's permit. Keeping a
///     request to send again is a reference count: an [`McpRequest`]'s
///     params are shared between its clones.
/// 13. [`Reconnect`]: whichever connection is live, replaced by a supervisor
///     when it is lost (re-dial, re-run the handshake, with backoff per
///     [`Definition::reconnect`]); it also renews a session an HTTP server
///     forgot, once, at once (see [`crate::layer::reconnect`]).
/// 14. [`Connection`](crate::connection::Connection): the JSON-RPC engine,
///     one per transport life.
///
/// One call path: the binding's methods are [`Binding::service`] plus a
/// conversion ([`ToolResult::from_response`] and its siblings), so a host
/// that sends through the service gets the same checks and results. The
/// catalog's own list calls (discovery, and the refetch after a
/// `list_changed` or a reconnect) go through a deadline of their own into
/// 5: below the filter and the call checks, since the catalog describes the
/// server's whole offering, and above the user layers, which see them.
///
/// # User layers
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_stack::Error> {
/// use mcp_stack::{Binding, CallOpts, Definition};
/// use tower::limit::ConcurrencyLimitLayer;
///
/// let binding = Binding::builder(Definition::new("demo", mcp_stack::demo::factory()))
///     .layer(ConcurrencyLimitLayer::new(2)) // at most two requests of this host at once
///     .connect()
///     .await?;
/// let echoed = binding.call_tool("echo", serde_json::json!({"message": "hi"}), CallOpts::default()).await?;
/// assert_eq!(echoed.content[0].as_text(), Some("hi"));
/// # binding.close().await;
/// # Ok(()) }
/// ```
///
/// A user layer (a timeout, a rate limit, load shedding, an audit log,
/// metrics, a policy check) is any `tower::Layer` over
/// [`BoxMcpService`](crate::request::BoxMcpService) whose service takes
/// [`McpRequest`] to [`McpResponse`] and fails with any error that converts
/// into a [`BoxError`](crate::BoxError): tower's own middleware fit as they
/// are, `Clone` or not. [`BindingBuilder::layer`] says what it costs and
/// how its errors are classified. It sits at 6, and so:
///
/// - it sees every request the binding sends for the host — tool calls,
///   prompts, resources, completions, subscriptions, ping — and the
///   catalog's list calls; not the handshake, which is the connection's own
///   (after a reconnect, the catalog's refetch passes through it again);
/// - it sees each request once: below it, retries and a renewed session
///   send the same request again without it;
/// - it never sees a call the tool filter or the catalog refused; it sees a
///   call sent again after a -32020 twice (it is sent twice);
/// - it runs inside the deadline: the request it sees has its absolute
///   deadline in [`CallOpts::deadline`], a wait it imposes counts against
///   it, and it cannot extend it;
/// - it sees bounded results (the result limit is below it) and the
///   response's typed extensions; it can attach typed data to the
///   request's [extensions](McpRequest::extensions) for the layers and the
///   transport below.
///
/// Reconnecting, candidates and events work with user layers in place: they
/// live below them (the reconnect layer) or around the stack (the catalog,
/// the lifecycle). [`BindingBuilder::stack`] replaces 7–11 with a stack of
/// the host's own, made from the binding's [`StackParts`], and keeps all of
/// that.
///
/// # Lifecycle
///
/// See [`State`] for the states and the moves between them, and
/// [`Event`] for how each move is reported.
///
/// # What the server starts
///
/// The host's [`Handlers`] serve what a server asks of the host:
/// `elicitation` (a person's input), `sampling` (the host's model),
/// `roots` (the host's directories) and `logging` (the server's log
/// records). Each module says what it bounds and how it fails. A binding
/// also keeps the server's resource subscriptions
/// ([`Binding::subscribe`]), reported as [`Event::ResourceUpdated`].
///
/// [`ResultLimitLayer`]: crate::layer::result_limit::ResultLimitLayer
/// [`ProgressLayer`]: crate::layer::progress::ProgressLayer
/// [`ToolCallGateLayer`]: crate::layer::tool_gate::ToolCallGateLayer
#[derive(Clone)]
pub struct Binding {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    limits: Limits,
    timeouts: Timeouts,
    transport_kind: &'static str,
    /// Whether the transport sends HTTP headers (for `x-mcp-header`).
    carries_headers: bool,
    origin: String,
    session: SessionInfo,
    reconnect: Reconnect,
    service: BindingService,
    lifecycle: Arc<Lifecycle>,
    progress: ProgressRouter,
    catalog: Arc<CatalogCell>,
    inbound: Arc<BindingInbound>,
    /// The response cache's state, told of new sessions and refreshes.
    cache: Arc<CacheState>,
    /// Where the server's task status notifications go to the handles.
    tasks: Arc<crate::tasks::TaskFeed>,
    /// Whether the binding declares the 2026-07-28 Tasks extension
    /// (`AllowedCapabilities::tasks`).
    declares_tasks: bool,
    /// Where the tasks this binding starts are recorded.
    task_store: Arc<dyn crate::tasks::TaskStore>,
    /// The resources subscribed to, kept so that a new connection can
    /// subscribe again ([`Binding::resubscribe_all`]).
    subscriptions: std::sync::Mutex<BTreeSet<String>>,
    /// The server log level the definition asks for.
    log_level: LoggingLevel,
    /// The era of the last live connection (see `Binding::era`).
    era: std::sync::Mutex<Arc<dyn Era>>,
    /// The task of the 2026-07-28 listen stream, if one runs.
    listen: std::sync::Mutex<Option<tokio::task::AbortHandle>>,
    /// The Tasks extension's tasks the listen stream asks notifications
    /// for: those a handle waits for, each with how many wait (see
    /// `subscriptions::MAX_LISTENED_TASKS`).
    listened_tasks: std::sync::Mutex<std::collections::BTreeMap<String, usize>>,
    /// Whether this session's server refused `subscriptions/listen`
    /// (method not found): waiting handles then only poll.
    listen_refused: std::sync::atomic::AtomicBool,
    /// The fingerprints of the apps read, for drift (see `apps`).
    app_fingerprints: apps::AppFingerprints,
    /// Where they are kept between runs, with this server's key (see
    /// `Definition::app_fingerprint_store`).
    app_store: Option<apps::AppStore>,
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("name", &self.inner.name)
            .field("transport", &self.inner.transport_kind)
            .field("origin", &self.inner.origin)
            .field("state", &self.inner.lifecycle.status.lock().expect("status lock").state)
            .finish_non_exhaustive()
    }
}

impl Binding {
    /// What the current connection's handshake established.
    fn current_session(&self) -> SessionInfo {
        self.inner.lifecycle.status.lock().expect("status lock").session.clone()
    }

    /// Reads what the current connection's handshake established in place,
    /// for the paths every call takes.
    fn with_session<R>(&self, read: impl FnOnce(&SessionInfo) -> R) -> R {
        read(&self.inner.lifecycle.status.lock().expect("status lock").session)
    }

    fn warn(&self, text: String) {
        let text = crate::error::normalize_message(&text, 512);
        let binding = self.inner.name.clone();
        self.inner.lifecycle.events.emit(Event::Warning { binding, text, at: SystemTime::now() });
    }

    /// The era of the live connection, or of the last one while there is
    /// none: what answers the era's questions (how changes and
    /// subscriptions travel, how logs are asked for, whether roots changes
    /// are announced).
    fn era(&self) -> Arc<dyn Era> {
        let mut last = self.inner.era.lock().expect("era lock");
        if let Some(connection) = self.inner.reconnect.connection() {
            *last = connection.era();
        }
        last.clone()
    }

    /// Whether resource subscriptions and change notices travel on one
    /// `subscriptions/listen` stream.
    fn listens(&self) -> bool {
        self.era().change_style() == ChangeStyle::ListenStream
    }

    /// The binding's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// What the first handshake established: version, identity,
    /// capabilities, instructions (reported, never applied). After a
    /// reconnect, [`Binding::status`] has the current server's version and
    /// identity.
    pub fn session(&self) -> &SessionInfo {
        &self.inner.session
    }

    /// The binding's resolved limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The binding's resolved timeouts.
    pub fn timeouts(&self) -> &Timeouts {
        &self.inner.timeouts
    }

    /// A clone of the binding's stack: the same layers, checks and results
    /// as the binding's methods, for a host that composes its own calls (or
    /// sends a request the binding has no method for). Convert a response
    /// with [`ToolResult::from_response`] and its siblings to get what
    /// [`Binding::call_tool`] returns.
    pub fn service(&self) -> BindingService {
        self.inner.service.clone()
    }

    /// A stream of the binding's events from now on, besides the handler
    /// of [`Handlers::with_events`]. Bounded: a stream that falls more than
    /// 1024 events behind is told how many it missed, and the
    /// binding never waits for it (see [`EventStream`]).
    pub fn events(&self) -> EventStream {
        self.inner.lifecycle.events.subscribe()
    }

    /// The binding's state now.
    pub fn status(&self) -> Status {
        let core = self.inner.lifecycle.status.lock().expect("status lock");
        let catalog = self.inner.catalog.status();
        let (state, failure) = match (core.state, catalog.failure) {
            // A refresh that gave up: the adopted catalog still serves, but
            // the binding no longer follows the server's changes.
            (State::Ready, Some(refresh_failure)) => (State::Degraded, Some(refresh_failure)),
            (state, _) => (state, core.failure.clone()),
        };
        Status {
            binding: self.inner.name.clone(),
            state,
            protocol_version: core.session.protocol_version.clone(),
            server: core.session.server.clone(),
            transport_kind: self.inner.transport_kind.to_string(),
            redacted_origin: self.inner.origin.clone(),
            failure,
            last_change: core.last_change,
            reconnect_attempt: core.reconnect_attempt,
            dropped_events: self.inner.lifecycle.events.dropped(),
            catalog_generation: catalog.generation,
            catalog_digest: catalog.digest,
            candidate_generation: catalog.candidate_generation,
            candidate_digest: catalog.candidate_digest,
            stale_families: catalog.stale_families,
            compat_profile: catalog.compat_profile,
            dropped_logs: self.inner.inbound.dropped_logs(),
            progress_routes: self.inner.progress.len(),
            dropped_progress: self.inner.progress.dropped(),
        }
    }

    /// Server log records dropped because the host's log service fell
    /// behind (see [Logging](crate::handlers#logging)).
    pub fn dropped_logs(&self) -> u64 {
        self.inner.inbound.dropped_logs()
    }

    /// Closes the binding: it stops reconnecting, pending calls end with
    /// `shutdown`, and the transport is closed (a stdio child and its process
    /// group are ended); later calls fail with `shutdown`. Returns once that
    /// is done. Idempotent.
    pub async fn close(&self) {
        if let Some(listen) = self.inner.listen.lock().expect("listen lock").take() {
            listen.abort();
        }
        let lifecycle = &self.inner.lifecycle;
        let first = lifecycle.update(|_| (State::Closing, None)).is_some();
        self.inner.reconnect.close().await;
        if first {
            lifecycle.force(State::Closed);
        }
    }
}

pub(crate) use crate::request::push_warning;
