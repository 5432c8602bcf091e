//! A host of three bindings over real peers: the demo server in-process,
//! the reference server "everything" (Node) over stdio, and the Python
//! `mcp` 2.3.0 server (tests/fixtures/py_server.py) over streamable HTTP.
//!
//! One test, in the order a host lives through it: the merged catalog,
//! calls routed by model name, names refused before any I/O, a killed
//! server while the other two keep serving (the HTTP server, killed and
//! restarted on its port; the stdio server, killed and respawned by its
//! binding), a removed binding, and a bounded close.
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers and sets
//! `MCP_NODE`, `MCP_EVERYTHING_JS` and `MCP_PYTHON`. It never skips: a
//! missing peer is a failure. The HTTP server is started on a free port and
//! killed when the test ends.

use crate::support::peers::{free_port, peer, start_listening, Server};
use async_trait::async_trait;
use mcp_stack::host::Host;
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::{ConnectConfig, MessageSender, RedactedOrigin, Transport, TransportFactory};
use mcp_stack::{CallOpts, Content, Definition, Error, FailureClass, State};
use mcp_stack::{ReconnectPolicy, RetryPolicy};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bound on every wait.
const LIMIT: Duration = Duration::from_secs(30);

/// Starts the Python server on `port` and waits (bounded) until it listens.
async fn python_on(port: u16) -> Server {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_server.py");
    let mut command = Command::new(peer("MCP_PYTHON"));
    command.arg(script).arg("--http").arg(port.to_string()).stderr(Stdio::null());
    start_listening(command, port, "the Python server", LIMIT).await
}

/// Every `tools/call` each binding sends, counted at its transport: what
/// "refused before any I/O" is checked against.
#[derive(Clone, Default)]
struct Calls(Arc<AtomicUsize>);

impl Calls {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A transport factory whose senders count `tools/call` requests.
struct Counted<F> {
    inner: F,
    calls: Calls,
}

struct CountingSender {
    inner: Arc<dyn MessageSender>,
    calls: Calls,
}

#[async_trait]
impl MessageSender for CountingSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        if serde_json::from_str::<Value>(&message).is_ok_and(|v| v["method"] == "tools/call") {
            self.calls.0.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.send(message).await
    }

    async fn close(&self) -> Result<(), Error> {
        self.inner.close().await
    }
}

#[async_trait]
impl<F: TransportFactory> TransportFactory for Counted<F> {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.inner.redacted_origin()
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let Transport { sender, receiver } = self.inner.connect(config).await?;
        let sender = Arc::new(CountingSender { inner: sender, calls: self.calls.clone() });
        Ok(Transport { sender, receiver })
    }
}

/// The stdio server's factory, shared so the test can read the pid of the
/// process it spawned last.
#[derive(Clone)]
struct SharedStdio(Arc<StdioFactory>);

#[async_trait]
impl TransportFactory for SharedStdio {
    fn kind(&self) -> &'static str {
        self.0.kind()
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.0.redacted_origin()
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        self.0.connect(config).await
    }
}

/// Reconnects quickly and for long enough to outlast a restarted server.
fn quick_reconnect(mut definition: Definition) -> Definition {
    definition = definition.with_reconnect(
        ReconnectPolicy::default().with_retry(
            RetryPolicy::default()
                .with_attempts(100)
                .with_base_delay(Duration::from_millis(100))
                .with_max_delay(Duration::from_millis(500))
                .with_max_total(LIMIT),
        ),
    );
    definition
}

fn text(result: &mcp_stack::ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

async fn call(host: &Host, model_name: &str, arguments: Value) -> Result<mcp_stack::ToolResult, Error> {
    let opts = CallOpts::default().with_timeout(Duration::from_secs(10));
    tokio::time::timeout(LIMIT, host.call_tool(model_name, arguments, opts))
        .await
        .expect("a call ends in time")
}

/// Calls the demo and the Python servers (the two that were not killed
/// when `everything` is; the two others when `py` is).
async fn the_others_answer(host: &Host, killed: &str) {
    if killed != "demo" {
        let r =
            call(host, "mcp__demo__echo", json!({ "message": "still here" })).await.expect("demo answers");
        assert!(!r.is_error && text(&r).contains("still here"), "{r:?}");
    }
    if killed != "everything" {
        let r = call(host, "mcp__everything__echo", json!({ "message": "still here" }))
            .await
            .expect("everything answers");
        assert_eq!(text(&r), "Echo: still here");
    }
    if killed != "py" {
        let r = call(host, "mcp__py__add", json!({ "a": 20, "b": 22 })).await.expect("py answers");
        assert_eq!(r.structured, Some(json!({ "result": 42 })), "{r:?}");
    }
}

/// Waits (bounded) until `name`'s binding is ready and its tool answers.
async fn until_it_answers(host: &Host, name: &str, model_name: &str, arguments: Value) -> Vec<State> {
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        let state = host.status_of(name).expect("still in the host").state;
        if seen.last() != Some(&state) {
            seen.push(state);
        }
        if state == State::Ready {
            if let Ok(r) = call(host, model_name, arguments.clone()).await {
                if !r.is_error {
                    return seen;
                }
            }
        }
        assert!(start.elapsed() < LIMIT, "{name} did not come back: states {seen:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_host_of_three_real_servers_routes_isolates_and_closes() {
    let port = free_port();
    let py_server = python_on(port).await;
    let stdio = Arc::new(StdioFactory::new(peer("MCP_NODE")).arg(peer("MCP_EVERYTHING_JS")).arg("stdio"));
    let py_url = format!("http://127.0.0.1:{port}/mcp");

    let (demo_calls, everything_calls, py_calls) = (Calls::default(), Calls::default(), Calls::default());
    let host = Host::builder().close_timeout(Duration::from_secs(10)).build();
    let refused = host
        .add_all([
            Definition::new("demo", Counted { inner: mcp_stack::demo::factory(), calls: demo_calls.clone() }),
            quick_reconnect(Definition::new(
                "everything",
                Counted { inner: SharedStdio(stdio.clone()), calls: everything_calls.clone() },
            )),
            quick_reconnect(Definition::new(
                "py",
                Counted {
                    inner: StreamableHttpFactory::new(&py_url).expect("a valid URL"),
                    calls: py_calls.clone(),
                },
            )),
        ])
        .await;
    assert!(refused.is_empty(), "{refused:?}");
    let states: Vec<(String, State)> = host.status().into_iter().map(|s| (s.binding, s.state)).collect();
    assert!(states.iter().all(|(_, s)| *s == State::Ready), "{states:?}");

    // The merged catalog: every binding's tools, under distinct model names.
    let catalog = host.catalog();
    assert_eq!(catalog.catalogs().len(), 3);
    let names: Vec<&str> = catalog.tools().map(|t| t.model_name.as_str()).collect();
    let distinct: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(distinct.len(), names.len(), "model names are unique across bindings: {names:?}");
    for binding in ["demo", "everything", "py"] {
        let own = &catalog.catalog(binding).expect("a catalog per binding").tools;
        assert!(!own.is_empty(), "{binding} lists no tools");
        assert!(own.iter().all(|t| distinct.contains(t.model_name.as_str())), "{binding}'s tools are merged");
    }
    // Two servers have an `echo` and two an `add`: the binding tells them apart.
    for name in
        ["mcp__demo__echo", "mcp__everything__echo", "mcp__demo__add", "mcp__py__add", "mcp__py__weather"]
    {
        assert!(distinct.contains(name), "{name} missing from {names:?}");
    }
    assert!(catalog.collisions().next().is_none());

    // A call by model name reaches the server that lists it, and only it.
    let r = call(&host, "mcp__py__add", json!({ "a": 2, "b": 3 })).await.unwrap();
    assert_eq!(r.structured, Some(json!({ "result": 5 })), "{r:?}");
    let r = call(&host, "mcp__everything__echo", json!({ "message": "to node" })).await.unwrap();
    assert_eq!(text(&r), "Echo: to node");
    let r = call(&host, "mcp__demo__echo", json!({ "message": "in process" })).await.unwrap();
    assert!(text(&r).contains("in process"), "{r:?}");
    assert_eq!((demo_calls.get(), everything_calls.get(), py_calls.get()), (1, 1, 1));

    // Unknown names are refused before any I/O, on every binding.
    for unknown in ["mcp__py__nope", "mcp__ghost__add", "add", "mcp__py__add__x", ""] {
        let e = call(&host, unknown, json!({})).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::NotFound, "{unknown:?}: {e}");
    }
    assert_eq!((demo_calls.get(), everything_calls.get(), py_calls.get()), (1, 1, 1), "nothing was sent");

    // The HTTP server dies: the other two keep serving while its binding
    // tries to reconnect; a call to it fails, classified, instead of hanging.
    drop(py_server);
    the_others_answer(&host, "py").await;
    let opts = CallOpts::default().with_timeout(Duration::from_secs(2));
    let e = host.call_tool("mcp__py__add", json!({ "a": 1, "b": 1 }), opts).await.unwrap_err();
    eprintln!("a call to the killed HTTP server: {e}");
    assert_ne!(e.class(), FailureClass::NotFound, "its tools stay listed while it reconnects: {e}");
    the_others_answer(&host, "py").await;
    // Back on its port: the binding comes back by itself.
    let py_server = python_on(port).await;
    let seen = until_it_answers(&host, "py", "mcp__py__add", json!({ "a": 1, "b": 2 })).await;
    the_others_answer(&host, "none").await;
    eprintln!("py went through {seen:?}");

    // The stdio server dies: its binding spawns a new one; the others never
    // notice.
    let pid = stdio.last_pid().expect("the stdio server's pid");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL)
        .expect("kill the stdio server");
    the_others_answer(&host, "everything").await;
    let seen =
        until_it_answers(&host, "everything", "mcp__everything__echo", json!({ "message": "back" })).await;
    eprintln!("everything went through {seen:?}");
    assert_ne!(stdio.last_pid(), Some(pid), "a new server process serves the binding");
    the_others_answer(&host, "none").await;

    // A removed binding's names are refused before any I/O.
    let sent = py_calls.get();
    assert!(host.remove("py").await);
    let e = call(&host, "mcp__py__add", json!({ "a": 1, "b": 1 })).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound, "{e}");
    assert_eq!(py_calls.get(), sent, "nothing was sent to the removed binding");
    the_others_answer(&host, "py").await;

    // Close ends within its bound, every binding closed.
    let start = Instant::now();
    let report = host.close().await;
    assert!(start.elapsed() < Duration::from_secs(10), "close took {:?}", start.elapsed());
    assert_eq!(report.closed, ["demo", "everything"], "{report:?}");
    assert!(report.timed_out.is_empty() && report.abandoned.is_empty(), "{report:?}");
    let e = call(&host, "mcp__demo__echo", json!({ "message": "x" })).await.unwrap_err();
    assert!(matches!(e.class(), FailureClass::NotFound | FailureClass::Shutdown), "{e}");
    drop(py_server);
}
