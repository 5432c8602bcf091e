//! Issue 23 (first part): tool calls run as tasks (2025-11-25) against the
//! reference server "everything" over stdio, whose
//! `simulate-research-query` is a `required` task tool (poll interval 1 s,
//! a few stages): run through `call_tool`, started with `call_tool_task`
//! and followed to its result (and found in `tasks/list`), asking for
//! clarification through the host's elicitation handler while the task is
//! `input_required`, and cancelled; the CLI's `--task`; and the receiver
//! side: everything asking the client to run its elicitation and sampling
//! as the client's tasks.

use crate::support::peers::everything;
use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
use mcp_stack::{
    AllowedCapabilities, Binding, CallOpts, Content, Definition, TaskStart, TaskStatus, ToolResult,
};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TOOL: &str = "simulate-research-query";

fn text_of(result: &ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

fn within(seconds: u64) -> CallOpts {
    CallOpts::default().with_timeout(Duration::from_secs(seconds))
}

async fn connect(handlers: Handlers, elicitation: bool) -> Binding {
    let mut definition = Definition::new("everything", everything());
    definition = definition.with_capabilities(AllowedCapabilities::default().with_elicitation(elicitation));
    Binding::connect(definition, handlers).await.expect("connect")
}

#[tokio::test]
async fn a_required_task_tool_runs_through_call_tool() {
    let binding = connect(Handlers::default(), false).await;
    let tool = binding.catalog().tool(TOOL).cloned().expect("everything lists the tool");
    assert_eq!(tool.task_support, mcp_stack::protocol::TaskSupport::Required);
    let result = binding.call_tool(TOOL, json!({ "topic": "tower layers" }), within(60)).await.unwrap();
    let text = text_of(&result);
    assert!(text.contains("tower layers"), "{text}");
    binding.close().await;
}

#[tokio::test]
async fn a_task_is_followed_through_its_stages_to_its_result() {
    let binding = connect(Handlers::default(), false).await;
    let started = binding
        .call_tool_task(
            TOOL,
            json!({ "topic": "bounded queues" }),
            Some(Duration::from_secs(120)),
            within(30),
        )
        .await
        .unwrap();
    let TaskStart::Task(task) = started else { panic!("everything runs it as a task") };
    assert!(!task.id().is_empty());
    let first = task.latest().expect("the created task");
    assert_eq!(first.status, TaskStatus::Working);
    assert_eq!(first.poll_interval, Some(Duration::from_secs(1)));
    let listed = binding.list_tasks_page(None).await.unwrap();
    assert!(listed.items.iter().any(|t| t.id == task.id()), "tasks/list has it: {listed:?}");

    // Record every status message heard while waiting.
    let heard = Arc::new(Mutex::new(Vec::new()));
    let mut updates = task.updates();
    let record = heard.clone();
    let watcher = tokio::spawn(async move {
        while updates.changed().await.is_ok() {
            if let Some(info) = updates.borrow_and_update().clone() {
                record.lock().unwrap().push((info.status, info.message.unwrap_or_default()));
            }
        }
    });
    let result = task.result(within(60)).await.unwrap();
    assert!(text_of(&result).contains("bounded queues"), "{}", text_of(&result));
    let heard = heard.lock().unwrap().clone();
    assert!(heard.iter().any(|(s, _)| *s == TaskStatus::Working), "{heard:?}");
    assert!(heard.len() >= 2, "the stages were seen as they came: {heard:?}");
    assert_eq!(task.latest().unwrap().status, TaskStatus::Completed);
    watcher.abort();
    binding.close().await;
}

#[tokio::test]
async fn an_input_required_task_asks_through_the_elicitation_handler() {
    let asked = Arc::new(Mutex::new(None::<String>));
    let slot = asked.clone();
    let handlers = Handlers::default().elicitation(move |req: ElicitRequest| {
        *slot.lock().unwrap() = Some(req.message.clone());
        async move {
            let mut answer = serde_json::Map::new();
            answer.insert("interpretation".into(), json!("programming"));
            Ok(ElicitResult::accept(answer))
        }
    });
    let binding = connect(handlers, true).await;
    let result =
        binding.call_tool(TOOL, json!({ "topic": "python", "ambiguous": true }), within(60)).await.unwrap();
    let asked = asked.lock().unwrap().clone().expect("the server asked for clarification");
    assert!(asked.contains("python"), "{asked}");
    let text = text_of(&result);
    assert!(text.contains("programming"), "the answer reached the task: {text}");
    binding.close().await;
}

#[tokio::test]
async fn a_task_is_cancelled() {
    let binding = connect(Handlers::default(), false).await;
    let started =
        binding.call_tool_task(TOOL, json!({ "topic": "never mind" }), None, within(30)).await.unwrap();
    let TaskStart::Task(task) = started else { panic!("a task") };
    let cancelled = task.cancel().await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    let e = task.result(within(30)).await.unwrap_err();
    assert_eq!(e.class(), mcp_stack::FailureClass::Cancelled, "{e}");
    binding.close().await;
}

/// What issue 23 tried as a new user: the CLI runs everything's task tool
/// with `--task`, shows its stages as status lines and prints the report;
/// and without `--task` too, since the tool requires a task.
#[test]
fn the_cli_runs_the_task_tool_and_shows_its_stages() {
    let args = json!({ "topic": "tower layers" }).to_string();
    let (code, out, err) =
        crate::handlers::cli(&["--request-timeout-ms", "60000", "call", TOOL, &args, "--task"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tower layers"), "{out}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("task ")).collect();
    assert!(lines.len() >= 2, "a status line per change: {err}");
    assert!(lines.iter().all(|l| l.contains(": working") || l.contains(": completed")), "{err}");
    assert!(lines.last().unwrap().contains(": completed"), "{err}");

    let (code, out, err) =
        crate::handlers::cli(&["--request-timeout-ms", "60000", "--json", "call", TOOL, &args], "");
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(doc["isError"], false, "{doc}");
}

/// The receiver side (2025-11-25): everything's
/// `trigger-elicitation-request-async` and `trigger-sampling-request-async`
/// (listed only to a client that declares `tasks.requests`) ask the client
/// to run the request as a task, poll the client's `tasks/get` and fetch
/// `tasks/result`; the host's handlers serve them.
#[tokio::test]
async fn the_server_runs_its_elicitation_and_sampling_as_the_clients_tasks() {
    use mcp_stack::handlers::SampleResult;
    let answer = json!({ "name": "Ada", "favoriteColor": "Blue" }).as_object().unwrap().clone();
    let handlers = Handlers::default()
        .elicitation(move |_req: ElicitRequest| {
            let answer = answer.clone();
            async move { Ok(ElicitResult::accept(answer)) }
        })
        .sampling(|_req| async move { Ok(SampleResult::text("test-model", "a sampled answer")) });
    let mut definition = Definition::new("everything", everything());
    definition = definition.with_capabilities(
        AllowedCapabilities::default().with_elicitation(true).with_sampling(true).with_tasks(true),
    );
    let binding = Binding::connect(definition, handlers).await.expect("connect");

    let result = binding.call_tool("trigger-elicitation-request-async", json!({}), within(60)).await.unwrap();
    let text = text_of(&result);
    assert!(text.contains("[COMPLETED]") && text.contains("- Name: Ada"), "{text}");
    assert!(text.contains("Task created:"), "it ran as the client's task: {text}");

    let args = json!({ "prompt": "Say hi", "maxTokens": 20 });
    let result = binding.call_tool("trigger-sampling-request-async", args, within(60)).await.unwrap();
    let text = text_of(&result);
    assert!(text.contains("[COMPLETED]") && text.contains("a sampled answer"), "{text}");
    binding.close().await;
}
