//! Issue 22, item 5: session controls on streamable HTTP (the legacy era,
//! seed 001): the server's session id reported when it is assigned and when
//! it expires (redacted everywhere but `SessionId::expose`); a session
//! resumed by id (and, when the server no longer knows it, a new one); and
//! whether closing sends `DELETE`.

use crate::support::http_server;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use mcp_stack::handlers::Handlers;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{Binding, CallOpts, Definition, Event, FailureClass};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A server that knows the sessions in `known`: those it issued
/// (`sess-<n>-secret`) and any a test puts there.
#[derive(Default)]
struct Sessions {
    issued: AtomicUsize,
    known: Mutex<Vec<String>>,
    /// The session header of each `initialize`, and each `DELETE`'s.
    initialize_headers: Mutex<Vec<Option<String>>>,
    deletes: Mutex<Vec<String>>,
}

async fn endpoint(
    State(s): State<Arc<Sessions>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
    let known = |id: &str| s.known.lock().unwrap().iter().any(|k| k == id);
    if method == Method::DELETE {
        s.deletes.lock().unwrap().push(session.unwrap_or_default());
        return StatusCode::OK.into_response();
    }
    if method == Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    let is_initialize = body["method"] == "initialize";
    if is_initialize {
        s.initialize_headers.lock().unwrap().push(session.clone());
    }
    if let Some(session) = &session {
        if !known(session) {
            return (StatusCode::NOT_FOUND, "session not found").into_response();
        }
    }
    let reply = |result: Value| {
        let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        ([(header::CONTENT_TYPE, "application/json")], text).into_response()
    };
    match body["method"].as_str() {
        Some("initialize") => {
            let mut rsp = reply(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "sessions", "version": "1"},
            }));
            // A known session goes on (no new id); otherwise a new one.
            if session.is_none() {
                let n = s.issued.fetch_add(1, Ordering::SeqCst) + 1;
                let issued = format!("sess-{n}-secret");
                s.known.lock().unwrap().push(issued.clone());
                rsp.headers_mut().insert("mcp-session-id", HeaderValue::from_str(&issued).unwrap());
            }
            rsp
        }
        _ if id.is_null() => StatusCode::ACCEPTED.into_response(),
        Some("tools/list") => reply(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})),
        _ => reply(json!({"content": [{"type": "text", "text": "ok"}]})),
    }
}

async fn server() -> (Arc<Sessions>, String) {
    let state = Arc::new(Sessions::default());
    let router = Router::new().route("/mcp", any(endpoint)).with_state(state.clone());
    (state, http_server::serve_mcp(router).await)
}

/// Connects with `builder`, recording the session events.
async fn connect(builder: HttpBuilder) -> (Binding, Arc<Mutex<Vec<Event>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let handlers = Handlers::default().with_events(move |e: Event| {
        if matches!(
            e,
            Event::HttpSessionAssigned { .. }
                | Event::HttpSessionExpired { .. }
                | Event::SessionRenewed { .. }
        ) {
            seen.lock().unwrap().push(e);
        }
    });
    let definition = Definition::new("sessions", builder.no_proxy().listen(false).build().unwrap());
    (Binding::connect(definition, handlers).await.unwrap(), events)
}

/// The session events so far, as `assigned <id>`, `expired <id>`,
/// `renewed`; waits (bounded) until there are `n`.
async fn session_events(events: &Mutex<Vec<Event>>, n: usize) -> Vec<String> {
    for _ in 0..400 {
        if events.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    events
        .lock()
        .unwrap()
        .iter()
        .map(|e| match e {
            Event::HttpSessionAssigned { session, .. } => format!("assigned {}", session.expose()),
            Event::HttpSessionExpired { session, .. } => format!("expired {}", session.expose()),
            _ => "renewed".to_string(),
        })
        .collect()
}

#[tokio::test]
async fn the_session_id_is_reported_when_assigned_and_when_it_expires_and_never_shown() {
    let (state, url) = server().await;
    let (b, events) = connect(HttpBuilder::new(&url)).await;
    assert_eq!(session_events(&events, 1).await, ["assigned sess-1-secret"]);

    // Shown nowhere: Debug, JSON, messages.
    let event = events.lock().unwrap()[0].clone();
    let shown = format!("{event:?} {}", serde_json::to_string(&event).unwrap());
    assert!(!shown.contains("sess-1-secret") && shown.contains("<redacted>"), "{shown}");
    let e = mcp_stack::Error::new(FailureClass::RemoteHttp, "the server said sess-1-secret");
    assert!(!e.message().contains("sess-1-secret"), "{e}");

    // The server forgets it: expired, the handshake again, a new id.
    state.known.lock().unwrap().clear();
    let result = b.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("ok"));
    let seen = session_events(&events, 4).await;
    assert_eq!(
        seen,
        ["assigned sess-1-secret", "expired sess-1-secret", "assigned sess-2-secret", "renewed"]
    );
    b.close().await;
    assert_eq!(*state.deletes.lock().unwrap(), ["sess-2-secret"], "closing deletes the session by default");
}

#[tokio::test]
async fn a_session_is_resumed_by_id_and_a_forgotten_one_is_replaced() {
    let (state, url) = server().await;
    state.known.lock().unwrap().push("kept-session".into());

    // Known: initialize carries it, the server goes on in it, no new id.
    let (b, events) =
        connect(HttpBuilder::new(&url).session_id("kept-session").terminate_session_on_close(false)).await;
    b.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(*state.initialize_headers.lock().unwrap(), [Some("kept-session".to_string())]);
    assert_eq!(state.issued.load(Ordering::SeqCst), 0);
    b.close().await;
    assert!(session_events(&events, 0).await.is_empty());
    assert!(state.deletes.lock().unwrap().is_empty(), "kept for whoever resumes it");

    // Forgotten: reported, then a new session.
    let (b, events) = connect(HttpBuilder::new(&url).session_id("gone-session")).await;
    b.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    let headers = state.initialize_headers.lock().unwrap().clone();
    assert_eq!(headers[1..], [Some("gone-session".to_string()), None]);
    assert_eq!(session_events(&events, 2).await, ["expired gone-session", "assigned sess-1-secret"]);
    b.close().await;

    let e = HttpBuilder::new(&url).session_id("not visible\u{7f}").build().unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig);
}
