//! The connection engine against servers that misbehave, through a real
//! binding over the in-memory transport.

use crate::support::scripted::{id_of, initialize_result, scripted};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass};
use serde_json::json;
use std::time::Duration;

async fn bind(factory: mcp_stack::transport::memory::MemoryFactory) -> Binding {
    Binding::connect(Definition::new("t", factory), Handlers::default()).await.expect("connect")
}

#[tokio::test]
async fn a_non_json_line_between_messages_is_survived() {
    let (factory, _rec) = scripted(|wire, req| {
        wire.raw("this is not json");
        wire.raw("{\"jsonrpc\":\"2.0\",\"method\":"); // a torn message
        wire.reply(&id_of(req), json!({"content": [{"type": "text", "text": "ok"}]}));
    });
    let binding = bind(factory).await;
    for _ in 0..3 {
        let r = binding.call_tool("x", json!({}), CallOpts::default()).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("ok"));
    }
    binding.close().await;
}

#[tokio::test]
async fn a_response_with_result_and_error_ends_that_call_with_server_protocol() {
    let (factory, _rec) = scripted(|wire, req| {
        if req.params.as_ref().unwrap()["name"] == "bad" {
            let id = id_of(req);
            wire.raw(
                json!({"jsonrpc":"2.0","id":id,"result":{},"error":{"code":1,"message":"x"}}).to_string(),
            );
        } else {
            wire.reply(&id_of(req), json!({"content": []}));
        }
    });
    let binding = bind(factory).await;
    let err = binding.call_tool("bad", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::ServerProtocol);
    assert_eq!(err.binding(), Some("t"));
    assert_eq!(err.op(), "call_tool");
    // The connection survives.
    binding.call_tool("good", json!({}), CallOpts::default()).await.unwrap();
    binding.close().await;
}

#[tokio::test]
async fn replies_to_unknown_ids_are_ignored() {
    let (factory, _rec) = scripted(|wire, req| {
        wire.reply(&json!(987654), json!({}));
        wire.reply(&json!("nobody"), json!({}));
        wire.reply(&id_of(req), json!({"content": []}));
    });
    let binding = bind(factory).await;
    binding.call_tool("x", json!({}), CallOpts::default()).await.unwrap();
    binding.close().await;
}

#[tokio::test]
async fn the_servers_ping_is_answered() {
    let (factory, rec) = scripted(|wire, req| {
        wire.raw(json!({"jsonrpc":"2.0","id":"srv-1","method":"ping"}).to_string());
        wire.raw(
            json!({"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage","params":{}}).to_string(),
        );
        wire.reply(&id_of(req), json!({"content": []}));
    });
    let binding = bind(factory).await;
    binding.call_tool("x", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen = rec.seen.lock().unwrap().clone();
    let ping = seen.iter().find(|m| m["id"] == "srv-1").expect("ping answered");
    assert_eq!(ping["result"], json!({}));
    // No handler installed: method not found.
    let sampling = seen.iter().find(|m| m["id"] == "srv-2").expect("sampling answered");
    assert_eq!(sampling["error"]["code"], -32601);
    binding.close().await;
}

#[tokio::test]
async fn dropping_a_pending_call_sends_cancelled_with_its_id() {
    let (factory, rec) = scripted(|_wire, _req| { /* never answers */ });
    let binding = bind(factory).await;
    let call = binding.call_tool("slow", json!({}), CallOpts::default());
    let _ = tokio::time::timeout(Duration::from_millis(50), call).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let sent_id = rec.find("tools/call")[0]["id"].clone();
    let cancelled = rec.find("notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0]["params"]["requestId"], sent_id);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn progress_never_extends_the_deadline() {
    let (factory, rec) = scripted(|wire, req| {
        let token = req.params.as_ref().unwrap()["_meta"]["progressToken"].clone();
        let wire = wire.clone();
        tokio::spawn(async move {
            for i in 0.. {
                tokio::time::sleep(Duration::from_millis(10)).await;
                wire.notify("notifications/progress", json!({"progressToken": token, "progress": i}));
            }
        });
    });
    let binding = bind(factory).await;
    let started = tokio::time::Instant::now();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    let opts = CallOpts::default().with_timeout(Duration::from_secs(2)).with_progress(move |_| {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let err = binding.call_tool("chatty", json!({}), opts).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert!(seen.load(std::sync::atomic::Ordering::Relaxed) > 100);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let id = rec.find("tools/call")[0]["id"].clone();
    let cancelled = rec.find("notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0]["params"]["requestId"], id);
    assert!(binding.status().progress_routes == 0);
    binding.close().await;
}

#[tokio::test]
async fn an_oversized_reply_ends_only_its_call() {
    let (factory, _rec) = scripted(|wire, req| {
        let id = id_of(req);
        if req.params.as_ref().unwrap()["name"] == "big" {
            let text = "x".repeat(2 << 20);
            wire.raw(
                json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}]}})
                    .to_string(),
            );
        } else {
            wire.reply(&id, json!({"content": []}));
        }
    });
    let mut def = Definition::new("t", factory);
    let limits = def.limits().with_max_frame_bytes(1 << 20);
    def = def.with_limits(limits);
    let binding = Binding::connect(def, Handlers::default()).await.unwrap();
    let err = binding.call_tool("big", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::LimitExceeded);
    binding.call_tool("small", json!({}), CallOpts::default()).await.unwrap();
    binding.close().await;
}

#[tokio::test]
async fn close_ends_pending_calls_with_shutdown_and_is_idempotent() {
    // The server never answers the call; it says when the call reached it.
    let arrived = std::sync::Arc::new(tokio::sync::Notify::new());
    let seen = arrived.clone();
    let (factory, _rec) = scripted(move |_wire, req| {
        if req.method == "tools/call" {
            seen.notify_one();
        }
    });
    let binding = bind(factory).await;
    let b = binding.clone();
    let call = tokio::spawn(async move { b.call_tool("slow", json!({}), CallOpts::default()).await });
    tokio::time::timeout(Duration::from_secs(10), arrived.notified())
        .await
        .expect("the call reaches the server");
    binding.close().await;
    binding.close().await;
    let ended =
        tokio::time::timeout(Duration::from_secs(10), call).await.expect("close ends the pending call");
    let err = ended.unwrap().unwrap_err();
    assert_eq!(err.class(), FailureClass::Shutdown);
    let err = binding.ping().await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Shutdown);
    assert_eq!(binding.status().state, mcp_stack::State::Closed);
}

#[tokio::test]
async fn an_unsupported_protocol_version_is_refused() {
    let factory = mcp_stack::transport::memory::MemoryFactory::new("old", |t| {
        let mcp_stack::transport::Transport { sender, mut receiver } = t;
        tokio::spawn(async move {
            while let Ok(Some(mcp_stack::transport::Inbound::Frame(text))) = receiver.recv().await {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                if v["method"] == "initialize" {
                    let r = json!({"jsonrpc":"2.0","id":v["id"],"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"0"}}});
                    let _ = sender.send(r.to_string()).await;
                }
            }
        });
        Ok(())
    });
    let err = Binding::connect(Definition::new("t", factory), Handlers::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::UnsupportedProtocol);
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_fails_startup_within_the_startup_timeout() {
    let factory = mcp_stack::transport::memory::MemoryFactory::new("mute", |t| {
        tokio::spawn(async move {
            let _keep = t;
            std::future::pending::<()>().await
        });
        Ok(())
    });
    let mut def = Definition::new("t", factory);
    let timeouts = def.timeouts().with_startup(Duration::from_secs(3));
    def = def.with_timeouts(timeouts);
    let started = tokio::time::Instant::now();
    let err = Binding::connect(def, Handlers::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::StartupTimeout);
    assert_eq!(started.elapsed(), Duration::from_secs(3));
}

#[tokio::test]
async fn notifications_before_the_initialize_reply_are_handled() {
    // Like server-everything: a list_changed and a log line arrive before the
    // initialize result.
    let factory = mcp_stack::transport::memory::MemoryFactory::new("eager", |t| {
        let mcp_stack::transport::Transport { sender, mut receiver } = t;
        tokio::spawn(async move {
            while let Ok(Some(mcp_stack::transport::Inbound::Frame(text))) = receiver.recv().await {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                let reply = |result: serde_json::Value| {
                    json!({"jsonrpc":"2.0","id":v["id"],"result":result}).to_string()
                };
                match v["method"].as_str() {
                    Some("initialize") => {
                        let early = [
                            json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}),
                            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"early"}}),
                        ];
                        for n in early {
                            let _ = sender.send(n.to_string()).await;
                        }
                        let _ = sender.send(reply(initialize_result())).await;
                    }
                    Some("tools/list") => {
                        let _ = sender
                            .send(reply(json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})))
                            .await;
                    }
                    _ => {}
                }
            }
        });
        Ok(())
    });
    let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = logs.clone();
    let handlers = Handlers::default().with_events(move |e| {
        if let mcp_stack::Event::ServerLog { text, .. } = e {
            sink.lock().unwrap().push(text);
        }
    });
    let binding = Binding::connect(Definition::new("t", factory), handlers).await.unwrap();
    let tools = binding.list_tools().await.unwrap();
    assert_eq!(tools.items.len(), 1);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(*logs.lock().unwrap(), ["early"]);
    binding.close().await;
}

/// A handler that never answers, and says when it started and when its
/// future was dropped.
struct Stuck {
    started: std::sync::Arc<tokio::sync::Notify>,
    dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait::async_trait]
impl mcp_stack::connection::InboundHandler for Stuck {
    async fn request(
        &self,
        _method: &str,
        _params: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, mcp_stack::protocol::ErrorObject> {
        struct OnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for OnDrop {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let _on_drop = OnDrop(self.dropped.clone());
        self.started.notify_one();
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn a_server_request_the_server_cancels_is_stopped_and_not_answered() {
    use mcp_stack::transport::Inbound;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let (client, mut server) = mcp_stack::transport::memory::duplex(1 << 20);
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let handler = Stuck { started: started.clone(), dropped: dropped.clone() };
    let _connection = mcp_stack::connection::Connection::start(client, Arc::new(handler));
    let send = |message: serde_json::Value| server.sender.send(message.to_string());

    send(json!({"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage", "params": {}}))
        .await
        .unwrap();
    started.notified().await;
    // Another id, and a malformed one, stop nothing.
    send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s-2"}}))
        .await
        .unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}}))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!dropped.load(Ordering::SeqCst));

    send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s-1"}}))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(dropped.load(Ordering::SeqCst), "the handler's future was dropped");

    // Nothing was sent for s-1: the first thing the client sends is the
    // answer to a ping that follows.
    send(json!({"jsonrpc": "2.0", "id": "p-1", "method": "ping"})).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), server.receiver.recv()).await;
    let Ok(Ok(Some(Inbound::Frame(text)))) = first else { panic!("no reply to the ping: {first:?}") };
    let reply: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["id"], "p-1");
}
