//! The host side of one rendered MCP App: [`AppBridge`].
//!
//! A host renders an app's HTML (read with
//! [`Binding::read_app`](crate::Binding::read_app)) in a sandbox
//! ([`app_sandbox`](crate::catalog::apps::app_sandbox) gives its headers and attributes) and relays what the
//! page posts, as bytes, to [`AppBridge::handle`]; whatever `handle` and
//! the host-side calls ([`tool_input`](AppBridge::tool_input),
//! [`tool_result`](AppBridge::tool_result), [`teardown`](AppBridge::teardown),
//! …) return are the JSON-RPC messages to post back to the page. The bridge
//! never touches a transport: a webview's IPC, a WebSocket or an HTTP relay
//! carries the messages.
//!
//! Everything an app sends is untrusted. The bridge:
//!
//! - refuses a message over [`AppBridgeConfig::max_message_bytes`] before
//!   parsing it, and more than
//!   [`AppBridgeConfig::max_requests_in_flight`] requests at once, each with
//!   a JSON-RPC error whose `data.class` is the crate's failure class
//!   (`limit_exceeded`);
//! - serves `tools/call` only for tools its own server lists whose
//!   visibility includes `"app"`, through
//!   [`Binding::call_tool_from_app`](crate::Binding::call_tool_from_app)
//!   (the binding's deadlines and result limits apply): the bridge holds
//!   one binding, so another server's tools do not exist for the app;
//! - serves `resources/read` only for `ui://` URIs, on that server;
//! - answers `ui/open-link`, `ui/message` and `ui/update-model-context`
//!   through the host's handlers, tower services the host sets (and can
//!   wrap in its own layers); without one, each is refused;
//! - keeps the app's `notifications/message` logs in a bounded queue
//!   ([`take_logs`](AppBridge::take_logs));
//! - after [`teardown`](AppBridge::teardown), refuses every request;
//! - drops a request the app cancels (`notifications/cancelled` with its
//!   `requestId`), and does not answer it, as MCP has it.
//!
//! What reaches the server goes through a tower service the host can wrap
//! in its own layers ([`AppBridge::with_server_layer`]).
//!
//! Decisions where the specification is silent: requests other than
//! `ui/initialize` and `ping` are refused until the app has initialized;
//! batches are refused; errors carry the code -32700 (not JSON), -32600
//! (not a request, or over the size bound), -32601 (an unknown method),
//! -32602 (bad parameters) or -32000 (refused by the host's policy, or
//! failed on the server), always with `data.class`; a failure on the
//! server is told by its class only, never with the binding's message
//! (which may name the host's configuration). Host notifications made
//! before the app's `ui/notifications/initialized` are held (at most
//! [`MAX_HELD_NOTIFICATIONS`], a newer partial input replacing an older
//! one) and returned by the `handle` call that receives it.
//!
//! A host, in full:
//!
//! ```
//! use mcp_stack::catalog::apps::app_sandbox;
//! use mcp_stack::host::app_bridge::{AppBridge, AppHostContext, AppTheme};
//! use mcp_stack::handlers::Handlers;
//! use mcp_stack::{Binding, CallOpts, ClientExtensions, Definition};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! let definition = Definition::new("demo", mcp_stack::demo::factory())
//!     .with_extensions(ClientExtensions::default().apps());
//! let binding = Binding::connect(definition, Handlers::default()).await?;
//! // The model called `clock`; the host shows its app.
//! let result = binding.call_tool("clock", json!({}), CallOpts::default()).await?;
//! let uri = binding.catalog().tool("clock").and_then(|t| t.app.clone()).and_then(|a| a.resource_uri);
//! let app = binding.read_app(&uri.unwrap(), CallOpts::default()).await?;
//! let sandbox = app_sandbox(&app.meta)?; // headers and iframe attributes
//! let context = AppHostContext::default().with_theme(AppTheme::Dark).with_locale("en-GB");
//! let bridge = AppBridge::new(binding.clone(), "clock", context)?;
//! // The page posts its messages; the host relays each and posts back the answers.
//! let from_page = [
//!     json!({ "jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
//!         "protocolVersion": "2026-01-26", "appInfo": { "name": "clock", "version": "1" },
//!         "appCapabilities": {} } }),
//!     json!({ "jsonrpc": "2.0", "method": "ui/notifications/initialized" }),
//!     json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
//!         "params": { "name": "clock_refresh", "arguments": {} } }),
//! ];
//! let mut to_page = bridge.tool_input(json!({}));
//! to_page.extend(bridge.tool_result(&result));
//! for message in from_page {
//!     to_page.extend(bridge.handle(message.to_string().as_bytes()).await);
//! }
//! assert!(to_page.iter().any(|m| m["id"] == 2 && m["result"]["content"].is_array()));
//! to_page.extend(bridge.teardown("the conversation closed"));
//! # let _ = (sandbox, app.html);
//! # Ok(())
//! # }
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

use crate::catalog::apps::{AppResourceMeta, MAX_APP_URI_BYTES};
use crate::error::{normalize_message, Error, FailureClass};
use crate::{Binding, CallOpts, ToolResult};

mod config;
mod wire;

use wire::{check_link, check_message, cut, error, tool_result_json, Refusal};

pub use config::{
    AppBridgeConfig, AppDisplayMode, AppHostContext, AppTheme, DEFAULT_MAX_APP_LOG_ENTRIES,
    DEFAULT_MAX_APP_LOG_ENTRY_BYTES, DEFAULT_MAX_APP_MESSAGE_BYTES, DEFAULT_MAX_APP_REQUESTS_IN_FLIGHT,
};

/// The Apps protocol version the bridge speaks.
pub const APPS_PROTOCOL_VERSION: &str = "2026-01-26";
/// How many host notifications are held until the app has initialized.
pub const MAX_HELD_NOTIFICATIONS: usize = 16;
/// The longest JSON-RPC id taken (a string id), in bytes.
const MAX_ID_BYTES: usize = 256;
/// The longest tool name taken, in bytes.
const MAX_TOOL_NAME_BYTES: usize = 256;
/// The longest link taken, in bytes.
const MAX_LINK_BYTES: usize = 4096;
/// The JSON-RPC id of the bridge's one request, `ui/resource-teardown`.
const TEARDOWN_ID: &str = "mcp-stack/teardown";

/// A handler of the host's for one kind of app request (`ui/open-link`,
/// `ui/message`, `ui/update-model-context`): it takes the request's
/// validated `params` and answers with the result to send back, or an
/// error whose class (and message) the app is told. Any tower service of
/// that shape, e.g. `tower::service_fn`, wrapped in the host's layers.
pub type AppHandler = BoxCloneSyncService<Value, Value, Error>;

/// What the bridge asks of the app's server once the app's request passed
/// its checks (see [`AppBridge::with_server_layer`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AppServerRequest {
    /// `tools/call` of a tool the server lists for apps.
    CallTool {
        /// The tool's raw name.
        name: String,
        /// Its arguments (an object).
        arguments: Value,
    },
    /// `resources/read` of a `ui://` resource.
    ReadResource {
        /// The URI.
        uri: String,
    },
}

/// The service that carries an app's [`AppServerRequest`]s to its server
/// and answers with the result the app is sent.
pub type AppServerService = BoxCloneSyncService<AppServerRequest, Value, Error>;

/// One log entry an app sent (`notifications/message`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppLogEntry {
    /// Its level (`debug` … `emergency`; an unknown level is read as `info`).
    pub level: &'static str,
    /// Its logger, if named (bounded).
    pub logger: Option<String>,
    /// Its data, as JSON text cut at the entry bound.
    pub data: String,
}

/// The host side of one rendered app: see the [module docs](self).
#[derive(Clone)]
pub struct AppBridge {
    binding: Binding,
    tool: String,
    context: AppHostContext,
    config: AppBridgeConfig,
    open_link: Option<AppHandler>,
    message: Option<AppHandler>,
    model_context: Option<AppHandler>,
    /// The sandbox the host applied (`hostCapabilities.sandbox`).
    sandbox: Option<Value>,
    server: AppServerService,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for AppBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppBridge")
            .field("tool", &self.tool)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    initialize_answered: bool,
    initialized: bool,
    torn_down: bool,
    teardown_requested: bool,
    in_flight: usize,
    /// The cancel switch of each request in flight, by its id's JSON text.
    cancels: HashMap<String, tokio::sync::oneshot::Sender<()>>,
    held: VecDeque<Value>,
    logs: VecDeque<AppLogEntry>,
    logs_dropped: u64,
    size: Option<(u32, u32)>,
}

impl AppBridge {
    /// The bridge for the app of the tool `tool` (its raw name) of
    /// `binding`, rendered with `context`. Fails with `not_found` when the
    /// binding's catalog lists no such tool, `invalid_arguments` when the
    /// tool has no `ui://` app.
    pub fn new(binding: Binding, tool: &str, context: AppHostContext) -> Result<AppBridge, Error> {
        let catalog = binding.catalog();
        let quoted = normalize_message(tool, 128);
        let Some(spec) = catalog.tool(tool) else {
            return Err(Error::new(FailureClass::NotFound, format!("the server lists no tool {quoted:?}"))
                .with_op("app_bridge"));
        };
        if spec.app.as_ref().and_then(|a| a.resource_uri.as_ref()).is_none() {
            return Err(Error::new(
                FailureClass::InvalidArguments,
                format!("the tool {quoted:?} has no app"),
            )
            .with_op("app_bridge"));
        }
        Ok(AppBridge {
            server: server_service(binding.clone()),
            binding,
            tool: tool.to_string(),
            context,
            config: AppBridgeConfig::default(),
            open_link: None,
            message: None,
            model_context: None,
            sandbox: None,
            state: Arc::new(Mutex::new(State::default())),
        })
    }

    /// The bridge's bounds.
    pub fn with_config(mut self, config: AppBridgeConfig) -> Self {
        self.config = config;
        self
    }

    /// Answers `ui/open-link` (`params`: `{"url": …}`, an `http` or `https`
    /// URL of at most 4096 bytes, checked before the handler sees it).
    /// Refused without one.
    pub fn with_open_link<S>(mut self, handler: S) -> Self
    where
        S: Service<Value, Response = Value, Error = Error> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
    {
        self.open_link = Some(BoxCloneSyncService::new(handler));
        self
    }

    /// Answers `ui/message` (`params`: `{"role": "user", "content": […]}`,
    /// checked for that shape). Refused without one.
    pub fn with_message<S>(mut self, handler: S) -> Self
    where
        S: Service<Value, Response = Value, Error = Error> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
    {
        self.message = Some(BoxCloneSyncService::new(handler));
        self
    }

    /// Answers `ui/update-model-context` (`params`: an object). Refused
    /// without one.
    pub fn with_model_context<S>(mut self, handler: S) -> Self
    where
        S: Service<Value, Response = Value, Error = Error> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
    {
        self.model_context = Some(BoxCloneSyncService::new(handler));
        self
    }

    /// Wraps the service that carries the app's `tools/call` and
    /// `resources/read` to its server in `layer` (the host's own: a rate
    /// limit, an audit log, a refusal). The bridge's checks run first, so
    /// the layer sees only what its policy allows; its error is told to the
    /// app by its class.
    pub fn with_server_layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<AppServerService>,
        L::Service:
            Service<AppServerRequest, Response = Value, Error = Error> + Clone + Send + Sync + 'static,
        <L::Service as Service<AppServerRequest>>::Future: Send + 'static,
    {
        self.server = BoxCloneSyncService::new(layer.layer(self.server));
        self
    }

    /// Tells the app the sandbox the host rendered it in
    /// (`hostCapabilities.sandbox` of the initialize result): the origins
    /// and permissions of `meta`, as the host applied them with
    /// [`app_sandbox`](crate::catalog::apps::app_sandbox). Without it, the
    /// app is told nothing of its sandbox and should feature-detect.
    pub fn with_sandbox(mut self, meta: &AppResourceMeta) -> Self {
        let csp = &meta.csp;
        let p = meta.permissions;
        let mut permissions = Map::new();
        for (name, granted) in [
            ("camera", p.camera),
            ("microphone", p.microphone),
            ("geolocation", p.geolocation),
            ("clipboardWrite", p.clipboard_write),
        ] {
            if granted {
                permissions.insert(name.into(), json!({}));
            }
        }
        self.sandbox = Some(json!({
            "csp": {
                "connectDomains": csp.connect_domains, "resourceDomains": csp.resource_domains,
                "frameDomains": csp.frame_domains, "baseUriDomains": csp.base_uri_domains,
            },
            "permissions": permissions,
        }));
        self
    }

    /// The bridge's bounds.
    pub fn config(&self) -> &AppBridgeConfig {
        &self.config
    }

    /// The host's context the app is given.
    pub fn context(&self) -> &AppHostContext {
        &self.context
    }

    /// Handles one message the page posted, and gives the messages to post
    /// back to it: the answer to a request, and any notifications held
    /// until the app initialized.
    pub async fn handle(&self, message: &[u8]) -> Vec<Value> {
        if message.len() > self.config.max_message_bytes() {
            let why = format!("the message is over {} bytes", self.config.max_message_bytes());
            return vec![error(Value::Null, Refusal(-32600, FailureClass::LimitExceeded, why))];
        }
        let Ok(message) = serde_json::from_slice::<Value>(message) else {
            return vec![error(
                Value::Null,
                Refusal(-32700, FailureClass::InvalidArguments, "not JSON".into()),
            )];
        };
        let invalid =
            |why: &str| vec![error(Value::Null, Refusal(-32600, FailureClass::InvalidArguments, why.into()))];
        let Some(object) = message.as_object().filter(|o| o.get("jsonrpc") == Some(&json!("2.0"))) else {
            return invalid("not a JSON-RPC 2.0 message (batches are refused)");
        };
        let id = match object.get("id") {
            None => None,
            Some(id @ Value::Number(_)) => Some(id.clone()),
            Some(id @ Value::String(s)) if s.len() <= MAX_ID_BYTES => Some(id.clone()),
            Some(_) => return invalid("its id is not a number or a short string"),
        };
        let params = object.get("params").cloned().unwrap_or(Value::Object(Map::new()));
        match (object.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => self.request(method, id, params).await.into_iter().collect(),
            (Some(method), None) => self.notification(method, &params),
            (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
                if id == json!(TEARDOWN_ID) {
                    self.state.lock().expect("app bridge state").torn_down = true;
                }
                Vec::new()
            }
            _ => invalid("neither a request, a notification nor a response"),
        }
    }

    /// The answer to the request `id`; none when the app cancelled it.
    async fn request(&self, method: &str, id: Value, params: Value) -> Option<Value> {
        let key = id.to_string();
        let cancelled = {
            let mut state = self.state.lock().expect("app bridge state");
            let refusal = if state.torn_down {
                Some(Refusal::policy(FailureClass::TransportClosed, "the app was torn down"))
            } else if !state.initialize_answered && !matches!(method, "ui/initialize" | "ping") {
                Some(Refusal(
                    -32600,
                    FailureClass::InvalidArguments,
                    "the app has not sent ui/initialize".into(),
                ))
            } else if state.in_flight >= self.config.max_requests_in_flight() {
                let why = format!("over {} requests in flight", self.config.max_requests_in_flight());
                Some(Refusal::policy(FailureClass::LimitExceeded, why))
            } else if state.cancels.contains_key(&key) {
                Some(Refusal(-32600, FailureClass::InvalidArguments, "its id is already in flight".into()))
            } else {
                None
            };
            if let Some(refusal) = refusal {
                return Some(error(id, refusal));
            }
            state.in_flight += 1;
            let (cancel, cancelled) = tokio::sync::oneshot::channel();
            state.cancels.insert(key.clone(), cancel);
            cancelled
        };
        let _guard = InFlight(&self.state, key);
        tokio::select! {
            answer = self.answer(method, id, params) => Some(answer),
            Ok(()) = cancelled => None,
        }
    }

    async fn answer(&self, method: &str, id: Value, params: Value) -> Value {
        if !params.is_object() {
            return error(id, Refusal::params("its params are not an object"));
        }
        let answer = match method {
            "ui/initialize" => Ok(self.initialize()),
            "ping" => Ok(json!({})),
            "tools/call" => self.call_tool(params).await,
            "resources/read" => self.read_resource(params).await,
            "ui/open-link" => match check_link(&params) {
                Ok(()) => serve(&self.open_link, "ui/open-link", params).await,
                Err(r) => Err(r),
            },
            "ui/message" => match check_message(&params) {
                Ok(()) => serve(&self.message, "ui/message", params).await,
                Err(r) => Err(r),
            },
            "ui/update-model-context" => serve(&self.model_context, "ui/update-model-context", params).await,
            // The host changes modes through `context_changed`; until it
            // does, the app is told the mode it is in.
            "ui/request-display-mode" => match params.get("mode").and_then(Value::as_str) {
                Some("inline" | "fullscreen" | "pip") => {
                    Ok(json!({ "mode": self.context.display_mode().as_str() }))
                }
                _ => Err(Refusal::params("ui/request-display-mode needs a mode: inline, fullscreen or pip")),
            },
            _ => Err(Refusal(
                -32601,
                FailureClass::NotFound,
                format!("the host serves no method {:?}", normalize_message(method, 64)),
            )),
        };
        match answer {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(refusal) => error(id, refusal),
        }
    }

    fn notification(&self, method: &str, params: &Value) -> Vec<Value> {
        let mut state = self.state.lock().expect("app bridge state");
        if state.torn_down {
            return Vec::new();
        }
        match method {
            "ui/notifications/initialized" if state.initialize_answered => {
                state.initialized = true;
                return state.held.drain(..).collect();
            }
            "notifications/cancelled" => {
                // Its own request: the call is dropped, and not answered.
                let key = params.get("requestId").map(Value::to_string).unwrap_or_default();
                if let Some(cancel) = state.cancels.remove(&key) {
                    let _ = cancel.send(());
                }
            }
            "notifications/message" => {
                let entry = self.log_entry(params);
                if state.logs.len() >= self.config.max_log_entries() {
                    state.logs.pop_front();
                    state.logs_dropped += 1;
                }
                if self.config.max_log_entries() > 0 {
                    state.logs.push_back(entry);
                } else {
                    state.logs_dropped += 1;
                }
            }
            "ui/notifications/request-teardown" => state.teardown_requested = true,
            "ui/notifications/size-changed" => {
                let dim = |k: &str| params.get(k).and_then(Value::as_u64).filter(|v| *v <= 100_000);
                if let (Some(w), Some(h)) = (dim("width"), dim("height")) {
                    state.size = Some((w as u32, h as u32));
                }
            }
            // Anything else (cancellations of its own requests included) is
            // ignored: a notification has no answer to refuse with.
            _ => {}
        }
        Vec::new()
    }

    fn initialize(&self) -> Value {
        self.state.lock().expect("app bridge state").initialize_answered = true;
        let catalog = self.binding.catalog();
        let mut context = self.context.to_json();
        if let Some(tool) = catalog.tool(&self.tool) {
            let mut spec = json!({ "name": tool.raw_name, "inputSchema": tool.input_schema });
            if let Some(description) = &tool.description {
                spec["description"] = json!(description);
            }
            context.insert("toolInfo".into(), json!({ "tool": spec }));
        }
        let mut capabilities = json!({
            "serverTools": { "listChanged": true },
            "serverResources": { "listChanged": true },
            "logging": {},
        });
        if let Some(sandbox) = &self.sandbox {
            capabilities["sandbox"] = sandbox.clone();
        }
        for (key, handler) in [
            ("openLinks", &self.open_link),
            ("message", &self.message),
            ("updateModelContext", &self.model_context),
        ] {
            if handler.is_some() {
                capabilities[key] = json!({});
            }
        }
        json!({
            "protocolVersion": APPS_PROTOCOL_VERSION,
            "hostInfo": { "name": self.config.host_name(), "version": self.config.host_version() },
            "hostCapabilities": capabilities,
            "hostContext": context,
        })
    }

    async fn call_tool(&self, params: Value) -> Result<Value, Refusal> {
        let Some(name) =
            params.get("name").and_then(Value::as_str).filter(|n| n.len() <= MAX_TOOL_NAME_BYTES)
        else {
            return Err(Refusal::params("tools/call needs a tool name (a string)"));
        };
        let arguments = match params.get("arguments") {
            None => json!({}),
            Some(a @ Value::Object(_)) => a.clone(),
            Some(_) => return Err(Refusal::params("tools/call arguments are not an object")),
        };
        let quoted = normalize_message(name, 128);
        match self.binding.catalog().tool(name) {
            None => {
                return Err(Refusal::policy(
                    FailureClass::NotFound,
                    format!("the app's server lists no tool {quoted:?}"),
                ))
            }
            Some(tool) if !tool.callable_from_app() => {
                return Err(Refusal::policy(
                    FailureClass::ToolUnavailable,
                    format!("the tool {quoted:?} is not for apps"),
                ))
            }
            Some(_) => {}
        }
        let request = AppServerRequest::CallTool { name: name.to_string(), arguments };
        self.server.clone().oneshot(request).await.map_err(|e| Refusal::failed(e, false))
    }

    async fn read_resource(&self, params: Value) -> Result<Value, Refusal> {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Err(Refusal::params("resources/read needs a uri (a string)"));
        };
        if !uri.starts_with("ui://") || uri.len() > MAX_APP_URI_BYTES || uri.chars().any(char::is_control) {
            return Err(Refusal::policy(
                FailureClass::InvalidArguments,
                format!("an app reads only ui:// resources of at most {MAX_APP_URI_BYTES} bytes"),
            ));
        }
        let request = AppServerRequest::ReadResource { uri: uri.to_string() };
        self.server.clone().oneshot(request).await.map_err(|e| Refusal::failed(e, false))
    }

    fn log_entry(&self, params: &Value) -> AppLogEntry {
        const LEVELS: [&str; 8] =
            ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
        let asked = params.get("level").and_then(Value::as_str).unwrap_or("info");
        let level = LEVELS.iter().copied().find(|l| *l == asked).unwrap_or("info");
        let logger = params.get("logger").and_then(Value::as_str).map(|l| normalize_message(l, 128));
        let data = params.get("data").map(Value::to_string).unwrap_or_default();
        AppLogEntry { level, logger, data: cut(&data, self.config.max_log_entry_bytes()) }
    }

    /// Sends the tool's complete input (`ui/notifications/tool-input`).
    pub fn tool_input(&self, arguments: Value) -> Vec<Value> {
        self.notify("ui/notifications/tool-input", json!({ "arguments": arguments }))
    }

    /// Sends the tool's input so far, while the model is still writing it
    /// (`ui/notifications/tool-input-partial`). Held ones are replaced by
    /// the newer.
    pub fn tool_input_partial(&self, arguments: Value) -> Vec<Value> {
        self.notify("ui/notifications/tool-input-partial", json!({ "arguments": arguments }))
    }

    /// Sends the tool's result (`ui/notifications/tool-result`).
    pub fn tool_result(&self, result: &ToolResult) -> Vec<Value> {
        self.notify("ui/notifications/tool-result", tool_result_json(result))
    }

    /// Tells the app the tool call was cancelled
    /// (`ui/notifications/tool-cancelled`).
    pub fn tool_cancelled(&self, reason: &str) -> Vec<Value> {
        self.notify("ui/notifications/tool-cancelled", json!({ "reason": normalize_message(reason, 256) }))
    }

    /// Tells the app the host's context changed
    /// (`ui/notifications/host-context-changed`), and answers its later
    /// display mode requests with the new mode.
    pub fn context_changed(&mut self, context: AppHostContext) -> Vec<Value> {
        self.context = context;
        self.notify("ui/notifications/host-context-changed", Value::Object(self.context.to_json()))
    }

    /// Asks the app to wind down (`ui/resource-teardown`, sent even before
    /// it initialized) and refuses every request it makes from now on; its
    /// answer is taken and nothing else is sent to it. The host unmounts
    /// the page when the app answered, or when it chooses not to wait.
    pub fn teardown(&self, reason: &str) -> Vec<Value> {
        let mut state = self.state.lock().expect("app bridge state");
        if state.torn_down {
            return Vec::new();
        }
        state.torn_down = true;
        state.held.clear();
        // Its requests in flight end unanswered: nothing is sent to a
        // torn-down app, and the server is told through the cancellation.
        for (_, cancel) in state.cancels.drain() {
            let _ = cancel.send(());
        }
        vec![json!({
            "jsonrpc": "2.0", "id": TEARDOWN_ID, "method": "ui/resource-teardown",
            "params": { "reason": normalize_message(reason, 256) },
        })]
    }

    /// Tells the app its server's tool list changed
    /// (`notifications/tools/list_changed`): the host calls it when the
    /// binding adopts a new catalog.
    pub fn tools_changed(&self) -> Vec<Value> {
        self.notify("notifications/tools/list_changed", json!({}))
    }

    /// Tells the app its server's resource list changed
    /// (`notifications/resources/list_changed`).
    pub fn resources_changed(&self) -> Vec<Value> {
        self.notify("notifications/resources/list_changed", json!({}))
    }

    /// Whether the app asked to be torn down
    /// (`ui/notifications/request-teardown`). The host decides: it calls
    /// [`teardown`](Self::teardown) when it agrees. A host checks it after
    /// each [`handle`](Self::handle).
    pub fn is_teardown_requested(&self) -> bool {
        self.state.lock().expect("app bridge state").teardown_requested
    }

    /// Whether [`teardown`](Self::teardown) was called.
    pub fn is_torn_down(&self) -> bool {
        self.state.lock().expect("app bridge state").torn_down
    }

    /// Whether the app has sent `ui/notifications/initialized`.
    pub fn is_initialized(&self) -> bool {
        self.state.lock().expect("app bridge state").initialized
    }

    /// The app's log entries since the last call, and how many were
    /// dropped over the bound since then.
    pub fn take_logs(&self) -> (Vec<AppLogEntry>, u64) {
        let mut state = self.state.lock().expect("app bridge state");
        let dropped = std::mem::take(&mut state.logs_dropped);
        (state.logs.drain(..).collect(), dropped)
    }

    /// The size the app last said it needs (width, height, in CSS pixels,
    /// each at most 100000).
    pub fn size(&self) -> Option<(u32, u32)> {
        self.state.lock().expect("app bridge state").size
    }

    /// Gives `method` now when the app has initialized, holds it otherwise.
    fn notify(&self, method: &str, params: Value) -> Vec<Value> {
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        let mut state = self.state.lock().expect("app bridge state");
        if state.torn_down {
            return Vec::new();
        }
        if state.initialized {
            return vec![message];
        }
        if method == "ui/notifications/tool-input-partial" {
            state.held.retain(|m| m["method"] != method);
        }
        if state.held.len() >= MAX_HELD_NOTIFICATIONS {
            state.held.pop_front();
        }
        state.held.push_back(message);
        Vec::new()
    }
}

/// Counts one request in flight (and keeps its cancel switch, by the key
/// of its id) for as long as it lives.
struct InFlight<'a>(&'a Mutex<State>, String);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock().expect("app bridge state");
        state.in_flight = state.in_flight.saturating_sub(1);
        state.cancels.remove(&self.1);
    }
}

/// The service that carries checked requests to `binding`: the binding's
/// deadlines and limits apply.
fn server_service(binding: Binding) -> AppServerService {
    BoxCloneSyncService::new(tower::service_fn(move |request: AppServerRequest| {
        let binding = binding.clone();
        async move {
            match request {
                AppServerRequest::CallTool { name, arguments } => {
                    let result = binding.call_tool_from_app(&name, arguments, CallOpts::default()).await?;
                    Ok(tool_result_json(&result))
                }
                AppServerRequest::ReadResource { uri } => {
                    let read = binding.read_resource(&uri, CallOpts::default()).await?;
                    let contents = serde_json::to_value(&read.contents).unwrap_or(Value::Array(Vec::new()));
                    Ok(json!({ "contents": contents }))
                }
            }
        }
    }))
}

/// Runs the host's handler for `method`, or refuses.
async fn serve(handler: &Option<AppHandler>, method: &str, params: Value) -> Result<Value, Refusal> {
    let Some(handler) = handler.clone() else {
        return Err(Refusal::policy(
            FailureClass::ToolUnavailable,
            format!("the host does not allow {method}"),
        ));
    };
    handler.oneshot(params).await.map_err(|e| Refusal::failed(e, true))
}
