//! Issue 23: the 2026-07-28 Tasks extension against a server of it written
//! on the Python SDK `mcp` 2.3.0's own extension mechanism
//! (tests/fixtures/py_tasks_server.py, streamable HTTP, its tasks kept in
//! the server's process and checked for `Mcp-Name` on every `tasks/*`
//! request): a task followed through its steps to its result, one that asks
//! for a name through the elicitation handler, one cancelled, a plain call
//! when the client does not declare the extension, and a task started by
//! one `mcp` process and taken up by id by another.

use crate::support::peers::{free_port, peer, start_listening, task_named_in, Server};
use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{AllowedCapabilities, Binding, CallOpts, Definition, FailureClass, ProtocolChoice};
use mcp_stack::{TaskStart, TaskStatus};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_tasks_server.py");

async fn tasks_server() -> (Server, String) {
    let port = free_port();
    let mut command = Command::new(peer("MCP_PYTHON"));
    command.arg(SCRIPT).arg(port.to_string()).stderr(Stdio::inherit());
    let server = start_listening(command, port, "the Python tasks server", Duration::from_secs(60)).await;
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

async fn connect(url: &str, tasks: bool, handlers: Handlers) -> Binding {
    let factory = HttpBuilder::new(url).build().unwrap();
    let mut definition = Definition::new("tasks", factory);
    definition = definition.with_protocol(ProtocolChoice::Modern);
    definition =
        definition.with_capabilities(AllowedCapabilities::default().with_elicitation(true).with_tasks(tasks));
    tokio::time::timeout(Duration::from_secs(60), Binding::connect(definition, handlers))
        .await
        .expect("connect ends in time")
        .expect("connects")
}

fn within(seconds: u64) -> CallOpts {
    CallOpts::default().with_timeout(Duration::from_secs(seconds))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_of_the_extension_run_ask_and_cancel_against_a_real_server() {
    let (_server, url) = tasks_server().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let handlers = Handlers::default().elicitation(move |req: ElicitRequest| {
        record.lock().unwrap().push(req.message.clone());
        let answer = json!({ "name": "Ada" }).as_object().unwrap().clone();
        async move { Ok(ElicitResult::accept(answer)) }
    });
    let binding = connect(&url, true, handlers).await;
    assert!(binding.session().capabilities.declares_extension(mcp_stack::protocol::TASKS_EXTENSION));

    // Followed through its steps to the result tasks/get carries.
    let started =
        binding.call_tool_task("research", json!({ "topic": "tower", "steps": 4 }), None, within(30));
    let TaskStart::Task(research) = started.await.unwrap() else { panic!("the server makes a task") };
    let mut updates = research.updates();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let listener = tokio::spawn(async move {
        while updates.changed().await.is_ok() {
            if let Some(info) = updates.borrow_and_update().clone() {
                sink.lock().unwrap().push((info.status, info.message));
            }
        }
    });
    let result = research.result(within(30)).await.unwrap();
    listener.abort();
    assert_eq!(result.content[0].as_text(), Some("report on tower"));
    let seen = seen.lock().unwrap().clone();
    assert!(seen.iter().any(|(_, m)| m.as_deref().is_some_and(|m| m.starts_with("step "))), "{seen:?}");
    // The last change may reach the listener after the wait returned: the
    // handle has it.
    assert_eq!(research.latest().unwrap().status, TaskStatus::Completed, "{seen:?}");

    // A plain call_tool follows the task the server makes.
    let result = binding.call_tool("ask_name", json!({}), within(30)).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello Ada"));
    assert_eq!(*asked.lock().unwrap(), ["Your name?"], "asked once");

    // Cancelled: tasks/cancel, then the server says so.
    let started =
        binding.call_tool_task("research", json!({ "topic": "long", "steps": 100 }), None, within(30));
    let TaskStart::Task(long) = started.await.unwrap() else { panic!("a task") };
    assert_eq!(long.cancel().await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(long.result(within(30)).await.unwrap_err().class(), FailureClass::Cancelled);

    // Never a task: add.
    let result = binding.call_tool("add", json!({ "a": 2, "b": 3 }), within(30)).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("5"));
    let records = binding.started_tasks().await.unwrap();
    assert_eq!(records.len(), 3, "{records:?}");
    binding.close().await;

    // A client without the extension gets plain results.
    let plain = connect(&url, false, Handlers::default()).await;
    let result = plain.call_tool("research", json!({ "topic": "plain" }), within(30)).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("report on plain"));
    plain.close().await;
}

fn mcp(url: &str, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(peer("MCP_CLI"))
        .args(["--http", url, "--protocol", "modern", "--json"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// One `mcp` process starts a task and gives up waiting at its deadline;
/// another takes the task up by id and waits for its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_takes_a_task_up_by_id() {
    let (_server, url) = tasks_server().await;
    let args = json!({ "topic": "resumed", "steps": 12 }).to_string();
    let first = url.clone();
    let (code, doc, err) = tokio::task::spawn_blocking(move || {
        mcp(&first, &["--request-timeout-ms", "1000", "call", "research", &args, "--task"])
    })
    .await
    .unwrap();
    assert_eq!(code, 4, "{doc} {err}");
    assert_eq!(doc["error"]["class"], "deadline", "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    let id = task_named_in(message);

    let second = url.clone();
    let (code, doc, err) = tokio::task::spawn_blocking(move || {
        let (code, status, _) = mcp(&second, &["tasks", "get", &id]);
        assert_eq!(code, 0);
        assert_eq!(status["task"]["id"], id.as_str());
        mcp(&second, &["--request-timeout-ms", "30000", "tasks", "result", &id])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{doc} {err}");
    assert_eq!(doc["content"][0]["text"], "report on resumed", "{doc}");
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
}
