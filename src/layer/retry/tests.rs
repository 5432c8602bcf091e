use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tower::retry::budget::TpsBudget;
use tower::retry::Policy;

use super::*;
use crate::request::CallOpts;

const MS: Duration = Duration::from_millis(1);

fn policy(attempts: u32) -> SafeRetry {
    SafeRetry::new(&RetryPolicy::default().with_attempts(attempts).with_base_delay(100 * MS).with_jitter(0.0))
}

fn request(method: &str) -> McpRequest {
    McpRequest::new(method, Default::default())
}

fn failed(class: FailureClass) -> Result<McpResponse, Error> {
    Err(Error::new(class, "test"))
}

/// An HTTP failure with `status` (and the server's `Retry-After`).
fn http(status: u16, retry_after: Option<Duration>) -> Result<McpResponse, Error> {
    let e = Error::new(
        crate::transport::http::status_class(reqwest::StatusCode::from_u16(status).unwrap()),
        "http",
    )
    .with_http_status(status);
    Err(match retry_after {
        Some(after) => e.with_retry_after(after),
        None => e,
    })
}

/// A copy of an outcome (errors are not `Clone`: their source is not).
fn copy(o: &Result<McpResponse, Error>) -> Result<McpResponse, Error> {
    match o {
        Ok(r) => Ok(r.clone()),
        Err(e) => {
            let mut copy = Error::new(e.class(), e.message());
            if let Some(status) = e.http_status() {
                copy = copy.with_http_status(status);
            }
            if let Some(after) = e.retry_after() {
                copy = copy.with_retry_after(after);
            }
            Err(copy)
        }
    }
}

/// Runs one session of `p` (as tower does: a clone per request) and reports
/// after which outcomes it asked to retry, and with what delay.
fn delays(
    p: &SafeRetry,
    req: &mut McpRequest,
    outcomes: &[Result<McpResponse, Error>],
) -> Vec<Option<Duration>> {
    let mut session = p.clone();
    let start = Instant::now();
    outcomes
        .iter()
        .map(|o| {
            let mut result = copy(o);
            session.retry(req, &mut result).map(|sleep| sleep.deadline() - start)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn safe_requests_are_retried_after_a_loss_with_the_policys_delays() {
    let p = policy(4);
    for method in ["ping", "tools/list", "prompts/list", "prompts/get", "resources/list", "resources/read"]
        .into_iter()
        .chain(["resources/templates/list", "completion/complete"])
    {
        assert!(is_safe_to_repeat(method));
        let lost = [failed(FailureClass::Indeterminate), failed(FailureClass::TransportClosed)];
        let got = delays(&p, &mut request(method), &lost);
        assert_eq!(got, [Some(100 * MS), Some(200 * MS)], "{method}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_is_retried_only_if_it_never_left_the_client() {
    let p = policy(4);
    let mut call = request("tools/call");
    assert!(p.clone().clone_request(&call).is_some());
    assert_eq!(delays(&p, &mut call, &[failed(FailureClass::TransportClosed)]), [Some(100 * MS)]);
    // Sent, then the connection was lost: it may have run. Never replayed.
    assert_eq!(delays(&p, &mut call, &[failed(FailureClass::Indeterminate)]), [None]);
    // Not sent on the first try, lost after sending on the second: stop there.
    let got =
        delays(&p, &mut call, &[failed(FailureClass::TransportClosed), failed(FailureClass::Indeterminate)]);
    assert_eq!(got, [Some(100 * MS), None]);
}

#[tokio::test(start_paused = true)]
async fn other_outcomes_are_final() {
    let p = policy(4);
    let finals = [
        FailureClass::Deadline,
        FailureClass::Shutdown,
        FailureClass::Cancelled,
        FailureClass::RemoteToolError,
        FailureClass::ServerProtocol,
        FailureClass::NotFound,
        FailureClass::LimitExceeded,
        FailureClass::StartupTimeout,
    ];
    for class in finals {
        assert_eq!(delays(&p, &mut request("tools/list"), &[failed(class)]), [None], "{class}");
    }
    assert_eq!(delays(&p, &mut request("ping"), &[Ok(McpResponse::new(serde_json::Value::Null))]), [None]);
}

#[tokio::test(start_paused = true)]
async fn requests_not_known_to_be_safe_are_retried_only_when_refused_unprocessed() {
    let mut p = policy(4);
    let error = |r: Result<McpResponse, Error>| r.unwrap_err();
    for method in ["resources/subscribe", "logging/setLevel", "tasks/cancel", "initialize"] {
        // Kept: a 429 or 503 may refuse it unprocessed.
        assert!(p.clone_request(&request(method)).is_some(), "{method}");
        assert!(!is_retryable(&request(method), &error(failed(FailureClass::TransportClosed))), "{method}");
        assert!(!is_retryable(&request(method), &error(failed(FailureClass::Indeterminate))), "{method}");
        assert!(!is_retryable(&request(method), &error(http(500, None))), "{method}");
        assert!(is_retryable(&request(method), &error(http(429, None))), "{method}");
        assert!(is_retryable(&request(method), &error(http(503, None))), "{method}");
    }
    assert!(SafeRetry::never().clone_request(&request("ping")).is_none());
}

#[tokio::test(start_paused = true)]
async fn http_failures_that_may_pass_are_retried_by_what_may_have_run() {
    let p = policy(4);
    let mut call = request("tools/call");
    let mut marked = request("tools/call");
    marked.extensions.insert(Idempotent);
    for status in [408, 500, 502, 504] {
        // It may have run: a read is repeated, a tool call only when marked.
        assert_eq!(
            delays(&p, &mut request("tools/list"), &[http(status, None)]),
            [Some(100 * MS)],
            "{status}"
        );
        assert_eq!(delays(&p, &mut call, &[http(status, None)]), [None], "{status}");
        assert_eq!(delays(&p, &mut marked, &[http(status, None)]), [Some(100 * MS)], "{status}");
    }
    // A lost reply too.
    assert_eq!(delays(&p, &mut marked, &[failed(FailureClass::Indeterminate)]), [Some(100 * MS)]);
    // Refused unprocessed: every request, the tool call included.
    for status in [429, 503] {
        assert_eq!(delays(&p, &mut call, &[http(status, None)]), [Some(100 * MS)], "{status}");
    }
    // Other statuses are final, and so are JSON-RPC errors and tool errors.
    for status in [400, 401, 403, 404, 409, 413] {
        assert_eq!(delays(&p, &mut marked, &[http(status, None)]), [None], "{status}");
        assert_eq!(delays(&p, &mut request("tools/list"), &[http(status, None)]), [None], "{status}");
    }
    for class in [FailureClass::RemoteToolError, FailureClass::ServerProtocol] {
        assert_eq!(delays(&p, &mut marked, &[failed(class)]), [None], "{class}");
    }
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_waited_exactly_and_one_past_the_deadline_fails_at_once_saying_so() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Mutex;
    use tower::{service_fn, Layer, ServiceExt};

    let notices = Arc::new(Mutex::new(Vec::new()));
    let seen = notices.clone();
    let p = policy(4).on_retry(Arc::new(move |n: RetryNotice| seen.lock().unwrap().push(n)));
    let tries = Arc::new(AtomicU32::new(0));
    let server = |after: u64, tries: Arc<AtomicU32>| {
        service_fn(move |_req: McpRequest| {
            let n = tries.fetch_add(1, Ordering::SeqCst);
            async move {
                match n {
                    0 => http(429, Some(Duration::from_secs(after))),
                    _ => Ok(McpResponse::new(serde_json::json!({ "try": n }))),
                }
            }
        })
    };
    let opts = || CallOpts::default().with_timeout(Duration::from_secs(30));
    let deadline = |req: McpRequest| {
        let at = req.opts.deadline_from(Instant::now(), Duration::from_secs(30));
        req.opts(CallOpts::default().with_deadline(at))
    };

    // Retry-After: 2, within a 30 s deadline: the second try goes 2 s later,
    // not after the backoff's 100 ms.
    let svc = tower::retry::RetryLayer::new(p.clone()).layer(server(2, tries.clone()));
    let start = Instant::now();
    let call =
        deadline(McpRequest::with_value("tools/call", serde_json::json!({ "name": "echo" })).opts(opts()));
    let rsp = svc.oneshot(call).await.unwrap();
    assert_eq!(rsp.result["try"], 1);
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    let notice = notices.lock().unwrap().pop().expect("the retry was reported");
    assert_eq!((notice.method.as_str(), notice.attempt, notice.http_status), ("tools/call", 1, Some(429)));
    assert_eq!(notice.delay, Duration::from_secs(2));

    // Retry-After: 120 with 30 s left: fails now, with the class, the status
    // and the server's delay in the message.
    tries.store(0, Ordering::SeqCst);
    let svc = tower::retry::RetryLayer::new(p).layer(server(120, tries.clone()));
    let start = Instant::now();
    let call =
        deadline(McpRequest::with_value("tools/call", serde_json::json!({ "name": "echo" })).opts(opts()));
    let e = svc.oneshot(call).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::ZERO, "no sleeping into the deadline");
    assert_eq!(
        (e.class(), e.http_status(), e.retry_after()),
        (FailureClass::RemoteHttp, Some(429), Some(Duration::from_secs(120)))
    );
    assert!(e.message().contains("the server asked to wait 120 s"), "{e}");
    assert_eq!(tries.load(Ordering::SeqCst), 1);
    assert!(notices.lock().unwrap().is_empty(), "no retry was made");
}

#[tokio::test(start_paused = true)]
async fn attempts_cap_the_tries_first_included() {
    let p = policy(3);
    let lost: Vec<_> = (0..3).map(|_| failed(FailureClass::Indeterminate)).collect();
    assert_eq!(delays(&p, &mut request("ping"), &lost), [Some(100 * MS), Some(200 * MS), None]);
    // Each request starts afresh.
    assert_eq!(delays(&p, &mut request("ping"), &lost[..1]), [Some(100 * MS)]);
    assert_eq!(delays(&SafeRetry::never(), &mut request("ping"), &lost[..1]), [None]);
}

#[tokio::test(start_paused = true)]
async fn never_sleeps_past_the_requests_deadline() {
    let p = policy(5);
    let start = Instant::now();
    let mut req = request("ping").opts(CallOpts::default().with_deadline(start + 250 * MS));
    let mut session = p.clone();
    let first = session.retry(&mut req, &mut failed(FailureClass::Indeterminate)).expect("a retry");
    assert_eq!(first.deadline(), start + 100 * MS);
    first.await;
    // The next delay (200 ms) would end at 300 ms, past the deadline at 250.
    assert!(session.retry(&mut req, &mut failed(FailureClass::Indeterminate)).is_none());

    // A delay that would end exactly at the deadline is not started either.
    let mut req = request("ping").opts(CallOpts::default().with_deadline(Instant::now() + 100 * MS));
    assert!(p.clone().retry(&mut req, &mut failed(FailureClass::Indeterminate)).is_none());
}

#[tokio::test(start_paused = true)]
async fn the_shared_budget_bounds_retries_across_requests() {
    // One retry per request paid in, no reserve.
    let budget = Arc::new(TpsBudget::new(Duration::from_secs(1), 0, 1.0));
    let p = policy(10).with_budget(budget);
    let lost: Vec<_> = (0..3).map(|_| failed(FailureClass::Indeterminate)).collect();
    assert_eq!(delays(&p, &mut request("ping"), &lost), [Some(100 * MS), None, None]);
    assert_eq!(delays(&p, &mut request("tools/list"), &lost), [Some(100 * MS), None, None]);
}

#[tokio::test(start_paused = true)]
async fn a_kept_request_shares_its_params() {
    let mut p = policy(4);
    let call =
        McpRequest::with_value("tools/call", serde_json::json!({ "name": "echo", "arguments": { "x": 1 } }));
    let kept = p.clone_request(&call).expect("a tool call may be retried");
    assert!(std::ptr::eq(kept.params(), call.params()), "kept by reference, not copied");
    assert!(SafeRetry::never().clone_request(&request("ping")).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_tool_call_that_never_left_is_sent_again_through_tower_retry() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use tower::{service_fn, Layer, ServiceExt};

    let tries = Arc::new(AtomicU32::new(0));
    let seen = tries.clone();
    let inner = service_fn(move |req: McpRequest| {
        let n = seen.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(req.params()["name"], "echo", "the same request, params included");
            match n {
                0 => Err(Error::new(FailureClass::TransportClosed, "not sent")),
                _ => Ok(McpResponse::new(serde_json::json!({ "try": n }))),
            }
        }
    });
    let svc = tower::retry::RetryLayer::new(policy(4)).layer(inner);
    let call = McpRequest::with_value("tools/call", serde_json::json!({ "name": "echo" }));
    let rsp = svc.oneshot(call).await.unwrap();
    assert_eq!(rsp.result["try"], 1);
    assert_eq!(tries.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn the_default_budget_caps_retries_at_a_fifth_of_requests_plus_its_floor() {
    // Every request fails every try: without a budget, each would be tried
    // three times.
    let p = policy(3);
    let lost: Vec<_> = (0..3).map(|_| failed(FailureClass::Indeterminate)).collect();
    let retries: usize =
        (0..1_000).map(|_| delays(&p, &mut request("ping"), &lost).iter().flatten().count()).sum();
    // A fifth of 1,000 requests, plus the floor's hundred (ten seconds of ten
    // a second; the clock stands still).
    assert!((299..=300).contains(&retries), "{retries} retries");
}
