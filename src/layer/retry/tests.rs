use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tower::retry::budget::TpsBudget;
use tower::retry::Policy;

use super::*;
use crate::request::CallOpts;

const MS: Duration = Duration::from_millis(1);

fn policy(attempts: u32) -> SafeRetry {
    SafeRetry::new(&RetryPolicy { attempts, base_delay: 100 * MS, jitter: Some(0.0), ..Default::default() })
}

fn request(method: &str) -> McpRequest {
    McpRequest::new(method, Default::default())
}

fn failed(class: FailureClass) -> Result<McpResponse, Error> {
    Err(Error::new(class, "test"))
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
            let mut result = match o {
                Ok(r) => Ok(r.clone()),
                Err(e) => failed(e.class()),
            };
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
async fn requests_not_known_to_be_safe_are_neither_cloned_nor_retried() {
    let mut p = policy(4);
    for method in ["resources/subscribe", "logging/setLevel", "tasks/cancel", "initialize"] {
        assert!(p.clone_request(&request(method)).is_none(), "{method}");
        assert!(!is_retryable(method, FailureClass::TransportClosed), "{method}");
        assert!(!is_retryable(method, FailureClass::Indeterminate), "{method}");
    }
    assert!(SafeRetry::never().clone_request(&request("ping")).is_none());
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
    for method in ["resources/subscribe", "initialize"] {
        assert!(p.clone_request(&request(method)).is_none(), "{method}");
    }
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
