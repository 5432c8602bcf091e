//! Tasks on 2026-07-28 (the Tasks extension, `io.modelcontextprotocol/tasks`)
//! against scripted servers, with the paused clock: declared on every
//! request when the host opts in; a tool call the server answers with a
//! task followed to the result `tasks/get` carries inline; input asked for
//! answered once through the handlers and `tasks/update`; a failed task,
//! an `isError` result, a cancel; and the bad input of issue 23 (a task on
//! a request that cannot be one, a key reused for another request, a task
//! that asks for too much, one that never ends).

use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
use mcp_stack::{AllowedCapabilities, Binding, CallOpts, Definition, FailureClass, ProtocolChoice};
use mcp_stack::{TaskStart, TaskStatus};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use crate::support::modern::{server, Seen};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn task(status: &str) -> Value {
    json!({
        "taskId": "t-1", "status": status, "createdAt": "2026-12-02T10:00:00Z",
        "lastUpdatedAt": "2026-12-02T10:00:01Z", "ttlMs": 60_000, "pollIntervalMs": 500
    })
}

/// `tasks/get`'s answer: the task with `extra` merged in.
fn detailed(status: &str, extra: Value) -> Value {
    let mut result = task(status);
    result["resultType"] = json!("complete");
    for (key, value) in extra.as_object().unwrap() {
        result[key] = value.clone();
    }
    json!({ "result": result })
}

fn elicitation(message: &str) -> Value {
    json!({ "method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": { "type": "object", "properties": { "name": { "type": "string", "default": "Ada" } } }
    }})
}

/// A 2026-07-28 server of the extension: `tools/call` makes task `t-1`
/// when the request declares the extension (a plain result otherwise),
/// `tasks/get` answers from `gets` in turn (the last one for ever),
/// `resources/read` answers with a task (which it must not).
fn task_server(gets: Vec<Value>) -> (mcp_stack::transport::memory::MemoryFactory, Seen) {
    let gets = Arc::new(Mutex::new(gets));
    server(move |method, params| match method {
        "server/discover" => Some(json!({ "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {}, "resources": {}, "extensions": { TASKS: {} } },
            "serverInfo": { "name": "tasks-2026", "version": "1" }
        }})),
        "tools/list" => {
            Some(json!({ "result": { "tools": [{ "name": "slow", "inputSchema": { "type": "object" } }] } }))
        }
        "tools/call" => {
            let declared =
                params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"].get(TASKS);
            Some(match declared {
                Some(_) => {
                    let mut created = task("working");
                    created["resultType"] = json!("task");
                    json!({ "result": created })
                }
                None => json!({ "result": { "content": [{ "type": "text", "text": "at once" }] } }),
            })
        }
        "tasks/get" => {
            let mut gets = gets.lock().unwrap();
            Some(if gets.len() > 1 { gets.remove(0) } else { gets[0].clone() })
        }
        "resources/read" => {
            let mut created = task("working");
            created["resultType"] = json!("task");
            Some(json!({ "result": created }))
        }
        "subscriptions/listen" => None,
        _ => Some(json!({ "result": { "resultType": "complete" } })),
    })
}

fn definition(factory: mcp_stack::transport::memory::MemoryFactory, tasks: bool) -> Definition {
    let mut definition = Definition::new("modern", factory);
    definition = definition.with_protocol(ProtocolChoice::Modern);
    definition =
        definition.with_capabilities(AllowedCapabilities::default().with_elicitation(true).with_tasks(tasks));
    definition
}

/// Handlers that accept every form with its defaults, counting the asks.
fn accepting(asked: Arc<AtomicUsize>) -> Handlers {
    Handlers::default().elicitation(move |req: ElicitRequest| {
        asked.fetch_add(1, Ordering::SeqCst);
        async move { Ok(ElicitResult::accept(req.defaults())) }
    })
}

fn completed(text: &str, is_error: bool) -> Value {
    detailed(
        "completed",
        json!({ "result": { "content": [{ "type": "text", "text": text }], "isError": is_error } }),
    )
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_answered_with_a_task_is_followed_to_the_result_tasks_get_carries() {
    let (factory, seen) = task_server(vec![detailed("working", json!({})), completed("done", false)]);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    let begun = Instant::now();
    let result = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    assert!(!result.is_error);
    assert_eq!(begun.elapsed(), Duration::from_millis(500), "one poll interval between the two gets");

    let call = &seen.requests("tools/call")[0]["params"];
    assert_eq!(call["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][TASKS], json!({}));
    assert!(call.get("task").is_none(), "the server alone decides: {call}");
    let gets = seen.requests("tasks/get");
    assert_eq!(gets.len(), 2);
    assert_eq!(gets[0]["params"]["taskId"], "t-1");
    assert_eq!(
        gets[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"][TASKS],
        json!({}),
        "every tasks/* request declares the extension too"
    );
    assert!(seen.requests("tasks/result").is_empty(), "2026-07-28 has no tasks/result");
    let records = binding.started_tasks().await.unwrap();
    assert_eq!(
        records.iter().map(|r| (r.id.as_str(), r.status)).collect::<Vec<_>>(),
        [("t-1", TaskStatus::Completed)]
    );
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn input_asked_for_is_answered_once_through_the_handlers_and_tasks_update() {
    let ask = json!({ "inputRequests": { "name": elicitation("Your name?") } });
    let (factory, seen) = task_server(vec![
        detailed("input_required", ask.clone()),
        // Eventually consistent: the same question after the answer went.
        detailed("input_required", ask),
        completed("hello Ada", false),
    ]);
    let asked = Arc::new(AtomicUsize::new(0));
    let binding = Binding::connect(definition(factory, true), accepting(asked.clone())).await.unwrap();
    let TaskStart::Task(handle) =
        binding.call_tool_task("slow", json!({}), None, CallOpts::default()).await.unwrap()
    else {
        panic!("a task")
    };
    let result = handle.result(CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello Ada"));
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once");
    let updates = seen.requests("tasks/update");
    assert_eq!(updates.len(), 1);
    let params = &updates[0]["params"];
    assert_eq!(params["taskId"], "t-1");
    assert_eq!(params["inputResponses"]["name"]["action"], "accept");
    assert_eq!(params["inputResponses"]["name"]["content"]["name"], "Ada");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_key_reused_for_another_request_or_too_many_inputs_is_the_servers_error() {
    let (factory, _) = task_server(vec![
        detailed("input_required", json!({ "inputRequests": { "name": elicitation("Your name?") } })),
        detailed("input_required", json!({ "inputRequests": { "name": elicitation("Your card number?") } })),
    ]);
    let binding = Binding::connect(definition(factory, true), accepting(Arc::default())).await.unwrap();
    let e = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert!(e.message().contains("reused"), "{e}");
    binding.close().await;

    let many: serde_json::Map<String, Value> =
        (0..300).map(|i| (format!("q{i}"), elicitation(&format!("question {i}")))).collect();
    let (factory, seen) = task_server(vec![detailed("input_required", json!({ "inputRequests": many }))]);
    let binding = Binding::connect(definition(factory, true), accepting(Arc::default())).await.unwrap();
    let e = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::LimitExceeded, "{e}");
    assert!(seen.requests("tasks/update").is_empty(), "nothing answered of a flood");
    binding.close().await;

    let (factory, _) = task_server(vec![detailed("input_required", json!({}))]);
    let binding = Binding::connect(definition(factory, true), accepting(Arc::default())).await.unwrap();
    let e = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "input_required naming nothing: {e}");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_task_is_its_error_and_an_is_error_result_completes() {
    let failed = detailed("failed", json!({ "error": { "code": -32603, "message": "rate limited" } }));
    let (factory, _) = task_server(vec![failed]);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    let e = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::RemoteToolError, "{e}");
    assert!(e.message().contains("rate limited") && e.message().contains("-32603"), "{e}");
    binding.close().await;

    let (factory, _) = task_server(vec![completed("no such city", true)]);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    let result = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.content[0].as_text(), Some("no such city"));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn cancel_is_tasks_cancel_and_never_notifications_cancelled() {
    let (factory, seen) = task_server(vec![detailed("working", json!({})), detailed("cancelled", json!({}))]);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    let TaskStart::Task(handle) =
        binding.call_tool_task("slow", json!({}), None, CallOpts::default()).await.unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(handle.status(CallOpts::default()).await.unwrap().status, TaskStatus::Working);
    assert_eq!(handle.cancel().await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(seen.requests("tasks/cancel")[0]["params"]["taskId"], "t-1");
    assert!(seen.requests("notifications/cancelled").is_empty());
    let e = handle.result(CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::Cancelled, "{e}");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_task_where_none_may_be_is_refused_and_nothing_is_declared_unless_asked() {
    // Declared: a task answering resources/read is not a result.
    let (factory, _) = task_server(vec![detailed("working", json!({}))]);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    let e = binding.read_resource("file:///x", CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    binding.close().await;

    // Not declared: the server gives a plain result, and asking for a task
    // says what to declare.
    let (factory, seen) = task_server(vec![detailed("working", json!({}))]);
    let binding = Binding::connect(definition(factory, false), Handlers::default()).await.unwrap();
    let result = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("at once"));
    let call = &seen.requests("tools/call")[0]["params"];
    assert!(
        call["_meta"]["io.modelcontextprotocol/clientCapabilities"].get("extensions").is_none(),
        "{call}"
    );
    let e = binding.call_tool_task("slow", json!({}), None, CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig, "{e}");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_task_that_never_ends_costs_the_calls_deadline_not_the_task() {
    let (factory, seen) = task_server(vec![detailed("working", json!({}))]);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    let begun = Instant::now();
    let e = binding
        .call_tool("slow", json!({}), CallOpts::default().with_timeout(Duration::from_secs(10)))
        .await
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::Deadline, "{e}");
    assert_eq!(begun.elapsed(), Duration::from_secs(10), "the call's one deadline");
    assert!(seen.requests("tasks/cancel").is_empty(), "the task runs on");
    assert!(seen.requests("tasks/get").len() <= 21, "polled at the server's interval");
    binding.close().await;
}

/// A server of the extension whose listen stream pushes the task's
/// `notifications/tasks` (2 s after the stream opens, its completion), or
/// refuses `subscriptions/listen` when `refuse`; tasks/get says `working`
/// with a poll interval of 30 s until the push, `completed` after.
fn pushing_server(refuse: bool) -> (mcp_stack::transport::memory::MemoryFactory, Seen) {
    let pushed = Arc::new(AtomicUsize::new(0));
    let gets = pushed.clone();
    server(move |method, params| match method {
        "server/discover" => Some(json!({ "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {}, "extensions": { TASKS: {} } },
            "serverInfo": { "name": "pushing", "version": "1" }
        }})),
        "tools/list" => {
            Some(json!({ "result": { "tools": [{ "name": "slow", "inputSchema": { "type": "object" } }] } }))
        }
        "tools/call" => {
            let mut created = task("working");
            created["resultType"] = json!("task");
            Some(json!({ "result": created }))
        }
        "subscriptions/listen" if refuse => {
            Some(json!({ "error": { "code": -32601, "message": "Method not found" } }))
        }
        "subscriptions/listen" => {
            let ids = params["notifications"]["taskIds"].clone();
            pushed.fetch_add(1, Ordering::SeqCst);
            let mut done = task("completed");
            done["result"] = json!({ "content": [{ "type": "text", "text": "pushed" }] });
            Some(json!({ "notify": [
                { "method": "notifications/subscriptions/acknowledged", "params": { "notifications": { "taskIds": ids } } },
                { "method": "notifications/tasks", "params": done, "_afterMs": 2_000 },
            ]}))
        }
        "tasks/get" if gets.load(Ordering::SeqCst) > 0 => Some(json!({ "result": {
            "taskId": "t-1", "status": "completed", "resultType": "complete", "ttlMs": 60_000,
            "result": { "content": [{ "type": "text", "text": "pushed" }] }
        }})),
        "tasks/get" => Some(detailed("working", json!({ "pollIntervalMs": 30_000 }))),
        _ => Some(json!({ "result": { "resultType": "complete" } })),
    })
}

/// While a handle waits, the listen stream names its task (`taskIds`), and
/// the completion the server pushes ends the wait at once, not at the next
/// poll 30 s later. Nothing asks for task notifications before a task.
#[tokio::test(start_paused = true)]
async fn a_task_pushed_on_the_listen_stream_ends_the_wait_before_the_next_poll() {
    let (factory, seen) = pushing_server(false);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(seen.requests("subscriptions/listen").is_empty(), "nothing to listen for yet");
    let begun = Instant::now();
    let result = binding.call_tool("slow", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("pushed"));
    assert!(begun.elapsed() < Duration::from_secs(5), "the push, not the poll: {:?}", begun.elapsed());
    let listens = seen.requests("subscriptions/listen");
    assert_eq!(listens.len(), 1);
    assert_eq!(listens[0]["params"]["notifications"], json!({ "taskIds": ["t-1"] }));
    assert_eq!(seen.requests("tasks/get").len(), 2, "a poll at the start, one at the push");
    binding.close().await;
}

/// A server that refuses `subscriptions/listen` is asked once in the
/// session: its tasks are then polled, the next one without a new listen.
#[tokio::test(start_paused = true)]
async fn a_refused_listen_stream_is_not_asked_again_and_tasks_are_polled() {
    let (factory, seen) = pushing_server(true);
    let binding = Binding::connect(definition(factory, true), Handlers::default()).await.unwrap();
    for _ in 0..2 {
        let TaskStart::Task(handle) =
            binding.call_tool_task("slow", json!({}), None, CallOpts::default()).await.unwrap()
        else {
            panic!("a task")
        };
        let e = handle.result(CallOpts::default().with_timeout(Duration::from_secs(40))).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::Deadline, "polled until the deadline: {e}");
    }
    assert_eq!(seen.requests("subscriptions/listen").len(), 1, "asked once");
    assert_eq!(seen.requests("tasks/get").len(), 4, "two polls a task, 30 s apart");
    binding.close().await;
}
