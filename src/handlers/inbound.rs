//! What a binding does with what its server sends on its own.
//!
//! Server requests (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) go to the host's services, each through its own checks
//! (see [`elicitation`](super::elicitation), [`sampling`](super::sampling),
//! [`roots`](super::roots)); a request for a capability the binding did not
//! advertise is answered "method not found". Notifications are routed
//! without blocking the connection's reader: progress to its call, logs to
//! the log pump and the events, resource updates and elicitation
//! completions to the events.

use serde_json::{Map, Value};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use super::elicitation::Elicitor;
use super::logging::{bound_text, text_of, LogMessage, LogPump, MAX_LOGGER_BYTES};
use super::roots::RootsServer;
use super::sampling::Sampler;
use super::Handlers;
use crate::catalog::{ChangeFeed, Family};
use crate::config::limits::{Limits, Timeouts};
use crate::config::AllowedCapabilities;
use crate::connection::InboundHandler;
use crate::error::normalize_message;
use crate::events::{Event, EventBus};
use crate::layer::progress::ProgressRouter;
use crate::layer::sampling_depth::DepthTracker;
use crate::protocol::jsonrpc::codes;
use crate::protocol::lifecycle::{ClientCapabilities, RootsCapability};
use crate::protocol::logging::LoggingLevel;
use crate::protocol::{methods, ErrorObject, Notification};
use crate::tasks::TaskStatus;

/// `_meta` key of every message of a listen stream: the JSON-RPC id of the
/// `subscriptions/listen` request that opened it.
pub(crate) const SUBSCRIPTION_ID_META: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether the acknowledged filter `granted` leaves out something `asked`
/// wants (a family not `true`, a resource not listed).
pub(crate) fn differs(asked: &Map<String, Value>, granted: &Map<String, Value>) -> bool {
    // Task ids are left out: a server may not send a task's notifications
    // (it ended, or it sends none), and the handle polls anyway.
    asked.iter().filter(|(key, _)| *key != "taskIds").any(|(key, want)| match want {
        Value::Array(uris) => {
            let got = granted.get(key).and_then(Value::as_array);
            uris.iter().any(|u| !got.is_some_and(|g| g.contains(u)))
        }
        other => granted.get(key) != Some(other),
    })
}

/// The longest stderr line surfaced, in bytes.
pub(crate) const MAX_STDERR_LINE_BYTES: usize = 1024;
/// The longest resource URI reported in a [`Event::ResourceUpdated`]; a
/// longer one is dropped with a warning (a cut URI names another resource).
pub(crate) const MAX_RESOURCE_URI_BYTES: usize = 8 << 10;

pub(crate) struct BindingInbound {
    binding: String,
    limits: Limits,
    events: EventBus,
    progress: ProgressRouter,
    /// The negotiated protocol version; empty before the handshake.
    version: RwLock<String>,
    elicitor: Option<Arc<Elicitor>>,
    sampler: Option<Arc<Sampler>>,
    /// The tasks the server asked this client to run (2025-11-25
    /// task-augmented elicitation and sampling), when the definition allows
    /// tasks.
    held: Option<Arc<crate::tasks::held::HeldTasks>>,
    roots: Option<RootsServer>,
    logs: LogPump,
    depth: Arc<DepthTracker>,
    catalog: Arc<ChangeFeed>,
    cache: Arc<crate::layer::cache::CacheState>,
    tasks: Arc<crate::tasks::TaskFeed>,
    /// The filter of the open 2026-07-28 listen request, to compare its
    /// acknowledgement with.
    listen_filter: std::sync::Mutex<Option<serde_json::Map<String, Value>>>,
    /// The id of the open listen request, once sent; `None` when none is
    /// open. Only on transports that carry every stream on one channel
    /// (stdio, in-memory), where it tells the listen stream's
    /// notifications from a replaced one's.
    /// With the generation of the listen task that set it: a replaced
    /// task's late write is ignored.
    listen_id: std::sync::Mutex<(u64, Option<crate::connection::AssignedId>)>,
    /// Whether notifications are told apart by their subscription id (a
    /// message-oriented transport; over HTTP each stream is its own
    /// response already).
    demultiplex: bool,
}

/// What the inbound side needs to know of the binding it serves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerSide<'a> {
    /// The binding's name, for events.
    pub(crate) binding: &'a str,
    /// The capabilities the definition allows for this server.
    pub(crate) allowed: AllowedCapabilities,
    /// The least severe server log level the host wants.
    pub(crate) log_level: LoggingLevel,
    /// Whether the transport gives each request an exchange of its own
    /// ([`TransportFactory::exchange_per_request`](crate::transport::TransportFactory::exchange_per_request)).
    pub(crate) exchange_per_request: bool,
    /// The binding's response cache, which change notifications invalidate.
    pub(crate) cache: &'a Arc<crate::layer::cache::CacheState>,
    /// Where task status notifications go.
    pub(crate) tasks: &'a Arc<crate::tasks::TaskFeed>,
}

/// What `initialize` advertises: each capability whose handler is installed
/// and which the definition allows for this server.
pub(crate) fn client_capabilities(allowed: AllowedCapabilities, handlers: &Handlers) -> ClientCapabilities {
    let modes = handlers.elicitation_modes;
    ClientCapabilities {
        elicitation: (allowed.elicitation && handlers.elicitation.is_some() && (modes.form || modes.url))
            .then(|| crate::protocol::lifecycle::ElicitationCapability {
                form: modes.form.then(Default::default),
                url: modes.url.then(Default::default),
            }),
        sampling: (allowed.sampling && handlers.sampling.is_some()).then(|| {
            crate::protocol::lifecycle::SamplingCapability {
                context: handlers.sampling_context.then(Default::default),
                tools: handlers.sampling_tools.then(Default::default),
            }
        }),
        roots: (allowed.roots && handlers.roots.is_some())
            .then_some(RootsCapability { list_changed: Some(true) }),
        tasks: received_tasks(allowed, handlers, modes),
        extensions: allowed.tasks.then(|| {
            let mut extensions = serde_json::Map::new();
            extensions.insert(
                crate::protocol::lifecycle::TASKS_EXTENSION.into(),
                Value::Object(Default::default()),
            );
            extensions
        }),
        ..ClientCapabilities::default()
    }
}

/// The 2025-11-25 `tasks` client capability: the requests the server may
/// ask this client to run as tasks (those whose handler is installed and
/// allowed), with `tasks/list` and `tasks/cancel`; `None` unless the
/// definition allows tasks and one of them is served.
fn received_tasks(
    allowed: AllowedCapabilities,
    handlers: &Handlers,
    modes: crate::handlers::ElicitationModes,
) -> Option<serde_json::Map<String, Value>> {
    let elicitation = allowed.elicitation && handlers.elicitation.is_some() && (modes.form || modes.url);
    let sampling = allowed.sampling && handlers.sampling.is_some();
    if !allowed.tasks || !(elicitation || sampling) {
        return None;
    }
    let mut requests = serde_json::Map::new();
    if elicitation {
        requests.insert("elicitation".into(), serde_json::json!({ "create": {} }));
    }
    if sampling {
        requests.insert("sampling".into(), serde_json::json!({ "createMessage": {} }));
    }
    let capability = serde_json::json!({ "list": {}, "cancel": {}, "requests": requests });
    capability.as_object().cloned()
}

/// What the ids of the tasks a binding holds start with: a digest of the
/// binding, this process and the moment, so that one binding's ids say
/// nothing of another's.
fn held_prefix(binding: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let digest = crate::files::hex_name(&format!("{binding}\n{}\n{}", std::process::id(), now.as_nanos()));
    format!("{}-", &digest[..24])
}

impl BindingInbound {
    /// Runs a task-augmented `elicitation/create` or
    /// `sampling/createMessage` as a task: answered at once with the task
    /// (`CreateTaskResult`), served by the same handler in the background,
    /// its outcome kept for `tasks/result`.
    fn start_held(
        &self,
        held: &Arc<crate::tasks::held::HeldTasks>,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        let mut params = params.unwrap_or(Value::Null);
        let (id, task) = held.create(&params, None)?;
        if let Some(params) = params.as_object_mut() {
            params.remove("task");
        }
        let version = self.protocol_version();
        let (elicitor, sampler) = (self.elicitor.clone(), self.sampler.clone());
        let (method, table, task_id) = (method.to_string(), held.clone(), id.clone());
        let run = tokio::spawn(async move {
            let outcome = match (method.as_str(), elicitor, sampler) {
                (methods::ELICITATION_CREATE, Some(elicitor), _) => {
                    elicitor.serve(&version, Some(params)).await
                }
                (methods::SAMPLING_CREATE_MESSAGE, _, Some(sampler)) => {
                    sampler.serve(&version, Some(params)).await
                }
                (other, _, _) => Err(not_served(other)),
            };
            let status = if outcome.is_ok() { TaskStatus::Completed } else { TaskStatus::Failed };
            table.end(&task_id, status, None, outcome);
        });
        held.attach(&id, run.abort_handle());
        Ok(serde_json::json!({ "task": task }))
    }

    /// Records the filter a listen request asks for.
    pub(crate) fn set_listen_filter(&self, filter: Option<serde_json::Map<String, Value>>) {
        *self.listen_filter.lock().expect("listen filter lock") = filter;
    }

    /// A new listen stream replaces any earlier one: until it records its
    /// request ([`BindingInbound::set_listen_id`] with the generation
    /// returned here), no stamped notification is ours.
    pub(crate) fn begin_listen(&self) -> u64 {
        let mut slot = self.listen_id.lock().expect("listen id lock");
        slot.0 += 1;
        slot.1 = None;
        slot.0
    }

    /// Records the request of the listen stream of `generation`, whose id
    /// its notifications carry; ignored when a newer stream replaced it.
    pub(crate) fn set_listen_id(&self, generation: u64, id: crate::connection::AssignedId) {
        let mut slot = self.listen_id.lock().expect("listen id lock");
        if slot.0 == generation {
            slot.1 = Some(id);
        }
    }

    /// Whether `notification` belongs to this binding's open listen stream,
    /// or to none: one stamped with another subscription id (a listen
    /// request that was replaced, or never this binding's) is not ours.
    fn ours(&self, notification: &Notification) -> bool {
        let stamp = notification
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(SUBSCRIPTION_ID_META));
        let Some(stamp) = stamp else { return true };
        if !self.demultiplex {
            return true;
        }
        let open = self.listen_id.lock().expect("listen id lock").1.as_ref().and_then(|slot| slot.get());
        open.is_some_and(|id| serde_json::to_value(id).is_ok_and(|id| &id == stamp))
    }

    /// Warns when the server acknowledged a listen request with other
    /// notifications than were asked (it honours a subset).
    fn acknowledged(&self, params: Option<&Value>) {
        let asked = self.listen_filter.lock().expect("listen filter lock").clone();
        let granted = params.and_then(|p| p.get("notifications")).and_then(Value::as_object);
        let (Some(asked), Some(granted)) = (asked, granted) else { return };
        if differs(&asked, granted) {
            let text = normalize_message(
                &format!(
                    "the server acknowledged the listen stream with {} for {} asked",
                    Value::Object(granted.clone()),
                    Value::Object(asked)
                ),
                512,
            );
            tracing::warn!(target: "mcp_stack::listen", binding = %self.binding, "{text}");
            self.events.emit(Event::Warning { binding: self.binding.clone(), text, at: SystemTime::now() });
        }
    }

    /// The inbound side of a binding: serves exactly what
    /// [`client_capabilities`] advertises.
    pub(crate) fn new(
        server: &ServerSide<'_>,
        handlers: &Handlers,
        limits: Limits,
        timeouts: Timeouts,
        events: EventBus,
        progress: ProgressRouter,
        catalog: Arc<ChangeFeed>,
    ) -> Self {
        let binding = server.binding.to_string();
        let advertised = client_capabilities(server.allowed, handlers);
        let depth = Arc::new(DepthTracker::default());
        let elicitor = match (&advertised.elicitation, &handlers.elicitation) {
            (Some(_), Some(service)) => Some(Arc::new(Elicitor::new(
                binding.clone(),
                limits,
                timeouts.elicitation,
                events.clone(),
                service.clone(),
                handlers.elicitation_modes,
            ))),
            _ => None,
        };
        let sampler = match (&advertised.sampling, &handlers.sampling) {
            (Some(_), Some(service)) => Some(Arc::new(Sampler::new(
                binding.clone(),
                limits,
                timeouts.request,
                events.clone(),
                service.clone(),
                handlers.sampling_tools,
                depth.clone(),
            ))),
            _ => None,
        };
        let roots = match (&advertised.roots, &handlers.roots) {
            (Some(_), Some(service)) => {
                Some(RootsServer::new(binding.clone(), timeouts.request, events.clone(), service.clone()))
            }
            _ => None,
        };
        let held = advertised
            .tasks
            .is_some()
            .then(|| Arc::new(crate::tasks::held::HeldTasks::new(held_prefix(&binding))));
        BindingInbound {
            logs: LogPump::new(handlers.log.clone(), server.log_level, progress.deliveries().clone()),
            binding,
            limits,
            events,
            progress,
            version: RwLock::new(String::new()),
            listen_filter: std::sync::Mutex::new(None),
            listen_id: std::sync::Mutex::new((0, None)),
            demultiplex: !server.exchange_per_request,
            held,
            elicitor,
            sampler,
            roots,
            depth,
            catalog,
            cache: server.cache.clone(),
            tasks: server.tasks.clone(),
        }
    }

    /// Records the version a handshake negotiated (again after a
    /// reconnect).
    pub(crate) fn set_protocol_version(&self, version: &str) {
        *self.version.write().expect("version lock") = version.to_string();
    }

    fn protocol_version(&self) -> String {
        self.version.read().expect("version lock").clone()
    }

    /// Where outbound requests made by sampling handlers are counted.
    pub(crate) fn depth(&self) -> &Arc<DepthTracker> {
        &self.depth
    }

    /// Whether `roots` was advertised.
    pub(crate) fn serves_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// Whether a log service is installed.
    pub(crate) fn has_log_handler(&self) -> bool {
        self.logs.installed()
    }

    /// Changes the least severe log level delivered to the log service.
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.logs.set_min_level(level);
    }

    /// Log records dropped because the log service fell behind.
    pub(crate) fn dropped_logs(&self) -> u64 {
        self.logs.dropped()
    }

    /// A sink for a transport's out-of-band diagnostics (a child's stderr).
    pub(crate) fn diagnostics_sink(self: Arc<Self>) -> Arc<dyn Fn(String) + Send + Sync> {
        Arc::new(move |line: String| {
            let line = normalize_message(&line, MAX_STDERR_LINE_BYTES);
            tracing::info!(target: "mcp_stack::stderr", binding = %self.binding, "{line}");
            self.events.emit(Event::ServerStderr {
                binding: self.binding.clone(),
                line,
                at: SystemTime::now(),
            });
        })
    }

    fn log(&self, params: Option<Value>) {
        let params = params.unwrap_or_default();
        let raw_level = params.get("level").and_then(Value::as_str).unwrap_or("");
        let logger =
            params.get("logger").and_then(Value::as_str).map(|s| normalize_message(s, MAX_LOGGER_BYTES));
        let (text, truncated) = bound_text(&text_of(params.get("data")), self.limits.max_log_message_bytes);
        self.events.emit(Event::ServerLog {
            binding: self.binding.clone(),
            level: normalize_message(raw_level, 16),
            logger: logger.clone(),
            text: text.clone(),
            at: SystemTime::now(),
        });
        match raw_level.parse::<LoggingLevel>() {
            Ok(level) => self.logs.deliver(LogMessage {
                binding: self.binding.clone(),
                level,
                logger,
                text,
                truncated,
            }),
            Err(_) => self.warning(format!(
                "dropped a log record with an unknown level {:?}",
                normalize_message(raw_level, 16)
            )),
        }
    }

    fn resource_updated(&self, params: Option<Value>) {
        let Some(uri) = params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str) else {
            self.warning("dropped a resource update without a uri".into());
            return;
        };
        if uri.len() > MAX_RESOURCE_URI_BYTES {
            self.warning(format!("dropped a resource update whose uri is {} bytes", uri.len()));
            return;
        }
        self.cache.resource_updated(uri);
        self.events.emit(Event::ResourceUpdated {
            binding: self.binding.clone(),
            uri: uri.to_string(),
            at: SystemTime::now(),
        });
    }
}

fn not_served(method: &str) -> ErrorObject {
    ErrorObject::new(codes::METHOD_NOT_FOUND, format!("method not found: {}", normalize_message(method, 128)))
}

#[async_trait::async_trait]
impl InboundHandler for BindingInbound {
    async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let task_augmented = params.as_ref().is_some_and(|p| p.get("task").is_some_and(Value::is_object));
        if let (Some(held), true) = (&self.held, task_augmented) {
            if matches!(method, methods::ELICITATION_CREATE | methods::SAMPLING_CREATE_MESSAGE) {
                return self.start_held(held, method, params);
            }
        }
        if let (Some(held), true) = (&self.held, method.starts_with("tasks/")) {
            let params = params.unwrap_or(Value::Null);
            return match method {
                methods::TASKS_GET => held.get(&params),
                methods::TASKS_RESULT => held.result(&params).await,
                methods::TASKS_LIST => held.list(&params),
                methods::TASKS_CANCEL => held.cancel(&params),
                other => Err(not_served(other)),
            };
        }
        match method {
            methods::ELICITATION_CREATE => match &self.elicitor {
                Some(elicitor) => elicitor.serve(&self.protocol_version(), params).await,
                None => Err(not_served(method)),
            },
            methods::SAMPLING_CREATE_MESSAGE => match &self.sampler {
                Some(sampler) => sampler.serve(&self.protocol_version(), params).await,
                None => Err(not_served(method)),
            },
            methods::ROOTS_LIST => match &self.roots {
                Some(roots) => roots.serve().await,
                None => Err(not_served(method)),
            },
            other => Err(not_served(other)),
        }
    }

    fn notification(&self, notification: Notification) {
        if !self.ours(&notification) {
            tracing::debug!(
                target: "mcp_stack::listen",
                binding = %self.binding,
                method = %normalize_message(&notification.method, 128),
                "dropped a notification of a listen stream that is not open"
            );
            return;
        }
        match notification.method.as_str() {
            methods::NOTIFICATIONS_PROGRESS => {
                // The call's own sink has it; the events get a copy, queued
                // like every event (dropped and counted when the queue is
                // full). A report no call took is no request's progress.
                if let Some(progress) = self.progress.route(notification.params.as_ref()) {
                    self.events.emit(Event::RequestProgress { progress, at: SystemTime::now() });
                }
            }
            methods::NOTIFICATIONS_MESSAGE => self.log(notification.params),
            methods::NOTIFICATIONS_RESOURCES_UPDATED => self.resource_updated(notification.params),
            // 2025-11-25's, and the 2026-07-28 extension's on a listen stream.
            methods::NOTIFICATIONS_TASKS_STATUS | methods::NOTIFICATIONS_TASKS => {
                match self.tasks.status(notification.params.as_ref()) {
                    Ok(warnings) => warnings.into_iter().for_each(|w| self.warning(w)),
                    Err(e) => self.warning(format!("dropped a task status notification: {}", e.message())),
                }
            }
            methods::NOTIFICATIONS_ELICITATION_COMPLETE => {
                if let Some(elicitor) = &self.elicitor {
                    elicitor.complete(notification.params.as_ref());
                }
            }
            methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => {
                self.acknowledged(notification.params.as_ref())
            }
            method if Family::from_list_changed(method).is_some() => {
                if let Some(family) = Family::from_list_changed(method) {
                    // The cache first: the catalog's refetch must not be
                    // served what the notification made stale.
                    self.cache.list_changed(family);
                    self.catalog.list_changed(family);
                }
            }
            other => {
                tracing::debug!(target: "mcp_stack::inbound", binding = %self.binding, method = %normalize_message(other, 128), "notification");
            }
        }
    }

    fn warning(&self, text: String) {
        tracing::warn!(target: "mcp_stack::connection", binding = %self.binding, "{text}");
        self.events.emit(Event::Warning { binding: self.binding.clone(), text, at: SystemTime::now() });
    }

    fn session(&self, change: crate::transport::SessionChange) {
        use crate::transport::SessionChange;
        let (binding, at) = (self.binding.clone(), SystemTime::now());
        self.events.emit(match change {
            SessionChange::Assigned(session) => Event::HttpSessionAssigned { binding, session, at },
            SessionChange::Expired(session) => Event::HttpSessionExpired { binding, session, at },
        });
    }
}
