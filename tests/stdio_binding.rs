//! A binding over a real child process: the crate's own demo server on stdio
//! (`mcp-stack-demo`), started directly or through `sh -c`.

mod common;

use common::{group_members, wait_group_empty};
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::{Binding, CallOpts, Definition, Event, FailureClass, Handlers};
use serde_json::json;
use std::sync::{Arc, Mutex};

const DEMO: &str = env!("CARGO_BIN_EXE_mcp-stack-demo");

fn sh(script: &str) -> Arc<StdioFactory> {
    Arc::new(StdioFactory::new("sh").arg("-c").arg(script))
}

async fn connect(factory: Arc<StdioFactory>, limits: mcp_stack::Limits) -> Binding {
    let mut def = Definition::with_factory("demo", factory as Arc<dyn TransportFactory>);
    def.limits = limits;
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
    let limits = mcp_stack::Limits { max_frame_bytes: 1 << 20, ..Default::default() };
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
