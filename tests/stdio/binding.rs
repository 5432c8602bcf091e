//! A binding over a real child process: the crate's own demo server on stdio
//! (`mcp-stack-demo`), started directly or through `sh -c`.

use crate::support::process_group::{group_members, wait_group_empty};
use crate::support::recorded_events::Events;
use crate::support::server_requests::Asked;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Event, FailureClass};
use serde_json::json;
use std::sync::{Arc, Mutex};

const DEMO: &str = env!("CARGO_BIN_EXE_mcp-stack-demo");
/// A 2026-07-28 server that sends requests of its own before it answers a
/// tool call; it appends what it reads to the file its argument names.
const ASKING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/modern_asking_server.sh");

fn sh(script: &str) -> Arc<StdioFactory> {
    Arc::new(StdioFactory::new("sh").arg("-c").arg(script))
}

async fn connect(factory: Arc<StdioFactory>, limits: mcp_stack::Limits) -> Binding {
    let mut def = Definition::with_factory("demo", factory as Arc<dyn TransportFactory>);
    def = def.with_limits(limits);
    Binding::connect(def, Handlers::default()).await.expect("connect")
}

#[tokio::test]
async fn calls_and_progress_over_stdio() {
    let b = connect(Arc::new(StdioFactory::new(DEMO)), Default::default()).await;
    assert_eq!(b.status().transport_kind, "stdio");
    assert_eq!(b.status().redacted_origin, "stdio:mcp-stack-demo");
    let seen = Arc::new(Mutex::new(0));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |_| *sink.lock().unwrap() += 1);
    let r = b.call_tool("count", json!({"steps": 20}), opts).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("counted to 20"));
    b.close().await;
    assert!(*seen.lock().unwrap() > 0);
}

#[tokio::test]
async fn a_grandchild_started_through_sh_is_gone_after_close() {
    let factory = sh(&format!("sleep 1000 & exec {DEMO}"));
    let b = connect(factory.clone(), Default::default()).await;
    let pgid = factory.last_pid().expect("a child was started");
    assert!(group_members(pgid).len() >= 2, "the server and its sleeping sibling run in one group");
    b.ping().await.unwrap();
    b.close().await;
    assert_eq!(wait_group_empty(pgid).await, Vec::<u32>::new());
}

#[tokio::test]
async fn garbage_lines_between_messages_are_survived() {
    // The wrapper writes a line that is not JSON before the server starts.
    let factory = sh(&format!("echo 'this is not JSON'; exec {DEMO}"));
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let sink = warnings.clone();
    let handlers = Handlers::default().with_events(move |e| {
        if let Event::Warning { text, .. } = e {
            sink.lock().unwrap().push(text);
        }
    });
    let def = Definition::with_factory("demo", factory as Arc<dyn TransportFactory>);
    let b = Binding::connect(def, handlers).await.unwrap();
    let r = b.call_tool("echo", json!({"message": "still here"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("still here"));
    b.close().await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(warnings.lock().unwrap().iter().any(|w| w.contains("damaged")), "{:?}", warnings.lock().unwrap());
}

#[tokio::test]
async fn a_64_mib_line_is_dropped_and_the_connection_survives() {
    // A 64 MiB line of `x` streams past before the server starts; with a
    // 1 MiB frame bound it is skipped while reading (the framing tests bound
    // the bytes held) and the handshake that follows succeeds.
    let factory = sh(&format!("head -c 67108864 /dev/zero | tr '\\0' x; echo; exec {DEMO}"));
    let limits = mcp_stack::Limits::default().with_max_frame_bytes(1 << 20);
    let b = connect(factory, limits).await;
    let r = b.call_tool("echo", json!({"message": "after"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("after"));
    b.close().await;
}

#[tokio::test]
async fn a_child_that_exits_before_answering_names_its_status_and_stderr() {
    let factory = sh("echo 'cannot open database' >&2; exit 7");
    let def = Definition::with_factory("demo", factory as Arc<dyn TransportFactory>);
    let err = Binding::connect(def, Handlers::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
    let text = err.to_string();
    assert!(text.contains('7') && text.contains("cannot open database"), "{text}");
}

/// The messages a scripted server logged, one JSON message a line.
fn logged(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().map(|line| serde_json::from_str(line).expect("a logged message")).collect()
}

#[tokio::test]
async fn a_modern_servers_own_requests_are_dropped_unanswered_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("received.jsonl");
    let (events, asked) = (Events::default(), Asked::default());
    let mut def = Definition::new("asking", StdioFactory::new("sh").arg(ASKING).arg(&log));
    let handlers = asked.handlers(&events, &mut def);
    let b = Binding::connect(def, handlers).await.expect("connect");
    assert_eq!(b.session().protocol_version, "2026-07-28");
    let r = b.call_tool("ask", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("asked"), "the call itself goes on");
    asked.check_nothing_served(&events, std::time::Duration::from_secs(10), || logged(&log)).await;
    b.close().await;
    let responses: Vec<_> = logged(&log).into_iter().filter(|m| m.get("method").is_none()).collect();
    assert!(responses.is_empty(), "nothing answered them later either: {responses:?}");
}
