use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_test::{assert_pending, assert_ready};
use tower_layer::Layer;
use tower_test::mock;

use super::router::PROGRESS_QUEUE;
use super::*;
use crate::request::{CallOpts, McpResponse, ProgressUpdate as Report};

fn progress_params(token: &str, n: f64) -> serde_json::Value {
    json!({"progressToken": token, "progress": n, "total": 10.0, "message": "step\nwith a newline"})
}

#[tokio::test]
async fn no_sink_means_no_token() {
    let router = ProgressRouter::new("b");
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(ProgressLayer::new(router.clone()));
    assert_ready!(svc.poll_ready()).unwrap();
    let fut = svc.call(McpRequest::new("tools/call", Default::default()));
    let (req, send) = handle.next_request().await.unwrap();
    assert!(!req.params().contains_key("_meta"));
    assert!(router.is_empty());
    send.send_response(McpResponse::new(json!({})));
    fut.await.unwrap();
}

#[tokio::test]
async fn reports_reach_only_their_call_and_stop_after_the_reply() {
    let router = ProgressRouter::new("b");
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(ProgressLayer::new(router.clone()));
    let seen_a = Arc::new(Mutex::new(Vec::<Report>::new()));
    let seen_b = Arc::new(Mutex::new(Vec::<Report>::new()));

    let sink = |seen: &Arc<Mutex<Vec<Report>>>| {
        let seen = seen.clone();
        CallOpts::default().with_progress(move |p| seen.lock().unwrap().push(p))
    };
    assert_ready!(svc.poll_ready()).unwrap();
    let fut_a = svc.call(McpRequest::new("tools/call", Default::default()).opts(sink(&seen_a)));
    assert_ready!(svc.poll_ready()).unwrap();
    let fut_b = svc.call(McpRequest::new("tools/call", Default::default()).opts(sink(&seen_b)));
    let (req_a, send_a) = handle.next_request().await.unwrap();
    let (req_b, send_b) = handle.next_request().await.unwrap();
    let token_a = req_a.params()["_meta"]["progressToken"].as_str().unwrap().to_string();
    let token_b = req_b.params()["_meta"]["progressToken"].as_str().unwrap().to_string();
    assert_ne!(token_a, token_b);
    assert_eq!(router.len(), 2);

    assert!(router.route(Some(&progress_params(&token_a, 1.0))).is_some());
    assert!(router.route(Some(&progress_params(&token_a, 2.0))).is_some());
    send_a.send_response(McpResponse::new(json!({})));
    fut_a.await.unwrap();
    // After the reply, the route is gone and late reports are dropped.
    assert!(router.route(Some(&progress_params(&token_a, 3.0))).is_none());
    assert_eq!(router.unrouted(), 1);
    assert_eq!(router.len(), 1);

    tokio::time::sleep(Duration::from_millis(10)).await;
    let a = seen_a.lock().unwrap().clone();
    assert_eq!(a.iter().map(|p| p.progress).collect::<Vec<_>>(), vec![1.0, 2.0]);
    assert_eq!(a[0].message.as_deref(), Some("step with a newline"));
    assert_eq!(a[0].total, Some(10.0));
    assert!(seen_b.lock().unwrap().is_empty());

    drop(fut_b);
    drop(send_b);
    assert!(router.is_empty());
}

#[tokio::test]
async fn routes_do_not_grow_over_ten_thousand_calls() {
    let router = ProgressRouter::new("b");
    let svc =
        tower::service_fn(|_req: McpRequest| async { Ok::<_, crate::Error>(McpResponse::new(json!({}))) });
    let mut svc = ProgressLayer::new(router.clone()).layer(svc);
    for i in 0..10_000 {
        let opts = CallOpts::default().with_progress(|_| {});
        let fut =
            tower::Service::call(&mut svc, McpRequest::new("tools/call", Default::default()).opts(opts));
        if i % 2 == 0 {
            fut.await.unwrap();
        } else {
            drop(fut); // abandoned calls release their route too
        }
    }
    assert!(router.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_sink_never_blocks_routing() {
    let router = ProgressRouter::new("b");
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(ProgressLayer::new(router.clone()));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let delivered = Arc::new(Mutex::new(0usize));
    let opts = {
        let delivered = delivered.clone();
        let gate = gate.clone();
        CallOpts::default().with_progress(move |_| {
            // A sink that blocks its thread until released.
            while gate.try_acquire().is_err() {
                std::thread::sleep(Duration::from_millis(1));
            }
            *delivered.lock().unwrap() += 1;
        })
    };
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut =
        tokio_test::task::spawn(svc.call(McpRequest::new("tools/call", Default::default()).opts(opts)));
    assert_pending!(fut.poll());
    let (req, send) = handle.next_request().await.unwrap();
    let token = req.params()["_meta"]["progressToken"].as_str().unwrap().to_string();

    // Routing 1,000 reports returns at once even though the sink is stuck.
    let mut accepted = 0;
    for i in 0..1_000 {
        if router.route(Some(&progress_params(&token, i as f64))).is_some() {
            accepted += 1;
        }
    }
    assert!(accepted <= PROGRESS_QUEUE + 1, "accepted {accepted}");
    assert_eq!(router.dropped(), 1_000 - accepted as u64);
    gate.add_permits(10_000);
    send.send_response(McpResponse::new(json!({})));
    // The reply waits for the reports accepted before it to be delivered
    // (issue 43, item 16): then it comes, with all of them delivered.
    tokio::time::timeout(Duration::from_secs(30), fut).await.expect("the reply comes").unwrap();
    assert_eq!(*delivered.lock().unwrap(), accepted, "every accepted report came before the reply");
}
