//! A small MCP server that runs in-process over the in-memory transport, for
//! the quickstart, the examples, the benchmarks and the tests.
//!
//! It is behind the default feature `demo` (it costs a few hundred lines of
//! code and no dependencies; turn default features off to leave it out).
//! [`factory`] and [`serve_stdio`] speak the legacy era at `"2025-11-25"`;
//! [`factory_for`] and [`serve_stdio_for`] with [`DemoEra::Modern`] speak
//! 2026-07-28 (`server/discover`), with what of the list below needs no
//! more than requests and their replies (see the `modern` module). It
//! offers:
//!
//! - tools: `echo {message}` (text), `add {a, b}` (text and structured
//!   content, with an output schema), `count {steps, delay_ms}` (reports
//!   progress for each step when asked, then answers), `tiny_image` (a PNG),
//!   `big_text {bytes}` (that many bytes of text, up to
//!   1 MiB, for exercising result limits), `sleep {ms}`
//!   (answers after that long, up to 60_000, for exercising
//!   deadlines and the tool-call gate);
//!   `log {count, level, text}` (sends log records, honouring
//!   `logging/setLevel`), `touch {uri}` (announces a change of a
//!   subscribed resource), `announce` (announces a change of the tool
//!   list, which stays the same) and `crash` (ends the connection without
//!   answering, as a server that dies mid-call);
//! - tools that ask the client, listed only when the client declared the
//!   capability (as the reference server does): `elicit {message, schema,
//!   mode, url, elicitation_id, complete}`, `sample {prompt, max_tokens,
//!   system_prompt, with_tools}` and `roots`. Each sends its request to the
//!   client, waits for the answer (at most 600 s, at
//!   most 16 at once) and returns it as structured
//!   content, or the client's error as a tool error;
//! - over stdio only (`mcp-stack-demo`, a process of its own): `env {name}`,
//!   the server process's environment variable `name`, or null (with a
//!   `_meta` entry, for clients that show tools' `_meta`);
//! - tasks (2025-11-25): `count` and `sleep` may run as tasks, with
//!   `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` (see
//!   the `tasks` module: a connection's own, bounded, each for its TTL);
//! - a prompt `greeting {name}`, with completion of `name`;
//! - a resource `demo://readme` (subscribable) and a template
//!   `demo://notes/{id}`; capabilities `logging` and `resources.subscribe`;
//! - an app (`clock`, `clock_refresh` for the app only, and
//!   `ui://demo/clock.html`) for a client that declares MCP Apps, and a
//!   skill (`greeting-style`): see the `extensions` module.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition};
//!
//! let binding = Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default()).await?;
//! let result = binding.call_tool("echo", serde_json::json!({"message": "hi"}), CallOpts::default()).await?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! binding.close().await;
//! # Ok(()) }
//! ```

use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

use crate::protocol::jsonrpc::codes;
use crate::protocol::logging::LoggingLevel;
use crate::protocol::{
    methods, ErrorObject, Message, Notification, Outcome, Request, RequestId, Response, LATEST_LEGACY_VERSION,
};
use crate::transport::memory::MemoryFactory;
use crate::transport::{Inbound, MessageSender, Transport};

mod extensions;
mod modern;
mod tasks;

/// Which protocol era a demo server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DemoEra {
    /// 2025-11-25: `initialize`, and everything listed in the
    /// [module docs](self).
    #[default]
    Legacy,
    /// 2026-07-28: `server/discover`, the era's `_meta` on every request,
    /// and the tools, prompt, resources, skill and completion that need no
    /// server-initiated messages; `initialize` is "method not found".
    Modern,
}

/// A 1×1 transparent PNG.
pub(crate) const TINY_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// The most steps `count` accepts, so the demo itself stays bounded.
pub(crate) const MAX_COUNT_STEPS: u64 = 10_000;
/// The most records one `log` call sends.
pub(crate) const MAX_LOG_COUNT: u64 = 100_000;
/// The longest a request to the client is waited for.
pub(crate) const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// Requests to the client awaiting an answer at once, per connection.
pub(crate) const MAX_CLIENT_REQUESTS: usize = 16;
/// Subscriptions kept per connection.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;

/// One connection's side of the conversation: what the client declared,
/// its log level and subscriptions, and the requests sent to it.
struct Peer {
    sender: Arc<dyn MessageSender>,
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, ErrorObject>>>>,
    client_capabilities: Mutex<Value>,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<HashSet<String>>,
    /// Whether this server runs in a process of its own (`mcp-stack-demo`),
    /// whose environment the `env` tool may read.
    own_process: bool,
    era: DemoEra,
    tasks: crate::tasks::held::HeldTasks,
}

impl Peer {
    fn new(sender: Arc<dyn MessageSender>, own_process: bool, era: DemoEra) -> Self {
        Peer {
            sender,
            // The reference server numbers its own requests from 0 too.
            next_id: AtomicI64::new(0),
            pending: Mutex::new(HashMap::new()),
            client_capabilities: Mutex::new(Value::Null),
            log_level: Mutex::new(None),
            subscriptions: Mutex::new(HashSet::new()),
            own_process,
            era,
            tasks: tasks::table(),
        }
    }

    fn declared(&self, capability: &str) -> bool {
        self.client_capabilities.lock().expect("caps lock").get(capability).is_some_and(Value::is_object)
    }

    /// Whether the client declared the MCP Apps extension.
    fn declared_apps(&self) -> bool {
        let caps = self.client_capabilities.lock().expect("caps lock");
        caps["extensions"].get(crate::protocol::APPS_EXTENSION).is_some_and(Value::is_object)
    }

    async fn notify(&self, notification: Notification) {
        let _ = self.sender.send(Message::Notification(notification).to_json()).await;
    }

    /// Sends a request to the client and waits, bounded, for its answer.
    async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending.lock().expect("pending lock");
            if pending.len() >= MAX_CLIENT_REQUESTS {
                return Err(ErrorObject::new(codes::INTERNAL_ERROR, "too many requests to the client"));
            }
            pending.insert(id, tx);
        }
        let text = Message::Request(Request::new(RequestId::Number(id), method, Some(params))).to_json();
        if self.sender.send(text).await.is_err() {
            self.pending.lock().expect("pending lock").remove(&id);
            return Err(ErrorObject::new(codes::INTERNAL_ERROR, "the client is gone"));
        }
        let outcome = tokio::time::timeout(CLIENT_REQUEST_TIMEOUT, rx).await;
        self.pending.lock().expect("pending lock").remove(&id);
        match outcome {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(ErrorObject::new(codes::INTERNAL_ERROR, "the client is gone")),
            Err(_) => Err(ErrorObject::new(codes::INTERNAL_ERROR, "the client did not answer in time")),
        }
    }

    fn answer(&self, response: Response) {
        let RequestId::Number(id) = response.id else { return };
        let Some(tx) = self.pending.lock().expect("pending lock").remove(&id) else { return };
        let _ = tx.send(match response.outcome {
            Outcome::Result(value) => Ok(value),
            Outcome::Error(error) => Err(error),
        });
    }
}

/// The most text `big_text` returns: 1 MiB (well inside the default frame
/// bound, and exactly the default text bound).
pub(crate) const MAX_BIG_TEXT_BYTES: u64 = 1 << 20;

/// The longest `sleep` accepts: one minute.
pub(crate) const MAX_SLEEP_MS: u64 = 60_000;

/// A factory whose every connection is served by a fresh demo server of
/// the legacy era.
pub fn factory() -> MemoryFactory {
    factory_for(DemoEra::Legacy)
}

/// A factory whose every connection is served by a fresh demo server of
/// `era`.
pub fn factory_for(era: DemoEra) -> MemoryFactory {
    MemoryFactory::new("demo", move |transport| {
        tokio::spawn(serve_for(transport, era));
        Ok(())
    })
}

/// Serves one connection in the legacy era until the client goes away,
/// then finishes the requests already taken.
pub async fn serve(transport: Transport) {
    serve_for(transport, DemoEra::Legacy).await
}

/// Serves one connection in `era` until the client goes away, then
/// finishes the requests already taken.
pub async fn serve_for(transport: Transport, era: DemoEra) {
    serve_connection(transport, false, era).await
}

async fn serve_connection(transport: Transport, own_process: bool, era: DemoEra) {
    let Transport { sender, mut receiver } = transport;
    let peer = Arc::new(Peer::new(sender.clone(), own_process, era));
    let mut in_flight = tokio::task::JoinSet::new();
    while let Ok(Some(inbound)) = receiver.recv().await {
        while in_flight.try_join_next().is_some() {}
        let Inbound::Frame(text) = inbound else { continue };
        let request = match Message::parse(&text) {
            Ok(Message::Request(request)) => request,
            Ok(Message::Response(response)) => {
                peer.answer(response);
                continue;
            }
            _ => continue,
        };
        if is_crash(&request) {
            // Dies: nothing is answered, nothing in flight finishes.
            in_flight.abort_all();
            return;
        }
        let sender = sender.clone();
        let peer = peer.clone();
        in_flight.spawn(async move {
            let handled = match peer.era {
                DemoEra::Legacy => handle(&request, &peer).await,
                DemoEra::Modern => modern::handle(&request, &peer).await,
            };
            let response = match handled {
                Ok(result) => Response::result(request.id.clone(), result),
                Err(error) => Response::error(request.id.clone(), error),
            };
            let _ = sender.send(Message::Response(response).to_json()).await;
        });
    }
    // Whatever still waits for the client will not get an answer.
    peer.pending.lock().expect("pending lock").clear();
    // Bounded, so that a client gone mid-`count` cannot keep the server.
    let drain = async { while in_flight.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(5), drain).await;
}

/// Whether `request` calls the `crash` tool.
fn is_crash(request: &Request) -> bool {
    request.method == methods::TOOLS_CALL
        && request.params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str) == Some("crash")
}

fn initialize_result() -> Value {
    json!({
        "protocolVersion": LATEST_LEGACY_VERSION,
        "capabilities": {
            "tools": { "listChanged": true },
            "prompts": { "listChanged": false },
            "resources": { "subscribe": true, "listChanged": false },
            "completions": {},
            "logging": {},
            "tasks": { "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } },
            "extensions": { crate::protocol::SKILLS_EXTENSION: {} },
        },
        "serverInfo": { "name": "mcp-stack-demo", "version": env!("CARGO_PKG_VERSION"), "title": "mcp-stack demo server" },
        "instructions": "A demo server. Its tools echo, add, count with progress, draw a tiny image, log, and ask the client for input, completions and roots.",
    })
}

async fn handle(request: &Request, peer: &Arc<Peer>) -> Result<Value, ErrorObject> {
    let params = request.params.clone().unwrap_or(Value::Object(Map::new()));
    match request.method.as_str() {
        methods::INITIALIZE => {
            *peer.client_capabilities.lock().expect("caps lock") = params["capabilities"].clone();
            Ok(initialize_result())
        }
        methods::PING => Ok(json!({})),
        methods::TOOLS_LIST => Ok(json!({ "tools": tools(peer) })),
        methods::TOOLS_CALL if params.get("task").is_some() => tasks::start(peer, &params).await,
        methods::TOOLS_CALL => call_tool(&params, peer, None).await,
        methods::TASKS_GET => peer.tasks.get(&params),
        methods::TASKS_RESULT => peer.tasks.result(&params).await,
        methods::TASKS_LIST => peer.tasks.list(&params),
        methods::TASKS_CANCEL => tasks::cancel(peer, &params).await,
        methods::LOGGING_SET_LEVEL => {
            let level = params["level"].as_str().and_then(|l| l.parse::<LoggingLevel>().ok());
            let Some(level) = level else {
                return Err(ErrorObject::new(codes::INVALID_PARAMS, "unknown logging level"));
            };
            *peer.log_level.lock().expect("level lock") = Some(level);
            Ok(json!({}))
        }
        methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => {
            let Some(uri) = params["uri"].as_str() else {
                return Err(ErrorObject::new(codes::INVALID_PARAMS, "uri is required"));
            };
            let mut subs = peer.subscriptions.lock().expect("subscriptions lock");
            if request.method == methods::RESOURCES_UNSUBSCRIBE {
                subs.remove(uri);
            } else if subs.len() < MAX_SUBSCRIPTIONS {
                subs.insert(uri.to_string());
            } else {
                return Err(ErrorObject::new(codes::INVALID_PARAMS, "too many subscriptions"));
            }
            Ok(json!({}))
        }
        methods::PROMPTS_LIST => Ok(json!({ "prompts": [{
            "name": "greeting",
            "title": "Greeting",
            "description": "Greets someone by name",
            "arguments": [{ "name": "name", "description": "Who to greet", "required": true }],
        }]})),
        methods::PROMPTS_GET => {
            let name = params["arguments"]["name"].as_str().unwrap_or("world");
            if params["name"] != "greeting" {
                return Err(ErrorObject::new(codes::INVALID_PARAMS, "unknown prompt"));
            }
            Ok(json!({
                "description": "A greeting",
                "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Say hello to {name}.") } }],
            }))
        }
        methods::RESOURCES_LIST => {
            let mut resources = vec![
                json!({ "uri": "demo://readme", "name": "readme", "mimeType": "text/plain", "description": "About the demo server" }),
                json!({ "uri": "demo://logo", "name": "logo", "mimeType": "image/png", "description": "A 1x1 PNG (a blob)" }),
            ];
            if peer.declared_apps() {
                resources.push(extensions::app_resource());
            }
            Ok(json!({ "resources": resources }))
        }
        methods::SKILLS_LIST => Ok(extensions::skills()),
        methods::RESOURCES_TEMPLATES_LIST => Ok(json!({ "resourceTemplates": [{
            "uriTemplate": "demo://notes/{id}", "name": "note", "mimeType": "text/plain",
        }]})),
        methods::RESOURCES_READ => {
            let uri = params["uri"].as_str().unwrap_or_default();
            if let Some(read) = extensions::read(uri) {
                return Ok(read);
            }
            if uri == "demo://logo" {
                return Ok(
                    json!({ "contents": [{ "uri": uri, "mimeType": "image/png", "blob": TINY_PNG_BASE64 }] }),
                );
            }
            let text = if uri == "demo://readme" {
                "This is the mcp-stack demo server.".to_string()
            } else if let Some(id) = uri.strip_prefix("demo://notes/") {
                format!("Note {id}.")
            } else {
                return Err(ErrorObject::new(codes::RESOURCE_NOT_FOUND, "resource not found"));
            };
            Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text }] }))
        }
        methods::COMPLETION_COMPLETE => {
            let prefix = params["argument"]["value"].as_str().unwrap_or_default();
            let values: Vec<&str> =
                ["Ada", "Alan", "Grace", "Linus"].into_iter().filter(|v| v.starts_with(prefix)).collect();
            Ok(json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } }))
        }
        other => Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("method not found: {other}"))),
    }
}

fn tools(peer: &Peer) -> Value {
    let mut tools = base_tools();
    let list = tools.as_array_mut().expect("an array");
    if peer.declared("elicitation") {
        list.push(json!({
            "name": "elicit",
            "description": "Asks the client's user for input (elicitation/create) and returns the answer",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "message": { "type": "string" },
                    "schema": { "type": "object" },
                    "mode": { "type": "string", "enum": ["form", "url"] },
                    "url": { "type": "string" },
                    "elicitation_id": { "type": "string" },
                    "complete": { "type": "boolean", "description": "after an accepted URL elicitation, announce its completion" },
                },
                "required": ["message"],
            },
        }));
    }
    if peer.declared("sampling") {
        list.push(json!({
            "name": "sample",
            "description": "Asks the client's model for a completion (sampling/createMessage) and returns it",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "prompt": { "type": "string" },
                    "max_tokens": { "type": "integer", "minimum": 0 },
                    "system_prompt": { "type": "string" },
                    "with_tools": { "type": "boolean" },
                },
                "required": ["prompt"],
            },
        }));
    }
    if peer.declared_apps() {
        list.extend(extensions::app_tools());
    }
    if peer.own_process {
        list.push(json!({
            "name": "env",
            "description": "Returns the environment variable `name` of the server's process, or null",
            "inputSchema": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] },
            "annotations": { "readOnlyHint": true },
            "_meta": { "dev.mcp-stack.demo/reads": "environment" },
        }));
    }
    if peer.declared("roots") {
        list.push(json!({
            "name": "roots",
            "description": "Asks the client for its roots (roots/list) and returns them",
            "inputSchema": { "type": "object" },
        }));
    }
    if peer.era == DemoEra::Modern {
        list.retain(|tool| !modern::LEGACY_ONLY_TOOLS.contains(&tool["name"].as_str().unwrap_or_default()));
        // No tasks on this era's demo.
        for tool in list.iter_mut() {
            if let Some(tool) = tool.as_object_mut() {
                tool.remove("execution");
            }
        }
    }
    tools
}

fn base_tools() -> Value {
    json!([
        {
            "name": "echo",
            "description": "Echoes the message back",
            "inputSchema": { "type": "object", "properties": { "message": { "type": "string" } }, "required": ["message"] },
            "annotations": { "readOnlyHint": true },
        },
        {
            "name": "add",
            "description": "Adds two numbers",
            "inputSchema": {
                "type": "object",
                "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                "required": ["a", "b"],
            },
            "outputSchema": { "type": "object", "properties": { "sum": { "type": "number" } }, "required": ["sum"] },
        },
        {
            "name": "count",
            "description": "Counts to `steps`, reporting progress at each step",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "steps": { "type": "integer", "minimum": 1, "maximum": MAX_COUNT_STEPS },
                    "delay_ms": { "type": "integer", "minimum": 0, "maximum": 10_000 },
                },
                "required": ["steps"],
            },
            "execution": { "taskSupport": "optional" },
        },
        {
            "name": "tiny_image",
            "description": "Returns a 1x1 PNG",
            "inputSchema": { "type": "object" },
        },
        {
            "name": "log",
            "description": "Sends `count` log records at `level` (default info), honouring logging/setLevel",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "count": { "type": "integer", "minimum": 1, "maximum": MAX_LOG_COUNT },
                    "level": { "type": "string" },
                    "text": { "type": "string" },
                },
            },
        },
        {
            "name": "touch",
            "description": "Announces that a resource changed (to a client subscribed to it)",
            "inputSchema": { "type": "object", "properties": { "uri": { "type": "string" } }, "required": ["uri"] },
        },
        {
            "name": "announce",
            "description": "Announces that the tool list changed (notifications/tools/list_changed); the list stays the same",
            "inputSchema": { "type": "object", "properties": {} },
        },
        {
            "name": "crash",
            "description": "Ends the connection at once without answering, as a server that dies mid-call",
            "inputSchema": { "type": "object", "properties": {} },
        },
        {
            "name": "big_text",
            "description": "Returns `bytes` bytes of text",
            "inputSchema": {
                "type": "object",
                "properties": { "bytes": { "type": "integer", "minimum": 0, "maximum": MAX_BIG_TEXT_BYTES } },
                "required": ["bytes"],
            },
            "annotations": { "readOnlyHint": true },
        },
        {
            "name": "sleep",
            "description": "Answers after `ms` milliseconds",
            "inputSchema": {
                "type": "object",
                "properties": { "ms": { "type": "integer", "minimum": 0, "maximum": MAX_SLEEP_MS } },
                "required": ["ms"],
            },
            "annotations": { "readOnlyHint": true },
            "execution": { "taskSupport": "optional" },
        },
    ])
}

/// The client's answer as a tool result: structured on success, a tool
/// error that quotes the client's error otherwise.
fn client_answer(answer: Result<Value, ErrorObject>) -> Value {
    match answer {
        Ok(result) => json!({
            "content": [{ "type": "text", "text": result.to_string() }],
            "structuredContent": result,
        }),
        Err(error) => json!({
            "content": [{ "type": "text", "text": format!("client error {}: {}", error.code, error.message) }],
            "structuredContent": { "error": error },
            "isError": true,
        }),
    }
}

/// Runs a tool; `on_step` hears what a running `count` is at (a task's
/// status message).
async fn call_tool(
    params: &Value,
    peer: &Peer,
    on_step: Option<&StepSink<'_>>,
) -> Result<Value, ErrorObject> {
    let args = &params["arguments"];
    match params["name"].as_str().unwrap_or_default() {
        "env" if peer.own_process => {
            let value = args["name"].as_str().and_then(|name| std::env::var(name).ok());
            let text = value.clone().unwrap_or_else(|| "null".into());
            Ok(
                json!({ "content": [{ "type": "text", "text": text }], "structuredContent": { "value": value } }),
            )
        }
        "clock" | "clock_refresh" => Ok(extensions::clock()),
        "echo" => {
            let message = args["message"].as_str().unwrap_or_default();
            Ok(json!({ "content": [{ "type": "text", "text": message }] }))
        }
        "add" => {
            let (Some(a), Some(b)) = (args["a"].as_f64(), args["b"].as_f64()) else {
                return Ok(tool_error("add needs numbers a and b"));
            };
            let sum = a + b;
            Ok(
                json!({ "content": [{ "type": "text", "text": sum.to_string() }], "structuredContent": { "sum": sum } }),
            )
        }
        "count" => {
            let steps = args["steps"].as_u64().unwrap_or(3).clamp(1, MAX_COUNT_STEPS);
            let delay = Duration::from_millis(args["delay_ms"].as_u64().unwrap_or(0).min(10_000));
            let token = params["_meta"]["progressToken"].clone();
            for i in 1..=steps {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                if let Some(on_step) = on_step {
                    on_step(format!("step {i} of {steps}"));
                }
                if !token.is_null() {
                    let p = json!({ "progressToken": token, "progress": i, "total": steps, "message": format!("step {i} of {steps}") });
                    peer.notify(Notification::new(methods::NOTIFICATIONS_PROGRESS, Some(p))).await;
                }
            }
            Ok(json!({ "content": [{ "type": "text", "text": format!("counted to {steps}") }] }))
        }
        "tiny_image" => {
            Ok(json!({ "content": [{ "type": "image", "data": TINY_PNG_BASE64, "mimeType": "image/png" }] }))
        }
        "log" => {
            let count = args["count"].as_u64().unwrap_or(1).clamp(1, MAX_LOG_COUNT);
            let level = args["level"].as_str().unwrap_or("info");
            let Ok(level) = level.parse::<LoggingLevel>() else {
                return Ok(tool_error("unknown level"));
            };
            let text = args["text"].as_str().unwrap_or("demo log record");
            let floor = *peer.log_level.lock().expect("level lock");
            let mut sent = 0;
            if floor.is_none_or(|floor| level >= floor) {
                for i in 0..count {
                    let record = json!({ "level": level, "logger": "demo", "data": format!("{text} #{i}") });
                    peer.notify(Notification::new(methods::NOTIFICATIONS_MESSAGE, Some(record))).await;
                    sent += 1;
                }
            }
            Ok(
                json!({ "content": [{ "type": "text", "text": format!("sent {sent} records") }], "structuredContent": { "sent": sent } }),
            )
        }
        "announce" => {
            peer.notify(Notification::new(methods::NOTIFICATIONS_TOOLS_LIST_CHANGED, None)).await;
            Ok(json!({ "content": [{ "type": "text", "text": "announced" }] }))
        }
        "touch" => {
            let uri = args["uri"].as_str().unwrap_or_default();
            let subscribed = peer.subscriptions.lock().expect("subscriptions lock").contains(uri);
            if subscribed {
                let p = json!({ "uri": uri });
                peer.notify(Notification::new(methods::NOTIFICATIONS_RESOURCES_UPDATED, Some(p))).await;
            }
            Ok(
                json!({ "content": [{ "type": "text", "text": format!("notified: {subscribed}") }], "structuredContent": { "notified": subscribed } }),
            )
        }
        "elicit" if peer.declared("elicitation") => {
            let message = args["message"].as_str().unwrap_or_default();
            let request = if args["mode"] == "url" {
                json!({
                    "mode": "url",
                    "message": message,
                    "url": args["url"].as_str().unwrap_or("https://example.com/"),
                    "elicitationId": args["elicitation_id"].as_str().unwrap_or("demo-elicitation"),
                })
            } else {
                let schema = match &args["schema"] {
                    Value::Object(_) => args["schema"].clone(),
                    _ => {
                        json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] })
                    }
                };
                let mut request = json!({ "message": message, "requestedSchema": schema });
                if args["mode"] == "form" {
                    request["mode"] = json!("form");
                }
                request
            };
            let answer = peer.request(methods::ELICITATION_CREATE, request.clone()).await;
            let accepted = matches!(&answer, Ok(a) if a["action"] == "accept");
            if accepted && args["mode"] == "url" && args["complete"] == true {
                let p = json!({ "elicitationId": request["elicitationId"] });
                peer.notify(Notification::new(methods::NOTIFICATIONS_ELICITATION_COMPLETE, Some(p))).await;
            }
            Ok(client_answer(answer))
        }
        "sample" if peer.declared("sampling") => {
            let prompt = args["prompt"].as_str().unwrap_or_default();
            let mut request = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                "maxTokens": args["max_tokens"].as_u64().unwrap_or(100),
            });
            if let Some(system) = args["system_prompt"].as_str() {
                request["systemPrompt"] = json!(system);
            }
            if args["with_tools"] == true {
                request["tools"] = json!([{ "name": "echo", "inputSchema": { "type": "object" } }]);
            }
            Ok(client_answer(peer.request(methods::SAMPLING_CREATE_MESSAGE, request).await))
        }
        "roots" if peer.declared("roots") => {
            Ok(client_answer(peer.request(methods::ROOTS_LIST, json!({})).await))
        }
        "big_text" => {
            let bytes = args["bytes"].as_u64().unwrap_or(0).min(MAX_BIG_TEXT_BYTES) as usize;
            let text: String = ('a'..='z').cycle().take(bytes).collect();
            Ok(json!({ "content": [{ "type": "text", "text": text }] }))
        }
        "sleep" => {
            let ms = args["ms"].as_u64().unwrap_or(0).min(MAX_SLEEP_MS);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!({ "content": [{ "type": "text", "text": format!("slept {ms} ms") }] }))
        }
        other => Err(ErrorObject::new(codes::INVALID_PARAMS, format!("unknown tool: {other}"))),
    }
}

/// What hears a running tool's steps.
type StepSink<'a> = dyn Fn(String) + Send + Sync + 'a;

fn tool_error(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

/// The largest request the stdio demo server reads.
pub(crate) const DEMO_MAX_FRAME_BYTES: usize = 32 << 20;

/// Serves the legacy demo server on this process's stdin and stdout until
/// stdin ends: what the `mcp-stack-demo` binary runs, so that tests and
/// examples have a real stdio server without installing anything.
pub async fn serve_stdio() {
    serve_stdio_for(DemoEra::Legacy).await
}

/// [`serve_stdio`] in `era` (`mcp-stack-demo --modern`).
pub async fn serve_stdio_for(era: DemoEra) {
    use crate::transport::framing::FrameReader;
    use crate::transport::{MessageReceiver, MessageSender};
    use async_trait::async_trait;
    use tokio::io::AsyncWriteExt;

    struct Out(tokio::sync::Mutex<tokio::io::Stdout>);
    #[async_trait]
    impl MessageSender for Out {
        async fn send(&self, message: String) -> Result<(), crate::Error> {
            let mut out = self.0.lock().await;
            let line = message + "\n";
            let io =
                |e: std::io::Error| crate::Error::new(crate::FailureClass::TransportClosed, e.to_string());
            out.write_all(line.as_bytes()).await.map_err(io)?;
            out.flush().await.map_err(io)
        }
        async fn close(&self) -> Result<(), crate::Error> {
            Ok(())
        }
    }
    struct In(FrameReader<tokio::io::Stdin>);
    #[async_trait]
    impl MessageReceiver for In {
        async fn recv(&mut self) -> Result<Option<Inbound>, crate::Error> {
            self.0
                .next_frame()
                .await
                .map_err(|e| crate::Error::new(crate::FailureClass::TransportClosed, e.to_string()))
        }
    }
    let transport = Transport {
        sender: Arc::new(Out(tokio::sync::Mutex::new(tokio::io::stdout()))),
        // Larger than the client's default: a test of the client's own
        // bound (`--max-frame-bytes`) must meet that bound, not this one.
        receiver: Box::new(In(FrameReader::new(tokio::io::stdin(), DEMO_MAX_FRAME_BYTES))),
    };
    serve_connection(transport, true, era).await
}
