use serde_json::json;
use std::time::Duration;
use tokio_test::{assert_pending, assert_ready_ok};
use tower::ServiceBuilder;
use tower_test::mock;

use super::*;
use crate::layer::deadline::DeadlineLayer;
use crate::request::{CallOpts, McpResponse};

fn tool(name: &str) -> McpRequest {
    McpRequest::with_value(methods::TOOLS_CALL, json!({ "name": name }))
}

fn request(method: &str) -> McpRequest {
    McpRequest::new(method, Default::default())
}

fn ok() -> McpResponse {
    McpResponse::new(json!({}))
}

/// Asserts that nothing more has reached the mock.
fn assert_no_request(handle: &mut mock::Handle<McpRequest, McpResponse>) {
    assert_pending!(tokio_test::task::spawn(handle.next_request()).poll());
}

#[tokio::test(start_paused = true)]
async fn a_second_tool_call_waits_for_the_first() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(ToolCallGateLayer::serial());
    assert_ready_ok!(svc.poll_ready());
    let mut first = tokio_test::task::spawn(svc.call(tool("a")));
    assert_pending!(first.poll());
    let (req, send_first) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("a"));

    assert_ready_ok!(svc.poll_ready());
    let mut second = tokio_test::task::spawn(svc.call(tool("b")));
    assert_pending!(second.poll());
    assert_no_request(&mut handle);

    send_first.send_response(ok());
    assert_ready_ok!(first.poll());
    // Completing the first (not dropping it) is what opens the gate.
    assert!(second.is_woken());
    assert_pending!(second.poll());
    let (req, send_second) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("b"));
    send_second.send_response(ok());
    assert_ready_ok!(second.poll());
}

#[tokio::test(start_paused = true)]
async fn listing_reading_and_ping_pass_while_a_tool_call_is_stuck() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(ToolCallGateLayer::serial());
    assert_ready_ok!(svc.poll_ready());
    let mut stuck = tokio_test::task::spawn(svc.call(tool("slow")));
    assert_pending!(stuck.poll());
    let (_req, _never_answered) = handle.next_request().await.unwrap();

    for method in [methods::TOOLS_LIST, methods::PING, methods::RESOURCES_READ, methods::PROMPTS_GET] {
        assert_ready_ok!(svc.poll_ready());
        let mut other = tokio_test::task::spawn(svc.call(request(method)));
        assert_pending!(other.poll());
        let (req, send) = handle.next_request().await.unwrap();
        assert_eq!(req.method, method);
        send.send_response(ok());
        assert_ready_ok!(other.poll());
    }
    assert_pending!(stuck.poll());
}

#[tokio::test(start_paused = true)]
async fn dropping_the_first_releases_the_second() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(ToolCallGateLayer::serial());
    assert_ready_ok!(svc.poll_ready());
    let mut first = tokio_test::task::spawn(svc.call(tool("a")));
    assert_pending!(first.poll());
    let (_req, _send_first) = handle.next_request().await.unwrap();

    assert_ready_ok!(svc.poll_ready());
    let mut second = tokio_test::task::spawn(svc.call(tool("b")));
    assert_pending!(second.poll());
    assert_ready_ok!(svc.poll_ready());
    let mut third = tokio_test::task::spawn(svc.call(tool("c")));
    assert_pending!(third.poll());

    // A call dropped while queued leaves the queue without running...
    drop(second);
    assert_no_request(&mut handle);
    // ...and dropping the running one lets the next queued one go.
    drop(first);
    assert!(third.is_woken());
    assert_pending!(third.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("c"));
    send.send_response(ok());
    assert_ready_ok!(third.poll());
}

#[tokio::test(start_paused = true)]
async fn with_parallel_calls_allowed_both_run() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(ToolCallGateLayer::new(true));
    assert!(!svc.get_ref().is_serial());
    assert_ready_ok!(svc.poll_ready());
    let mut first = tokio_test::task::spawn(svc.call(tool("a")));
    assert_ready_ok!(svc.poll_ready());
    let mut second = tokio_test::task::spawn(svc.call(tool("b")));
    assert_pending!(first.poll());
    assert_pending!(second.poll());
    let (a, send_a) = handle.next_request().await.unwrap();
    let (b, send_b) = handle.next_request().await.unwrap();
    assert_eq!((a.tool_name(), b.tool_name()), (Some("a"), Some("b")));
    send_b.send_response(ok());
    send_a.send_response(ok());
    assert_ready_ok!(second.poll());
    assert_ready_ok!(first.poll());

    // A pass-through's readiness is the inner service's.
    handle.allow(0);
    assert_pending!(svc.poll_ready());
}

#[tokio::test(start_paused = true)]
async fn queued_tool_calls_hold_no_concurrency_permit() {
    // Gate first, then the inner readiness: with two permits below, one
    // running and two queued tool calls still leave a permit for a ping.
    let layer = ServiceBuilder::new().layer(ToolCallGateLayer::serial()).concurrency_limit(2).into_inner();
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(layer);
    let mut calls = Vec::new();
    for name in ["a", "b", "c"] {
        assert_ready_ok!(svc.poll_ready());
        let mut call = tokio_test::task::spawn(svc.call(tool(name)));
        assert_pending!(call.poll());
        calls.push(call);
    }
    let (req, send_a) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("a"));

    assert_ready_ok!(svc.poll_ready());
    let mut ping = tokio_test::task::spawn(svc.call(request(methods::PING)));
    assert_pending!(ping.poll());
    let (req, send_ping) = handle.next_request().await.unwrap();
    assert_eq!(req.method, methods::PING);
    send_ping.send_response(ok());
    assert_ready_ok!(ping.poll());

    send_a.send_response(ok());
    assert_ready_ok!(calls[0].poll());
    assert_pending!(calls[1].poll());
    let (req, _send_b) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("b"));
    assert_pending!(calls[2].poll());
    assert_no_request(&mut handle);
}

#[tokio::test(start_paused = true)]
async fn a_call_queued_at_the_gate_ends_at_its_deadline() {
    let layer = ServiceBuilder::new()
        .layer(DeadlineLayer::new(Duration::from_secs(10)))
        .layer(ToolCallGateLayer::serial())
        .into_inner();
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(layer);
    assert_ready_ok!(svc.poll_ready());
    let long = tool("long").opts(CallOpts::default().with_timeout(Duration::from_secs(100)));
    let mut first = tokio_test::task::spawn(svc.call(long));
    assert_pending!(first.poll());
    let (_req, send_first) = handle.next_request().await.unwrap();

    assert_ready_ok!(svc.poll_ready());
    let mut queued = tokio_test::task::spawn(svc.call(tool("queued")));
    assert_pending!(queued.poll());
    tokio::time::advance(Duration::from_secs(10)).await;
    let err = tokio_test::assert_ready_err!(queued.poll());
    assert!(err.is::<crate::layer::deadline::Elapsed>());
    assert_no_request(&mut handle);

    // The expired call left the queue: the next one runs after the first.
    send_first.send_response(ok());
    assert_ready_ok!(first.poll());
    assert_ready_ok!(svc.poll_ready());
    let mut next = tokio_test::task::spawn(svc.call(tool("next")));
    assert_pending!(next.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("next"));
    send.send_response(ok());
    assert_ready_ok!(next.poll());
}

/// A tool call the host makes while serving the server's own request inside
/// a tool call (marked with its sampling depth) does not wait for the gate:
/// the call that holds it waits for this one.
#[tokio::test(start_paused = true)]
async fn a_nested_tool_call_passes_the_gate() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(ToolCallGateLayer::serial());
    assert_ready_ok!(svc.poll_ready());
    let mut outer = tokio_test::task::spawn(svc.call(tool("outer")));
    assert_pending!(outer.poll());
    let (_req, send_outer) = handle.next_request().await.unwrap();

    let mut nested_request = tool("nested");
    nested_request.extensions.insert(crate::layer::sampling_depth::Depth(1));
    assert_ready_ok!(svc.poll_ready());
    let mut nested = tokio_test::task::spawn(svc.call(nested_request));
    assert_pending!(nested.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("nested"));
    send.send_response(ok());
    assert_ready_ok!(nested.poll());
    send_outer.send_response(ok());
    assert_ready_ok!(outer.poll());
}
