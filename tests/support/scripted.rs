//! Test servers that misbehave on purpose, over the in-memory transport.

use super::wire::{self, Request};
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// What a scripted server saw and can do.
#[derive(Clone, Default)]
pub struct Recorder {
    pub seen: Arc<Mutex<Vec<Value>>>,
}

impl Recorder {
    pub fn methods(&self) -> Vec<String> {
        self.seen.lock().unwrap().iter().filter_map(|m| m["method"].as_str().map(String::from)).collect()
    }

    pub fn find(&self, method: &str) -> Vec<Value> {
        self.seen.lock().unwrap().iter().filter(|m| m["method"] == method).cloned().collect()
    }

    /// The client's reply to the server's request `id`, waited for up to
    /// five seconds of tokio's clock.
    pub async fn reply_to(&self, id: u64) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let found = self
                .seen
                .lock()
                .unwrap()
                .iter()
                .find(|m| m["id"] == id && m.get("method").is_none())
                .cloned();
            if let Some(reply) = found {
                return reply;
            }
            assert!(tokio::time::Instant::now() < deadline, "no reply to the server's request {id}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// A handle a script uses to write raw frames.
#[derive(Clone)]
pub struct Wire {
    tx: mpsc::UnboundedSender<String>,
}

impl Wire {
    pub fn raw(&self, text: impl Into<String>) {
        let _ = self.tx.send(text.into());
    }

    pub fn reply(&self, id: &Value, result: Value) {
        self.raw(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
    }

    /// Answers `server/discover` as a legacy server does: "method not found",
    /// at once, so that the automatic protocol choice falls back to
    /// `initialize` without waiting.
    pub fn refuse_discover(&self, req: &Request) {
        let error = json!({"code": -32601, "message": "Method not found"});
        self.raw(json!({"jsonrpc": "2.0", "id": id_of(req), "error": error}).to_string());
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.raw(wire::notification(method, Some(params)));
    }
}

pub fn initialize_result() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"},
    })
}

/// The list methods a binding calls while it discovers its catalog.
pub const LIST_METHODS: &[&str] =
    &["tools/list", "prompts/list", "resources/list", "resources/templates/list"];

/// A legacy server that answers `initialize` itself (and refuses
/// `server/discover` as a legacy server does), answers the catalog's list
/// requests with empty lists, and hands every other request to `script`,
/// which may answer, stay silent, or write anything.
pub fn scripted<F>(script: F) -> (MemoryFactory, Recorder)
where
    F: Fn(&Wire, &Request) + Send + Sync + 'static,
{
    scripted_with(initialize_result(), script)
}

/// As [`scripted`], answering `initialize` with `init`.
pub fn scripted_with<F>(init: Value, script: F) -> (MemoryFactory, Recorder)
where
    F: Fn(&Wire, &Request) + Send + Sync + 'static,
{
    scripted_all(move |wire, req| match req.method.as_str() {
        "initialize" => wire.reply(&id_of(req), init.clone()),
        "server/discover" => wire.refuse_discover(req),
        "tools/list" => wire.reply(&id_of(req), json!({"tools": []})),
        "prompts/list" => wire.reply(&id_of(req), json!({"prompts": []})),
        "resources/list" => wire.reply(&id_of(req), json!({"resources": []})),
        "resources/templates/list" => wire.reply(&id_of(req), json!({"resourceTemplates": []})),
        _ => script(wire, req),
    })
}

/// As [`scripted`], but the list requests go to `script` too.
pub fn scripted_lists<F>(script: F) -> (MemoryFactory, Recorder)
where
    F: Fn(&Wire, &Request) + Send + Sync + 'static,
{
    scripted_all(move |wire, req| {
        if req.method == "initialize" {
            wire.reply(&id_of(req), initialize_result());
        } else if req.method == "server/discover" {
            wire.refuse_discover(req);
        } else {
            script(wire, req)
        }
    })
}

/// A server that hands every request, `initialize` included, to `script`.
pub fn scripted_all<F>(script: F) -> (MemoryFactory, Recorder)
where
    F: Fn(&Wire, &Request) + Send + Sync + 'static,
{
    let recorder = Recorder::default();
    let rec = recorder.clone();
    let script = Arc::new(script);
    let factory = MemoryFactory::new("scripted", move |transport: Transport| {
        let Transport { sender, mut receiver } = transport;
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let wire = Wire { tx };
        tokio::spawn(async move {
            while let Some(text) = rx.recv().await {
                if sender.send(text).await.is_err() {
                    break;
                }
            }
        });
        let rec = rec.clone();
        let script = script.clone();
        tokio::spawn(async move {
            while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
                let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                rec.seen.lock().unwrap().push(value);
                if let Some(req) = wire::request(&text) {
                    script(&wire, &req);
                }
            }
        });
        Ok(())
    });
    (factory, recorder)
}

pub fn id_of(req: &Request) -> Value {
    serde_json::to_value(&req.id).unwrap()
}
