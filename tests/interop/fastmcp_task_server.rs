//! Issue 23: the 2026-07-28 Tasks extension served by an engine written by
//! others, FastMCP's (`fastmcp-tasks` 4.1.4 on pydocket's in-process
//! backend; tests/fixtures/fastmcp_tasks_server.py only declares the
//! tools), over stdio and streamable HTTP: a task followed through the
//! status messages its progress becomes to its result, a plain `call_tool`
//! that the server answers with a task followed too, a task that asks for
//! input (`input_required`) answered through the elicitation handler and
//! `tasks/update`, a task tool that runs
//! only as a task cancelled with `tasks/cancel`, and refused with
//! `invalid_config` naming the extension when the client does not declare
//! it; then `mcp call --task` showing the task's status changes, and a
//! task one `mcp` process gave up waiting for taken up by id and finished
//! by another (over HTTP, where the engine keeps its tasks beyond a
//! connection).
//!
//! FastMCP 4.1.6 has no 2025-11-25 tasks: on that era it declares no
//! `tasks` capability and runs a call inline, so its tasks are tested here
//! on 2026-07-28 only.
//!
//! Run through `scripts/interop.sh`, which installs the engine in its own
//! venv and sets `MCP_FASTMCP_TASKS_PYTHON`. Never skipped: a missing peer
//! is a failure.

use crate::support::peers::{free_port, peer, start_listening, task_named_in};
use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::{AllowedCapabilities, Binding, CallOpts, Definition, FailureClass, ProtocolChoice};
use mcp_stack::{TaskStart, TaskStatus};
use serde_json::json;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The bound on every wait (the engine takes seconds to import).
const LIMIT: Duration = Duration::from_secs(60);

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fastmcp_tasks_server.py");

fn stdio() -> StdioFactory {
    StdioFactory::new(peer("MCP_FASTMCP_TASKS_PYTHON")).arg(SCRIPT)
}

/// `name` tells the transports apart in the process-wide task store.
async fn connect(name: &str, factory: impl TransportFactory, tasks: bool) -> Binding {
    let mut definition = Definition::new(name, factory);
    definition = definition.with_protocol(ProtocolChoice::Modern);
    let timeouts = definition.timeouts().with_startup(LIMIT);
    definition = definition.with_timeouts(timeouts);
    definition =
        definition.with_capabilities(AllowedCapabilities::default().with_tasks(tasks).with_elicitation(true));
    let handlers = Handlers::default().elicitation(|req: ElicitRequest| async move {
        assert_eq!(req.message, "Your name?");
        Ok(ElicitResult::accept(json!({ "name": "Ada" }).as_object().unwrap().clone()))
    });
    tokio::time::timeout(LIMIT, Binding::connect(definition, handlers))
        .await
        .expect("connect ends in time")
        .expect("connects")
}

fn within() -> CallOpts {
    CallOpts::default().with_timeout(Duration::from_secs(30))
}

/// What FastMCP's tasks must do over either transport.
async fn exercise(binding: &Binding) {
    assert_eq!(binding.session().protocol_version, "2026-07-28");
    assert!(binding.session().capabilities.declares_extension(mcp_stack::protocol::TASKS_EXTENSION));

    // Followed through its status messages (FastMCP turns the tool's
    // progress into them) to the result tasks/get carries.
    let started = binding.call_tool_task("research", json!({ "topic": "tower", "steps": 3 }), None, within());
    let TaskStart::Task(research) = started.await.unwrap() else { panic!("FastMCP makes a task") };
    let mut updates = research.updates();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let listener = tokio::spawn(async move {
        while updates.changed().await.is_ok() {
            if let Some(info) = updates.borrow_and_update().clone() {
                sink.lock().unwrap().push(info.message);
            }
        }
    });
    let result = research.result(within()).await.unwrap();
    listener.abort();
    assert_eq!(result.content[0].as_text(), Some("report on tower"));
    let seen = seen.lock().unwrap().clone();
    assert!(seen.iter().any(|m| m.as_deref().is_some_and(|m| m.starts_with("step "))), "{seen:?}");
    assert_eq!(research.latest().unwrap().status, TaskStatus::Completed, "{seen:?}");

    // A plain call the server answers with a task is followed to its end.
    let result =
        binding.call_tool("research", json!({ "topic": "plain", "steps": 1 }), within()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("report on plain"));

    // A task that asks for input (input_required): answered through the
    // elicitation handler, sent with tasks/update.
    let started = binding.call_tool_task("ask_name", json!({}), None, within());
    let TaskStart::Task(ask) = started.await.unwrap() else { panic!("ask_name runs only as a task") };
    let result = ask.result(within()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hello Ada"));

    // A task tool cancelled: tasks/cancel, then the server says so.
    let started = binding.call_tool_task("slow", json!({ "seconds": 60 }), None, within());
    let TaskStart::Task(slow) = started.await.unwrap() else { panic!("slow runs only as a task") };
    assert_eq!(slow.cancel().await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(slow.result(within()).await.unwrap_err().class(), FailureClass::Cancelled);

    // Never a task.
    let result = binding.call_tool("echo", json!({ "text": "hi" }), within()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hi"));
    assert_eq!(binding.started_tasks().await.unwrap().len(), 4);
}

/// A client that does not declare the extension: the tool that runs only
/// as a task is refused with the capability it needs named.
async fn refused_without_the_extension(binding: &Binding) {
    let e = binding.call_tool("slow", json!({ "seconds": 0.1 }), within()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig, "{e}");
    assert!(e.message().contains("io.modelcontextprotocol/tasks"), "{e}");
    let result =
        binding.call_tool("research", json!({ "topic": "inline", "steps": 1 }), within()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("report on inline"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_tasks_over_stdio() {
    let binding = connect("fm-stdio", stdio(), true).await;
    exercise(&binding).await;
    binding.close().await;
    let plain = connect("fm-stdio", stdio(), false).await;
    refused_without_the_extension(&plain).await;
    plain.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_tasks_over_http() {
    let port = free_port();
    let mut command = Command::new(peer("MCP_FASTMCP_TASKS_PYTHON"));
    command.arg(SCRIPT).arg("--http").arg(port.to_string()).stderr(Stdio::null());
    let _server = start_listening(command, port, "the FastMCP tasks server", LIMIT).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let binding = connect("fm-http", HttpBuilder::new(&url).build().unwrap(), true).await;
    exercise(&binding).await;
    binding.close().await;
    let plain = connect("fm-http", HttpBuilder::new(&url).build().unwrap(), false).await;
    refused_without_the_extension(&plain).await;
    plain.close().await;
}

/// `mcp call --task` over stdio: each status change a line on stderr, the
/// last `completed`, the result on stdout.
#[test]
fn the_cli_follows_a_fastmcp_task() {
    let server = format!("{} {SCRIPT}", peer("MCP_FASTMCP_TASKS_PYTHON"));
    let out = Command::new(peer("MCP_CLI"))
        .args(["--stdio", &server, "--protocol", "modern"])
        .args(["--startup-timeout-ms", "60000", "--request-timeout-ms", "30000"])
        .args(["call", "research", r#"{"topic":"cli","steps":3}"#, "--task"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "report on cli");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("task ")).collect();
    assert!(lines.iter().any(|l| l.contains(": working: step ")), "{err}");
    assert!(lines.last().is_some_and(|l| l.ends_with(": completed")), "{err}");
}

/// One `mcp` process starts a task over HTTP and gives up at its deadline;
/// a second takes it up by id (`tasks get`, `tasks result`) to its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_takes_a_fastmcp_task_up_by_id() {
    let port = free_port();
    let mut command = Command::new(peer("MCP_FASTMCP_TASKS_PYTHON"));
    command.arg(SCRIPT).arg("--http").arg(port.to_string()).stderr(Stdio::null());
    let _server = start_listening(command, port, "the FastMCP tasks server", LIMIT).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mcp = move |args: &[&str]| {
        let out = Command::new(peer("MCP_CLI"))
            .args(["--http", &url, "--protocol", "modern", "--json"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run mcp");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        (out.status.code().unwrap_or(-1), doc, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (doc, code, err) = tokio::task::spawn_blocking(move || {
        let args = json!({ "topic": "resumed", "steps": 10 }).to_string();
        let (code, doc, err) = mcp(&["--request-timeout-ms", "1000", "call", "research", &args, "--task"]);
        assert_eq!(code, 4, "{doc} {err}");
        assert_eq!(doc["error"]["class"], "deadline", "{doc}");
        let message = doc["error"]["message"].as_str().unwrap().to_string();
        let id = task_named_in(&message);
        let (code, status, err) = mcp(&["tasks", "get", &id]);
        assert_eq!(code, 0, "{status} {err}");
        assert_eq!(status["task"]["id"], id.as_str());
        let (code, doc, err) = mcp(&["--request-timeout-ms", "30000", "tasks", "result", &id]);
        (doc, code, err)
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{doc} {err}");
    assert_eq!(doc["content"][0]["text"], "report on resumed", "{doc}");
    assert_eq!(doc["task"]["status"], "completed", "{doc}");
}
