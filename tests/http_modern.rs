//! The 2026-07-28 era over streamable HTTP against a local mock server
//! (axum, loopback, a free port): stateless POSTs with the mirrored
//! headers, and a dropped call cancelled by closing its response stream.

mod http_server;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method};
use axum::response::Response;
use axum::routing::any;
use axum::Router;
use bytes::Bytes;
use mcp_stack::era::ProtocolChoice;
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::{Binding, CallOpts, Definition, FailureClass, Handlers};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(20);

#[derive(Clone, Default)]
struct Mock {
    seen: Arc<Mutex<Vec<(Method, HeaderMap, Value)>>>,
    dropped: Arc<AtomicBool>,
}

impl Mock {
    fn posts(&self, method: &str) -> Vec<(HeaderMap, Value)> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(_, _, b)| b["method"] == method)
            .map(|(_, h, b)| (h.clone(), b.clone()))
            .collect()
    }
}

/// Sets `flag` when the response body is dropped (the client closed it).
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn json_response(value: Value) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .unwrap()
}

async fn endpoint(State(mock): State<Mock>, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    mock.seen.lock().unwrap().push((method.clone(), headers, body.clone()));
    if method != Method::POST {
        return Response::builder().status(405).body(Body::empty()).unwrap();
    }
    let id = body["id"].clone();
    let result = |r: Value| json_response(json!({ "jsonrpc": "2.0", "id": id, "result": r }));
    match body["method"].as_str().unwrap_or_default() {
        "server/discover" => result(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "http-modern", "version": "1" }
        })),
        "tools/list" => result(json!({ "tools": [
            { "name": "hold", "inputSchema": { "type": "object" } },
            { "name": "where", "inputSchema": { "type": "object", "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" } } } },
            // Invalid: a header name with a space.
            { "name": "bad", "inputSchema": { "type": "object", "properties": {
                "region": { "type": "string", "x-mcp-header": "My Region" } } } }
        ]})),
        "tools/call" if body["params"]["name"] == "hold" => {
            // An SSE stream that never answers; its end is recorded.
            let flag = DropFlag(mock.dropped.clone());
            let stream = futures_util::stream::unfold(flag, |flag| async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((Ok::<_, std::io::Error>(Bytes::from(": keep-alive\n\n")), flag))
            });
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        "tools/call" => result(json!({ "content": [ { "type": "text", "text": "ok" } ] })),
        _ => result(json!({})),
    }
}

async fn serve(mock: Mock) -> String {
    http_server::serve_mcp(Router::new().route("/mcp", any(endpoint)).with_state(mock)).await
}

async fn eventually(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < LIMIT, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn stateless_posts_carry_the_mirrored_headers_and_a_dropped_call_closes_its_stream() {
    let mock = Mock::default();
    let url = serve(mock.clone()).await;
    let mut definition = Definition::new("httpmodern", StreamableHttpFactory::new(&url).unwrap());
    definition.protocol = ProtocolChoice::Auto;
    let binding = tokio::time::timeout(LIMIT, Binding::connect(definition, Handlers::default()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(binding.session().protocol_version, "2026-07-28");
    // An invalid x-mcp-header annotation drops its tool, and only it, with
    // a warning.
    let catalog = binding.catalog();
    let names: Vec<&str> = catalog.tools.iter().map(|t| t.raw_name.as_str()).collect();
    assert_eq!(names, ["hold", "where"]);
    let refused = |w: &String| w.starts_with("tools: refused tool") && w.contains("bad");
    assert!(catalog.warnings.iter().any(refused), "{:?}", catalog.warnings);
    binding.call_tool("where", json!({ "region": " eu " }), CallOpts::default()).await.unwrap();

    let opts = CallOpts::default().with_timeout(Duration::from_millis(300));
    let e = binding.call_tool("hold", json!({}), opts).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::Deadline, "{e}");
    eventually("the stream of the dropped call closed", || mock.dropped.load(Ordering::SeqCst)).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(mock.posts("notifications/cancelled").is_empty(), "no cancellation notification over HTTP");

    let seen = mock.seen.lock().unwrap().clone();
    assert!(seen.iter().all(|(m, _, _)| m == Method::POST), "no GET stream, no DELETE");
    for (_, headers, body) in &seen {
        assert!(headers.get("mcp-session-id").is_none(), "stateless: {body}");
        assert_eq!(headers["mcp-protocol-version"], "2026-07-28", "{body}");
        assert_eq!(headers["mcp-method"], body["method"].as_str().unwrap(), "{body}");
    }
    let (headers, _) = mock.posts("tools/call").remove(0);
    assert_eq!(headers["mcp-name"], "where");
    assert_eq!(headers["mcp-param-region"], "=?base64?IGV1IA==?=");
    binding.close().await;
    assert!(mock.seen.lock().unwrap().iter().all(|(m, _, _)| m == Method::POST), "no DELETE on close");
}

/// What a scripted HTTP server answers a POST: (status, JSON body).
type Answer = dyn Fn(&Value, usize) -> (u16, Value) + Send + Sync;

/// A server whose every POST is answered by `answer` (given the body and how
/// many POSTs of that method came before); records the methods posted.
async fn scripted(
    answer: impl Fn(&Value, usize) -> (u16, Value) + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let methods = Arc::new(Mutex::new(Vec::<String>::new()));
    let answer: Arc<Answer> = Arc::new(answer);
    let record = methods.clone();
    let handler = move |method: Method, body: Bytes| {
        let answer = answer.clone();
        let record = record.clone();
        async move {
            if method != Method::POST {
                return Response::builder().status(405).body(Body::empty()).unwrap();
            }
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let name = body["method"].as_str().unwrap_or_default().to_string();
            let before = {
                let mut seen = record.lock().unwrap();
                let before = seen.iter().filter(|m| **m == name).count();
                seen.push(name);
                before
            };
            if body.get("id").is_none() {
                return Response::builder().status(202).body(Body::empty()).unwrap();
            }
            let (status, mut reply) = answer(&body, before);
            if reply.get("jsonrpc").is_some() && reply.get("id").is_none() {
                reply["id"] = body["id"].clone();
            }
            Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, "application/json")
                .header("mcp-session-id", "s-1")
                .body(Body::from(reply.to_string()))
                .unwrap()
        }
    };
    (http_server::serve_mcp(Router::new().route("/mcp", any(handler))).await, methods)
}

fn ok(result: Value) -> (u16, Value) {
    (200, json!({ "jsonrpc": "2.0", "result": result }))
}

fn common(body: &Value) -> (u16, Value) {
    match body["method"].as_str().unwrap_or_default() {
        "initialize" => ok(json!({ "protocolVersion": "2025-11-25", "capabilities": { "tools": {} },
            "serverInfo": { "name": "legacy-http", "version": "1" } })),
        "tools/list" => ok(json!({ "tools": [] })),
        _ => ok(json!({})),
    }
}

async fn connect(url: &str) -> Result<Binding, mcp_stack::Error> {
    let definition = Definition::new("h", StreamableHttpFactory::new(url).unwrap());
    tokio::time::timeout(LIMIT, Binding::connect(definition, Handlers::default())).await.unwrap()
}

#[tokio::test]
async fn a_400_with_a_modern_error_corrects_the_version_and_one_without_goes_legacy() {
    // -32022 in a 400's body: the same server, asked again with a version
    // it lists.
    let (url, methods) = scripted(|body, before| match (body["method"].as_str(), before) {
        (Some("server/discover"), 0) => (
            400,
            json!({ "jsonrpc": "2.0", "error": { "code": -32022,
            "message": "Unsupported protocol version", "data": { "supported": ["2026-07-28"] } } }),
        ),
        (Some("server/discover"), _) => ok(json!({ "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {} }, "serverInfo": { "name": "modern-http", "version": "1" } })),
        _ => common(body),
    })
    .await;
    let b = connect(&url).await.expect("connect");
    assert_eq!(b.session().protocol_version, "2026-07-28");
    let posted = methods.lock().unwrap().clone();
    assert_eq!(posted.iter().filter(|m| *m == "server/discover").count(), 2, "{posted:?}");
    assert!(!posted.iter().any(|m| m == "initialize"), "a modern error never falls back: {posted:?}");
    b.close().await;

    // A legacy server's 400 (no session yet), a JSON-RPC error of its own:
    // legacy, initialize on the same connection.
    let (url, methods) = scripted(|body, _| match body["method"].as_str() {
        Some("server/discover") => (
            400,
            json!({ "jsonrpc": "2.0", "id": null,
            "error": { "code": -32000, "message": "Bad Request: No valid session ID provided" } }),
        ),
        _ => common(body),
    })
    .await;
    let b = connect(&url).await.expect("connect");
    assert_eq!(b.session().protocol_version, "2025-11-25");
    assert_eq!(&methods.lock().unwrap()[..2], ["server/discover", "initialize"]);
    b.close().await;

    // 404 and 405 without a modern body: legacy too.
    for status in [404u16, 405] {
        let (url, _methods) = scripted(move |body, _| match body["method"].as_str() {
            Some("server/discover") => (status, json!({ "error": "not here" })),
            _ => common(body),
        })
        .await;
        let b = connect(&url).await.expect("connect");
        assert_eq!(b.session().protocol_version, "2025-11-25", "{status}");
        b.close().await;
    }
}
