//! A scripted 2026-07-28 (or legacy) server over the in-memory transport:
//! a closure answers each request by method, with a few directives a test
//! puts in its answer (`die`, `notify`, `delayMs`), and every message it
//! got is recorded ([`Seen`]).

use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A server that answers each request with `script`, recording every
/// message it got.
pub fn server(
    script: impl Fn(&str, &Value) -> Option<Value> + Send + Sync + 'static,
) -> (MemoryFactory, Seen) {
    server_per_connection(move |_, method, params| script(method, params))
}

/// [`server`], with the script told which connection (0, 1, …) asks.
pub fn server_per_connection(
    script: impl Fn(usize, &str, &Value) -> Option<Value> + Send + Sync + 'static,
) -> (MemoryFactory, Seen) {
    let seen = Seen::default();
    let script = Arc::new(script);
    let record = seen.clone();
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let factory = MemoryFactory::new("modern", move |transport: Transport| {
        let n = connections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let script = script.clone();
        let record = record.clone();
        let script = move |method: &str, params: &Value| script(n, method, params);
        tokio::spawn(async move {
            let Transport { sender, mut receiver } = transport;
            while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
                let message: Value = serde_json::from_str(&text).unwrap();
                record.0.lock().unwrap().push(message.clone());
                let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
                    continue;
                };
                let Some(mut reply) = script(method, &message["params"]) else { continue };
                // `{"die": true}`: the server goes away (the connection ends).
                if reply.get("die").is_some() {
                    return;
                }
                // `{"notify": [..]}`: send these notifications (with the
                // request's id as their subscription id, or a note's own
                // `_sid`, none when that is null; a note's `_afterMs`
                // delays it), and answer nothing unless the reply also has
                // a `result` or an `error`.
                if let Some(notes) = reply.as_object_mut().unwrap().remove("notify") {
                    for note in notes.as_array().unwrap() {
                        let mut note = note.clone();
                        let sid = note.as_object_mut().unwrap().remove("_sid").unwrap_or_else(|| id.clone());
                        note["jsonrpc"] = json!("2.0");
                        if !sid.is_null() {
                            note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] = sid;
                        }
                        // `"_afterMs"`: this note goes that much later.
                        if let Some(after) =
                            note.as_object_mut().unwrap().remove("_afterMs").and_then(|d| d.as_u64())
                        {
                            let sender = sender.clone();
                            tokio::spawn(async move {
                                tokio::time::sleep(Duration::from_millis(after)).await;
                                let _ = sender.send(note.to_string()).await;
                            });
                            continue;
                        }
                        if sender.send(note.to_string()).await.is_err() {
                            return;
                        }
                    }
                    if reply.get("result").is_none() && reply.get("error").is_none() {
                        continue;
                    }
                }
                reply["jsonrpc"] = json!("2.0");
                reply["id"] = id.clone();
                // `"delayMs"`: answer that much later (meanwhile the server
                // goes on reading).
                if let Some(delay) = reply.as_object_mut().unwrap().remove("delayMs").and_then(|d| d.as_u64())
                {
                    let sender = sender.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        let _ = sender.send(reply.to_string()).await;
                    });
                    continue;
                }
                if sender.send(reply.to_string()).await.is_err() {
                    return;
                }
            }
        });
        Ok(())
    });
    (factory, seen)
}

#[derive(Clone, Default)]
pub struct Seen(pub Arc<Mutex<Vec<Value>>>);

impl Seen {
    pub fn requests(&self, method: &str) -> Vec<Value> {
        self.0.lock().unwrap().iter().filter(|m| m["method"] == method).cloned().collect()
    }
    pub fn methods(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().filter_map(|m| m["method"].as_str().map(String::from)).collect()
    }
}
