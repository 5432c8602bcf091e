//! Issue 22, item 3, over HTTP: a gateway's 429 or 503 is retried after its
//! `Retry-After`, within the call's deadline, and reported as an event; a
//! `Retry-After` past the deadline fails the call at once, saying so; a 500
//! is retried only for a tool the definition says is safe to run twice;
//! `retry_requests = false` turns it all off. (The rules one by one, with
//! the paused clock, are the retry layer's unit tests.)

use crate::support::http_server::serve_mcp;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use mcp_stack::handlers::Handlers;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{Binding, CallOpts, Definition, Event, FailureClass, RepeatableTools};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the server answers the next `tools/call`s with before it answers
/// them properly: a status and its `Retry-After`, one per call.
type Script = Arc<Mutex<Vec<(u16, Option<&'static str>)>>>;

async fn mcp(State(script): State<Script>, Json(body): Json<Value>) -> Response {
    let Some(id) = body.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let result = match body["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "behind-a-gateway", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [
            {"name": "search", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": true}},
            {"name": "send", "inputSchema": {"type": "object"}},
        ]}),
        Some("tools/call") => {
            let next = {
                let mut script = script.lock().unwrap();
                (!script.is_empty()).then(|| script.remove(0))
            };
            if let Some((status, after)) = next {
                let mut response = (StatusCode::from_u16(status).unwrap(), "busy").into_response();
                if let Some(after) = after {
                    response.headers_mut().insert("retry-after", after.parse().unwrap());
                }
                return response;
            }
            json!({"content": [{"type": "text", "text": "done"}]})
        }
        _ => {
            let error = json!({"code": -32601, "message": "Method not found"});
            return Json(json!({"jsonrpc": "2.0", "id": id, "error": error})).into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// A binding to a server that answers the first `tools/call`s as `script`
/// says; `configure` adjusts the definition.
async fn binding(
    script: Vec<(u16, Option<&'static str>)>,
    configure: impl FnOnce(Definition) -> Definition,
) -> (Binding, Script, Arc<Mutex<Vec<Event>>>) {
    let script: Script = Arc::new(Mutex::new(script));
    let router = Router::new()
        .route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
        .with_state(script.clone());
    let url = serve_mcp(router).await;
    let mut definition =
        Definition::new("gw", HttpBuilder::new(&url).no_proxy().listen(false).build().unwrap());
    definition = configure(definition);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let handlers = Handlers::default().with_events(move |e: Event| seen.lock().unwrap().push(e));
    let binding = Binding::connect(definition, handlers).await.unwrap();
    (binding, script, events)
}

fn retried(events: &Mutex<Vec<Event>>) -> Vec<(String, u32, Option<u16>, u64)> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::RequestRetried { method, attempt, http_status, delay_ms, .. } => {
                Some((method.clone(), *attempt, *http_status, *delay_ms))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_503_and_a_429_are_retried_after_their_retry_after_and_reported() {
    let (b, script, events) = binding(vec![(503, Some("0")), (429, Some("0"))], |d| d).await;
    let result = b.call_tool("send", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    assert!(script.lock().unwrap().is_empty());
    // The event handler runs on its own task: wait (bounded) for both.
    for _ in 0..200 {
        if retried(&events).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let expected =
        vec![("tools/call".to_string(), 1, Some(503), 0), ("tools/call".to_string(), 2, Some(429), 0)];
    assert_eq!(retried(&events), expected);
    b.close().await;
}

#[tokio::test]
async fn a_retry_after_past_the_deadline_fails_the_call_at_once_saying_so() {
    let (b, _, _) = binding(vec![(429, Some("120"))], |d| d).await;
    let started = Instant::now();
    let opts = CallOpts::default().with_timeout(Duration::from_secs(20));
    let e = b.call_tool("send", json!({}), opts).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "it waited: {:?}", started.elapsed());
    assert_eq!(e.class(), FailureClass::RemoteHttp, "{e}");
    assert_eq!(e.http_status(), Some(429));
    assert_eq!(e.retry_after(), Some(Duration::from_secs(120)));
    assert!(e.message().contains("the server asked to wait 120 s"), "{e}");
    let report = serde_json::to_value(e.report()).unwrap();
    assert_eq!(report["retryAfterMs"], 120_000, "{report}");
    b.close().await;
}

#[tokio::test]
async fn a_500_is_retried_only_for_a_tool_safe_to_run_twice() {
    // Neither tool is safe by default.
    let (b, script, _) = binding(vec![(500, None), (500, None)], |d| d).await;
    for tool in ["send", "search"] {
        let e = b.call_tool(tool, json!({}), CallOpts::default()).await.unwrap_err();
        assert_eq!(e.http_status(), Some(500), "{tool}: {e}");
    }
    assert!(script.lock().unwrap().is_empty());
    b.close().await;

    // Trusting the annotations: `search` (idempotentHint) is retried,
    // `send` is not; `send` named explicitly is.
    let trust = RepeatableTools::default().with_trust_idempotent_hint(true);
    let (b, script, _) = binding(vec![(500, None), (500, None)], |d| d.with_repeatable_tools(trust)).await;
    let result = b.call_tool("search", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    assert_eq!(script.lock().unwrap().len(), 0, "search took the 500 and was retried");
    b.close().await;

    let named = RepeatableTools::default().with_names(["send"]);
    let (b, _, _) = binding(vec![(502, None)], |d| d.with_repeatable_tools(named)).await;
    let result = b.call_tool("send", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done"));
    b.close().await;
}

#[tokio::test]
async fn retry_requests_off_is_one_try() {
    let (b, script, events) = binding(vec![(503, Some("0"))], |d| d.with_retry_requests(false)).await;
    let e = b.call_tool("send", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.http_status(), Some(503), "{e}");
    assert!(script.lock().unwrap().is_empty());
    assert!(retried(&events).is_empty());
    b.close().await;
}
