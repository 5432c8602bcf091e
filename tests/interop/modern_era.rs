//! Interop in the 2026-07-28 era with modern peers written by others: the
//! Python SDK `mcp` 2.3.0 (tests/fixtures/py_modern_server.py) and the
//! TypeScript SDK v2 server (tests/fixtures/ts_server.mjs), over stdio and
//! streamable HTTP, with the automatic protocol choice; and
//! server-everything (legacy only), which must still connect through the
//! fallback over stdio and HTTP.
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers and sets
//! `MCP_NODE`, `MCP_EVERYTHING_JS`, `MCP_PYTHON` and `MCP_TS_SERVER_JS` (and
//! `MCP_CLI`, the `mcp` command it builds). These tests never skip:
//! a missing peer is a failure. Each HTTP server runs on a free port and is
//! killed when its test ends.

use crate::support::peers::{free_port, peer, start_listening, Server};
use mcp_stack::handlers::{ElicitRequest, ElicitResult};
use mcp_stack::protocol::Root;
use mcp_stack::transport::http::{HttpFactory, HttpMode, StreamableHttpFactory};
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::ProtocolChoice;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The bound on every wait.
const LIMIT: Duration = Duration::from_secs(30);

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_modern_server.py");

async fn start(mut command: Command, port: u16) -> Server {
    command.stderr(Stdio::null());
    start_listening(command, port, "the server", LIMIT).await
}

/// The reference server "everything" (legacy era only) in `mode`
/// (`streamableHttp` or `sse`) on a free port.
async fn everything(mode: &str) -> (Server, u16) {
    let port = free_port();
    let mut command = Command::new(peer("MCP_NODE"));
    command.arg(peer("MCP_EVERYTHING_JS")).arg(mode).env("PORT", port.to_string());
    (start(command, port).await, port)
}

/// `program script --http PORT` (the Python or TypeScript test server) on a
/// free port.
async fn serve_http(program: &str, script: &str) -> (Server, u16) {
    let port = free_port();
    let mut command = Command::new(program);
    command.arg(script).arg("--http").arg(port.to_string());
    (start(command, port).await, port)
}

fn handlers() -> Handlers {
    Handlers::default()
        .elicitation(|req: ElicitRequest| async move { Ok(ElicitResult::accept(req.defaults())) })
        .roots(|_| async move {
            Ok(vec![
                Root { uri: "file:///tmp/a".into(), name: Some("a".into()), meta: None },
                Root { uri: "file:///tmp/b".into(), name: None, meta: None },
            ])
        })
}

async fn connect(factory: impl TransportFactory) -> Binding {
    // The default protocol choice, auto: nothing to set.
    let mut definition = Definition::new("pymodern", factory);
    assert_eq!(definition.protocol(), &ProtocolChoice::Auto);
    let capabilities = definition.capabilities().with_elicitation(true);
    definition = definition.with_capabilities(capabilities);
    let capabilities = definition.capabilities().with_roots(true);
    definition = definition.with_capabilities(capabilities);
    tokio::time::timeout(LIMIT, Binding::connect(definition, handlers()))
        .await
        .expect("in time")
        .expect("connect")
}

fn text_of(result: &mcp_stack::ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

async fn call(b: &Binding, tool: &str, arguments: Value) -> String {
    let result = tokio::time::timeout(LIMIT, b.call_tool(tool, arguments, CallOpts::default()))
        .await
        .expect("in time")
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(!result.is_error, "{tool}: {}", text_of(&result));
    text_of(&result)
}

/// What the modern Python server must do for either transport.
async fn exercise_python(b: &Binding) {
    assert_eq!(b.session().protocol_version, "2026-07-28");
    assert_eq!(b.catalog().protocol_version, "2026-07-28");
    assert_eq!(b.session().server.name, "py-modern-server");
    assert_eq!(call(b, "add", json!({ "a": 2, "b": 3 })).await, "5");
    // Asked of the host through MRTR, answered by the same handlers as a
    // legacy server's requests.
    assert_eq!(call(b, "confirm", json!({})).await, "go=True");
    assert_eq!(call(b, "roots_count", json!({})).await, "roots=2");
}

#[tokio::test]
async fn python_modern_over_stdio() {
    let b = connect(StdioFactory::new(peer("MCP_PYTHON")).arg(SCRIPT)).await;
    exercise_python(&b).await;
    assert_eq!(call(&b, "where", json!({ "region": "us-west1" })).await, "region us-west1");
    // Dropped: notifications/cancelled stops the server's handler.
    a_dropped_call_reaches_the_server(&b).await;
    b.close().await;
}

#[tokio::test]
async fn python_modern_over_streamable_http_with_param_headers() {
    let (_server, port) = serve_http(&peer("MCP_PYTHON"), SCRIPT).await;
    let factory = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let b = connect(factory).await;
    exercise_python(&b).await;
    // The server checks Mcp-Param-Region against the body: a missing or
    // wrong header would be refused (-32020).
    assert_eq!(call(&b, "where", json!({ "region": "Zürich " })).await, "region Zürich ");
    // Dropped: its response stream closes, and the server stops the handler.
    a_dropped_call_reaches_the_server(&b).await;
    b.close().await;
}

#[tokio::test]
async fn everything_still_connects_through_the_fallback_over_stdio() {
    let factory = StdioFactory::new(peer("MCP_NODE")).arg(peer("MCP_EVERYTHING_JS")).arg("stdio");
    let b = connect(factory).await;
    assert_eq!(b.session().protocol_version, "2025-11-25");
    assert!(call(&b, "echo", json!({ "message": "hi" })).await.contains("hi"));
    b.close().await;
}

#[tokio::test]
async fn everything_still_connects_through_the_fallback_over_http() {
    let (_server, port) = everything("streamableHttp").await;
    let factory = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let b = connect(factory).await;
    assert_eq!(b.session().protocol_version, "2025-11-25");
    assert!(call(&b, "echo", json!({ "message": "hi" })).await.contains("hi"));
    b.close().await;
}

#[tokio::test]
async fn everything_sse_is_reached_through_both_fallbacks() {
    // Modern POST refused, then initialize refused by POST (404), then the
    // HTTP+SSE GET: auto era, auto transport.
    let (_server, port) = everything("sse").await;
    let auto = HttpFactory::new(&format!("http://127.0.0.1:{port}/sse"), true).unwrap();
    let b = connect(auto.clone()).await;
    assert_eq!(auto.mode(), Some(HttpMode::LegacySse));
    assert_eq!(b.session().protocol_version, "2025-11-25");
    assert!(call(&b, "echo", json!({ "message": "hi" })).await.contains("hi"));
    b.close().await;
}

/// Handlers for the TypeScript server, whose form requires `ok`.
fn ts_handlers() -> Handlers {
    Handlers::default()
        .elicitation(|_req: ElicitRequest| async move {
            let mut content = serde_json::Map::new();
            content.insert("ok".into(), json!(true));
            Ok(ElicitResult::accept(content))
        })
        .roots(|_| async move { Ok(vec![Root { uri: "file:///tmp/a".into(), name: None, meta: None }]) })
}

async fn connect_ts(
    factory: impl TransportFactory,
    protocol: ProtocolChoice,
) -> Result<Binding, mcp_stack::Error> {
    let mut definition = Definition::new("tsmodern", factory);
    definition = definition.with_protocol(protocol);
    let capabilities = definition.capabilities().with_elicitation(true);
    definition = definition.with_capabilities(capabilities);
    let capabilities = definition.capabilities().with_roots(true);
    definition = definition.with_capabilities(capabilities);
    tokio::time::timeout(LIMIT, Binding::connect(definition, ts_handlers())).await.expect("in time")
}

async fn exercise_ts(b: &Binding) {
    assert_eq!(b.session().protocol_version, "2026-07-28");
    assert_eq!(b.session().server.name, "ts-test-server");
    assert_eq!(call(b, "add", json!({ "a": 2, "b": 3 })).await, "5");
    assert_eq!(call(b, "confirm", json!({})).await, "confirmed ok=true");
    assert_eq!(call(b, "roots_count", json!({})).await, "roots=1");
}

#[tokio::test]
async fn typescript_v2_over_stdio() {
    let factory = StdioFactory::new(peer("MCP_NODE")).arg(peer("MCP_TS_SERVER_JS"));
    let b = connect_ts(factory, ProtocolChoice::Auto).await.expect("connect");
    exercise_ts(&b).await;
    // A tool added on the server is announced on the listen stream and
    // becomes a candidate.
    assert!(b.catalog().tool("grown").is_none());
    assert_eq!(call(&b, "grow", json!({})).await, "grew");
    let start = Instant::now();
    while b.candidate().is_none_or(|c| c.tool("grown").is_none()) {
        assert!(start.elapsed() < LIMIT, "no candidate with the new tool");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    b.close().await;
}

#[tokio::test]
async fn typescript_v2_over_streamable_http() {
    let (_server, port) = serve_http(&peer("MCP_NODE"), &peer("MCP_TS_SERVER_JS")).await;
    let factory = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let b = connect_ts(factory, ProtocolChoice::Auto).await.expect("connect");
    exercise_ts(&b).await;
    b.close().await;
}

#[tokio::test]
async fn a_legacy_binding_to_a_modern_only_server_fails_unsupported_protocol() {
    let factory = StdioFactory::new(peer("MCP_NODE")).arg(peer("MCP_TS_SERVER_JS")).arg("--reject");
    let e = connect_ts(factory, ProtocolChoice::Legacy).await.expect_err("refused");
    assert_eq!(e.class(), mcp_stack::FailureClass::UnsupportedProtocol, "{e}");
    assert!(e.message().contains("2026-07-28"), "names what was offered: {e}");
}

/// Calls `wait` (which runs until cancelled) with a short deadline, so that
/// the call is dropped, then asks the server how many were cancelled.
async fn a_dropped_call_reaches_the_server(b: &Binding) {
    let opts = CallOpts::default().with_timeout(Duration::from_millis(300));
    let e = b.call_tool("wait", json!({}), opts).await.expect_err("the deadline ends it");
    assert_eq!(e.class(), mcp_stack::FailureClass::Deadline, "{e}");
    let start = Instant::now();
    while call(b, "cancelled", json!({})).await != "cancelled=1" {
        assert!(start.elapsed() < LIMIT, "the server never saw the call cancelled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn typescript_v2_a_dropped_call_is_cancelled_over_stdio_by_notice() {
    let factory = StdioFactory::new(peer("MCP_NODE")).arg(peer("MCP_TS_SERVER_JS"));
    let b = connect_ts(factory, ProtocolChoice::Auto).await.expect("connect");
    assert_eq!(b.session().protocol_version, "2026-07-28");
    a_dropped_call_reaches_the_server(&b).await;
    b.close().await;
}

#[tokio::test]
async fn typescript_v2_a_dropped_call_is_cancelled_over_http_by_closing_its_stream() {
    let (_server, port) = serve_http(&peer("MCP_NODE"), &peer("MCP_TS_SERVER_JS")).await;
    let factory = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let b = connect_ts(factory, ProtocolChoice::Auto).await.expect("connect");
    assert_eq!(b.session().protocol_version, "2026-07-28");
    a_dropped_call_reaches_the_server(&b).await;
    b.close().await;
}

/// `grow` until the listen stream's `tools/list_changed` makes a candidate
/// with the tool `grown`; subscribe to `demo://counter` and `touch` until
/// its update reaches `ResourceUpdated` (recorded in `updates`).
async fn listen_gives_a_candidate_and_resource_updates(
    b: &Binding,
    updates: &std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    assert!(b.catalog().tool("grown").is_none());
    let start = Instant::now();
    while b.candidate().is_none_or(|c| c.tool("grown").is_none()) {
        assert!(start.elapsed() < LIMIT, "no candidate with the new tool");
        assert_eq!(call(b, "grow", json!({})).await, "grew");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(b.catalog().tool("grown").is_none(), "adopted only when the host says so");
    b.subscribe("demo://counter").await.expect("subscribe");
    let start = Instant::now();
    while !updates.lock().unwrap().iter().any(|u| u == "demo://counter") {
        assert!(start.elapsed() < LIMIT, "no ResourceUpdated for demo://counter");
        call(b, "touch", json!({})).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A binding to `factory` with the default protocol choice whose
/// `ResourceUpdated` URIs are recorded.
async fn connect_recording(
    name: &str,
    factory: impl TransportFactory,
    handlers: Handlers,
) -> (Binding, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let updates = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = updates.clone();
    let mut definition = Definition::new(name, factory);
    let capabilities = definition.capabilities().with_elicitation(true);
    definition = definition.with_capabilities(capabilities);
    let capabilities = definition.capabilities().with_roots(true);
    definition = definition.with_capabilities(capabilities);
    let handlers = handlers.with_events(move |e| {
        if let mcp_stack::Event::ResourceUpdated { uri, .. } = e {
            sink.lock().unwrap().push(uri);
        }
    });
    let b = tokio::time::timeout(LIMIT, Binding::connect(definition, handlers)).await.unwrap().unwrap();
    assert_eq!(b.session().protocol_version, "2026-07-28", "auto is the default");
    (b, updates)
}

#[tokio::test]
async fn python_listen_over_stdio_and_http_gives_a_candidate_and_resource_updates() {
    let (b, updates) =
        connect_recording("py", StdioFactory::new(peer("MCP_PYTHON")).arg(SCRIPT), handlers()).await;
    listen_gives_a_candidate_and_resource_updates(&b, &updates).await;
    b.close().await;

    let (_server, port) = serve_http(&peer("MCP_PYTHON"), SCRIPT).await;
    let factory = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let (b, updates) = connect_recording("py", factory, handlers()).await;
    listen_gives_a_candidate_and_resource_updates(&b, &updates).await;
    b.close().await;
}

#[tokio::test]
async fn typescript_v2_listen_over_http_gives_a_candidate_and_resource_updates() {
    let (_server, port) = serve_http(&peer("MCP_NODE"), &peer("MCP_TS_SERVER_JS")).await;
    let factory = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let (b, updates) = connect_recording("tsmodern", factory, ts_handlers()).await;
    listen_gives_a_candidate_and_resource_updates(&b, &updates).await;
    b.close().await;
}

#[tokio::test]
async fn the_cli_reports_the_negotiated_modern_version_in_tools_json() {
    // `scripts/interop.sh` builds the CLI and sets MCP_CLI.
    let server = format!("{} {}", peer("MCP_NODE"), peer("MCP_TS_SERVER_JS"));
    let out = Command::new(peer("MCP_CLI"))
        .args(["--stdio", &server, "--binding", "ts", "tools", "--json"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["catalogs"][0]["protocolVersion"], "2026-07-28", "{doc}");
    let names: Vec<&str> = doc["catalogs"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["modelName"].as_str())
        .collect();
    assert!(names.contains(&"mcp__ts__add"), "{names:?}");
    let out = Command::new(peer("MCP_CLI"))
        .args(["--stdio", &server, "--protocol", "legacy", "tools", "--json"])
        .stdin(Stdio::null())
        .output()
        .expect("run mcp");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["catalogs"][0]["protocolVersion"], "2025-11-25", "--protocol legacy: {doc}");
}
