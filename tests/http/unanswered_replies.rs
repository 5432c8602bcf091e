//! A reply that does not answer its request ends that request at once with
//! a classified error, not at its deadline (issue 13, item 1): streamable
//! HTTP bodies that are not JSON, empty, or answer another id; a 202 to a
//! request when no stream can carry the reply; and, on stdio, a reply split
//! over several lines.
//!
//! Every call here has a deadline of [`DEADLINE`]: a call that ended with
//! anything but `deadline` ended before it, and the class says who ended it.
#![cfg(feature = "http")]

use crate::support::http_server;
use axum::body::Body;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use bytes::Bytes;
use mcp_stack::transport::http::{HttpBuilder, ResumePolicy};
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Error, FailureClass};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The deadline of every call.
const DEADLINE: Duration = Duration::from_secs(20);
/// The bound on every wait in these tests (past the deadline).
const LIMIT: Duration = Duration::from_secs(40);

async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(LIMIT, fut).await.unwrap_or_else(|_| panic!("timed out: {what}"))
}

type ToolAnswer = Arc<dyn Fn(&Value) -> Response + Send + Sync>;

/// A streamable HTTP server that answers the handshake and `tools/list`
/// properly and `tools/call` with `answer`; `GET` gets `get_status`.
#[derive(Clone)]
struct Server {
    answer: ToolAnswer,
    get_status: StatusCode,
    gets: Arc<Mutex<usize>>,
    /// When set, the first `GET` is an SSE stream fed from this channel.
    stream: Arc<Mutex<Option<mpsc::UnboundedReceiver<String>>>>,
}

fn json_body(text: impl Into<String>) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(text.into()))
        .unwrap()
}

async fn endpoint(
    axum::extract::State(server): axum::extract::State<Server>,
    method: Method,
    body: Bytes,
) -> Response {
    if method == Method::GET {
        *server.gets.lock().unwrap() += 1;
        if let Some(rx) = server.stream.lock().unwrap().take() {
            let events = futures_util::stream::unfold(rx, |mut rx| async move {
                let data = rx.recv().await?;
                Some((Ok::<_, std::io::Error>(Bytes::from(format!("event: message\ndata: {data}\n\n"))), rx))
            });
            return Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .body(Body::from_stream(events))
                .unwrap();
        }
        return server.get_status.into_response();
    }
    if method == Method::DELETE {
        return StatusCode::OK.into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    match body["method"].as_str() {
        Some("initialize") => {
            let result = json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "unanswering", "version": "1"},
            });
            let mut response = json_body(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
            response.headers_mut().insert("mcp-session-id", HeaderValue::from_static("s-1"));
            response
        }
        Some("tools/list") => {
            let tools = json!([{"name": "t", "inputSchema": {"type": "object"}}]);
            json_body(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}}).to_string())
        }
        Some("tools/call") => (server.answer)(&body),
        _ => StatusCode::ACCEPTED.into_response(),
    }
}

async fn serve(server: Server) -> String {
    http_server::serve_mcp(Router::new().route("/mcp", any(endpoint)).with_state(server)).await
}

async fn bind(factory: impl TransportFactory) -> Binding {
    within("connect", Binding::connect(Definition::new("u", factory), Handlers::default())).await.unwrap()
}

async fn call(binding: &Binding) -> Error {
    let opts = CallOpts::default().with_timeout(DEADLINE);
    within("call", binding.call_tool("t", json!({}), opts)).await.unwrap_err()
}

/// A binding to a server answering `tools/call` with `answer`, without the
/// listening stream.
async fn http_binding(answer: impl Fn(&Value) -> Response + Send + Sync + 'static) -> Binding {
    let url = serve(Server {
        answer: Arc::new(answer),
        get_status: StatusCode::METHOD_NOT_ALLOWED,
        gets: Arc::default(),
        stream: Arc::default(),
    })
    .await;
    bind(HttpBuilder::new(url).listen(false).build().unwrap()).await
}

#[tokio::test]
async fn a_json_body_that_is_not_json_ends_the_call_with_server_protocol() {
    let binding = http_binding(|_| json_body("<html>oops</html>")).await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    assert!(err.to_string().contains("not a JSON-RPC message"), "{err}");
    binding.close().await;
}

#[tokio::test]
async fn an_empty_json_body_ends_the_call_with_server_protocol() {
    let binding = http_binding(|_| json_body("")).await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    assert!(err.to_string().contains("empty"), "{err}");
    binding.close().await;
}

#[tokio::test]
async fn a_json_body_answering_another_id_ends_the_call_with_server_protocol() {
    let binding = http_binding(|body| {
        let other = body["id"].as_i64().unwrap() + 1000;
        json_body(json!({"jsonrpc": "2.0", "id": other, "result": {"content": []}}).to_string())
    })
    .await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    assert!(err.to_string().contains("another"), "{err}");
    // The connection goes on.
    let tools = within("list", binding.list_tools()).await.unwrap();
    assert_eq!(tools.items.len(), 1);
    binding.close().await;
}

#[tokio::test]
async fn a_json_body_with_only_a_notification_ends_the_call_with_server_protocol() {
    let binding = http_binding(|_| {
        json_body(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}).to_string())
    })
    .await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    binding.close().await;
}

#[tokio::test]
async fn a_202_to_a_request_without_a_listening_stream_ends_the_call_with_server_protocol() {
    let binding = http_binding(|_| StatusCode::ACCEPTED.into_response()).await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    assert!(err.to_string().contains("202"), "{err}");
    binding.close().await;
}

#[tokio::test]
async fn a_202_to_a_request_when_the_server_offers_no_listening_stream_ends_the_call() {
    // The listening stream is asked for, and refused with 405: nothing can
    // carry the reply.
    let gets = Arc::new(Mutex::new(0));
    let url = serve(Server {
        answer: Arc::new(|_| StatusCode::ACCEPTED.into_response()),
        get_status: StatusCode::METHOD_NOT_ALLOWED,
        gets: gets.clone(),
        stream: Arc::default(),
    })
    .await;
    let binding = bind(HttpBuilder::new(url).build().unwrap()).await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    assert!(*gets.lock().unwrap() >= 1, "the listening stream was asked for");
    binding.close().await;
}

/// A server that answers `tools/call` with 202 and `then(id, stream)` on
/// its listening stream; the binding resumes a broken stream quickly.
async fn listening_binding(
    then: impl Fn(&Value, &mut Option<mpsc::UnboundedSender<String>>) + Send + Sync + 'static,
) -> Binding {
    let (tx, rx) = mpsc::unbounded_channel();
    let tx = Mutex::new(Some(tx));
    let url = serve(Server {
        answer: Arc::new(move |body| {
            then(&body["id"], &mut tx.lock().unwrap());
            StatusCode::ACCEPTED.into_response()
        }),
        get_status: StatusCode::METHOD_NOT_ALLOWED,
        gets: Arc::default(),
        stream: Arc::new(Mutex::new(Some(rx))),
    })
    .await;
    let resume = ResumePolicy {
        max_attempts: 2,
        delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(10),
    };
    bind(HttpBuilder::new(url).resume_policy(resume).build().unwrap()).await
}

#[tokio::test]
async fn a_202_to_a_request_is_tolerated_while_the_listening_stream_carries_the_reply() {
    let binding = listening_binding(|id, stream| {
        let reply =
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "late"}]}});
        stream.as_ref().unwrap().send(reply.to_string()).unwrap();
    })
    .await;
    let opts = CallOpts::default().with_timeout(DEADLINE);
    let result = within("call", binding.call_tool("t", json!({}), opts)).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("late"));
    binding.close().await;
}

#[tokio::test]
async fn a_request_waiting_on_the_listening_stream_ends_when_the_stream_does() {
    // The stream ends after the 202 and cannot be had again (405).
    let binding = listening_binding(|_, stream| drop(stream.take())).await;
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::ServerProtocol, "{err}");
    assert!(err.to_string().contains("listening stream"), "{err}");
    binding.close().await;
}

/// A legacy stdio server (a shell script) that answers the handshake on one
/// line each (refusing `server/discover`) and every other request
/// pretty-printed over several lines.
fn pretty_server() -> StdioFactory {
    let script = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pretty","version":"1"}}}\n' "$id" ;;
    *'"server/discover"'*)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id" ;;
    *'"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":"notifications/'*) ;;
    *)
      printf '{\n  "jsonrpc": "2.0",\n  "id": %s,\n  "result": {\n    "content": []\n  }\n}\n' "$id" ;;
  esac
done
"#;
    StdioFactory::new("sh").arg("-c").arg(script)
}

#[tokio::test]
async fn a_stdio_reply_split_over_lines_ends_its_call_with_framing_and_the_connection_goes_on() {
    let warnings = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = warnings.clone();
    let handlers = Handlers::default().with_events(move |e| {
        if let mcp_stack::Event::Warning { text, .. } = e {
            sink.lock().unwrap().push(text);
        }
    });
    let binding =
        within("connect", Binding::connect(Definition::new("p", pretty_server()), handlers)).await.unwrap();
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::Framing, "{err}");
    assert!(err.to_string().contains("7 lines"), "{err}");
    // The connection survives, and says so once per split message, not
    // once per line.
    let err = call(&binding).await;
    assert_eq!(err.class(), FailureClass::Framing, "{err}");
    let tools = within("list", binding.list_tools()).await.unwrap();
    assert_eq!(tools.items.len(), 1);
    let warnings = warnings.lock().unwrap().clone();
    let split = warnings.iter().filter(|w| w.contains("over several lines")).count();
    assert_eq!(split, 2, "{warnings:#?}");
    assert!(!warnings.iter().any(|w| w.contains("dropped a damaged message")), "{warnings:#?}");
    binding.close().await;
}
