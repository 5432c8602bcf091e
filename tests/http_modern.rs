//! The 2026-07-28 era over streamable HTTP against a local mock server
//! (axum, loopback, a free port): stateless POSTs with the mirrored
//! headers, and a dropped call cancelled by closing its response stream.

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
    let router = Router::new().route("/mcp", any(endpoint)).with_state(mock);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}/mcp")
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
