//! The built-in demo server in the 2026-07-28 era (`DemoEra::Modern`): a
//! binding that chooses its era finds it modern, and every request kind the
//! era's demo serves works through it.

use mcp_stack::demo::DemoEra;
use mcp_stack::transport::{Inbound, Transport};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, ProtocolChoice};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

async fn modern_demo() -> Binding {
    let definition = Definition::new("demo", mcp_stack::demo::factory_for(DemoEra::Modern));
    Binding::connect(definition, Handlers::default()).await.unwrap()
}

#[tokio::test]
async fn a_binding_that_chooses_finds_the_modern_demo_modern() {
    let b = modern_demo().await;
    assert_eq!(b.session().protocol_version, "2026-07-28");
    assert_eq!(b.session().server.name, "mcp-stack-demo");
    assert_eq!(b.catalog().protocol_version, "2026-07-28");
    let tools: Vec<_> = b.catalog().tools.iter().map(|t| t.raw_name.clone()).collect();
    // Sorted by the catalog; none of the tools that need what this era
    // replaced (log, touch, announce).
    assert_eq!(tools, ["add", "big_text", "count", "crash", "echo", "sleep", "tiny_image"]);
    b.close().await;
}

#[tokio::test]
async fn tools_progress_prompts_resources_completion_and_skills_work_on_2026_07_28() {
    let b = modern_demo().await;
    let r = b.call_tool("echo", json!({"message": "hi"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi"));
    let r = b.call_tool("add", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"sum": 5.0})));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
    let r = b.call_tool("count", json!({"steps": 3}), opts).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("counted to 3"));
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0], "progress on the request's own stream");

    crate::demo::greeting_note_and_completion(&b).await;
    let skills = b.list_skills().await.unwrap();
    assert_eq!(skills.items[0].name, "greeting-style");
    b.close().await;
}

#[tokio::test]
async fn a_binding_held_to_the_legacy_era_is_refused_at_once() {
    let mut definition = Definition::new("demo", mcp_stack::demo::factory_for(DemoEra::Modern));
    definition = definition.with_protocol(ProtocolChoice::Legacy);
    let started = std::time::Instant::now();
    let err = Binding::connect(definition, Handlers::default()).await.unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "not at a deadline: {err}");
    assert!(err.message().contains("initialize"), "{err}");
}

/// One raw request to a fresh modern demo server, and its reply.
async fn raw(request: Value) -> Value {
    let (client, server) = mcp_stack::transport::memory::duplex(1 << 20);
    tokio::spawn(mcp_stack::demo::serve_for(server, DemoEra::Modern));
    let Transport { sender, mut receiver } = client;
    sender.send(request.to_string()).await.unwrap();
    let Ok(Some(Inbound::Frame(reply))) = receiver.recv().await else { panic!("a reply") };
    serde_json::from_str(&reply).unwrap()
}

#[tokio::test]
async fn the_modern_demo_checks_each_requests_version_and_marks_each_result() {
    // No version in `_meta`: -32022, naming what the server supports.
    let reply = raw(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {} })).await;
    assert_eq!(reply["error"]["code"], -32022, "{reply}");
    assert_eq!(reply["error"]["data"]["supported"], json!(["2026-07-28"]), "{reply}");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
    });
    let reply =
        raw(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": { "_meta": meta } })).await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    // What this era has no more is not found.
    for method in ["initialize", "ping", "logging/setLevel"] {
        let reply =
            raw(json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": { "_meta": meta } })).await;
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
    let call = json!({ "name": "log", "arguments": {}, "_meta": meta });
    let reply = raw(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call })).await;
    assert_eq!(reply["error"]["code"], -32602, "a tool of the other era: {reply}");
}
