use std::time::Duration;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready};
use tower_test::mock;

use super::*;
use crate::error::FailureClass;
use crate::request::{CallOpts, McpResponse};

fn request(method: &str) -> McpRequest {
    McpRequest::new(method, Default::default())
}

#[tokio::test(start_paused = true)]
async fn reply_before_deadline_passes_through() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(10)));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("tools/list")));
    assert_pending!(fut.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.method, "tools/list");
    send.send_response(McpResponse::new(serde_json::json!({"ok": true})));
    let rsp = assert_ready!(fut.poll()).unwrap();
    assert_eq!(rsp.result["ok"], true);
}

#[tokio::test(start_paused = true)]
async fn default_deadline_ends_the_call_and_drops_the_inner_future() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(10)));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("tools/call")));
    assert_pending!(fut.poll());
    let (_req, send) = handle.next_request().await.unwrap();

    tokio::time::advance(Duration::from_millis(9_999)).await;
    assert_pending!(fut.poll());
    tokio::time::advance(Duration::from_millis(1)).await;
    let err = assert_ready!(fut.poll()).unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    let elapsed = std::error::Error::source(&err).unwrap().downcast_ref::<Elapsed>().unwrap();
    assert!(!elapsed.before_sending);
    drop(send);
}

#[tokio::test(start_paused = true)]
async fn expiry_drops_the_inner_future() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let inner = tower::service_fn(move |_req: McpRequest| {
        let guard = SetOnDrop(flag.clone());
        async move {
            let _guard = guard;
            std::future::pending::<Result<McpResponse, crate::Error>>().await
        }
    });
    let mut svc = Deadline::new(inner, Duration::from_secs(1));
    let mut fut = tokio_test::task::spawn(tower::Service::call(&mut svc, request("tools/call")));
    assert_pending!(fut.poll());
    assert!(!dropped.load(Ordering::SeqCst));
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(assert_ready!(fut.poll()).unwrap_err().class(), FailureClass::Deadline);
    // The inner future was dropped by expiry itself, not by the caller.
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn callers_deadline_overrides_the_default() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(60)));
    let opts = CallOpts::default().with_deadline(Instant::now() + Duration::from_secs(1));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("tools/call").opts(opts)));
    assert_pending!(fut.poll());
    let _pending = handle.next_request().await.unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(assert_ready!(fut.poll()).unwrap_err().class(), FailureClass::Deadline);
}

#[tokio::test(start_paused = true)]
async fn waiting_for_readiness_counts_against_the_deadline() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(5)));
    handle.allow(0);
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("ping")));
    assert_pending!(fut.poll());
    tokio::time::advance(Duration::from_secs(5)).await;
    let err = assert_ready!(fut.poll()).unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    let elapsed = std::error::Error::source(&err).unwrap().downcast_ref::<Elapsed>().unwrap();
    assert!(elapsed.before_sending);
    // Nothing was sent.
    handle.allow(1);
    assert_pending!(tokio_test::task::spawn(handle.next_request()).poll());
}

#[tokio::test(start_paused = true)]
async fn a_reply_and_the_deadline_in_the_same_poll_the_reply_wins() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(1)));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("ping")));
    assert_pending!(fut.poll());
    let (_req, send) = handle.next_request().await.unwrap();
    tokio::time::advance(Duration::from_secs(2)).await;
    send.send_response(McpResponse::new(serde_json::Value::Null));
    assert!(assert_ready!(fut.poll()).is_ok());
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_written_into_the_request() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(7)));
    let entered = Instant::now();
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("ping")));
    assert_pending!(fut.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.opts.deadline, Some(entered + Duration::from_secs(7)));
    send.send_response(McpResponse::new(serde_json::Value::Null));
    assert!(assert_ready!(fut.poll()).is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_ready_inner_service_is_called_at_once_without_a_clone() {
    use crate::layer::test_support::CountsClones;
    use tower::ServiceExt;
    let clones = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut svc = Deadline::new(CountsClones(clones.clone()), Duration::from_secs(5));
    for _ in 0..3 {
        svc.ready().await.unwrap().call(request("ping")).await.unwrap();
    }
    assert_eq!(clones.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_call_that_waited_for_readiness_leaves_nothing_reserved_behind() {
    use tower::limit::ConcurrencyLimit;
    use tower::ServiceExt;
    let (inner, mut handle) = mock::pair::<McpRequest, McpResponse>();
    let mut svc = Deadline::new(ConcurrencyLimit::new(inner, 1), Duration::from_secs(5));
    // A holds the only permit.
    let mut a = tokio_test::task::spawn(svc.ready().await.unwrap().call(request("ping")));
    assert_pending!(a.poll());
    let (_, reply_a) = handle.next_request().await.unwrap();
    // B waits for it, then gives up: its place in the queue goes with it.
    let mut b = tokio_test::task::spawn(svc.ready().await.unwrap().call(request("ping")));
    assert_pending!(b.poll());
    drop(b);
    reply_a.send_response(McpResponse::new(serde_json::json!({})));
    assert_ready!(a.poll()).unwrap();
    drop(a); // tower's ConcurrencyLimit releases its permit with the future
             // The permit is free for any clone: none was left waiting inside `svc`.
    let mut c = tokio_test::task::spawn(svc.clone().oneshot(request("ping")));
    assert_pending!(c.poll());
    let sent = tokio::time::timeout(Duration::from_secs(1), handle.next_request()).await;
    let (_, reply_c) = sent.expect("C got the permit").unwrap();
    reply_c.send_response(McpResponse::new(serde_json::json!({})));
    assert_ready!(c.poll()).unwrap();
    drop(c);
    // And `svc` itself still works.
    let mut d = tokio_test::task::spawn(svc.oneshot(request("ping")));
    assert_pending!(d.poll());
    handle.next_request().await.unwrap().1.send_response(McpResponse::new(serde_json::json!({})));
    assert_ready!(d.poll()).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_readiness_failure_is_the_calls_error() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(5)));
    handle.send_error(Error::new(FailureClass::TransportClosed, "gone"));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("ping")));
    assert_eq!(assert_ready!(fut.poll()).unwrap_err().class(), FailureClass::TransportClosed);
}
