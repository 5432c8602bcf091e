//! [`Binding`]: a live, named connection to one server, built from a
//! [`Definition`] as a stack of tower layers, with user layers inside it.
//!
//! # The stack
//!
//! Outermost first, each position chosen for a reason. Every layer passes
//! readiness through as tower's middleware do, except where said.
//!
//! Around all of it, each request gets its `tracing` span
//! ([`crate::layer::trace`]: binding, method, tool and model name, request
//! id; `INFO` for tool calls, `DEBUG` for the rest), opened first so that
//! a refusal, a wait and a retry all show inside it; the catalog's own
//! reads get one too. With [`Definition::trace_context`] set, it also
//! writes the W3C `traceparent` into the request's `_meta`.
//!
//! 1. [`ToolFilterLayer`]: refuses a call to a filtered tool
//!    (`tool_unavailable`) before anything else happens: no deadline, no
//!    progress route, no place at the gate, no permit, nothing on the wire,
//!    and nothing seen by user layers. `tools/list` results pass through it
//!    last, so what a caller lists is what the filter permits.
//! 2. [`DeadlineLayer`]: fixes one absolute deadline when the call enters
//!    (the caller's [`CallOpts`], a timeout counting from this moment, or
//!    `Timeouts::request`). Everything below — a second try after a -32020,
//!    waiting for a user layer's capacity, the tool-call gate, a
//!    concurrency permit, a reconnect, retries and their delays, the
//!    exchange, bounding the result — is inside it. On expiry it drops
//!    everything below at once, which releases the gate and the permit and
//!    cancels on the wire.
//! 3. The catalog's call checks ([`crate::catalog`]): a `tools/call` is
//!    checked against the adopted generation (`tool_schema_changed` before
//!    any I/O when a waiting candidate changes the tool) and its structured
//!    result validated against the tool's output schema on the way up; on
//!    2026-07-28 over HTTP the tool's `x-mcp-header` arguments go down as
//!    typed `Mcp-Param-*` headers, and a -32020 makes the catalog look
//!    again and the call go once more, inside the same deadline.
//! 4. [`SamplingDepthLayer`]: counts a request made from the host's
//!    sampling service in its chain until the reply, and passes the depth
//!    down as a typed extension (see [`sampling`]). It reads a task-local,
//!    so it runs here, on the caller's task, before anything can move the
//!    call to another one.
//! 5. The entry point: the stack below is driven to readiness *inside* each
//!    call's future (tower's `svc.clone().oneshot(req)`), so that every wait
//!    of the layers below counts against the deadline above while each of
//!    them passes readiness through. Everything above it is always ready,
//!    which is why a refusal (1, 3) is immediate whatever the connection is
//!    doing.
//! 6. **User layers** ([`BindingBuilder::layer`]), the first added
//!    outermost. See [User layers](#user-layers).
//! 7. [`ResultLimitLayer`]: bounds results (what it did travels up as typed
//!    marks), above everything that holds a shared resource: by the time it
//!    walks a large result, the reply has come up through the gate and the
//!    concurrency limit, which have let the next call go.
//! 8. [`ProgressLayer`]: attaches the token and registers its route before
//!    the call can queue at the gate or be sent, so no report can arrive
//!    before its route exists; the route lives exactly as long as the call.
//! 9. [`ToolCallGateLayer`]: one tool call at a time unless
//!    [`Definition::allow_parallel_calls`]. The one layer that does not pass
//!    readiness through: it takes the gate *before* asking the concurrency
//!    limit for a permit, so queued tool calls hold no permit and listing,
//!    reading and ping are never held behind a long tool call (see
//!    [`crate::layer::tool_gate`]).
//! 10. `ConcurrencyLimit` (tower's): at most
//!     `Limits::max_concurrent_requests` in flight, just above the
//!     connection, so a permit covers the exchange, not a wait at the gate.
//! 11. `Retry` (tower's) with [`SafeRetry`]: repeats a request safe to repeat
//!     after a loss (never a `tools/call` that left the client). Below the
//!     concurrency limit, so a retry keeps its caller's permit. Keeping a
//!     request to send again is a reference count: an [`McpRequest`]'s
//!     params are shared between its clones.
//! 12. [`Reconnect`]: whichever connection is live, replaced by a supervisor
//!     when it is lost (re-dial, re-run the handshake, with backoff per
//!     [`Definition::reconnect`]); it also renews a session an HTTP server
//!     forgot, once, at once (see [`crate::layer::reconnect`]).
//! 13. [`Connection`](crate::connection::Connection): the JSON-RPC engine,
//!     one per transport life.
//!
//! One call path: the binding's methods are [`Binding::service`] plus a
//! conversion ([`ToolResult::from_response`] and its siblings), so a host
//! that sends through the service gets the same checks and results. The
//! catalog's own list calls (discovery, and the refetch after a
//! `list_changed` or a reconnect) go through a deadline of their own into
//! 5: below the filter and the call checks, since the catalog describes the
//! server's whole offering, and above the user layers, which see them.
//!
//! # User layers
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! use mcp_stack::{Binding, CallOpts, Definition};
//! use tower::limit::ConcurrencyLimitLayer;
//!
//! let binding = Binding::builder(Definition::new("demo", mcp_stack::demo::factory()))
//!     .layer(ConcurrencyLimitLayer::new(2)) // at most two requests of this host at once
//!     .connect()
//!     .await?;
//! let echoed = binding.call_tool("echo", serde_json::json!({"message": "hi"}), CallOpts::default()).await?;
//! assert_eq!(echoed.content[0].as_text(), Some("hi"));
//! # binding.close().await;
//! # Ok(()) }
//! ```
//!
//! A user layer (a rate limit, an audit log, metrics, a policy check) is
//! any `tower::Layer` over [`BoxMcpService`](crate::request::BoxMcpService)
//! whose service takes [`McpRequest`] to [`McpResponse`] with the crate's
//! [`Error`]; [`BindingBuilder::layer`] says what it costs. It sits at 6, and
//! so:
//!
//! - it sees every request the binding sends for the host — tool calls,
//!   prompts, resources, completions, subscriptions, ping — and the
//!   catalog's list calls; not the handshake, which is the connection's own
//!   (after a reconnect, the catalog's refetch passes through it again);
//! - it sees each request once: below it, retries and a renewed session
//!   send the same request again without it;
//! - it never sees a call the tool filter or the catalog refused; it sees a
//!   call sent again after a -32020 twice (it is sent twice);
//! - it runs inside the deadline: the request it sees has its absolute
//!   deadline in [`CallOpts::deadline`], a wait it imposes counts against
//!   it, and it cannot extend it;
//! - it sees bounded results (the result limit is below it) and the
//!   response's typed extensions; it can attach typed data to the
//!   request's [extensions](McpRequest::extensions) for the layers and the
//!   transport below.
//!
//! Reconnecting, candidates and events work with user layers in place: they
//! live below them (the reconnect layer) or around the stack (the catalog,
//! the lifecycle). [`BindingBuilder::stack`] replaces 7–11 with a stack of
//! the host's own, made from the binding's [`StackParts`], and keeps all of
//! that.
//!
//! # Lifecycle
//!
//! See [`State`] for the states and the moves between them, and
//! [`Event`] for how each move is reported.
//!
//! # What the server starts
//!
//! The host's [`Handlers`] serve what a server asks of the host:
//! [`elicitation`] (a person's input), [`sampling`] (the host's model),
//! [`roots`] (the host's directories) and [`logging`] (the server's log
//! records). Each module says what it bounds and how it fails. A binding
//! also keeps the server's resource subscriptions
//! ([`Binding::subscribe`]), reported as [`Event::ResourceUpdated`].
//!
//! [`ResultLimitLayer`]: crate::layer::ResultLimitLayer
//! [`ProgressLayer`]: crate::layer::ProgressLayer
//! [`ToolCallGateLayer`]: crate::layer::ToolCallGateLayer

mod authenticating;
mod builder;
mod catalog;
mod definition;
pub mod listen;
mod stack;
mod status;
mod transitions;

pub use crate::config::AllowedCapabilities;
pub use crate::config::ToolFilter;
pub use crate::events::{Event, EventHandler, EventItem, EventStream, Failure, State, EVENT_QUEUE};
pub use crate::handlers::{
    elicitation, logging, roots, sampling, ElicitAction, ElicitRequest, ElicitResult, ElicitationMode,
    ElicitationModes, ElicitationService, Handlers, ListRoots, LogMessage, LogService, RootsService,
    SampleOutcome, SampleRequest, SampleResult, SamplingService, LOG_QUEUE, MAX_RESOURCE_URI_BYTES,
};
pub use crate::handlers::{root_for_path, sampling_denied, sampling_depth, with_sampling_depth};
pub use builder::BindingBuilder;
pub use definition::Definition;
pub use stack::{BindingFuture, BindingService, StackParts};
pub use status::Status;

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;
use tower::{Layer, ServiceBuilder, ServiceExt};

use crate::catalog::{BuildContext, CatalogCell, CatalogGuard, CatalogService, ChangeFeed};
use crate::config::limits::{Limits, Timeouts};
use crate::content::{PromptResult, ResourceResult, ToolResult};
use crate::era::{ChangeStyle, Dialer, Era};
use crate::error::{Error, FailureClass};
pub(crate) use crate::events::EventBus;
use crate::handlers::inbound::{client_capabilities, BindingInbound, ServerSide};
use crate::layer::entry::Entry;
use crate::layer::reconnect::{Reconnect, ReconnectLayer, Report};
use crate::layer::trace::{ModelNames, Trace};
use crate::layer::{Deadline, DeadlineLayer, ProgressRouter, SafeRetry, SamplingDepthLayer, ToolFilterLayer};
use crate::protocol::completion::{CompleteResult, CompletionReference};
use crate::protocol::logging::LoggingLevel;
use crate::protocol::methods;
use crate::protocol::prompts::Prompt;
use crate::protocol::resources::{Resource, ResourceTemplate};
use crate::protocol::tools::Tool;
use crate::request::{CallOpts, McpRequest, McpResponse};
use crate::session::SessionInfo;
use crate::transport::ConnectConfig;
use tokio::sync::broadcast;
use transitions::Lifecycle;

pub use crate::request::MAX_WARNINGS;
/// The most values [`Binding::complete`] keeps (the specification's own
/// maximum per response).
pub const MAX_COMPLETION_VALUES: usize = 100;
/// The longest completion value kept, in bytes; a longer one is dropped
/// (a cut value would complete to something the server never offered).
pub const MAX_COMPLETION_VALUE_BYTES: usize = 1024;
/// The most bytes of completion values [`Binding::complete`] keeps in all.
pub const MAX_COMPLETION_BYTES: usize = 64 << 10;
/// The longest resource URI [`Binding::subscribe`] accepts.
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = MAX_RESOURCE_URI_BYTES;

/// A list read from a server, with the defects tolerated while reading it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing<T> {
    /// The entries that were valid, in server order.
    pub items: Vec<T>,
    /// Bounded descriptions of what was dropped or cut short.
    pub warnings: Vec<String>,
}

/// A live, named connection to one server. Cheap to clone; clones share the
/// connection.
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
    /// The resources subscribed to, kept so that a new connection can
    /// subscribe again ([`Binding::resubscribe_all`]).
    subscriptions: std::sync::Mutex<BTreeSet<String>>,
    /// The server log level the definition asks for.
    log_level: LoggingLevel,
    /// The era of the last live connection (see `Binding::era`).
    era: std::sync::Mutex<Arc<dyn Era>>,
    /// The task of the 2026-07-28 listen stream, if one runs.
    listen: std::sync::Mutex<Option<tokio::task::AbortHandle>>,
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
    /// Connects to the server `definition` describes, runs the handshake
    /// within `Timeouts::startup`, and returns the ready binding, which
    /// reconnects under `Definition::reconnect` when its connection is lost.
    pub async fn connect(definition: Definition, handlers: Handlers) -> Result<Binding, Error> {
        Binding::builder(definition).handlers(handlers).connect().await
    }

    /// A builder for a binding with the host's handlers and user layers
    /// (see [`BindingBuilder`] and [User layers](self#user-layers)).
    pub fn builder(definition: Definition) -> BindingBuilder {
        BindingBuilder::new(definition)
    }

    async fn connect_with(builder: BindingBuilder) -> Result<Binding, Error> {
        // The steps, in order: dial and handshake, the stack (with the user
        // layers), discovery through it, the front with the checks.
        let (definition, handlers, layers, custom) = builder.into_parts();
        definition.validate()?;
        let name = definition.name.clone();
        let limits = definition.limits.resolved();
        let timeouts = definition.timeouts.resolved();
        let events = EventBus::new(handlers.event.clone());
        let progress = ProgressRouter::new(name.clone());
        let origin = definition.transport.redacted_origin().to_string();
        let transport_kind = definition.transport.kind();
        emit_state(&events, &name, State::Configured, State::Starting);

        let feed = ChangeFeed::new(name.clone(), events.clone());
        let server_side = ServerSide {
            binding: &name,
            allowed: definition.capabilities,
            log_level: definition.log_level,
            exchange_per_request: definition.transport.exchange_per_request(),
        };
        let inbound = Arc::new(BindingInbound::new(
            &server_side,
            &handlers,
            limits,
            timeouts,
            events.clone(),
            progress.clone(),
            feed.clone(),
        ));
        let mut config = ConnectConfig::new(name.clone());
        config.max_frame_bytes = limits.max_frame_bytes;
        config.max_body_bytes = limits.max_body_bytes;
        config.diagnostics = Some(inbound.clone().diagnostics_sink());
        let auth_phase = authenticating::AuthPhase::new(events.clone(), name.clone());
        config.authenticating = Some(auth_phase.hook());
        let dialer = Dialer::new(definition.transport.clone(), config, inbound.clone())
            .capabilities(client_capabilities(definition.capabilities, &handlers))
            .client_info(definition.client.to_implementation())
            .timeout(timeouts.startup)
            .protocol(definition.protocol.clone())
            .compat(&definition.compat)
            .discover_timeout(timeouts.discover)
            .reissue_lost_tool_calls(definition.reissue_lost_tool_calls)
            .log_level(handlers.log.is_some().then_some(definition.log_level));

        let (connection, session) = match dialer.dial().await {
            Ok(started) => started,
            Err(e) => {
                emit_state(&events, &name, State::Starting, State::Failed);
                return Err(e.with_binding(&name).with_op("connect"));
            }
        };
        let first_era = connection.era();
        let lifecycle = Arc::new(Lifecycle::ready(name.clone(), events.clone(), session.clone()));
        // What the reconnect layer reports (a lost and restored connection,
        // a renewed session) is read by the binding's task once the binding
        // exists (`follow_reports`); taken before the layer starts its
        // supervisor, so that none is missed.
        let layer = ReconnectLayer::new(dialer, definition.reconnect);
        let reports = layer.reports();
        let reconnect = layer.layer(connection);
        let retry = match definition.reconnect.disabled {
            true => SafeRetry::never(),
            false => SafeRetry::new(&definition.reconnect.retry),
        };
        inbound.set_protocol_version(&session.protocol_version);

        // The order, and why, is in the module docs. Below the deadline, one
        // stack serves the host's calls and the catalog's reads.
        let parts = StackParts::new(
            limits,
            definition.allow_parallel_calls,
            progress.clone(),
            retry,
            reconnect.clone(),
        );
        let entry = Entry::new(BindingBuilder::build_stack(layers, custom, parts));
        // The catalog reads the server's whole offering below the filter and
        // the call checks: the digest describes the server, not this host's
        // policy, and the catalog applies the filter to what it shows.
        let trace = definition.trace_context.clone();
        let catalog_service =
            Trace::new(Deadline::new(entry.clone(), timeouts.request), &name, None, trace.clone());
        auth_phase.set_phase(State::Discovering);
        let catalog =
            discover_at_connect(&definition, &session, catalog_service, feed, &events, timeouts).await;
        let catalog = match catalog {
            Ok(catalog) => catalog,
            Err(e) => {
                reconnect.close().await;
                return Err(e.with_binding(&name).with_op("connect"));
            }
        };
        let adopted = catalog.clone();
        let model_names: ModelNames =
            Arc::new(move |raw: &str| adopted.adopted().tool(raw).map(|t| t.model_name.clone()));
        auth_phase.attach(&lifecycle);
        let front = ServiceBuilder::new()
            .layer_fn(|inner| Trace::new(inner, &name, Some(model_names.clone()), trace.clone()))
            .layer(ToolFilterLayer::new(definition.tool_filter.clone()))
            .layer(DeadlineLayer::new(timeouts.request))
            .layer_fn(|inner| CatalogGuard::new(inner, catalog.clone()))
            .layer(SamplingDepthLayer::new(inbound.depth().clone()))
            .service(entry);
        let binding = Binding {
            inner: Arc::new(Inner {
                service: BindingService::new(front, &name),
                name,
                limits,
                timeouts,
                transport_kind,
                carries_headers: definition.transport.carries_headers(),
                origin,
                session,
                reconnect,
                lifecycle,
                progress,
                catalog,
                inbound,
                subscriptions: std::sync::Mutex::new(BTreeSet::new()),
                log_level: definition.log_level,
                era: std::sync::Mutex::new(first_era),
                listen: std::sync::Mutex::new(None),
            }),
        };
        tokio::spawn(follow_reports(Arc::downgrade(&binding.inner), reports));
        binding.configure_session().await;
        Ok(binding)
    }

    /// What a new session (after a reconnect, or a renewed HTTP session)
    /// needs before it serves as the old one did: the inbound side learns
    /// the negotiated version, the catalog looks again (a change becomes a
    /// candidate, not a surprise; within `Timeouts::startup`), the restore
    /// is reported ([`Event::ConnectionRestored`] with the generation found,
    /// then the state moves to `ready`), the log level is set again, and
    /// every subscription is renewed. Failures are warning events; the
    /// binding stays usable.
    async fn after_new_session(self, restore: transitions::Restore) {
        {
            let binding = self;
            let session = binding.current_session();
            let inner = &binding.inner;
            inner.inbound.set_protocol_version(&session.protocol_version);
            inner.catalog.set_connection(session.clone());
            let generation =
                match tokio::time::timeout(inner.timeouts.startup, inner.catalog.refresh_all()).await {
                    Ok(Ok(crate::catalog::RefreshOutcome::Unchanged)) => inner.catalog.adopted().generation,
                    Ok(Ok(crate::catalog::RefreshOutcome::Candidate(candidate))) => candidate.generation,
                    Ok(Err(e)) => {
                        binding.warn(format!("could not read the catalog over the new connection: {e}"));
                        0
                    }
                    Err(_) => {
                        binding.warn(format!(
                            "could not read the catalog over the new connection within {:?}",
                            inner.timeouts.startup
                        ));
                        0
                    }
                };
            inner.lifecycle.finish_restore(restore, generation, inner.catalog.adopted().generation);
            binding.configure_session().await;
            for (uri, e) in binding.resubscribe_all().await {
                binding.warn(format!("could not renew the subscription to {uri:?}: {e}"));
            }
        }
    }

    /// What the current connection's handshake established.
    fn current_session(&self) -> SessionInfo {
        self.inner.lifecycle.status.lock().expect("status lock").session.clone()
    }

    fn warn(&self, text: String) {
        let text = crate::error::normalize_message(&text, 512);
        let binding = self.inner.name.clone();
        self.inner.lifecycle.events.emit(Event::Warning { binding, text, at: SystemTime::now() });
    }

    /// Turns the server's logs on, at the definition's level, when a log
    /// handler is installed and the server advertises logging. A failure is
    /// a warning event, never the end of the binding.
    async fn configure_session(&self) {
        let era = self.era();
        if era.change_style() == ChangeStyle::ListenStream {
            self.start_listening();
        }
        if !self.inner.inbound.has_log_handler() || self.current_session().capabilities.logging.is_none() {
            return;
        }
        if !era.sets_log_level() {
            // Logs are request-scoped (2026-07-28): every request already
            // asks for them at the definition's level.
            return;
        }
        if let Err(e) = self.set_log_level(self.inner.log_level).await {
            self.warn(format!("could not turn the server's logs on: {e}"));
        }
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
    /// [`EVENT_QUEUE`] events behind is told how many it missed, and the
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
    /// behind (see [`logging`]).
    pub fn dropped_logs(&self) -> u64 {
        self.inner.inbound.dropped_logs()
    }

    /// Sends one request through the stack: exactly what
    /// `binding.service().oneshot(request)` does, with `op` recorded in the
    /// error. A JSON-RPC error answering anything but a tool call is
    /// `remote_error` here (the stack below knows the answer, not what it
    /// answered), so that a failed prompt or resource is not named a tool's.
    pub async fn request(&self, request: McpRequest, op: &'static str) -> Result<McpResponse, Error> {
        let tool_call = request.method == methods::TOOLS_CALL;
        self.service().oneshot(request).await.map_err(|e| {
            let e = match e.class() {
                FailureClass::RemoteToolError if !tool_call => e.reclassify(FailureClass::RemoteError),
                _ => e,
            };
            e.with_binding(&self.inner.name).with_op(op)
        })
    }

    async fn request_as<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        opts: CallOpts,
        op: &'static str,
    ) -> Result<(T, Vec<String>), Error> {
        let rsp = self.request(McpRequest::with_value(method, params).opts(opts), op).await?;
        let parsed = serde_json::from_value(rsp.result).map_err(|e| {
            Error::new(FailureClass::ServerProtocol, format!("malformed {method} result: {e}"))
                .with_binding(&self.inner.name)
                .with_op(op)
        })?;
        Ok((parsed, rsp.warnings))
    }

    /// Sends `ping` and waits for the answer.
    pub async fn ping(&self) -> Result<(), Error> {
        self.request(McpRequest::new(methods::PING, Map::new()), "ping").await.map(drop)
    }

    /// Lists every tool the binding's [`ToolFilter`] permits, across pages,
    /// within `Limits::max_catalog_pages` and `Limits::max_catalog_items`.
    ///
    /// On 2026-07-28 over HTTP, a tool whose `x-mcp-header` annotations are
    /// invalid is left out with a warning, as in the catalog (see
    /// [`crate::catalog::mcp_header`]).
    pub async fn list_tools(&self) -> Result<Listing<Tool>, Error> {
        let mut listing = self
            .list_all(methods::TOOLS_LIST, "tools", self.inner.limits.max_catalog_items, "list_tools")
            .await?;
        if self.inner.carries_headers && self.era().mirrors_tool_params() {
            let mut warnings = Vec::new();
            listing.items.retain(|tool: &Tool| {
                match crate::catalog::mcp_header::header_params(&tool.input_schema) {
                    Ok(_) => true,
                    Err(why) => {
                        let text = crate::error::normalize_message(
                            &format!("tools: refused tool {:?}: {why}", tool.name),
                            512,
                        );
                        warnings.push(text);
                        false
                    }
                }
            });
            for text in &warnings {
                self.warn(text.clone());
            }
            listing.warnings.extend(warnings);
        }
        Ok(listing)
    }

    /// Lists every prompt, within `Limits::max_prompt_count`. A server
    /// whose current session does not advertise `prompts` is not asked:
    /// the list is empty, without a warning (as connect-time discovery).
    pub async fn list_prompts(&self) -> Result<Listing<Prompt>, Error> {
        if self.current_session().capabilities.prompts.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new() });
        }
        self.list_all(methods::PROMPTS_LIST, "prompts", self.inner.limits.max_prompt_count, "list_prompts")
            .await
    }

    /// Lists every resource, within `Limits::max_resource_count`. A server
    /// whose current session does not advertise `resources` is not asked:
    /// the list is empty, without a warning.
    pub async fn list_resources(&self) -> Result<Listing<Resource>, Error> {
        if self.current_session().capabilities.resources.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new() });
        }
        let max = self.inner.limits.max_resource_count;
        self.list_all(methods::RESOURCES_LIST, "resources", max, "list_resources").await
    }

    /// Lists every resource template, within `Limits::max_resource_count`.
    /// A server whose current session does not advertise `resources` is not
    /// asked: the list is empty, without a warning.
    pub async fn list_resource_templates(&self) -> Result<Listing<ResourceTemplate>, Error> {
        if self.current_session().capabilities.resources.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new() });
        }
        let max = self.inner.limits.max_resource_count;
        self.list_all(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates", max, "list_resource_templates")
            .await
    }

    /// Pages through a list (see [`crate::catalog`] for the rules: a
    /// repeated cursor, the page bound, the item bound or a page the server
    /// answers badly ends the listing with a warning and keeps what was
    /// read). A malformed entry is dropped with a warning.
    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        max_items: usize,
        op: &'static str,
    ) -> Result<Listing<T>, Error> {
        let pages = self.inner.limits.max_catalog_pages;
        let raw = crate::catalog::page_through(
            self.service(),
            method,
            key,
            max_items,
            pages,
            crate::catalog::BadPage::Keep,
        )
        .await
        .map_err(|e| e.with_binding(&self.inner.name).with_op(op))?;
        let mut listing = Listing { items: Vec::new(), warnings: raw.warnings };
        for (i, entry) in raw.entries.into_iter().enumerate() {
            match serde_json::from_value::<T>(entry) {
                Ok(item) => listing.items.push(item),
                Err(e) => push_warning(&mut listing.warnings, format!("{method}: dropped entry {i}: {e}")),
            }
        }
        Ok(listing)
    }

    /// Calls the tool `name` (its raw name) with `arguments` (a JSON object,
    /// or null for none).
    ///
    /// A tool the binding's [`ToolFilter`] does not permit is refused with
    /// `tool_unavailable` before anything is sent. The result is bounded by
    /// the binding's [`Limits`] (see [`crate::layer::result_limit`]): cut
    /// text is `truncated`, refused items are [`Content::Unsupported`](crate::Content::Unsupported), and
    /// `warnings` says what was done. Unless
    /// [`Definition::allow_parallel_calls`], tool calls on one binding run
    /// one at a time.
    pub async fn call_tool(&self, name: &str, arguments: Value, opts: CallOpts) -> Result<ToolResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            if !arguments.is_object() {
                return Err(Error::new(
                    FailureClass::InvalidArguments,
                    "tool arguments must be a JSON object",
                )
                .with_binding(&self.inner.name)
                .with_op("call_tool"));
            }
            params["arguments"] = arguments;
        }
        let request = McpRequest::with_value(methods::TOOLS_CALL, params).opts(opts);
        let rsp = self.request(request, "call_tool").await?;
        ToolResult::from_response(rsp).map_err(|e| e.with_binding(&self.inner.name).with_op("call_tool"))
    }

    /// Renders the prompt `name` with `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        opts: CallOpts,
    ) -> Result<PromptResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_empty() {
            params["arguments"] = Value::Object(arguments);
        }
        let request = McpRequest::with_value(methods::PROMPTS_GET, params).opts(opts);
        let rsp = self.request(request, "get_prompt").await?;
        PromptResult::from_response(rsp).map_err(|e| e.with_binding(&self.inner.name).with_op("get_prompt"))
    }

    /// Reads the resource `uri`. The URI is passed to the server verbatim and
    /// never resolved on the host.
    pub async fn read_resource(&self, uri: &str, opts: CallOpts) -> Result<ResourceResult, Error> {
        let request = McpRequest::with_value(methods::RESOURCES_READ, json!({ "uri": uri })).opts(opts);
        let rsp = self.request(request, "read_resource").await?;
        ResourceResult::from_response(rsp)
            .map_err(|e| e.with_binding(&self.inner.name).with_op("read_resource"))
    }

    /// Asks the server to complete the argument `argument` of a prompt or
    /// resource template, given its current `value` and the other arguments.
    ///
    /// The values are bounded: at most [`MAX_COMPLETION_VALUES`], each at
    /// most [`MAX_COMPLETION_VALUE_BYTES`] (a longer one is dropped, not
    /// cut), at most [`MAX_COMPLETION_BYTES`] in all, in the server's order.
    /// When any was dropped, `has_more` is `Some(true)`: more exist than
    /// were kept.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: Map<String, Value>,
        opts: CallOpts,
    ) -> Result<CompleteResult, Error> {
        let mut params = json!({ "ref": reference, "argument": { "name": argument, "value": value } });
        if !context.is_empty() {
            params["context"] = json!({ "arguments": context });
        }
        let (mut result, _): (CompleteResult, _) =
            self.request_as(methods::COMPLETION_COMPLETE, params, opts, "complete").await?;
        let offered = std::mem::take(&mut result.completion.values);
        let offered_count = offered.len();
        let mut total_bytes = 0;
        for value in offered {
            if result.completion.values.len() >= MAX_COMPLETION_VALUES
                || value.len() > MAX_COMPLETION_VALUE_BYTES
                || total_bytes + value.len() > MAX_COMPLETION_BYTES
            {
                continue;
            }
            total_bytes += value.len();
            result.completion.values.push(value);
        }
        if result.completion.values.len() < offered_count {
            result.completion.has_more = Some(true);
        }
        Ok(result)
    }

    /// Sets the least severe server log level to receive: sends
    /// `logging/setLevel` and delivers nothing below `level` to the log
    /// service from then on. Fails with `invalid_config`, sending nothing,
    /// when the server does not advertise logging.
    ///
    /// A binding calls this itself after the handshake when a log handler is
    /// installed (see [`logging`]).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if !self.era().sets_log_level() {
            // No `logging/setLevel` (2026-07-28): requests ask for logs at
            // the definition's level; the host sees nothing below `level`.
            self.inner.inbound.set_log_level(level);
            return Ok(());
        }
        if self.current_session().capabilities.logging.is_none() {
            return Err(Error::new(FailureClass::InvalidConfig, "the server does not advertise logging")
                .with_binding(&self.inner.name)
                .with_op("set_log_level"));
        }
        let params = json!({ "level": level });
        self.request(McpRequest::with_value(methods::LOGGING_SET_LEVEL, params), "set_log_level").await?;
        self.inner.inbound.set_log_level(level);
        Ok(())
    }

    /// Tells the server the host's roots changed
    /// (`notifications/roots/list_changed`); it will ask for them again.
    /// Fails with `invalid_config`, sending nothing, when the binding did
    /// not advertise roots. On 2026-07-28 it sends nothing and succeeds:
    /// that era has no such notification, the server asks for the roots
    /// whenever it needs them.
    pub async fn notify_roots_changed(&self) -> Result<(), Error> {
        if !self.inner.inbound.serves_roots() {
            return Err(Error::new(FailureClass::InvalidConfig, "this binding did not advertise roots")
                .with_binding(&self.inner.name)
                .with_op("notify_roots_changed"));
        }
        if !self.era().announces_roots_changes() {
            // No roots/list_changed (2026-07-28): a server asks for the
            // roots with each request that needs them (an input request), so
            // it always gets the current ones.
            return Ok(());
        }
        let connection =
            self.inner.reconnect.connection().ok_or_else(|| {
                Error::new(FailureClass::TransportClosed, "the binding has no live connection")
            });
        connection?
            .notify(methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, None)
            .await
            .map_err(|e| e.with_binding(&self.inner.name).with_op("notify_roots_changed"))
    }

    /// Subscribes to updates of the resource `uri` (passed verbatim, never
    /// resolved on the host): the server's `notifications/resources/updated`
    /// become [`Event::ResourceUpdated`]. The binding keeps the subscription
    /// (at most `Limits::max_resource_count` of them) so that a new
    /// connection can restore it.
    ///
    /// Fails with `invalid_config`, sending nothing, when the server does
    /// not advertise `resources.subscribe`, or the URI is empty or over
    /// [`MAX_SUBSCRIPTION_URI_BYTES`]; with `limit_exceeded` when the
    /// binding holds its maximum already.
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.check_subscription(uri, "subscribe")?;
        {
            let subs = self.inner.subscriptions.lock().expect("subscriptions lock");
            if !subs.contains(uri) && subs.len() >= self.inner.limits.max_resource_count {
                return Err(Error::new(
                    FailureClass::LimitExceeded,
                    format!("the binding holds {} subscriptions already", subs.len()),
                )
                .with_binding(&self.inner.name)
                .with_op("subscribe"));
            }
        }
        if self.listens() {
            // The listen request carries the subscriptions.
            self.inner.subscriptions.lock().expect("subscriptions lock").insert(uri.to_string());
            self.start_listening();
            return Ok(());
        }
        self.request(
            McpRequest::with_value(methods::RESOURCES_SUBSCRIBE, json!({ "uri": uri })),
            "subscribe",
        )
        .await?;
        self.inner.subscriptions.lock().expect("subscriptions lock").insert(uri.to_string());
        Ok(())
    }

    /// Ends the subscription to `uri`. The binding forgets it even when the
    /// server's answer is an error: the host no longer wants the updates.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.check_subscription(uri, "unsubscribe")?;
        self.inner.subscriptions.lock().expect("subscriptions lock").remove(uri);
        if self.listens() {
            self.start_listening();
            return Ok(());
        }
        let params = json!({ "uri": uri });
        self.request(McpRequest::with_value(methods::RESOURCES_UNSUBSCRIBE, params), "unsubscribe")
            .await
            .map(drop)
    }

    fn check_subscription(&self, uri: &str, op: &'static str) -> Result<(), Error> {
        let problem = if !self.current_session().capabilities.resources_subscribe() {
            Some("the server does not support resource subscriptions".to_string())
        } else if uri.is_empty() || uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
            Some(format!("a resource URI must be 1 to {MAX_SUBSCRIPTION_URI_BYTES} bytes"))
        } else {
            None
        };
        match problem {
            Some(text) => {
                Err(Error::new(FailureClass::InvalidConfig, text).with_binding(&self.inner.name).with_op(op))
            }
            None => Ok(()),
        }
    }

    /// The resources this binding is subscribed to, in order.
    pub fn subscriptions(&self) -> Vec<String> {
        self.inner.subscriptions.lock().expect("subscriptions lock").iter().cloned().collect()
    }

    /// Subscribes again to every resource in [`Binding::subscriptions`]:
    /// what a new connection needs, since subscriptions die with the old
    /// one. Returns the failures (the binding keeps those subscriptions, to
    /// try again on the next connection); empty when all succeeded or there
    /// were none.
    pub async fn resubscribe_all(&self) -> Vec<(String, Error)> {
        let mut failures = Vec::new();
        if self.listens() {
            // The listen stream, opened again for the new session, carries them.
            return failures;
        }
        for uri in self.subscriptions() {
            let params = json!({ "uri": uri });
            if let Err(e) =
                self.request(McpRequest::with_value(methods::RESOURCES_SUBSCRIBE, params), "subscribe").await
            {
                failures.push((uri, e));
            }
        }
        failures
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

impl BindingBuilder {
    /// Connects (see [`Binding::connect`]).
    pub async fn connect(self) -> Result<Binding, Error> {
        Binding::connect_with(self).await
    }
}

/// The binding's one task over its reconnect layer's reports: each moves
/// the lifecycle (state, status, events) at once, in order; a new session
/// is then made to serve as the first did (`Binding::after_new_session`),
/// on a task of its own, so that the reports behind it are not held up. It
/// holds the binding weakly, and ends when the binding is dropped.
async fn follow_reports(weak: std::sync::Weak<Inner>, mut reports: broadcast::Receiver<Report>) {
    loop {
        let report = match reports.recv().await {
            Ok(report) => report,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                let Some(inner) = weak.upgrade() else { return };
                Binding { inner }.warn(format!(
                    "missed {missed} reconnect reports; the binding's status may lag until the next"
                ));
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(inner) = weak.upgrade() else { return };
        let binding = Binding { inner };
        let adopted = binding.inner.catalog.adopted().generation;
        if let Some(restore) = binding.inner.lifecycle.on_report(&report, adopted) {
            tokio::spawn(binding.after_new_session(restore));
        }
    }
}

fn emit_state(events: &EventBus, binding: &str, from: State, to: State) {
    events.emit(Event::StateChanged { binding: binding.to_string(), from, to, at: SystemTime::now() });
}

pub(crate) use crate::request::push_warning;

/// Discovers the catalog at connect (state `discovering`), within
/// `Timeouts::startup`, and adopts it as generation 1.
async fn discover_at_connect(
    definition: &Definition,
    session: &SessionInfo,
    service: CatalogService,
    feed: Arc<ChangeFeed>,
    events: &EventBus,
    timeouts: Timeouts,
) -> Result<Arc<CatalogCell>, Error> {
    let name = &definition.name;
    emit_state(events, name, State::Starting, State::Discovering);
    let ctx = BuildContext {
        binding: name.clone(),
        session: session.clone(),
        profile: definition.compat.clone(),
        limits: definition.limits.resolved(),
        filter: definition.tool_filter.clone(),
        http: definition.transport.carries_headers(),
    };
    let discovery = CatalogCell::discover(ctx, service, feed, events.clone(), definition.refresh);
    let outcome = match tokio::time::timeout(timeouts.startup, discovery).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Error::new(
            FailureClass::StartupTimeout,
            format!("catalog discovery did not finish within {:?}", timeouts.startup),
        )),
    };
    match &outcome {
        Ok(_) => emit_state(events, name, State::Discovering, State::Ready),
        Err(_) => emit_state(events, name, State::Discovering, State::Failed),
    }
    outcome
}
