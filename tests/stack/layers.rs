//! The tool filter, result limits and tool-call gate through a real binding:
//! the default stack over the in-memory transport, to the demo server and to
//! scripted servers.

use crate::support::scripted::{id_of, scripted_lists, Recorder, Wire};
use base64::Engine as _;
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::{
    handlers::Handlers, Binding, CallOpts, Content, Definition, FailureClass, Limits, ToolFilter,
};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

fn filter(allow: &[&str], deny: &[&str]) -> ToolFilter {
    let filter = ToolFilter::default().with_denied(deny.iter().copied());
    // An empty `allow` here means "no allow list", as the tests read.
    if allow.is_empty() {
        filter
    } else {
        filter.with_allowed(allow.iter().copied())
    }
}

async fn connect(definition: Definition) -> Binding {
    Binding::connect(definition, Handlers::default()).await.expect("connect")
}

fn demo() -> Definition {
    Definition::new("demo", mcp_stack::demo::factory())
}

/// A server that lists `public` and `secret` and answers every call.
fn two_tool_server() -> (MemoryFactory, Recorder) {
    scripted_lists(|wire, req| match req.method.as_str() {
        "tools/list" => wire.reply(
            &id_of(req),
            json!({"tools": [
                {"name": "public", "inputSchema": {"type": "object"}},
                {"name": "secret", "inputSchema": {"type": "object"}},
            ]}),
        ),
        _ => wire.reply(&id_of(req), json!({"content": [{"type": "text", "text": "done"}]})),
    })
}

#[tokio::test]
async fn a_filtered_tool_is_refused_and_the_server_receives_nothing() {
    let (factory, recorder) = two_tool_server();
    let mut definition = Definition::new("filtered", factory);
    definition = definition.with_tool_filter(filter(&[], &["secret"]));
    let binding = connect(definition).await;

    let err = binding.call_tool("secret", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::ToolUnavailable);
    assert_eq!(err.binding(), Some("filtered"));
    assert_eq!(err.op(), "call_tool");

    // A permitted call afterwards goes through, so anything the refused one
    // had sent would have reached the server before it.
    let ok = binding.call_tool("public", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(ok.content[0].as_text(), Some("done"));
    let called: Vec<Value> =
        recorder.find("tools/call").iter().map(|m| m["params"]["name"].clone()).collect();
    assert_eq!(called, vec![json!("public")]);
    // Discovery listed the tools at connect; the refused call sent nothing.
    assert_eq!(
        recorder.methods(),
        ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"]
    );

    let listed = binding.list_tools().await.unwrap();
    assert_eq!(listed.items.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["public"]);
    assert!(listed.warnings.is_empty());
    binding.close().await;
}

#[tokio::test]
async fn filtered_tools_are_absent_from_list_tools() {
    let mut definition = demo();
    definition = definition.with_tool_filter(filter(&["echo", "big_text", "sleep"], &["sleep"]));
    let binding = connect(definition).await;
    let listed = binding.list_tools().await.unwrap();
    assert_eq!(listed.items.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo", "big_text"]);
    for name in ["add", "sleep", "no_such_tool"] {
        let err = binding.call_tool(name, json!({}), CallOpts::default()).await.unwrap_err();
        assert_eq!(err.class(), FailureClass::ToolUnavailable, "{name}");
    }
    let echoed = binding.call_tool("echo", json!({"message": "hi"}), CallOpts::default()).await.unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("hi"));
    binding.close().await;
}

#[tokio::test]
async fn result_limits_are_visible_on_the_tool_result() {
    let mut definition = demo();
    definition = definition.with_limits(
        Limits::default()
            .with_max_text_result_bytes(100)
            .with_max_structured_bytes(5)
            .with_max_binary_item_bytes(10),
    );
    let binding = connect(definition).await;

    let cut = binding.call_tool("big_text", json!({"bytes": 1000}), CallOpts::default()).await.unwrap();
    let Content::Text { text, truncated, .. } = &cut.content[0] else { panic!("{:?}", cut.content) };
    assert_eq!(text.len(), 100);
    assert!(text.starts_with("abcdefghijklmnopqrstuvwxyzabcd"));
    assert!(*truncated);
    assert_eq!(cut.warnings, ["cut the text to 100 bytes of the 1000 received"]);

    let whole = binding.call_tool("big_text", json!({"bytes": 100}), CallOpts::default()).await.unwrap();
    assert_eq!(
        whole.content,
        [Content::Text {
            text: cut.content[0].as_text().unwrap().into(),
            truncated: false,
            annotations: None,
            meta: None
        }]
    );
    assert!(whole.warnings.is_empty());

    // The demo's one-pixel PNG decodes to more than ten bytes: refused, with
    // its size.
    let png = base64::engine::general_purpose::STANDARD
        .decode(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
        )
        .unwrap()
        .len();
    let image = binding.call_tool("tiny_image", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(image.content, [Content::Unsupported { kind: "image".into(), bytes: png }]);
    assert_eq!(image.warnings.len(), 1);

    // {"sum":5.0} is eleven bytes of JSON: over five, dropped; the text stays.
    let sum = binding.call_tool("add", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert_eq!(sum.structured, None);
    assert_eq!(sum.content[0].as_text(), Some("5"));
    assert_eq!(sum.warnings.len(), 1);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_long_tool_call_does_not_hold_up_list_tools_or_ping() {
    let binding = connect(demo()).await;
    let start = Instant::now();
    let long = tokio::spawn({
        let binding = binding.clone();
        async move { binding.call_tool("sleep", json!({"ms": 30_000}), CallOpts::default()).await }
    });
    tokio::task::yield_now().await;

    let listed = binding.list_tools().await.unwrap();
    assert_eq!(listed.items.len(), 10);
    binding.ping().await.unwrap();
    let readme = binding.read_resource("demo://readme", mcp_stack::CallOpts::default()).await.unwrap();
    assert!(readme.contents[0].text.as_deref().unwrap().contains("demo server"));
    // All of that happened with the tool call still running, on the clock
    // it started on.
    assert!(!long.is_finished());
    assert_eq!(start.elapsed(), Duration::ZERO);

    let slept = tokio::time::timeout(Duration::from_secs(60), long)
        .await
        .expect("the long call ends")
        .unwrap()
        .unwrap();
    assert_eq!(slept.content[0].as_text(), Some("slept 30000 ms"));
    assert!(start.elapsed() >= Duration::from_secs(30));
    binding.close().await;
}

/// A server that answers everything but `tools/call`, which it hands to the
/// test to answer when it likes.
fn held_calls_server() -> (MemoryFactory, mpsc::UnboundedReceiver<(String, Value, Wire)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (factory, _recorder) = scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/call" => {
            let name = req.params.as_ref().unwrap()["name"].as_str().unwrap().to_string();
            let _ = tx.send((name, id_of(req), wire.clone()));
        }
        "tools/list" => {
            wire.reply(&id_of(req), json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}))
        }
        _ => wire.reply(&id_of(req), json!({})),
    });
    (factory, rx)
}

/// The next call the server sees, if one arrives before the system is idle
/// for a (paused-clock) second.
async fn next_call(rx: &mut mpsc::UnboundedReceiver<(String, Value, Wire)>) -> Option<(String, Value, Wire)> {
    tokio::time::timeout(Duration::from_secs(1), rx.recv()).await.ok().flatten()
}

fn answer(id: &Value, wire: &Wire, text: &str) {
    wire.reply(id, json!({"content": [{"type": "text", "text": text}]}));
}

#[tokio::test(start_paused = true)]
async fn two_tool_calls_serialize_and_others_pass_meanwhile() {
    let (factory, mut calls) = held_calls_server();
    let binding = connect(Definition::new("serial", factory)).await;
    let call = |name: &'static str| {
        let binding = binding.clone();
        tokio::spawn(async move { binding.call_tool(name, json!({}), CallOpts::default()).await })
    };
    let first = call("first");
    let (name, id, wire) = next_call(&mut calls).await.expect("the first call reaches the server");
    assert_eq!(name, "first");
    let second = call("second");
    assert!(next_call(&mut calls).await.is_none(), "the second call waits for the first");

    // Listing and ping are not held behind the tool call.
    assert_eq!(binding.list_tools().await.unwrap().items.len(), 1);
    binding.ping().await.unwrap();
    assert!(!first.is_finished() && !second.is_finished());

    answer(&id, &wire, "one");
    assert_eq!(first.await.unwrap().unwrap().content[0].as_text(), Some("one"));
    let (name, id, wire) = next_call(&mut calls).await.expect("the second call follows");
    assert_eq!(name, "second");
    answer(&id, &wire, "two");
    assert_eq!(second.await.unwrap().unwrap().content[0].as_text(), Some("two"));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn tool_calls_run_together_when_parallel_calls_are_allowed() {
    let (factory, mut calls) = held_calls_server();
    let mut definition = Definition::new("parallel", factory);
    definition = definition.with_allow_parallel_calls(true);
    let binding = connect(definition).await;
    let call = |name: &'static str| {
        let binding = binding.clone();
        tokio::spawn(async move { binding.call_tool(name, json!({}), CallOpts::default()).await })
    };
    let (first, second) = (call("first"), call("second"));
    let a = next_call(&mut calls).await.expect("one call");
    let b = next_call(&mut calls).await.expect("and the other, unanswered yet");
    let mut names = [a.0.clone(), b.0.clone()];
    names.sort();
    assert_eq!(names, ["first", "second"]);
    for (name, id, wire) in [a, b] {
        answer(&id, &wire, &name);
    }
    assert_eq!(first.await.unwrap().unwrap().content[0].as_text(), Some("first"));
    assert_eq!(second.await.unwrap().unwrap().content[0].as_text(), Some("second"));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_queued_behind_a_stuck_one_ends_at_its_deadline() {
    let (factory, mut calls) = held_calls_server();
    let binding = connect(Definition::new("stuck", factory)).await;
    let stuck = tokio::spawn({
        let binding = binding.clone();
        async move { binding.call_tool("stuck", json!({}), CallOpts::default()).await }
    });
    let (_name, _id, _wire) = next_call(&mut calls).await.expect("the stuck call reaches the server");
    let start = Instant::now();
    let opts = CallOpts::default().with_timeout(Duration::from_secs(5));
    let err = binding.call_tool("queued", json!({}), opts).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert!(next_call(&mut calls).await.is_none(), "the queued call never left");
    stuck.abort();
    binding.close().await;
}

/// Issue 43, item 16: a call's progress reaches its sink before its result
/// does, however slow the sink: the server sends its reports and then its
/// reply in one burst, and the sink takes a while with each report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_delivered_before_the_result_however_slow_the_sink() {
    let (factory, _recorder) = crate::support::scripted::scripted(|wire, req| {
        if req.method != "tools/call" {
            return wire.reply(&crate::support::scripted::id_of(req), json!({}));
        }
        let token = req.params.as_ref().unwrap()["_meta"]["progressToken"].clone();
        for step in 1..=3 {
            wire.notify(
                "notifications/progress",
                json!({ "progressToken": token, "progress": step, "total": 3 }),
            );
        }
        wire.reply(
            &crate::support::scripted::id_of(req),
            json!({ "content": [{ "type": "text", "text": "done" }] }),
        );
    });
    let binding = Binding::connect(Definition::new("burst", factory), Default::default()).await.unwrap();
    for round in 0..10 {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let opts = CallOpts::default().with_progress(move |p| {
            std::thread::sleep(Duration::from_millis(2));
            sink.lock().unwrap().push(format!("progress {}", p.progress));
        });
        let result = binding.call_tool("any", json!({}), opts).await.unwrap();
        seen.lock().unwrap().push(format!("result {}", result.content[0].as_text().unwrap()));
        assert_eq!(
            *seen.lock().unwrap(),
            ["progress 1", "progress 2", "progress 3", "result done"],
            "round {round}"
        );
    }
    binding.close().await;
}

/// Issue 43, item 16: a server's log records and a call's progress reports,
/// sent interleaved on one stream, reach the host in that order (FastMCP's
/// `ctx.info` between `ctx.report_progress`): the log service and the
/// progress sinks are fed from one ordered queue. Both sinks take a while,
/// the log service asynchronously, so that two queues would reorder them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_records_and_progress_reach_the_host_in_the_servers_order() {
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "interleaved", "version": "1"},
    });
    let (factory, _recorder) = crate::support::scripted::scripted_with(init, |wire, req| {
        let id = crate::support::scripted::id_of(req);
        if req.method != "tools/call" {
            return wire.reply(&id, json!({}));
        }
        let token = req.params.as_ref().unwrap()["_meta"]["progressToken"].clone();
        for step in 1..=5 {
            wire.notify("notifications/message", json!({ "level": "info", "data": format!("log {step}") }));
            wire.notify(
                "notifications/progress",
                json!({ "progressToken": token, "progress": step, "total": 5 }),
            );
        }
        wire.reply(&id, json!({ "content": [{ "type": "text", "text": "done" }] }));
    });
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let logged = seen.clone();
    let handlers = mcp_stack::handlers::Handlers::default().log(move |m: mcp_stack::handlers::LogMessage| {
        let logged = logged.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(2)).await;
            logged.lock().unwrap().push(m.text);
            Ok(())
        }
    });
    let binding = Binding::connect(Definition::new("interleaved", factory), handlers).await.unwrap();
    let mut expected: Vec<String> =
        (1..=5).flat_map(|s| [format!("log {s}"), format!("progress {s}")]).collect();
    expected.push("result done".into());
    for round in 0..5 {
        seen.lock().unwrap().clear();
        let sink = seen.clone();
        let opts = CallOpts::default().with_progress(move |p| {
            std::thread::sleep(Duration::from_millis(1));
            sink.lock().unwrap().push(format!("progress {}", p.progress));
        });
        let result = binding.call_tool("any", json!({}), opts).await.unwrap();
        seen.lock().unwrap().push(format!("result {}", result.content[0].as_text().unwrap()));
        assert_eq!(*seen.lock().unwrap(), expected, "round {round}");
    }
    binding.close().await;
}
