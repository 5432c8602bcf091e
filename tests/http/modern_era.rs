//! The 2026-07-28 era over streamable HTTP against a local mock server
//! (axum, loopback, a free port): stateless POSTs with the mirrored
//! headers, a dropped call cancelled by closing its response stream, a
//! stream that delivers no response but its own request's, and server
//! requests outside `input_required` dropped unanswered.

use crate::support::http_server;
use crate::support::recorded_events::Events;
use crate::support::server_requests::{server_requests, Asked};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method};
use axum::response::Response;
use axum::routing::any;
use axum::Router;
use bytes::Bytes;
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::ProtocolChoice;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Event, FailureClass};
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
    definition = definition.with_protocol(ProtocolChoice::Auto);
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

// ---- streams own their responses; no server requests outside MRTR ----------

/// How many messages a misbehaving server floods a stream with.
const FLOOD: usize = 100;
/// The warnings a flood of [`FLOOD`] gives: the 1st, 2nd, 4th, … 64th.
const FLOOD_WARNINGS: usize = FLOOD.ilog2() as usize + 1;

/// An SSE response, and the sender that writes its events; the stream ends
/// when the sender is dropped.
fn sse() -> (tokio::sync::mpsc::UnboundedSender<Value>, Response) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((Ok::<_, std::io::Error>(Bytes::from(format!("data: {event}\n\n"))), rx))
    });
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(events))
        .unwrap();
    (tx, response)
}

fn text_result(text: &str) -> Value {
    json!({ "content": [ { "type": "text", "text": text } ] })
}

/// A 2026-07-28 server whose listen stream (`on_listen`), or else the
/// reply of the `noisy` tool call, carries [`FLOOD`] responses to the
/// pending `slow` call, forged to say "forged". `slow` itself answers "real"
/// once the test releases it.
#[derive(Clone)]
struct Strays {
    on_listen: bool,
    /// The JSON-RPC id of the `slow` call, once posted.
    slow: tokio::sync::watch::Sender<Option<Value>>,
    release: Arc<tokio::sync::Notify>,
}

impl Strays {
    fn new(on_listen: bool) -> Self {
        Strays { on_listen, slow: tokio::sync::watch::channel(None).0, release: Default::default() }
    }

    /// Writes the forged responses to `slow` on `stream`, once `slow` was
    /// posted.
    async fn forge(&self, stream: &tokio::sync::mpsc::UnboundedSender<Value>) {
        let id = self.slow.subscribe().wait_for(Option::is_some).await.unwrap().clone().unwrap();
        for _ in 0..FLOOD {
            let _ = stream.send(json!({ "jsonrpc": "2.0", "id": id, "result": text_result("forged") }));
        }
    }
}

async fn strays_endpoint(State(server): State<Strays>, method: Method, body: Bytes) -> Response {
    if method != Method::POST {
        return Response::builder().status(405).body(Body::empty()).unwrap();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    if id.is_null() {
        return Response::builder().status(202).body(Body::empty()).unwrap();
    }
    let reply = move |result: Value| json!({ "jsonrpc": "2.0", "id": id, "result": result });
    match (body["method"].as_str().unwrap_or_default(), body["params"]["name"].as_str()) {
        ("server/discover", _) => json_response(reply(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": { "listChanged": true } },
            "serverInfo": { "name": "strays", "version": "1" }
        }))),
        ("tools/list", _) => json_response(reply(json!({ "tools": [
            { "name": "slow", "inputSchema": { "type": "object" } },
            { "name": "noisy", "inputSchema": { "type": "object" } }
        ]}))),
        ("subscriptions/listen", _) => {
            let (stream, response) = sse();
            let _ = stream
                .send(json!({ "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": { "notifications": { "toolsListChanged": true } } }));
            tokio::spawn(async move {
                if server.on_listen {
                    server.forge(&stream).await;
                }
                // The stream stays open (a listen stream that ends is
                // opened again, and would flood again).
                std::future::pending::<()>().await;
            });
            response
        }
        ("tools/call", Some("slow")) => {
            server.slow.send_replace(Some(body["id"].clone()));
            let (stream, response) = sse();
            tokio::spawn(async move {
                server.release.notified().await;
                let _ = stream.send(reply(text_result("real")));
            });
            response
        }
        ("tools/call", Some("noisy")) => {
            let (stream, response) = sse();
            tokio::spawn(async move {
                server.forge(&stream).await;
                let _ = stream.send(reply(text_result("noisy")));
            });
            response
        }
        _ => json_response(reply(json!({}))),
    }
}

fn text_of(result: &mcp_stack::ToolResult) -> &str {
    result.content[0].as_text().unwrap_or_default()
}

/// The warnings of `events` whose text contains `marker`.
fn warnings(events: &Events, marker: &str) -> Vec<String> {
    events.matching(|e| match e {
        Event::Warning { text, .. } if text.contains(marker) => Some(text.clone()),
        _ => None,
    })
}

/// Call `slow` is pending while another stream floods the connection with
/// responses to it: none ends it, it ends with its own reply, and the flood
/// gives [`FLOOD_WARNINGS`] warnings.
async fn responses_on_another_stream_end_no_call(on_listen: bool) {
    let server = Strays::new(on_listen);
    let router = Router::new().route("/mcp", any(strays_endpoint)).with_state(server.clone());
    let url = http_server::serve_mcp(router).await;
    let events = Events::default();
    let mut definition = Definition::new("strays", StreamableHttpFactory::new(&url).unwrap());
    definition = definition.with_allow_parallel_calls(true);
    let binding =
        tokio::time::timeout(LIMIT, Binding::connect(definition, events.handlers())).await.unwrap().unwrap();
    assert_eq!(binding.session().protocol_version, "2026-07-28");

    let caller = binding.clone();
    let slow = tokio::spawn(async move { caller.call_tool("slow", json!({}), CallOpts::default()).await });
    if !on_listen {
        server.slow.subscribe().wait_for(Option::is_some).await.unwrap();
        let noisy = binding.call_tool("noisy", json!({}), CallOpts::default()).await.unwrap();
        assert_eq!(text_of(&noisy), "noisy", "a stream's own response still ends its call");
    }
    // The last warning of the flood: every forged response was read by now.
    let last = format!("({} such responses dropped so far)", 1 << (FLOOD_WARNINGS - 1));
    eventually("the flood was reported", || slow.is_finished() || !warnings(&events, &last).is_empty()).await;
    if slow.is_finished() {
        panic!("a response on another stream ended the call: {:?}", slow.await.unwrap());
    }
    server.release.notify_one();
    let result = tokio::time::timeout(LIMIT, slow).await.unwrap().unwrap().expect("its own reply");
    assert_eq!(text_of(&result), "real");

    let dropped = warnings(&events, "belongs to its own request's stream");
    assert_eq!(dropped.len(), FLOOD_WARNINGS, "{FLOOD} responses, a bounded number of warnings: {dropped:?}");
    assert!(dropped[0].starts_with("dropped a response to request"), "{dropped:?}");
    assert!(warnings(&events, "unknown request id").is_empty(), "none reached the connection");
    binding.close().await;
}

#[tokio::test]
async fn responses_on_the_listen_stream_end_no_call() {
    responses_on_another_stream_end_no_call(true).await;
}

#[tokio::test]
async fn responses_on_another_calls_reply_stream_end_no_call() {
    responses_on_another_stream_end_no_call(false).await;
}

/// A server that sends [`server_requests`] on the reply to every tool call
/// before its result, speaking 2026-07-28 when `modern`, else 2025-11-25
/// (it refuses `server/discover` with a 404); its URL, and every message
/// POSTed to it.
async fn asking_server(modern: bool) -> (String, Arc<Mutex<Vec<Value>>>) {
    let sent = Arc::new(Mutex::new(Vec::<Value>::new()));
    let record = sent.clone();
    let handler = move |method: Method, body: Bytes| {
        let record = record.clone();
        async move {
            if method != Method::POST {
                return Response::builder().status(405).body(Body::empty()).unwrap();
            }
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            record.lock().unwrap().push(body.clone());
            let id = body["id"].clone();
            if id.is_null() || body.get("method").is_none() {
                return Response::builder().status(202).body(Body::empty()).unwrap();
            }
            let reply = |result: Value| json!({ "jsonrpc": "2.0", "id": id, "result": result });
            match body["method"].as_str().unwrap_or_default() {
                "server/discover" if !modern => Response::builder().status(404).body(Body::empty()).unwrap(),
                "server/discover" => json_response(reply(json!({
                    "supportedVersions": ["2026-07-28"], "capabilities": { "tools": {} },
                    "serverInfo": { "name": "asks", "version": "1" } }))),
                "initialize" => json_response(reply(json!({
                    "protocolVersion": "2025-11-25", "capabilities": { "tools": {} },
                    "serverInfo": { "name": "asks", "version": "1" } }))),
                "tools/list" => json_response(reply(
                    json!({ "tools": [ { "name": "ask", "inputSchema": { "type": "object" } } ] }),
                )),
                "tools/call" => {
                    let (stream, response) = sse();
                    for request in server_requests() {
                        let _ = stream.send(request);
                    }
                    let _ = stream.send(reply(text_result("asked")));
                    response
                }
                _ => json_response(reply(json!({}))),
            }
        }
    };
    (http_server::serve_mcp(Router::new().route("/mcp", any(handler))).await, sent)
}

/// A binding to `url` whose elicitation and roots handlers record into
/// `asked`, and its events into `events`.
async fn asking_binding(url: &str, asked: &Asked, events: &Events) -> Binding {
    let mut definition = Definition::new("asks", StreamableHttpFactory::new(url).unwrap());
    let handlers = asked.handlers(events, &mut definition);
    tokio::time::timeout(LIMIT, Binding::connect(definition, handlers)).await.unwrap().unwrap()
}

#[tokio::test]
async fn server_requests_on_a_modern_reply_stream_are_dropped_unanswered() {
    let (url, sent) = asking_server(true).await;
    let (events, asked) = (Events::default(), Asked::default());
    let binding = asking_binding(&url, &asked, &events).await;
    assert_eq!(binding.session().protocol_version, "2026-07-28");
    let result = binding.call_tool("ask", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(text_of(&result), "asked", "the call itself goes on");
    asked.check_nothing_served(&events, LIMIT, || sent.lock().unwrap().clone()).await;
    binding.close().await;
}

#[tokio::test]
async fn server_requests_on_a_legacy_reply_stream_are_still_served() {
    let (url, sent) = asking_server(false).await;
    let (events, asked) = (Events::default(), Asked::default());
    let binding = asking_binding(&url, &asked, &events).await;
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    let result = binding.call_tool("ask", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(text_of(&result), "asked");
    let answered = || sent.lock().unwrap().iter().filter(|m| m.get("method").is_none()).count();
    eventually("every server request was answered", || answered() == server_requests().len()).await;
    assert_eq!(asked.count(), server_requests().len() - 1, "every elicitation and roots/list (ping aside)");
    let roots = sent.lock().unwrap().iter().find(|m| m["id"] == "r0").cloned().unwrap();
    assert_eq!(roots["result"]["roots"][0]["uri"], "file:///home/user/secret", "{roots}");
    assert!(warnings(&events, "unanswered").is_empty());
    binding.close().await;
}
