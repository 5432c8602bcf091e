//! [`Binding`]: a live, named connection to one server, built from a
//! [`Definition`] as a stack of tower layers.
//!
//! # The stack
//!
//! Outermost first, each position chosen for a reason:
//!
//! 1. [`ToolFilterLayer`]: outermost, so that a call to a filtered tool is
//!    refused (`tool_unavailable`) before anything else happens: no deadline
//!    timer, no progress token or route, no place at the gate, no
//!    concurrency permit, nothing on the wire. It is always ready, so the
//!    refusal never waits for capacity below. `tools/list` results pass
//!    through it last, so what a caller lists is what the filter permits.
//! 2. [`DeadlineLayer`]: right below, so that the whole life of a permitted
//!    call — waiting for the tool-call gate, for a concurrency permit, for a
//!    reconnect, the exchange itself, bounding the result — is bounded by
//!    one absolute deadline fixed on entry. On expiry it drops everything
//!    below, which releases the gate and the permit and cancels on the wire.
//! 3. [`ResultLimitLayer`]: inside the deadline, so bounding is part of the
//!    call it bounds, and above everything that holds a shared resource: by
//!    the time it walks a large result, the reply has come up through the
//!    gate and the concurrency limit, which have let the next call go.
//! 4. [`ProgressLayer`]: attaches the token and registers its route before
//!    the call can queue at the gate or be sent, so no report can arrive
//!    before its route exists; the route lives exactly as long as the call
//!    as the deadline sees it: when the deadline drops the call, the route
//!    goes with it.
//! 5. [`ToolCallGateLayer`]: one tool call at a time unless
//!    [`Definition::allow_parallel_calls`]. Below the deadline, so waiting
//!    for the gate counts against it; above the concurrency limit, and it
//!    takes the gate *before* asking the limit for a permit, so queued tool
//!    calls hold no permit and listing, reading and ping are never held
//!    behind a long tool call (see [`crate::layer::tool_gate`]).
//! 6. `ConcurrencyLimit` (tower's): bounds in-flight requests per
//!    connection at `Limits::max_concurrent_requests`. Just above the
//!    connection, so a permit covers the exchange on the wire, not a wait at
//!    the gate; below the deadline, so a call waiting for a permit still
//!    times out.
//! 7. [`Connection`]: the JSON-RPC engine.
//!
//! The binding's methods build an [`McpRequest`], send it through a clone of
//! the stack, and convert the reply into the crate's bounded result types.

mod definition;
mod events;
mod inbound;
mod status;

pub use definition::{ClientCapabilities, Definition, ToolFilter};
pub use events::{Event, EventHandler, EVENT_QUEUE};
pub use status::{Failure, State, Status};

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tower::util::BoxCloneSyncService;
use tower::{ServiceBuilder, ServiceExt};

use crate::connection::Connection;
use crate::content::{Content, PromptMessage, PromptResult, ResourceContent, ResourceResult, ToolResult};
use crate::era::legacy;
use crate::error::{Error, FailureClass};
use crate::layer::{
    DeadlineLayer, ProgressLayer, ProgressRouter, ResultLimitLayer, ToolCallGateLayer, ToolFilterLayer,
};
use crate::limits::{Limits, Timeouts};
use crate::protocol::completion::{CompleteResult, CompletionReference};
use crate::protocol::lifecycle::Implementation;
use crate::protocol::prompts::{GetPromptResult, Prompt};
use crate::protocol::resources::{ReadResourceResult, Resource, ResourceTemplate};
use crate::protocol::tools::{CallToolResult, Tool};
use crate::protocol::{lifecycle, methods};
use crate::request::{CallOpts, McpRequest, McpResponse};
use crate::session::SessionInfo;
use crate::transport::ConnectConfig;
use events::EventBus;
use inbound::BindingInbound;

/// The most warnings one listing or result keeps.
pub const MAX_WARNINGS: usize = 64;

/// The host's services for what a server starts on its own.
#[derive(Clone, Default)]
pub struct Handlers {
    /// Receives the binding's events. `None` discards them.
    pub event: Option<EventHandler>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers").field("event", &self.event.is_some()).finish()
    }
}

impl Handlers {
    /// Handlers with an event handler.
    pub fn with_events(mut self, f: impl Fn(Event) + Send + Sync + 'static) -> Self {
        self.event = Some(Arc::new(f));
        self
    }
}

/// The type-erased stack a binding sends its requests through.
pub type BindingService = BoxCloneSyncService<McpRequest, McpResponse, Error>;

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
    origin: String,
    session: SessionInfo,
    connection: Connection,
    service: BindingService,
    status: Mutex<StatusCore>,
    events: EventBus,
    progress: ProgressRouter,
}

struct StatusCore {
    state: State,
    failure: Option<Failure>,
    last_change: SystemTime,
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("name", &self.inner.name)
            .field("transport", &self.inner.transport_kind)
            .field("origin", &self.inner.origin)
            .field("state", &self.inner.status.lock().expect("status lock").state)
            .finish_non_exhaustive()
    }
}

impl Binding {
    /// Connects to the server `definition` describes, runs the handshake
    /// within `Timeouts::startup`, and returns the ready binding.
    pub async fn connect(definition: Definition, handlers: Handlers) -> Result<Binding, Error> {
        definition.validate()?;
        let name = definition.name.clone();
        let limits = definition.limits.resolved();
        let timeouts = definition.timeouts.resolved();
        let events = EventBus::new(handlers.event.clone());
        let progress = ProgressRouter::new(name.clone());
        let origin = definition.transport.redacted_origin().to_string();
        let transport_kind = definition.transport.kind();
        emit_state(&events, &name, State::Configured, State::Starting);

        let inbound = Arc::new(BindingInbound::new(name.clone(), limits, events.clone(), progress.clone()));
        let mut config = ConnectConfig::new(name.clone());
        config.max_frame_bytes = limits.max_frame_bytes;
        config.max_body_bytes = limits.max_body_bytes;
        config.diagnostics = Some(inbound.clone().diagnostics_sink());

        let start = async {
            let transport = definition.transport.connect(&config).await?;
            let connection = Connection::start(transport, inbound.clone());
            let session = legacy::initialize(&connection, client_capabilities(&definition), client_info())
                .await
                .inspect_err(|_| {
                    let connection = connection.clone();
                    tokio::spawn(async move { connection.close().await });
                })?;
            Ok::<_, Error>((connection, session))
        };
        let (connection, session) = match tokio::time::timeout(timeouts.startup, start).await {
            Ok(Ok(started)) => started,
            Ok(Err(e)) => {
                emit_state(&events, &name, State::Starting, State::Failed);
                return Err(e.with_binding(&name).with_op("connect"));
            }
            Err(_) => {
                emit_state(&events, &name, State::Starting, State::Failed);
                return Err(Error::new(
                    FailureClass::StartupTimeout,
                    format!("connect and handshake did not finish within {:?}", timeouts.startup),
                )
                .with_binding(&name)
                .with_op("connect"));
            }
        };

        // The order, and why, is in the module docs.
        let service = ServiceBuilder::new()
            .layer(ToolFilterLayer::new(definition.tool_filter.clone()))
            .layer(DeadlineLayer::new(timeouts.request))
            .layer(ResultLimitLayer::new(limits))
            .layer(ProgressLayer::new(progress.clone()))
            .layer(ToolCallGateLayer::new(definition.allow_parallel_calls))
            .concurrency_limit(limits.max_concurrent_requests)
            .service(connection.clone());
        let service = BoxCloneSyncService::new(service);
        emit_state(&events, &name, State::Starting, State::Ready);
        Ok(Binding {
            inner: Arc::new(Inner {
                name,
                limits,
                timeouts,
                transport_kind,
                origin,
                session,
                connection,
                service,
                status: Mutex::new(StatusCore {
                    state: State::Ready,
                    failure: None,
                    last_change: SystemTime::now(),
                }),
                events,
                progress,
            }),
        })
    }

    /// The binding's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// What the handshake established: version, identity, capabilities,
    /// instructions (reported, never applied).
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

    /// The progress routing table (for diagnostics and tests).
    pub fn progress_router(&self) -> &ProgressRouter {
        &self.inner.progress
    }

    /// A clone of the binding's stack, for sending requests the binding has
    /// no method for.
    pub fn service(&self) -> BindingService {
        self.inner.service.clone()
    }

    /// The binding's state now.
    pub fn status(&self) -> Status {
        let core = self.inner.status.lock().expect("status lock");
        let mut state = core.state;
        let mut failure = core.failure.clone();
        if state == State::Ready {
            if let crate::connection::ConnectionState::Closed { class, message } =
                self.inner.connection.state()
            {
                state = State::Degraded;
                failure = Some(Failure { class, message });
            }
        }
        Status {
            binding: self.inner.name.clone(),
            state,
            protocol_version: self.inner.session.protocol_version.clone(),
            server: self.inner.session.server.clone(),
            transport_kind: self.inner.transport_kind.to_string(),
            redacted_origin: self.inner.origin.clone(),
            failure,
            last_change: core.last_change,
            reconnect_attempt: 0,
            dropped_events: self.inner.events.dropped(),
        }
    }

    /// Sends one request through the stack.
    pub async fn request(&self, request: McpRequest, op: &'static str) -> Result<McpResponse, Error> {
        self.inner
            .service
            .clone()
            .oneshot(request)
            .await
            .map_err(|e| e.with_binding(&self.inner.name).with_op(op))
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
    pub async fn list_tools(&self) -> Result<Listing<Tool>, Error> {
        self.list_all(methods::TOOLS_LIST, "tools", self.inner.limits.max_catalog_items, "list_tools").await
    }

    /// Lists every prompt, within `Limits::max_prompt_count`.
    pub async fn list_prompts(&self) -> Result<Listing<Prompt>, Error> {
        self.list_all(methods::PROMPTS_LIST, "prompts", self.inner.limits.max_prompt_count, "list_prompts")
            .await
    }

    /// Lists every resource, within `Limits::max_resource_count`.
    pub async fn list_resources(&self) -> Result<Listing<Resource>, Error> {
        let max = self.inner.limits.max_resource_count;
        self.list_all(methods::RESOURCES_LIST, "resources", max, "list_resources").await
    }

    /// Lists every resource template, within `Limits::max_resource_count`.
    pub async fn list_resource_templates(&self) -> Result<Listing<ResourceTemplate>, Error> {
        let max = self.inner.limits.max_resource_count;
        self.list_all(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates", max, "list_resource_templates")
            .await
    }

    /// Pages through a list. A malformed entry is dropped with a warning; a
    /// repeated cursor, the page bound or the item bound ends the listing
    /// with a warning and keeps what was read.
    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        max_items: usize,
        op: &'static str,
    ) -> Result<Listing<T>, Error> {
        let mut listing = Listing { items: Vec::new(), warnings: Vec::new() };
        let mut seen_cursors = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 0..self.inner.limits.max_catalog_pages {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let rsp = self.request(McpRequest::with_value(method, params), op).await?;
            let Value::Object(mut result) = rsp.result else {
                return Err(Error::new(
                    FailureClass::ServerProtocol,
                    format!("{method} result is not an object"),
                )
                .with_binding(&self.inner.name)
                .with_op(op));
            };
            let entries = match result.remove(key) {
                Some(Value::Array(entries)) => entries,
                _ => {
                    return Err(Error::new(
                        FailureClass::ServerProtocol,
                        format!("{method} result has no {key} list"),
                    )
                    .with_binding(&self.inner.name)
                    .with_op(op));
                }
            };
            for (i, entry) in entries.into_iter().enumerate() {
                if listing.items.len() >= max_items {
                    push_warning(
                        &mut listing.warnings,
                        format!("{method}: kept the first {max_items} entries"),
                    );
                    return Ok(listing);
                }
                match serde_json::from_value::<T>(entry) {
                    Ok(item) => listing.items.push(item),
                    Err(e) => push_warning(
                        &mut listing.warnings,
                        format!("{method}: dropped entry {i} of page {page}: {e}"),
                    ),
                }
            }
            match result.remove("nextCursor") {
                Some(Value::String(next)) => {
                    if !seen_cursors.insert(next.clone()) {
                        push_warning(
                            &mut listing.warnings,
                            format!("{method}: the server repeated a cursor; stopped paging"),
                        );
                        return Ok(listing);
                    }
                    cursor = Some(next);
                }
                _ => return Ok(listing),
            }
        }
        let pages = self.inner.limits.max_catalog_pages;
        push_warning(&mut listing.warnings, format!("{method}: stopped after {pages} pages"));
        Ok(listing)
    }

    /// Calls the tool `name` (its raw name) with `arguments` (a JSON object,
    /// or null for none).
    ///
    /// A tool the binding's [`ToolFilter`] does not permit is refused with
    /// `tool_unavailable` before anything is sent. The result is bounded by
    /// the binding's [`Limits`] (see [`crate::layer::result_limit`]): cut
    /// text is `truncated`, refused items are [`Content::Unsupported`], and
    /// `warnings` says what was done. Unless
    /// [`Definition::allow_parallel_calls`], tool calls on one binding run
    /// one at a time.
    pub async fn call_tool(&self, name: &str, arguments: Value, opts: CallOpts) -> Result<ToolResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_null() {
            if !arguments.is_object() {
                return Err(Error::new(FailureClass::InvalidConfig, "tool arguments must be a JSON object")
                    .with_binding(&self.inner.name)
                    .with_op("call_tool"));
            }
            params["arguments"] = arguments;
        }
        let (result, mut warnings): (CallToolResult, _) =
            self.request_as(methods::TOOLS_CALL, params, opts, "call_tool").await?;
        let content = result.content.into_iter().map(|b| Content::from_block(b, &mut warnings)).collect();
        Ok(ToolResult {
            is_error: result.is_error.unwrap_or(false),
            content,
            structured: result.structured_content,
            warnings,
        })
    }

    /// Renders the prompt `name` with `arguments`.
    pub async fn get_prompt(&self, name: &str, arguments: Map<String, Value>) -> Result<PromptResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_empty() {
            params["arguments"] = Value::Object(arguments);
        }
        let (result, mut warnings): (GetPromptResult, _) =
            self.request_as(methods::PROMPTS_GET, params, CallOpts::default(), "get_prompt").await?;
        let messages = result
            .messages
            .into_iter()
            .map(|m| PromptMessage {
                role: serde_json::to_value(m.role)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                content: Content::from_block(m.content, &mut warnings),
            })
            .collect();
        Ok(PromptResult { description: result.description, messages, warnings })
    }

    /// Reads the resource `uri`. The URI is passed to the server verbatim and
    /// never resolved on the host.
    pub async fn read_resource(&self, uri: &str) -> Result<ResourceResult, Error> {
        let (result, mut warnings): (ReadResourceResult, _) = self
            .request_as(methods::RESOURCES_READ, json!({ "uri": uri }), CallOpts::default(), "read_resource")
            .await?;
        let contents =
            result.contents.into_iter().map(|c| ResourceContent::from_wire(c, &mut warnings)).collect();
        Ok(ResourceResult { contents, warnings })
    }

    /// Asks the server to complete the argument `argument` of a prompt or
    /// resource template, given its current `value` and the other arguments.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: Map<String, Value>,
    ) -> Result<CompleteResult, Error> {
        let mut params = json!({ "ref": reference, "argument": { "name": argument, "value": value } });
        if !context.is_empty() {
            params["context"] = json!({ "arguments": context });
        }
        let (result, _) =
            self.request_as(methods::COMPLETION_COMPLETE, params, CallOpts::default(), "complete").await?;
        Ok(result)
    }

    /// Closes the binding: pending calls end with `shutdown`, the transport
    /// is closed (a stdio child and its process group are ended). Idempotent.
    pub async fn close(&self) {
        let from = {
            let mut core = self.inner.status.lock().expect("status lock");
            if matches!(core.state, State::Closing | State::Closed) {
                return;
            }
            let from = core.state;
            core.state = State::Closing;
            core.last_change = SystemTime::now();
            from
        };
        emit_state(&self.inner.events, &self.inner.name, from, State::Closing);
        self.inner.connection.close().await;
        {
            let mut core = self.inner.status.lock().expect("status lock");
            core.state = State::Closed;
            core.last_change = SystemTime::now();
        }
        emit_state(&self.inner.events, &self.inner.name, State::Closing, State::Closed);
    }
}

fn emit_state(events: &EventBus, binding: &str, from: State, to: State) {
    events.emit(Event::StateChanged { binding: binding.to_string(), from, to, at: SystemTime::now() });
}

pub(crate) fn push_warning(warnings: &mut Vec<String>, text: String) {
    if warnings.len() < MAX_WARNINGS {
        warnings.push(crate::error::normalize_message(&text, 512));
    }
}

fn client_info() -> Implementation {
    Implementation {
        name: "mcp-stack".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        title: None,
        description: None,
        icons: None,
        website_url: None,
    }
}

fn client_capabilities(definition: &Definition) -> lifecycle::ClientCapabilities {
    let _ = definition;
    lifecycle::ClientCapabilities::default()
}
