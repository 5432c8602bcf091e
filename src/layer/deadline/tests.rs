use std::time::Duration;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready};
use tower_test::mock;

use super::*;
use crate::error::{BoxError, FailureClass};
use crate::request::{CallOpts, McpResponse};

fn request(method: &str) -> McpRequest {
    McpRequest::new(method, Default::default())
}

/// The mock's error is tower's `BoxError`: the layer turns its expiry into
/// whatever the inner error is made from, here a boxed [`Elapsed`].
fn elapsed(err: &BoxError) -> &Elapsed {
    err.downcast_ref::<Elapsed>().expect("the deadline's own error")
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
async fn default_deadline_ends_the_call() {
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
    assert_eq!(elapsed(&err), &Elapsed { method: "tools/call".into(), allowed: Duration::from_secs(10) });
    drop(send);
}

#[tokio::test(start_paused = true)]
async fn over_the_crates_error_expiry_is_class_deadline() {
    let inner =
        tower::service_fn(|_req: McpRequest| std::future::pending::<Result<McpResponse, crate::Error>>());
    let mut svc = Deadline::new(inner, Duration::from_secs(1));
    let mut fut = tokio_test::task::spawn(tower::Service::call(&mut svc, request("ping")));
    assert_pending!(fut.poll());
    tokio::time::advance(Duration::from_secs(1)).await;
    let err = assert_ready!(fut.poll()).unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    assert!(std::error::Error::source(&err).unwrap().is::<Elapsed>());
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
    assert_eq!(elapsed(&assert_ready!(fut.poll()).unwrap_err()).allowed, Duration::from_secs(1));
}

/// `CallOpts::with_timeout` counts from the moment the call enters the
/// layer, not from when the options were built.
#[tokio::test(start_paused = true)]
async fn a_timeout_counts_from_entering_the_layer() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(60)));
    let opts = CallOpts::default().with_timeout(Duration::from_secs(2));
    tokio::time::advance(Duration::from_secs(5)).await;
    let entered = Instant::now();
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(request("ping").opts(opts)));
    assert_pending!(fut.poll());
    let (req, _send) = handle.next_request().await.unwrap();
    assert_eq!(req.opts.deadline, Some(entered + Duration::from_secs(2)));
    assert_eq!(req.opts.timeout, None, "below the layer the deadline is absolute");
    tokio::time::advance(Duration::from_millis(1_999)).await;
    assert_pending!(fut.poll());
    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(assert_ready!(fut.poll()).is_err());
}

#[tokio::test(start_paused = true)]
async fn with_a_deadline_and_a_timeout_the_earlier_wins() {
    let now = Instant::now();
    let both =
        CallOpts::default().with_deadline(now + Duration::from_secs(3)).with_timeout(Duration::from_secs(5));
    assert_eq!(both.deadline_from(now, Duration::from_secs(60)), now + Duration::from_secs(3));
    let both =
        CallOpts::default().with_deadline(now + Duration::from_secs(9)).with_timeout(Duration::from_secs(5));
    assert_eq!(both.deadline_from(now, Duration::from_secs(60)), now + Duration::from_secs(5));
    assert_eq!(
        CallOpts::default().deadline_from(now, Duration::from_secs(60)),
        now + Duration::from_secs(60)
    );
}

/// Readiness passes through, as in tower's `Timeout`: the layer is ready
/// exactly when the inner service is.
#[tokio::test(start_paused = true)]
async fn readiness_is_the_inner_services() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(DeadlineLayer::new(Duration::from_secs(5)));
    handle.allow(0);
    assert_pending!(svc.poll_ready());
    handle.allow(1);
    assert_ready!(svc.poll_ready()).unwrap();
    handle.send_error(crate::Error::new(FailureClass::TransportClosed, "gone"));
    // A clone starts with nothing reserved, and sees the inner failure.
    let mut clone = svc.clone();
    let err = assert_ready!(clone.poll_ready()).unwrap_err();
    assert_eq!(err.downcast_ref::<crate::Error>().unwrap().class(), FailureClass::TransportClosed);
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

/// The layer needs nothing of its inner service but `Service<McpRequest>`:
/// not `Clone`, not the crate's response or error types.
#[tokio::test(start_paused = true)]
async fn any_inner_service_of_mcp_requests_will_do() {
    struct NotClone;
    impl Service<McpRequest> for NotClone {
        type Response = usize;
        type Error = BoxError;
        type Future = std::future::Ready<Result<usize, BoxError>>;
        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, req: McpRequest) -> Self::Future {
            std::future::ready(Ok(req.method.len()))
        }
    }
    use tower::{Layer, ServiceExt};
    let svc = DeadlineLayer::new(Duration::from_secs(1)).layer(NotClone);
    assert_eq!(svc.oneshot(request("ping")).await.unwrap(), 4);
}
