//! The example transport `examples/unix_socket/` (written only against the
//! public `Transport` traits) against a real peer: the reference server
//! "everything" over stdio, put on a Unix socket by `socat`
//! (`UNIX-LISTEN:PATH,fork EXEC:...`, one server process per connection).
//!
//! The example's own `transport.rs` is compiled in here, so what is tested
//! is the code people copy. Run through `scripts/interop.sh`, which installs
//! the peers and sets `MCP_NODE`, `MCP_EVERYTHING_JS` and `MCP_SOCAT`. These
//! tests never skip: a missing peer is a failure.

#[path = "../../examples/unix_socket/transport.rs"]
mod transport;

use crate::support::peers::peer;
use crate::support::process_group::group_members;
use mcp_stack::transport::{ConnectConfig, Inbound, TransportFactory};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition, FailureClass};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::json;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport::UnixSocketFactory;

/// socat serving server-everything on a socket in a directory of its own,
/// in a process group of its own (socat, a socat per connection, and the
/// server each of those starts). Killed, group and all, when dropped.
struct SocketServer {
    child: Child,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl SocketServer {
    fn start() -> SocketServer {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("mcp.sock");
        let server = format!("{} {} stdio", peer("MCP_NODE"), peer("MCP_EVERYTHING_JS"));
        let child = Command::new(peer("MCP_SOCAT"))
            .arg(format!("UNIX-LISTEN:{},fork", path.display()))
            .arg(format!("EXEC:{server}"))
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start socat");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !path.exists() {
            assert!(Instant::now() < deadline, "socat did not create {} in 10 s", path.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        // It listens right after it binds the path.
        std::thread::sleep(Duration::from_millis(50));
        SocketServer { child, path, _dir: dir }
    }

    fn pgid(&self) -> u32 {
        self.child.id()
    }

    fn factory(&self) -> UnixSocketFactory {
        UnixSocketFactory::new(&self.path)
    }

    /// SIGKILL to the whole group: socat cannot remove its socket, which
    /// then refuses connections.
    fn kill(&mut self) {
        let _ = killpg(Pid::from_raw(self.pgid() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for SocketServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits (bounded) until the group is down to `alive` processes; returns
/// who is in it.
async fn wait_members(pgid: u32, alive: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let members = group_members(pgid);
        if members.len() == alive || Instant::now() >= deadline {
            return members;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn text_of(result: &mcp_stack::ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

async fn bounded<T>(what: &str, limit: Duration, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(limit, future).await.unwrap_or_else(|_| panic!("{what} did not finish in {limit:?}"))
}

#[tokio::test]
async fn connect_list_call_and_close_leaves_nothing_behind() {
    let server = SocketServer::start();
    let definition = Definition::with_factory("socket", Arc::new(server.factory()));
    let b = bounded("connect", Duration::from_secs(30), Binding::connect(definition, Handlers::default()))
        .await
        .expect("connect over the socket");
    let session = b.session();
    assert_eq!(session.server.name, "mcp-servers/everything");
    let status = b.status();
    assert_eq!(status.transport_kind, "unix");
    assert_eq!(status.redacted_origin, format!("unix:{}", server.path.display()));

    let tools = b.list_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.items.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let r = b.call_tool("echo", json!({"message": "over a socket"}), CallOpts::default()).await.unwrap();
    assert_eq!(text_of(&r), "Echo: over a socket");
    let r = b.call_tool("get-sum", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert!(text_of(&r).contains('5'), "{r:?}");

    // The connection is served by a socat and a node of its own, besides
    // the listening socat.
    let serving = group_members(server.pgid());
    assert!(serving.len() >= 3, "listener, connection and server expected: {serving:?}");
    bounded("close", Duration::from_secs(10), b.close()).await;
    // Closing ended the connection: the server read the end of its input
    // and exited, and its socat with it. Only the listener is left.
    let left = wait_members(server.pgid(), 1).await;
    assert_eq!(left, [server.pgid()], "the connection's processes outlived close");
}

#[tokio::test]
async fn the_raw_transport_frames_by_lines_and_closes_idempotently() {
    let server = SocketServer::start();
    let mut config = ConnectConfig::new("raw");
    config.max_frame_bytes = 4096;
    let factory = server.factory();
    assert!(!factory.exchange_per_request() && !factory.carries_headers());
    let mut t = factory.connect(&config).await.expect("connect");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    });
    t.sender.send(initialize.to_string()).await.unwrap();
    let reply = bounded("initialize reply", Duration::from_secs(30), t.receiver.recv()).await.unwrap();
    match reply {
        Some(Inbound::Frame(text)) => {
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["id"], 1);
            assert_eq!(value["result"]["serverInfo"]["name"], "mcp-servers/everything");
        }
        other => panic!("expected the initialize result, got {other:?}"),
    }
    t.sender
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .await
        .unwrap();

    // A reply over the frame bound is skipped as damaged, never held whole;
    // the connection goes on and the next reply arrives.
    let echo = |id: u64, message: String| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"message": message}}})
        .to_string()
    };
    t.sender.send(echo(2, "x".repeat(8000))).await.unwrap();
    t.sender.send(echo(3, "small".into())).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match bounded("a reply", Duration::from_secs(30), t.receiver.recv()).await.unwrap() {
            Some(Inbound::Damaged { reason, bytes, .. }) => {
                assert!(reason.contains("max_frame_bytes"), "{reason}");
                assert!(bytes > 8000, "{bytes}");
                seen.push(2);
            }
            Some(Inbound::Frame(text)) => {
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                if value.get("id").is_some() {
                    assert_eq!(value["id"], 3, "{text}");
                    assert_eq!(value["result"]["content"][0]["text"], "Echo: small");
                    seen.push(3);
                }
            }
            other => panic!("expected replies, got {other:?}"),
        }
    }
    assert_eq!(seen, [2, 3]);

    // A message with a newline in it would be two lines: refused, unsent.
    let err = t.sender.send("{\"a\":\n1}".into()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Framing);

    bounded("close", Duration::from_secs(10), t.sender.close()).await.unwrap();
    bounded("second close", Duration::from_secs(10), t.sender.close()).await.unwrap();
    assert!(bounded("recv after close", Duration::from_secs(5), t.receiver.recv()).await.unwrap().is_none());
    let err = t.sender.send(json!({"jsonrpc": "2.0", "method": "x"}).to_string()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
    drop(t);
    let left = wait_members(server.pgid(), 1).await;
    assert_eq!(left, [server.pgid()], "the connection's processes outlived close");
}

#[tokio::test]
async fn the_server_killed_mid_call_is_a_classified_error_not_a_hang() {
    let mut server = SocketServer::start();
    let definition = Definition::with_factory("socket", Arc::new(server.factory()));
    let b = Binding::connect(definition, Handlers::default()).await.expect("connect");
    let call = {
        let b = b.clone();
        tokio::spawn(async move {
            b.call_tool(
                "trigger-long-running-operation",
                json!({"duration": 60, "steps": 2}),
                CallOpts::default(),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!call.is_finished(), "the long call ended before the server was killed");
    let killed = Instant::now();
    server.kill();
    let err = bounded("the call in flight", Duration::from_secs(10), call)
        .await
        .unwrap()
        .expect_err("the server was killed during the call");
    // Sent, and no reply: the server may have acted on it.
    assert_eq!(err.class(), FailureClass::Indeterminate, "{err}");
    assert!(killed.elapsed() < Duration::from_secs(5), "took {:?}", killed.elapsed());

    // The socket is left behind, refusing: a later call fails, classified,
    // and soon (the binding's reconnect cannot reach anyone).
    let err = bounded(
        "a call after the kill",
        Duration::from_secs(60),
        b.call_tool("echo", json!({"message": "anyone?"}), CallOpts::default()),
    )
    .await
    .expect_err("nobody serves the socket");
    assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
    assert!(err.to_string().contains("nothing listens"), "{err}");
    bounded("close", Duration::from_secs(10), b.close()).await;
}

#[tokio::test]
async fn a_missing_or_refusing_socket_fails_at_once_with_a_classified_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nobody.sock");
    let started = Instant::now();
    let definition = Definition::with_factory("socket", Arc::new(UnixSocketFactory::new(&missing)));
    let err = bounded("connect", Duration::from_secs(10), Binding::connect(definition, Handlers::default()))
        .await
        .expect_err("no socket");
    assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
    let message = err.to_string();
    assert!(message.contains(&missing.display().to_string()) && message.contains("no socket"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());

    // A socket file nobody listens on (its listener gone).
    let stale = dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    assert!(Path::new(&stale).exists());
    let err = UnixSocketFactory::new(&stale).connect(&ConnectConfig::new("stale")).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
    assert!(err.to_string().contains("nothing listens"), "{err}");
}
