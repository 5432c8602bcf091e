use serde_json::json;
use tokio_test::{assert_pending, assert_ready, assert_ready_ok};
use tower_test::mock;

use super::*;
use crate::error::BoxError;

fn call(name: &str) -> McpRequest {
    McpRequest::with_value(methods::TOOLS_CALL, json!({ "name": name, "arguments": {} }))
}

fn filter(allow: &[&str], deny: &[&str]) -> ToolFilterLayer {
    let policy = Policy::default().with_denied(deny.iter().copied());
    // An empty `allow` here means "no allow list", as the tests read.
    ToolFilterLayer::new(if allow.is_empty() { policy } else { policy.with_allowed(allow.iter().copied()) })
}

/// The crate's error, from the mock's boxed one.
fn crate_error(err: BoxError) -> Error {
    *err.downcast::<Error>().expect("the crate's error")
}

fn assert_refused(result: Result<McpResponse, BoxError>, tool: &str) {
    let err = crate_error(result.unwrap_err());
    assert_eq!(err.class(), FailureClass::ToolUnavailable);
    let cause = std::error::Error::source(&err).unwrap().downcast_ref::<Filtered>().unwrap();
    assert_eq!(cause.tool, tool);
}

#[tokio::test(start_paused = true)]
async fn a_filtered_call_is_refused_before_any_io() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&[], &["rm"]));
    assert_ready_ok!(svc.poll_ready());
    let mut refused = tokio_test::task::spawn(svc.call(call("rm")));
    assert_refused(assert_ready!(refused.poll()), "rm");

    // The readiness a refusal did not use is kept for the next call, as in
    // tower's `Filter`: a permitted call goes straight through.
    let mut permitted = tokio_test::task::spawn(svc.call(call("ls")));
    assert_pending!(permitted.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.tool_name(), Some("ls"));
    // Only the permitted call ever reached the inner service.
    assert_pending!(tokio_test::task::spawn(handle.next_request()).poll());
    send.send_response(McpResponse::new(json!({"content": []})));
    assert_ready_ok!(permitted.poll());
}

/// Readiness passes through: the filter is ready exactly when the inner
/// service is, and its failure is the filter's.
#[tokio::test(start_paused = true)]
async fn readiness_is_the_inner_services() {
    let (mut svc, mut handle) = mock::spawn_layer::<McpRequest, McpResponse, _>(filter(&["ok"], &[]));
    handle.allow(0);
    assert_pending!(svc.poll_ready());
    handle.allow(1);
    assert_ready_ok!(svc.poll_ready());
    handle.send_error(crate::Error::new(FailureClass::TransportClosed, "gone"));
    let mut clone = svc.clone();
    let err = crate_error(assert_ready!(clone.poll_ready()).unwrap_err());
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

/// The layer asks no more of its inner service than tower's `Filter`: no
/// `Clone`, and a permitted call through a ready service makes no clone.
#[tokio::test(start_paused = true)]
async fn a_permitted_call_makes_no_clone() {
    use crate::layer::test_support::CountsClones;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tower::ServiceExt;

    let clones = Arc::new(AtomicUsize::new(0));
    let policy = Policy::default().with_denied(["rm"]);
    let mut svc = EnforceToolFilter::new(CountsClones(clones.clone()), policy);
    svc.ready().await.unwrap().call(call("ls")).await.unwrap();
    let refused = svc.ready().await.unwrap().call(call("rm")).await.unwrap_err();
    assert_eq!(refused.class(), FailureClass::ToolUnavailable);
    assert_eq!(clones.load(Ordering::SeqCst), 0);
}
