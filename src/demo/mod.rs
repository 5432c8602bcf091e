//! A small MCP server that runs in-process over the in-memory transport, for
//! the quickstart, the examples, the benchmarks and the tests.
//!
//! It is behind the default feature `demo` (it costs a few hundred lines of
//! code and no dependencies; turn default features off to leave it out).
//! It speaks the legacy era at [`LATEST_LEGACY_VERSION`] and offers:
//!
//! - tools: `echo {message}` (text), `add {a, b}` (text and structured
//!   content, with an output schema), `count {steps, delay_ms}` (reports
//!   progress for each step when asked, then answers), `tiny_image` (a PNG),
//!   `big_text {bytes}` (that many bytes of text, up to
//!   [`MAX_BIG_TEXT_BYTES`], for exercising result limits), `sleep {ms}`
//!   (answers after that long, up to [`MAX_SLEEP_MS`], for exercising
//!   deadlines and the tool-call gate);
//! - a prompt `greeting {name}`, with completion of `name`;
//! - a resource `demo://readme` and a template `demo://notes/{id}`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! use mcp_stack::{Binding, CallOpts, Definition, Handlers};
//!
//! let binding = Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default()).await?;
//! let result = binding.call_tool("echo", serde_json::json!({"message": "hi"}), CallOpts::default()).await?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! binding.close().await;
//! # Ok(()) }
//! ```
//!
//! [`LATEST_LEGACY_VERSION`]: crate::protocol::LATEST_LEGACY_VERSION

use serde_json::{json, Map, Value};
use std::time::Duration;

use crate::protocol::jsonrpc::codes;
use crate::protocol::{
    methods, ErrorObject, Message, Notification, Request, Response, LATEST_LEGACY_VERSION,
};
use crate::transport::memory::MemoryFactory;
use crate::transport::{Inbound, Transport};

/// A 1×1 transparent PNG.
pub const TINY_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// The most steps `count` accepts, so the demo itself stays bounded.
pub const MAX_COUNT_STEPS: u64 = 10_000;

/// The most text `big_text` returns: 1 MiB (well inside the default frame
/// bound, and exactly the default text bound).
pub const MAX_BIG_TEXT_BYTES: u64 = 1 << 20;

/// The longest `sleep` accepts: one minute.
pub const MAX_SLEEP_MS: u64 = 60_000;

/// A factory whose every connection is served by a fresh demo server.
pub fn factory() -> MemoryFactory {
    MemoryFactory::new("demo", |transport| {
        tokio::spawn(serve(transport));
        Ok(())
    })
}

/// Serves one connection until the client goes away.
pub async fn serve(transport: Transport) {
    let Transport { sender, mut receiver } = transport;
    while let Ok(Some(inbound)) = receiver.recv().await {
        let Inbound::Frame(text) = inbound else { continue };
        let Ok(Message::Request(request)) = Message::parse(&text) else { continue };
        let sender = sender.clone();
        tokio::spawn(async move {
            let notify = {
                let sender = sender.clone();
                move |n: Notification| {
                    let sender = sender.clone();
                    async move {
                        let _ = sender.send(Message::Notification(n).to_json()).await;
                    }
                }
            };
            let response = match handle(&request, notify).await {
                Ok(result) => Response::result(request.id.clone(), result),
                Err(error) => Response::error(request.id.clone(), error),
            };
            let _ = sender.send(Message::Response(response).to_json()).await;
        });
    }
}

async fn handle<F, Fut>(request: &Request, notify: F) -> Result<Value, ErrorObject>
where
    F: Fn(Notification) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let params = request.params.clone().unwrap_or(Value::Object(Map::new()));
    match request.method.as_str() {
        methods::INITIALIZE => Ok(json!({
            "protocolVersion": LATEST_LEGACY_VERSION,
            "capabilities": {
                "tools": { "listChanged": false },
                "prompts": { "listChanged": false },
                "resources": { "subscribe": false, "listChanged": false },
                "completions": {},
            },
            "serverInfo": { "name": "mcp-stack-demo", "version": env!("CARGO_PKG_VERSION"), "title": "mcp-stack demo server" },
            "instructions": "A demo server. Its tools echo, add, count with progress, draw a tiny image, return big text and sleep.",
        })),
        methods::PING => Ok(json!({})),
        methods::TOOLS_LIST => Ok(json!({ "tools": tools() })),
        methods::TOOLS_CALL => call_tool(&params, notify).await,
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
        methods::RESOURCES_LIST => Ok(json!({ "resources": [{
            "uri": "demo://readme", "name": "readme", "mimeType": "text/plain", "description": "About the demo server",
        }]})),
        methods::RESOURCES_TEMPLATES_LIST => Ok(json!({ "resourceTemplates": [{
            "uriTemplate": "demo://notes/{id}", "name": "note", "mimeType": "text/plain",
        }]})),
        methods::RESOURCES_READ => {
            let uri = params["uri"].as_str().unwrap_or_default();
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

fn tools() -> Value {
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
        },
        {
            "name": "tiny_image",
            "description": "Returns a 1x1 PNG",
            "inputSchema": { "type": "object" },
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
        },
    ])
}

async fn call_tool<F, Fut>(params: &Value, notify: F) -> Result<Value, ErrorObject>
where
    F: Fn(Notification) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let args = &params["arguments"];
    match params["name"].as_str().unwrap_or_default() {
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
                if !token.is_null() {
                    let p = json!({ "progressToken": token, "progress": i, "total": steps, "message": format!("step {i} of {steps}") });
                    notify(Notification::new(methods::NOTIFICATIONS_PROGRESS, Some(p))).await;
                }
            }
            Ok(json!({ "content": [{ "type": "text", "text": format!("counted to {steps}") }] }))
        }
        "tiny_image" => {
            Ok(json!({ "content": [{ "type": "image", "data": TINY_PNG_BASE64, "mimeType": "image/png" }] }))
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

fn tool_error(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}
