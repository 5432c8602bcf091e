//! Issue 13, item 6: a streamable-HTTP server that forgets every session.
//!
//! The server issues a session id with every `initialize` and, once the
//! binding is up, answers 404 to every request carrying a session id. The
//! call must fail classified after exactly one renewal (one more
//! `initialize`), at once: before the fix, the retry layer backed off and
//! tried again, and the call took 6.6 s to fail. Time is paused, so any
//! backoff would show in full in the elapsed time measured.

use crate::support::http_server;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Default)]
struct Forgetful {
    /// Once set, every request with a session id is answered 404.
    forget: AtomicBool,
    initializes: AtomicUsize,
    refused: AtomicUsize,
}

async fn endpoint(State(s): State<Arc<Forgetful>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if headers.contains_key("mcp-session-id") && s.forget.load(Ordering::SeqCst) {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::NOT_FOUND, "session not found").into_response();
    }
    let id = body["id"].clone();
    let reply = |result: Value| {
        let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        ([(header::CONTENT_TYPE, "application/json")], text).into_response()
    };
    match body["method"].as_str() {
        Some("initialize") => {
            let n = s.initializes.fetch_add(1, Ordering::SeqCst) + 1;
            let mut rsp = reply(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "forgetful", "version": "1"},
            }));
            rsp.headers_mut().insert("mcp-session-id", HeaderValue::from_str(&format!("s-{n}")).unwrap());
            rsp
        }
        _ if id.is_null() => StatusCode::ACCEPTED.into_response(),
        Some("tools/list") => reply(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})),
        _ => reply(json!({"content": [{"type": "text", "text": "ok"}]})),
    }
}

async fn start() -> (Arc<Forgetful>, String) {
    let state = Arc::new(Forgetful::default());
    let url =
        http_server::serve_mcp(Router::new().route("/mcp", any(endpoint)).with_state(state.clone())).await;
    (state, url)
}

#[tokio::test(start_paused = true)]
async fn a_server_that_forgets_every_session_fails_the_call_fast_after_one_renewal() {
    let (server, url) = start().await;
    let factory = HttpBuilder::new(&url).listen(false).build().unwrap();
    let connect = Binding::connect(Definition::new("forgetful", factory), Handlers::default());
    let binding = tokio::time::timeout(Duration::from_secs(30), connect).await.unwrap().unwrap();
    let r = binding.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("ok"));

    server.forget.store(true, Ordering::SeqCst);
    let before = server.initializes.load(Ordering::SeqCst);
    for method in ["tools/call", "ping"] {
        let round = server.initializes.load(Ordering::SeqCst);
        let start = Instant::now();
        let call = async {
            match method {
                "ping" => binding.ping().await.map(drop),
                _ => binding.call_tool("echo", json!({}), CallOpts::default()).await.map(drop),
            }
        };
        let err = tokio::time::timeout(Duration::from_secs(120), call).await.expect("bounded").unwrap_err();
        let elapsed = start.elapsed();
        // The retry layer's first backoff is far above this; the deadline
        // (60 s) too.
        assert!(elapsed < Duration::from_millis(50), "{method}: failed after {elapsed:?}: {err}");
        assert_eq!(err.class(), FailureClass::TransportClosed, "{method}: {err}");
        assert!(
            std::error::Error::source(&err).is_some_and(|s| s.is::<mcp_stack::transport::SessionExpired>()),
            "{method}: {err} ({:?})",
            err.class()
        );
        let renewals = server.initializes.load(Ordering::SeqCst) - round;
        assert_eq!(renewals, 1, "{method}: exactly one renewal");
    }
    assert_eq!(server.initializes.load(Ordering::SeqCst) - before, 2);
    binding.close().await;
}
