use serde_json::json;
use tokio_test::{assert_pending, assert_ready, assert_ready_ok};
use tower_test::mock;

use super::*;

fn call(name: &str) -> McpRequest {
    McpRequest::with_value(methods::TOOLS_CALL, json!({ "name": name, "arguments": {} }))
}

fn filter(allow: &[&str], deny: &[&str]) -> ToolFilterLayer {
    ToolFilterLayer::new(ToolFilter {
        allow: allow.iter().map(|s| s.to_string()).collect(),
        deny: deny.iter().map(|s| s.to_string()).collect(),
    })
}

fn assert_refused(result: Result<McpResponse, Error>, tool: &str) {
    let err = result.unwrap_err();
    assert_eq!(err.class(), FailureClass::ToolUnavailable);
    let cause = std::error::Error::source(&err).unwrap().downcast_ref::<Filtered>().unwrap();
    assert_eq!(cause.tool, tool);
}

#[tokio::test(start_paused = true)]
async fn a_filtered_call_is_refused_before_any_io() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&[], &["rm"]));
    // The inner service is never ready: a refusal must not need it.
    handle.allow(0);
    assert_ready_ok!(svc.poll_ready());
    let mut refused = tokio_test::task::spawn(svc.call(call("rm")));
    assert_refused(assert_ready!(refused.poll()), "rm");

    // A permitted call, by contrast, waits for the inner service.
    assert_ready_ok!(svc.poll_ready());
    let mut permitted = tokio_test::task::spawn(svc.call(call("ls")));
    assert_pending!(permitted.poll());

    // Only the permitted call ever reaches the inner service.
    handle.allow(2);
    assert!(permitted.is_woken());
    assert_pending!(permitted.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("ls"));
    assert_pending!(tokio_test::task::spawn(handle.next_request()).poll());
    send.send_response(McpResponse::new(json!({"content": []})));
    assert_ready_ok!(permitted.poll());
}

#[tokio::test(start_paused = true)]
async fn a_refusal_is_the_same_when_the_inner_service_has_failed() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&["ok"], &[]));
    handle.send_error(crate::Error::new(FailureClass::TransportClosed, "gone"));
    assert_ready_ok!(svc.poll_ready());
    let mut refused = tokio_test::task::spawn(svc.call(call("other")));
    assert_refused(assert_ready!(refused.poll()), "other");

    // The inner failure is still there for the permitted call to report.
    assert_ready_ok!(svc.poll_ready());
    let mut permitted = tokio_test::task::spawn(svc.call(call("ok")));
    let err = assert_ready!(permitted.poll()).unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
}

#[tokio::test(start_paused = true)]
async fn an_allow_list_is_the_complete_set_and_deny_wins() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&["a", "b"], &["b"]));
    for (name, permitted) in [("a", true), ("b", false), ("c", false), ("", false)] {
        assert_ready_ok!(svc.poll_ready());
        let mut fut = tokio_test::task::spawn(svc.call(call(name)));
        if permitted {
            assert_pending!(fut.poll());
            let (req, send) = handle.next_request().await.unwrap();
            assert_eq!(req.tool_name(), Some(name));
            send.send_response(McpResponse::new(json!({"content": []})));
            assert_ready_ok!(fut.poll());
        } else {
            assert_refused(assert_ready!(fut.poll()), name);
        }
    }
    // A call without a name is judged as the empty name.
    assert_ready_ok!(svc.poll_ready());
    let mut nameless =
        tokio_test::task::spawn(svc.call(McpRequest::new(methods::TOOLS_CALL, Default::default())));
    assert_refused(assert_ready!(nameless.poll()), "");
}

#[tokio::test(start_paused = true)]
async fn listings_lose_the_filtered_tools() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&["a", "b"], &["b"]));
    assert_ready_ok!(svc.poll_ready());
    let mut fut = tokio_test::task::spawn(svc.call(McpRequest::new(methods::TOOLS_LIST, Default::default())));
    assert_pending!(fut.poll());
    let (_req, send) = handle.next_request().await.unwrap();
    let tools = json!({"tools": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"title": "nameless"}], "nextCursor": "2"});
    send.send_response(McpResponse::new(tools));
    let rsp = assert_ready_ok!(fut.poll());
    // The nameless entry is left for the listing to reject as malformed.
    assert_eq!(rsp.result, json!({"tools": [{"name": "a"}, {"title": "nameless"}], "nextCursor": "2"}));
}

#[tokio::test(start_paused = true)]
async fn without_a_filter_everything_passes_untouched() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&[], &[]));
    let tools = json!({"tools": [{"name": "a"}, {"name": "b"}]});
    for (req, answer) in [
        (McpRequest::new(methods::TOOLS_LIST, Default::default()), tools.clone()),
        (call("anything"), json!({"content": []})),
        (McpRequest::new(methods::PING, Default::default()), json!({})),
    ] {
        assert_ready_ok!(svc.poll_ready());
        let mut fut = tokio_test::task::spawn(svc.call(req));
        assert_pending!(fut.poll());
        let (_req, send) = handle.next_request().await.unwrap();
        send.send_response(McpResponse::new(answer.clone()));
        let rsp: McpResponse = assert_ready_ok!(fut.poll());
        assert_eq!(rsp.result, answer);
    }
}

#[tokio::test(start_paused = true)]
async fn a_permitted_call_to_a_ready_inner_service_makes_no_clone() {
    use crate::layer::test_support::CountsClones;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::ServiceExt;

    let clones = Arc::new(AtomicUsize::new(0));
    let filter = ToolFilter { allow: vec![], deny: vec!["rm".into()] };
    let mut svc = ToolFilterService::new(CountsClones(clones.clone()), filter);
    svc.ready().await.unwrap().call(call("ls")).await.unwrap();
    assert_refused(svc.ready().await.unwrap().call(call("rm")).await, "rm");
    assert_eq!(clones.load(Ordering::SeqCst), 0);
}
