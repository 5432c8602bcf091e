//! Tool calls run as tasks (2025-11-25) against scripted servers, with the
//! paused clock: started, polled at the server's interval within the
//! client's bounds, their result fetched, cancelled, taken up again by id;
//! a `required` tool run as a task by `call_tool`; and the bad input of
//! issue 23 (an unknown status, another task's id, a task that never ends).

use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass, ProtocolChoice};
use mcp_stack::{TaskStart, TaskStatus};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use crate::support::modern::{server, Seen};

fn task(id: &str, status: &str, poll_ms: Option<u64>) -> Value {
    let mut task = json!({
        "taskId": id, "status": status, "statusMessage": format!("{status}…"),
        "createdAt": "2026-12-02T10:00:00Z", "lastUpdatedAt": "2026-12-02T10:00:01Z", "ttl": 60_000
    });
    if let Some(ms) = poll_ms {
        task["pollInterval"] = json!(ms);
    }
    task
}

/// A 2025-11-25 server that runs `slow` (optional) and `must` (required)
/// as tasks: `tasks/get` answers from `statuses` in turn (the last one
/// for ever), `tasks/result` with a text.
fn task_server(
    statuses: Vec<Value>,
    tasks_capability: bool,
) -> (mcp_stack::transport::memory::MemoryFactory, Seen) {
    let polls = Arc::new(AtomicUsize::new(0));
    let statuses = Arc::new(Mutex::new(statuses));
    server(move |method, params| match method {
        "initialize" => {
            let mut capabilities = json!({ "tools": {} });
            if tasks_capability {
                capabilities["tasks"] =
                    json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
            }
            Some(json!({ "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "serverInfo": { "name": "tasks", "version": "1" }
            }}))
        }
        "tools/list" => Some(json!({ "result": { "tools": [
            { "name": "slow", "inputSchema": { "type": "object" }, "execution": { "taskSupport": "optional" } },
            { "name": "must", "inputSchema": { "type": "object" }, "execution": { "taskSupport": "required" } },
            { "name": "plain", "inputSchema": { "type": "object" } }
        ]}})),
        "tools/call" if params.get("task").is_some() => {
            if params["arguments"]["immediate"] == true {
                return Some(json!({ "result": { "content": [{ "type": "text", "text": "at once" }] } }));
            }
            // `{"notifyMs": N}`: status notifications N ms in, one saying
            // the task works, then one that it completed (and a bad one).
            if let Some(at) = params["arguments"]["notifyMs"].as_u64() {
                let note = |status: &str, after: u64| {
                    let mut note = json!({ "method": "notifications/tasks/status", "params": task("t-1", status, None) });
                    note["_afterMs"] = json!(after);
                    note["_sid"] = Value::Null;
                    note
                };
                let bad = json!({ "method": "notifications/tasks/status", "params": { "status": "completed" },
                                  "_afterMs": at, "_sid": null });
                return Some(json!({
                    "notify": [note("working", at), bad, note("completed", at + 1)],
                    "result": { "task": task("t-1", "working", Some(30_000)) }
                }));
            }
            Some(json!({ "result": { "task": task("t-1", "working", Some(2_000)) } }))
        }
        "tools/call" => Some(json!({ "error": { "code": -32601, "message": "this tool runs as a task" } })),
        "tasks/get" => {
            let n = polls.fetch_add(1, Ordering::SeqCst);
            let statuses = statuses.lock().unwrap();
            Some(json!({ "result": statuses[n.min(statuses.len() - 1)].clone() }))
        }
        "tasks/result" => Some(json!({ "result": {
            "content": [{ "type": "text", "text": format!("done {}", params["taskId"]) }],
            "_meta": { "io.modelcontextprotocol/related-task": { "taskId": params["taskId"] } }
        }})),
        "tasks/cancel" => Some(json!({ "result": task("t-1", "cancelled", None) })),
        "tasks/list" => Some(json!({ "result": {
            "tasks": [task("t-1", "working", Some(1_000)), task("t-2", "sleeping", None), "t-3"],
            "nextCursor": "page-2"
        }})),
        _ => Some(json!({ "result": {} })),
    })
}

fn definition(factory: mcp_stack::transport::memory::MemoryFactory) -> Definition {
    let mut definition = Definition::new("tasks", factory);
    definition = definition.with_protocol(ProtocolChoice::Legacy);
    definition
}

async fn connect(statuses: Vec<Value>) -> (Binding, Seen) {
    let (factory, seen) = task_server(statuses, true);
    (Binding::connect(definition(factory), Handlers::default()).await.unwrap(), seen)
}

#[tokio::test(start_paused = true)]
async fn a_task_is_polled_at_the_servers_interval_and_its_result_fetched() {
    let (binding, seen) = connect(vec![
        task("t-1", "working", Some(2_000)),
        task("t-1", "working", Some(2_000)),
        task("t-1", "completed", None),
    ])
    .await;
    let started =
        binding.call_tool_task("slow", json!({}), Some(Duration::from_secs(60)), CallOpts::default()).await;
    let TaskStart::Task(handle) = started.unwrap() else { panic!("a task") };
    assert_eq!(handle.id(), "t-1");
    assert_eq!(handle.latest().unwrap().status, TaskStatus::Working);
    assert_eq!(seen.requests("tools/call")[0]["params"]["task"], json!({ "ttl": 60_000 }));
    let mut updates = handle.updates();
    let begun = Instant::now();
    let result = handle.result(CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done \"t-1\""));
    assert_eq!(seen.requests("tasks/get").len(), 3);
    assert_eq!(seen.requests("tasks/get")[0]["params"], json!({ "taskId": "t-1" }));
    assert_eq!(begun.elapsed(), Duration::from_secs(4), "two waits of the server's 2 s");
    assert!(updates.has_changed().unwrap());
    let last = updates.borrow_and_update().clone().unwrap();
    assert_eq!((last.status, last.message.as_deref()), (TaskStatus::Completed, Some("completed…")));
    assert_eq!(last.ttl, Some(Duration::from_secs(60)));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn the_poll_interval_is_held_between_a_quarter_second_and_thirty_seconds() {
    for (asked, waited) in [(0, Duration::from_millis(250)), (365 * 24 * 3_600_000, Duration::from_secs(30))]
    {
        let (binding, seen) =
            connect(vec![task("t-1", "working", Some(asked)), task("t-1", "completed", None)]).await;
        let begun = Instant::now();
        binding.task("t-1").result(CallOpts::default().with_timeout(Duration::from_secs(60))).await.unwrap();
        assert_eq!(begun.elapsed(), waited, "pollInterval {asked}");
        assert_eq!(seen.requests("tasks/get").len(), 2);
        binding.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_task_that_never_ends_costs_the_wait_not_the_task() {
    let (binding, seen) = connect(vec![task("t-1", "working", Some(1_000))]).await;
    let begun = Instant::now();
    let e = binding
        .task("t-1")
        .result(CallOpts::default().with_timeout(Duration::from_secs(10)))
        .await
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::Deadline, "{e}");
    assert!(e.message().contains("runs on at the server"), "{e}");
    assert_eq!(begun.elapsed(), Duration::from_secs(10), "ended at the deadline, not later");
    assert!(seen.requests("tasks/cancel").is_empty(), "the task was not cancelled");
    assert!(seen.requests("tasks/get").len() <= 11);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_task_and_cancel() {
    let (binding, seen) = connect(vec![task("t-1", "cancelled", None)]).await;
    let handle = binding.task("t-1");
    let e = handle.result(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::Cancelled, "{e}");
    assert!(seen.requests("tasks/result").is_empty(), "a cancelled task's result is not asked for");
    let info = handle.cancel().await.unwrap();
    assert_eq!(info.status, TaskStatus::Cancelled);
    assert_eq!(seen.requests("tasks/cancel")[0]["params"], json!({ "taskId": "t-1" }));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_required_tool_runs_as_a_task_through_call_tool() {
    let (binding, seen) =
        connect(vec![task("t-1", "working", Some(500)), task("t-1", "completed", None)]).await;
    let result = binding.call_tool("must", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done \"t-1\""));
    assert!(seen.requests("tools/call")[0]["params"].get("task").is_some());
    // An optional one is a plain call unless asked.
    binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap_err();
    assert!(seen.requests("tools/call")[1]["params"].get("task").is_none());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_immediate_answer_is_returned_as_it_is() {
    let (binding, _) = connect(vec![]).await;
    let started =
        binding.call_tool_task("slow", json!({ "immediate": true }), None, CallOpts::default()).await;
    let TaskStart::Done(result) = started.unwrap() else { panic!("done at once") };
    assert_eq!(result.content[0].as_text(), Some("at once"));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn tasks_are_refused_before_sending_where_they_cannot_run() {
    let (binding, seen) = connect(vec![]).await;
    let e = binding.call_tool_task("plain", json!({}), None, CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    assert_eq!(e.op(), "call_tool_task");
    assert!(seen.requests("tools/call").is_empty());
    binding.close().await;

    let (factory, seen) = task_server(vec![], false);
    let binding = Binding::connect(definition(factory), Handlers::default()).await.unwrap();
    let e = binding.call_tool_task("slow", json!({}), None, CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "no tasks capability: {e}");
    assert!(seen.requests("tools/call").is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_unknown_status_or_another_tasks_id_is_a_protocol_error() {
    let (binding, _) = connect(vec![task("t-1", "paused", None)]).await;
    let e = binding.task("t-1").status(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert!(e.message().contains("unknown status"), "{e}");
    binding.close().await;

    let (binding, _) = connect(vec![task("t-2", "working", None)]).await;
    let e = binding.task("t-1").result(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert!(e.message().contains("another task"), "{e}");
    binding.close().await;

    let (binding, _) = connect(vec![json!({ "taskId": "x".repeat(300), "status": "working" })]).await;
    let e = binding.task("t-1").status(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_page_of_tasks_keeps_the_valid_ones_and_says_what_it_dropped() {
    let (binding, seen) = connect(vec![]).await;
    let page = binding.list_tasks_page(None).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!((page.items[0].id.as_str(), page.items[0].status), ("t-1", TaskStatus::Working));
    assert_eq!(page.next_cursor.as_deref(), Some("page-2"));
    assert_eq!(page.warnings.len(), 2, "{:?}", page.warnings);
    assert!(
        page.warnings[0].contains("tasks/list: dropped entry 1: ")
            && page.warnings[0].contains("unknown status")
    );
    assert!(page.warnings[1].contains("tasks/list: dropped entry 2: not an object"), "{:?}", page.warnings);
    binding.list_tasks_page(Some("page-2")).await.unwrap();
    assert_eq!(seen.requests("tasks/list")[1]["params"]["cursor"], "page-2");
    let e = binding.list_tasks_page(Some(&"c".repeat(5_000))).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidArguments);
    assert_eq!(seen.requests("tasks/list").len(), 2, "an overlong cursor is not sent");
    binding.close().await;

    let (factory, seen) = task_server(vec![], false);
    let binding = Binding::connect(definition(factory), Handlers::default()).await.unwrap();
    let page = binding.list_tasks_page(None).await.unwrap();
    assert!(page.items.is_empty() && page.warnings[0].contains("does not list tasks"));
    assert!(seen.requests("tasks/list").is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_status_notification_ends_the_wait_before_the_next_poll() {
    let (binding, seen) = connect(vec![task("t-1", "working", Some(30_000))]).await;
    let mut events = binding.events();
    let started =
        binding.call_tool_task("slow", json!({ "notifyMs": 5_000 }), None, CallOpts::default()).await;
    let TaskStart::Task(handle) = started.unwrap() else { panic!("a task") };
    let begun = Instant::now();
    let result = handle.result(CallOpts::default().with_timeout(Duration::from_secs(60))).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done \"t-1\""));
    let waited = begun.elapsed();
    assert!(waited >= Duration::from_millis(5_001) && waited < Duration::from_secs(6), "{waited:?}");
    assert_eq!(seen.requests("tasks/get").len(), 1, "the notification, not a poll, said it completed");
    assert_eq!(handle.latest().unwrap().status, TaskStatus::Completed);
    // The notification without a task id is a warning, and fed nobody.
    use tokio_stream::StreamExt as _;
    let mut warned = false;
    while let Ok(Some(item)) = tokio::time::timeout(Duration::from_millis(10), events.next()).await {
        if let mcp_stack::EventItem::Event(mcp_stack::Event::Warning { text, .. }) = item {
            warned |= text.contains("task status notification");
        }
    }
    assert!(warned, "the bad notification was reported");
    binding.close().await;
}

/// The built-in demo server's tasks, end to end: a `count` whose steps are
/// its status messages, found in `tasks/list`; a `sleep` cancelled, then
/// refused a second cancel; an id it never gave refused.
#[tokio::test(start_paused = true)]
async fn the_demo_servers_tasks_run_list_and_cancel() {
    let binding = Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default())
        .await
        .unwrap();
    let args = json!({ "steps": 3, "delay_ms": 1_000 });
    let TaskStart::Task(count) =
        binding.call_tool_task("count", args, None, CallOpts::default()).await.unwrap()
    else {
        panic!("the demo runs count as a task when asked")
    };
    assert_eq!(count.latest().unwrap().status, TaskStatus::Working);
    let mut updates = count.updates();
    let messages = Arc::new(Mutex::new(Vec::new()));
    let heard = messages.clone();
    let listener = tokio::spawn(async move {
        while updates.changed().await.is_ok() {
            let latest = updates.borrow_and_update().clone();
            if let Some(info) = latest {
                heard.lock().unwrap().push((info.status, info.message));
            }
        }
    });
    let page = binding.list_tasks_page(None).await.unwrap();
    assert_eq!(page.items.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), [count.id()]);
    let result = count.result(CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("counted to 3"));
    let heard: Vec<_> = messages.lock().unwrap().clone();
    assert!(
        heard
            .iter()
            .any(|(s, m)| *s == TaskStatus::Working && m.as_deref().is_some_and(|m| m.starts_with("step "))),
        "a poll saw a step: {heard:?}"
    );
    // The last change may reach the listener after the wait returned: the
    // handle has it.
    assert_eq!(count.latest().unwrap().status, TaskStatus::Completed, "{heard:?}");
    listener.abort();

    let TaskStart::Task(sleep) =
        binding.call_tool_task("sleep", json!({ "ms": 60_000 }), None, CallOpts::default()).await.unwrap()
    else {
        panic!("the demo runs sleep as a task when asked")
    };
    let cancelled = sleep.cancel().await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(sleep.result(CallOpts::default()).await.unwrap_err().class(), FailureClass::Cancelled);
    let again = sleep.cancel().await.unwrap_err();
    assert_eq!(again.class(), FailureClass::RemoteError, "{again}");

    let e = binding.task("demo-task-999").status(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::RemoteError, "{e}");
    // `echo` forbids tasks: refused before anything is sent.
    let e = binding
        .call_tool_task("echo", json!({ "message": "x" }), None, CallOpts::default())
        .await
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    binding.close().await;
}

/// 2025-11-25 keeps the start call's progress token valid for the task's
/// lifetime: the demo's `count`, run as a task, reports each step after the
/// start was answered, and each reaches the sink given to the start; the
/// route is gone once the task ended.
#[tokio::test(start_paused = true)]
async fn a_tasks_progress_reaches_the_start_calls_sink_until_it_ends() {
    let binding = Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default())
        .await
        .unwrap();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
    let args = json!({ "steps": 3, "delay_ms": 1_000 });
    let TaskStart::Task(count) = binding.call_tool_task("count", args, None, opts).await.unwrap() else {
        panic!("the demo runs count as a task when asked")
    };
    assert!(reports.lock().unwrap().is_empty(), "no step before the start was answered");
    let result = count.result(CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("counted to 3"));
    // Delivery runs on its own task: let it drain.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(*reports.lock().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(binding.status().progress_routes, 0, "the route ended with the task");
    binding.close().await;
}

/// Every task a binding starts is recorded in its definition's task store:
/// listed by `started_tasks`, its record updated when it ends, and found by
/// a binding of the same name made later over the same file store (a
/// restarted host), which takes it up again by id.
#[tokio::test(start_paused = true)]
async fn started_tasks_are_recorded_and_found_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn mcp_stack::tasks::TaskStore> =
        Arc::new(mcp_stack::tasks::FileTaskStore::new(dir.path()));
    let definition = |store: &Arc<dyn mcp_stack::tasks::TaskStore>| {
        let mut definition = Definition::new("demo", mcp_stack::demo::factory());
        definition = definition.with_task_store(store.clone());
        definition
    };
    let binding = Binding::connect(definition(&store), Handlers::default()).await.unwrap();
    let ttl = Some(Duration::from_secs(600));
    let TaskStart::Task(count) = binding
        .call_tool_task("count", json!({ "steps": 2, "delay_ms": 500 }), ttl, CallOpts::default())
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    let records = binding.started_tasks().await.unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(
        (record.binding.as_str(), record.id.as_str(), record.tool.as_str()),
        ("demo", count.id(), "count")
    );
    assert_eq!((record.ttl, record.status), (ttl, TaskStatus::Working));
    count.result(CallOpts::default()).await.unwrap();
    assert_eq!(binding.started_tasks().await.unwrap()[0].status, TaskStatus::Completed);

    // A task still running when the host goes away: the next one finds it.
    let TaskStart::Task(sleep) =
        binding.call_tool_task("sleep", json!({ "ms": 30_000 }), ttl, CallOpts::default()).await.unwrap()
    else {
        panic!("a task")
    };
    let other_store: Arc<dyn mcp_stack::tasks::TaskStore> =
        Arc::new(mcp_stack::tasks::FileTaskStore::new(dir.path()));
    let mut other = definition(&other_store);
    other = other.with_name("other");
    let stranger = Binding::connect(other, Handlers::default()).await.unwrap();
    assert!(stranger.started_tasks().await.unwrap().is_empty(), "another binding's records are not its own");
    stranger.close().await;
    let restarted_store: Arc<dyn mcp_stack::tasks::TaskStore> =
        Arc::new(mcp_stack::tasks::FileTaskStore::new(dir.path()));
    let restarted = Binding::connect(definition(&restarted_store), Handlers::default()).await.unwrap();
    let found = restarted.started_tasks().await.unwrap();
    restarted.close().await;
    assert_eq!(found.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [count.id(), sleep.id()]);
    assert_eq!(found[1].status, TaskStatus::Working);
    // The demo's tasks live with its connection, so the first binding takes
    // the found id up again.
    let again = binding.task(&found[1].id);
    assert_eq!(again.cancel().await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(
        restarted_store.load("demo", sleep.id()).await.unwrap().unwrap().status,
        TaskStatus::Cancelled
    );
    binding.close().await;
}

/// A store that fails costs the record, never the call.
#[tokio::test(start_paused = true)]
async fn a_failing_task_store_costs_the_record_not_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("a-file");
    std::fs::write(&blocked, b"not a directory").unwrap();
    let mut definition = Definition::new("demo", mcp_stack::demo::factory());
    definition =
        definition.with_task_store(Arc::new(mcp_stack::tasks::FileTaskStore::new(blocked.join("tasks"))));
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let TaskStart::Task(count) =
        binding.call_tool_task("count", json!({ "steps": 1 }), None, CallOpts::default()).await.unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(count.result(CallOpts::default()).await.unwrap().content[0].as_text(), Some("counted to 1"));
    let e = binding.started_tasks().await.unwrap_err();
    assert_eq!(e.class(), FailureClass::TransportClosed, "{e}");
    binding.close().await;
}
