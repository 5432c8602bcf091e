//! Interop over HTTP with real peers: the reference server "everything"
//! (Node) in its `streamableHttp` and `sse` modes (each also through the
//! automatic factory, which falls back to HTTP+SSE under `legacy_sse`), and
//! a Python `mcp` 2.3.0 server (tests/fixtures/py_server.py) over streamable
//! HTTP, including a session the server forgets because it was restarted.
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers and sets
//! `MCP_NODE`, `MCP_EVERYTHING_JS`, `MCP_PYTHON` and `MCP_CLI` (the `mcp`
//! command, also driven here with `--http`, `--sse` and `--header`). These tests never skip:
//! a missing peer is a failure. Each server is started on a free port and
//! killed when its test ends.

use crate::support::peers::peer;
use crate::support::recorded_events::Events;
use mcp_stack::compat::Tolerance;
use mcp_stack::transport::http::{HttpFactory, HttpMode, SseFactory, StreamableHttpFactory};
use mcp_stack::transport::TransportFactory;
use mcp_stack::{Binding, CallOpts, Content, Definition, Event};
use serde_json::json;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The bound on every wait.
const LIMIT: Duration = Duration::from_secs(30);

/// A server process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Waits (bounded) until the port accepts a connection.
async fn wait_for_port(child: &mut Child, port: u16) {
    let start = Instant::now();
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited before listening on {port}: {status}");
        }
        assert!(start.elapsed() < LIMIT, "nothing listens on port {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn start(mut command: Command, port: u16) -> Server {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    wait_for_port(&mut child, port).await;
    Server { child, port }
}

async fn everything(mode: &str) -> Server {
    let port = free_port();
    let mut command = Command::new(peer("MCP_NODE"));
    command.arg(peer("MCP_EVERYTHING_JS")).arg(mode).env("PORT", port.to_string());
    start(command, port).await
}

async fn python(port: u16) -> Server {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_server.py");
    let mut command = Command::new(peer("MCP_PYTHON"));
    command.arg(script).arg("--http").arg(port.to_string());
    start(command, port).await
}

async fn connect(name: &str, factory: impl TransportFactory, events: &Events) -> Binding {
    let connecting = Binding::connect(Definition::new(name, factory), events.handlers());
    tokio::time::timeout(LIMIT, connecting).await.expect("connect in time").expect("connect")
}

fn text_of(result: &mcp_stack::ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

/// What both of server-everything's HTTP modes must serve: tools, `echo`,
/// progress, resources.
async fn exercise_everything(b: &Binding) {
    assert_eq!(b.session().server.name, "mcp-servers/everything");
    let tools = b.list_tools().await.unwrap();
    let names: Vec<&str> = tools.items.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation", "get-structured-content"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }

    let r = b.call_tool("echo", json!({"message": "over http"}), CallOpts::default()).await.unwrap();
    assert_eq!(text_of(&r), "Echo: over http");

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push((p.progress, p.total)));
    let r = b
        .call_tool("trigger-long-running-operation", json!({"duration": 1, "steps": 3}), opts)
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    let resources = b.list_resources().await.unwrap();
    assert!(!resources.items.is_empty());
    let first = &resources.items[0].uri;
    let read = b.read_resource(first, mcp_stack::CallOpts::default()).await.unwrap();
    assert!(!read.contents.is_empty(), "{read:?}");
    let read =
        b.read_resource("demo://resource/dynamic/text/1", mcp_stack::CallOpts::default()).await.unwrap();
    assert!(read.contents[0].text.as_deref().unwrap_or_default().starts_with("Resource 1"), "{read:?}");
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let server = everything("streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let b = connect("everything", StreamableHttpFactory::new(&url).unwrap(), &Events::default()).await;
    assert_eq!(b.session().protocol_version, "2025-11-25");
    assert_eq!(b.status().transport_kind, "streamable_http");
    assert_eq!(b.status().redacted_origin, format!("http://127.0.0.1:{}", server.port));
    exercise_everything(&b).await;
    b.close().await;
}

#[tokio::test]
async fn everything_over_legacy_sse() {
    let server = everything("sse").await;
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let b = connect("everything", SseFactory::new(&url).unwrap(), &Events::default()).await;
    assert_eq!(b.status().transport_kind, "sse");
    exercise_everything(&b).await;
    b.close().await;
}

/// An automatic factory (streamable HTTP, falling back to HTTP+SSE under
/// the profile's `legacy_sse`) pointed at the `sse` mode's stream URL: its
/// streamable `POST /sse` is refused with 404, the factory `GET`s the same
/// URL as an HTTP+SSE stream, and the catalog says `legacy_sse` was needed.
#[tokio::test]
async fn an_auto_factory_falls_back_to_everything_in_sse_mode_and_reports_legacy_sse() {
    let server = everything("sse").await;
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let auto = HttpFactory::new(&url, true).unwrap();
    let b = connect("everything", auto.clone(), &Events::default()).await;
    assert_eq!(auto.mode(), Some(HttpMode::LegacySse));
    assert_eq!(b.status().transport_kind, "http");
    assert_eq!(b.status().compat_profile, "default/v3");
    assert_eq!(b.catalog().applied_tolerances, [Tolerance::LegacySse]);
    exercise_everything(&b).await;
    b.close().await;
}

/// The same kind of factory against the `streamableHttp` mode stays on
/// streamable HTTP, and reports no `legacy_sse`.
#[tokio::test]
async fn an_auto_factory_stays_streamable_against_everything_in_streamable_mode() {
    let server = everything("streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let auto = HttpFactory::new(&url, true).unwrap();
    let b = connect("everything", auto.clone(), &Events::default()).await;
    assert_eq!(auto.mode(), Some(HttpMode::Streamable));
    assert_eq!(b.session().protocol_version, "2025-11-25");
    assert!(!b.catalog().applied_tolerances.contains(&Tolerance::LegacySse), "{:?}", b.catalog());
    exercise_everything(&b).await;
    b.close().await;
}

#[tokio::test]
async fn python_over_streamable_http_survives_a_forgotten_session() {
    let port = free_port();
    let server = python(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let events = Events::default();
    // The Python SDK 2.3.0 speaks 2026-07-28 too, which the automatic choice
    // prefers: stateless, no session to forget. A session is of the
    // initialize era, so this binding speaks only that.
    let mut definition = Definition::new("python", StreamableHttpFactory::new(&url).unwrap());
    definition = definition.with_protocol(mcp_stack::ProtocolChoice::Legacy);
    let connecting = Binding::connect(definition, events.handlers());
    let b = tokio::time::timeout(LIMIT, connecting).await.expect("connect in time").expect("connect");
    assert_eq!(b.session().server.name, "py-test-server");
    assert_eq!(b.session().protocol_version, "2025-11-25");

    let r = b.call_tool("add", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"result": 5})));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
    let r = b.call_tool("slow_count", json!({"steps": 3}), opts).await.unwrap();
    assert_eq!(text_of(&r), "counted 3");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(seen.lock().unwrap().clone(), vec![1.0, 2.0, 3.0]);

    // The server restarts on the same port and forgets every session.
    drop(server);
    let server = python(port).await;
    let r = b.call_tool("add", json!({"a": 20, "b": 22}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"result": 42})));
    let r = b.call_tool("weather", json!({"city": "Oslo"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"city": "Oslo", "temperature_c": 16.0})));

    tokio::time::sleep(Duration::from_millis(50)).await;
    let all = events.0.lock().unwrap().clone();
    // The server forgot the session: a renewal, or (when its stream broke
    // first) a lost and restored connection.
    let renewed = all.iter().any(
        |e| matches!(e, Event::SessionRenewed { drift: None, server, .. } if server.name == "py-test-server"),
    );
    let restored = all.iter().any(|e| matches!(e, Event::ConnectionLost { retrying: true, .. }))
        && all.iter().any(
            |e| matches!(e, Event::ConnectionRestored { drift: None, server, .. } if server.name == "py-test-server"),
        );
    assert!(renewed || restored, "{all:?}");
    b.close().await;
    drop(server);
}

/// Issue 22, item 5: a session kept on close is resumed by a second
/// binding: the Python SDK runs the handshake again in the same session
/// (no new id), and a session it never issued is reported expired and
/// replaced.
#[tokio::test]
async fn python_resumes_a_session_kept_on_close() {
    let port = free_port();
    let server = python(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let connect = |builder: mcp_stack::transport::http::HttpBuilder, events: &Events| {
        let mut definition = Definition::new("python", builder.listen(false).build().unwrap());
        // Sessions are of the initialize era.
        definition = definition.with_protocol(mcp_stack::ProtocolChoice::Legacy);
        let connecting = Binding::connect(definition, events.handlers());
        async move { tokio::time::timeout(LIMIT, connecting).await.expect("connect in time").expect("connect") }
    };
    let assigned = |events: &Events| -> Vec<String> {
        let all = events.0.lock().unwrap().clone();
        all.iter()
            .filter_map(|e| match e {
                Event::HttpSessionAssigned { session, .. } => Some(session.expose().to_string()),
                _ => None,
            })
            .collect()
    };

    let first = Events::default();
    let b = connect(StreamableHttpFactory::builder(&url).terminate_session_on_close(false), &first).await;
    let r = b.call_tool("add", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"result": 5})));
    b.close().await;
    let ids = assigned(&first);
    assert_eq!(ids.len(), 1, "{ids:?}");

    let second = Events::default();
    let b = connect(StreamableHttpFactory::builder(&url).session_id(&ids[0]), &second).await;
    let r = b.call_tool("add", json!({"a": 20, "b": 22}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"result": 42})));
    b.close().await;
    assert!(assigned(&second).is_empty(), "the same session went on: {:?}", second.0.lock().unwrap());

    let third = Events::default();
    let b = connect(StreamableHttpFactory::builder(&url).session_id("never-issued"), &third).await;
    b.call_tool("add", json!({"a": 1, "b": 1}), CallOpts::default()).await.unwrap();
    b.close().await;
    let all = third.0.lock().unwrap().clone();
    assert!(
        all.iter().any(
            |e| matches!(e, Event::HttpSessionExpired { session, .. } if session.expose() == "never-issued")
        ),
        "{all:?}"
    );
    assert_eq!(assigned(&third).len(), 1, "{all:?}");
    drop(server);
}

/// Runs the `mcp` command (`MCP_CLI`, built by scripts/interop.sh) and parses
/// its JSON document.
fn cli(args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(peer("MCP_CLI")).args(args).output().expect("run the CLI");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (out.status.code().unwrap_or(-1), doc)
}

#[tokio::test]
async fn cli_over_http_and_sse() {
    let server = everything("streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let (code, doc) = cli(&["--http", &url, "--header", "X-Api-Key: not-shown", "tools", "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["catalogs"][0]["server"]["name"], "mcp-servers/everything");
    assert_eq!(doc["catalogs"][0]["appliedTolerances"], serde_json::json!([]), "{doc}");
    assert!(!doc.to_string().contains("not-shown"));
    let (code, doc) = cli(&["--http", &url, "call", "echo", r#"{"message":"cli"}"#, "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["content"][0]["text"], "Echo: cli");
    drop(server);

    let server = everything("sse").await;
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let (code, doc) = cli(&["--sse", &url, "call", "echo", r#"{"message":"sse"}"#, "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["content"][0]["text"], "Echo: sse");

    // --http against an HTTP+SSE-only server falls back, and says so.
    let (code, doc) = cli(&["--http", &url, "tools", "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["catalogs"][0]["appliedTolerances"], serde_json::json!(["legacy_sse"]), "{doc}");
    let (code, doc) = cli(&["--http", &url, "call", "echo", r#"{"message":"auto"}"#, "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["content"][0]["text"], "Echo: auto");

    // A malformed header is a usage error that does not quote it.
    let (code, doc) = cli(&["--sse", &url, "--header", "no colon s3cret", "tools", "--json"]);
    assert_eq!(code, 2, "{doc}");
    assert!(!doc.to_string().contains("s3cret"), "{doc}");
}
