//! Tasks against servers that lie about them, in both forms: a message
//! that says it belongs to another task (`related-task`), a final status
//! that a later report contradicts, and `tasks/list` floods (one huge
//! page, a cursor repeated for ever, pages that pass the bound together).
//!
//! The rules: a task's messages are its own or a `server_protocol` error
//! (a notification: a warning, applied nowhere); a terminal status is
//! final, a later contradiction is a bounded warning; every list is read
//! within one set of bounds (a repeated cursor, pages, entries in all,
//! counted while parsing).

use mcp_stack::{handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Definition, Limits};
use mcp_stack::{EventItem, FailureClass, ProtocolChoice, TaskStart, TaskStatus};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_stream::StreamExt as _;

use crate::support::modern::{server, Seen};

const RELATED: &str = "io.modelcontextprotocol/related-task";

fn task(id: &str, status: &str) -> Value {
    json!({ "taskId": id, "status": status, "createdAt": "2026-12-02T10:00:00Z", "ttl": 60_000, "pollInterval": 1_000 })
}

/// A 2025-11-25 server that runs `slow` as task `t-1`: `tasks/get`
/// answers from `gets` in turn (the last for ever), `tasks/result` with
/// `result`, `tasks/list` with `list(cursor)`; a call with `{"notify":
/// [..]}` sends those status notifications (each `{"afterMs", "task"}`)
/// after the task is created.
fn legacy(
    gets: Vec<Value>,
    result: Value,
    list: impl Fn(&Value) -> Value + Send + Sync + 'static,
) -> (mcp_stack::transport::memory::MemoryFactory, Seen) {
    let gets = Arc::new(Mutex::new(gets));
    server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": { "tools": {}, "tasks": { "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } } },
            "serverInfo": { "name": "liar", "version": "1" }
        }})),
        "tools/list" => Some(json!({ "result": { "tools": [
            { "name": "slow", "inputSchema": { "type": "object" }, "execution": { "taskSupport": "optional" } }
        ]}})),
        "tools/call" => {
            let notes: Vec<Value> = params["arguments"]["notify"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|n| {
                    json!({ "method": "notifications/tasks/status", "params": n["task"], "_afterMs": n["afterMs"], "_sid": null })
                })
                .collect();
            Some(json!({ "notify": notes, "result": { "task": task("t-1", "working") } }))
        }
        "tasks/get" => {
            let mut gets = gets.lock().unwrap();
            Some(json!({ "result": if gets.len() > 1 { gets.remove(0) } else { gets[0].clone() } }))
        }
        "tasks/result" => Some(json!({ "result": result })),
        "tasks/list" => Some(json!({ "result": list(&params["cursor"]) })),
        _ => Some(json!({ "result": {} })),
    })
}

async fn connect(factory: mcp_stack::transport::memory::MemoryFactory, limits: Limits) -> Binding {
    let mut definition = Definition::new("liar", factory);
    definition = definition.with_protocol(ProtocolChoice::Legacy);
    definition = definition.with_limits(limits);
    Binding::connect(definition, Handlers::default()).await.unwrap()
}

fn no_list(_: &Value) -> Value {
    json!({ "tasks": [] })
}

fn related(id: &str) -> Value {
    json!({ RELATED: { "taskId": id } })
}

/// The warnings the binding emitted so far.
async fn warnings(events: &mut mcp_stack::EventStream) -> Vec<String> {
    let mut texts = Vec::new();
    while let Ok(Some(item)) = tokio::time::timeout(Duration::from_millis(10), events.next()).await {
        if let EventItem::Event(mcp_stack::Event::Warning { text, .. }) = item {
            texts.push(text);
        }
    }
    texts
}

// 7. A task's messages are its own.

#[tokio::test(start_paused = true)]
async fn a_result_that_names_another_task_is_a_protocol_error_not_this_tasks_result() {
    let stolen = json!({ "content": [{ "type": "text", "text": "t-2's secret" }], "_meta": related("t-2") });
    let (factory, seen) = legacy(vec![task("t-1", "completed")], stolen, no_list);
    let binding = connect(factory, Limits::default()).await;
    let e = binding.task("t-1").result(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert!(e.message().contains("another task") && !e.message().contains("secret"), "{e}");
    assert_eq!(seen.requests("tasks/result").len(), 1);

    // The same check on its own id passes; a malformed related-task fails.
    for (meta, ok) in [(related("t-1"), true), (json!({ RELATED: { "taskId": 7 } }), false)] {
        let result = json!({ "content": [{ "type": "text", "text": "mine" }], "_meta": meta });
        let (factory, _) = legacy(vec![task("t-1", "completed")], result, no_list);
        let binding = connect(factory, Limits::default()).await;
        let got = binding.task("t-1").result(CallOpts::default()).await;
        assert_eq!(got.is_ok(), ok, "{got:?}");
        binding.close().await;
    }
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_poll_or_a_notification_that_names_another_task_is_not_taken() {
    let mut lying_get = task("t-1", "completed");
    lying_get["_meta"] = related("t-2");
    let (factory, _) = legacy(vec![lying_get], json!({ "content": [] }), no_list);
    let binding = connect(factory, Limits::default()).await;
    let handle = binding.task("t-1");
    let e = handle.status(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert_eq!(handle.latest(), None, "nothing of it was applied");
    binding.close().await;

    // A notification about t-1 that says it is t-2's: dropped, warned.
    let mut note = task("t-1", "completed");
    note["_meta"] = related("t-2");
    let (factory, _) = legacy(vec![task("t-1", "working")], json!({ "content": [] }), no_list);
    let binding = connect(factory, Limits::default()).await;
    let mut events = binding.events();
    let args = json!({ "notify": [{ "afterMs": 10, "task": note }] });
    let TaskStart::Task(handle) =
        binding.call_tool_task("slow", args, None, CallOpts::default()).await.unwrap()
    else {
        panic!("a task")
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(handle.latest().unwrap().status, TaskStatus::Working, "the lying notification fed nobody");
    let warned = warnings(&mut events).await;
    assert!(warned.iter().any(|w| w.contains("another task")), "{warned:?}");
    binding.close().await;
}

/// 2026-07-28: `tasks/get` carries the outcome inline; an outcome (or a
/// `tasks/get`) that names another task is refused.
#[tokio::test(start_paused = true)]
async fn a_modern_outcome_that_names_another_task_is_a_protocol_error() {
    for lie in ["outer", "inline"] {
        let mut get = task("t-1", "completed");
        get["resultType"] = json!("complete");
        get["result"] = json!({ "content": [{ "type": "text", "text": "someone else's" }] });
        match lie {
            "outer" => get["_meta"] = related("t-9"),
            _ => get["result"]["_meta"] = related("t-9"),
        }
        let (factory, _) = server(move |method, _| match method {
            "server/discover" => Some(json!({ "result": {
                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": { "tools": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } },
                "serverInfo": { "name": "liar-2026", "version": "1" }
            }})),
            "tools/list" => Some(
                json!({ "result": { "tools": [{ "name": "slow", "inputSchema": { "type": "object" } }] } }),
            ),
            "tools/call" => {
                let mut created = task("t-1", "working");
                created["resultType"] = json!("task");
                Some(json!({ "result": created }))
            }
            "tasks/get" => Some(json!({ "result": get.clone() })),
            "subscriptions/listen" => None,
            _ => Some(json!({ "result": { "resultType": "complete" } })),
        });
        let mut definition = Definition::new("modern", factory);
        definition = definition.with_protocol(ProtocolChoice::Modern);
        definition = definition.with_capabilities(AllowedCapabilities::default().with_tasks(true));
        let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
        let e = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::ServerProtocol, "{lie}: {e}");
        assert!(e.message().contains("another task"), "{lie}: {e}");
        binding.close().await;
    }
}

// 8. A final status is final.

#[tokio::test(start_paused = true)]
async fn a_status_after_the_final_one_is_a_bounded_warning_never_applied() {
    let mut notes = vec![json!({ "afterMs": 10, "task": task("t-1", "completed") })];
    for i in 0..20 {
        notes.push(json!({ "afterMs": 20 + i, "task": task("t-1", "working") }));
    }
    notes.push(json!({ "afterMs": 60, "task": task("t-1", "failed") }));
    let (factory, _) = legacy(
        vec![task("t-1", "working")],
        json!({ "content": [{ "type": "text", "text": "done" }] }),
        no_list,
    );
    let binding = connect(factory, Limits::default()).await;
    let mut events = binding.events();
    let TaskStart::Task(handle) =
        binding.call_tool_task("slow", json!({ "notify": notes }), None, CallOpts::default()).await.unwrap()
    else {
        panic!("a task")
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(handle.latest().unwrap().status, TaskStatus::Completed, "completed stays completed");
    let warned: Vec<String> =
        warnings(&mut events).await.into_iter().filter(|w| w.contains("final status")).collect();
    assert_eq!(warned.len(), 4, "bounded: {warned:?}");
    assert!(warned[0].contains("working") && warned[3].contains("not reported"), "{warned:?}");
    let result = handle.result(CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    assert_eq!(handle.latest().unwrap().status, TaskStatus::Completed);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_poll_that_contradicts_the_final_status_is_not_applied() {
    let (factory, _) = legacy(
        vec![task("t-1", "failed"), task("t-1", "working"), task("t-1", "completed")],
        json!({ "content": [] }),
        no_list,
    );
    let binding = connect(factory, Limits::default()).await;
    let mut events = binding.events();
    let handle = binding.task("t-1");
    assert_eq!(handle.status(CallOpts::default()).await.unwrap().status, TaskStatus::Failed);
    let clone = handle.clone();
    assert_eq!(clone.status(CallOpts::default()).await.unwrap().status, TaskStatus::Failed, "not working");
    assert_eq!(handle.status(CallOpts::default()).await.unwrap().status, TaskStatus::Failed, "nor completed");
    assert_eq!(handle.latest().unwrap().status, TaskStatus::Failed);
    let warned = warnings(&mut events).await;
    assert_eq!(warned.iter().filter(|w| w.contains("final status")).count(), 2, "{warned:?}");
    binding.close().await;
}

// 9. Task lists are bounded as every list is.

fn flood(n: usize, from: usize) -> Vec<Value> {
    (from..from + n).map(|i| task(&format!("t-{i}"), "working")).collect()
}

#[tokio::test(start_paused = true)]
async fn one_page_of_100000_tasks_keeps_the_bound_and_says_how_many_it_dropped() {
    let page = json!({ "tasks": flood(100_000, 0) });
    let (factory, _) = legacy(vec![task("t-1", "working")], json!({}), move |_| page.clone());
    let binding = connect(factory, Limits::default().with_max_frame_bytes(64 << 20)).await;
    for listing in [binding.list_tasks().await.unwrap(), binding.list_tasks_page(None).await.unwrap()] {
        assert_eq!(listing.items.len(), 1024);
        assert_eq!(listing.items[1023].id, "t-1023");
        assert!(listing.warnings.iter().any(|w| w.contains("dropped 98976")), "{:?}", listing.warnings);
    }
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_repeated_cursor_ends_the_task_listing_with_a_warning() {
    let (factory, seen) = legacy(vec![task("t-1", "working")], json!({}), |cursor| {
        let from = if cursor.is_null() { 0 } else { 10 };
        json!({ "tasks": flood(10, from), "nextCursor": "same" })
    });
    let binding = connect(factory, Limits::default()).await;
    let listing = binding.list_tasks().await.unwrap();
    assert_eq!(seen.requests("tasks/list").len(), 2, "the first page, and the one the cursor named once");
    assert_eq!(listing.items.len(), 20);
    assert!(listing.warnings.iter().any(|w| w.contains("repeated a cursor")), "{:?}", listing.warnings);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn task_pages_are_bounded_in_number_and_in_entries_across_them() {
    // A new cursor every page, for ever: the page bound ends it.
    let (factory, seen) = legacy(vec![task("t-1", "working")], json!({}), |cursor| {
        let n = cursor.as_str().map_or(0, |c| c.parse::<usize>().unwrap());
        json!({ "tasks": flood(1, n), "nextCursor": (n + 1).to_string() })
    });
    let binding = connect(factory, Limits::default().with_max_catalog_pages(5)).await;
    let listing = binding.list_tasks().await.unwrap();
    assert_eq!(seen.requests("tasks/list").len(), 5);
    assert_eq!(listing.items.len(), 5);
    assert!(listing.warnings.iter().any(|w| w.contains("stopped after 5 pages")), "{:?}", listing.warnings);
    binding.close().await;

    // Pages of 700: the second passes the bound, which counts across pages.
    let (factory, seen) = legacy(vec![task("t-1", "working")], json!({}), |cursor| {
        let n = cursor.as_str().map_or(0, |c| c.parse::<usize>().unwrap());
        json!({ "tasks": flood(700, n * 700), "nextCursor": (n + 1).to_string() })
    });
    let binding = connect(factory, Limits::default()).await;
    let listing = binding.list_tasks().await.unwrap();
    assert_eq!(listing.items.len(), 1024);
    assert_eq!(seen.requests("tasks/list").len(), 2, "no page read past the bound");
    assert!(listing.warnings.iter().any(|w| w.contains("dropped 376")), "{:?}", listing.warnings);
    binding.close().await;
}
