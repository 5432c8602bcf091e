//! A small in-process MCP server whose tools a test sets, for the host and
//! provider tests.

use super::wire;
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// Answers one `tools/call`: the tool's raw name and arguments in, the
/// `CallToolResult` out.
pub type Answer = Arc<dyn Fn(&str, &Value) -> Value + Send + Sync>;

/// A server that answers `initialize`, lists the tools the test sets, and
/// answers calls with `answer` (by default `"<label>:<tool>"` as text).
/// Every other request gets an empty result.
#[derive(Clone)]
pub struct ToolServer {
    tools: Arc<Mutex<Vec<Value>>>,
    answer: Answer,
    /// The arguments of every call, in order.
    pub seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl ToolServer {
    /// Tools with these names and an empty object schema.
    pub fn named(names: &[&str]) -> ToolServer {
        let server = ToolServer::with_tools(Vec::new());
        server.set(names);
        server
    }

    /// These tool definitions, as `tools/list` returns them.
    pub fn with_tools(tools: Vec<Value>) -> ToolServer {
        ToolServer {
            tools: Arc::new(Mutex::new(tools)),
            answer: Arc::new(|_, _| Value::Null),
            seen: Arc::default(),
        }
    }

    /// Answers calls with `answer`.
    pub fn answering(mut self, answer: impl Fn(&str, &Value) -> Value + Send + Sync + 'static) -> ToolServer {
        self.answer = Arc::new(answer);
        self
    }

    /// Replaces the tools with ones of these names.
    pub fn set(&self, names: &[&str]) {
        *self.tools.lock().unwrap() =
            names.iter().map(|n| json!({"name": n, "inputSchema": {"type": "object"}})).collect();
    }

    /// Replaces the tools with these definitions.
    pub fn set_tools(&self, tools: Vec<Value>) {
        *self.tools.lock().unwrap() = tools;
    }

    pub fn factory(&self, label: &'static str) -> MemoryFactory {
        let server = self.clone();
        MemoryFactory::new(label, move |transport| {
            let server = server.clone();
            tokio::spawn(async move {
                let Transport { sender, mut receiver } = transport;
                while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
                    let Some(req) = wire::request(&text) else { continue };
                    let result = match req.method.as_str() {
                        "initialize" => json!({
                            "protocolVersion": "2025-11-25",
                            "capabilities": {"tools": {"listChanged": true}},
                            "serverInfo": {"name": label, "version": "1"},
                        }),
                        "tools/list" => json!({"tools": server.tools.lock().unwrap().clone()}),
                        "tools/call" => {
                            let params = req.params.clone().unwrap_or(Value::Null);
                            let tool = params["name"].as_str().unwrap_or("").to_string();
                            let args = params.get("arguments").cloned().unwrap_or(json!({}));
                            server.seen.lock().unwrap().push((tool.clone(), args.clone()));
                            match (server.answer)(&tool, &args) {
                                Value::Null => {
                                    json!({"content": [{"type": "text", "text": format!("{label}:{tool}")}]})
                                }
                                answer => answer,
                            }
                        }
                        _ => json!({}),
                    };
                    let reply = wire::result(&req.id, result);
                    if sender.send(reply).await.is_err() {
                        break;
                    }
                }
            });
            Ok(())
        })
    }
}
