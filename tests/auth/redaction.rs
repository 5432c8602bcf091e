//! Secrets the client sent never come back out: servers that quote them
//! back (an error page reflecting the request's headers, a JSON-RPC error
//! quoting them in its message and data, a log record, an elicitation
//! prompt, a `WWW-Authenticate` challenge, an authorization server that
//! answers with the client secret as its `error`) have them removed before
//! the text reaches an error (`Display`, `Debug`, `ErrorReport`), an event,
//! a handler or a tracing line. Both eras over HTTP (axum, loopback), and
//! the in-memory transport for what every transport shares.

use crate::support::http_server;
use crate::support::recorded_events::Events;
use crate::support::scripted::{id_of, scripted_lists};
use crate::support::trace_capture;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use mcp_stack::auth::{AuthorizationHandler, OAuth};
use mcp_stack::connection::RpcError;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::ProtocolChoice;
use mcp_stack::{
    handlers::{ElicitResult, LogMessage},
    Binding, CallOpts, Definition, Error, FailureClass,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);
/// Every secret of these tests carries it: no output may.
const SENTINEL: &str = "LEAK-5e9b";

fn secret(what: &str) -> String {
    format!("{what}-{SENTINEL}-0123456789")
}

/// Everything a person or a program could be shown of `e`.
fn shown(e: &Error) -> String {
    let source = std::error::Error::source(e).map(|s| s.to_string()).unwrap_or_default();
    let data = std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<RpcError>())
        .map(|r| format!("{:?} {:?}", r.message, r.data))
        .unwrap_or_default();
    format!("{e} | {e:?} | {} | {source} | {data}", serde_json::to_string(&e.report()).unwrap())
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(SENTINEL), "a secret leaked into {what}: {text}");
}

/// The request's headers as an error page of a framework shows them.
fn reflect(headers: &HeaderMap) -> String {
    headers.iter().map(|(n, v)| format!("{n}: {}", v.to_str().unwrap_or("?"))).collect::<Vec<_>>().join("\n")
}

fn sse(messages: &[Value]) -> Response {
    let body: String = messages.iter().map(|m| format!("event: message\ndata: {m}\n\n")).collect();
    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(Body::from(body)).unwrap()
}

fn json_reply(value: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

/// A server of either era whose tools quote the request's headers back.
async fn reflecting(
    State(modern): State<bool>,
    method: Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    if id.is_null() {
        return StatusCode::ACCEPTED.into_response();
    }
    let result = |r: Value| json!({"jsonrpc": "2.0", "id": id, "result": r});
    let echoed = format!("POST {uri}\n{}", reflect(&headers));
    match (body["method"].as_str().unwrap_or_default(), modern) {
        ("server/discover", true) => json_reply(result(json!({"supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "logging": {}}, "serverInfo": {"name": "reflect", "version": "1"}}))),
        ("server/discover", false) => json_reply(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
        ),
        ("initialize", _) => json_reply(result(json!({"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "logging": {}}, "serverInfo": {"name": "reflect", "version": "1"}}))),
        ("tools/list", _) => json_reply(result(json!({"tools": [
            {"name": "page", "inputSchema": {"type": "object"}},
            {"name": "rpc", "inputSchema": {"type": "object"}},
            {"name": "log", "inputSchema": {"type": "object"}},
            {"name": "ask", "inputSchema": {"type": "object"}},
        ]}))),
        ("tools/call", _) => match body["params"]["name"].as_str().unwrap_or_default() {
            // A gateway's error page with the request's headers on it.
            "page" => {
                (StatusCode::BAD_GATEWAY, format!("<pre>upstream refused the request:\n{echoed}</pre>"))
                    .into_response()
            }
            "rpc" => json_reply(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000,
                "message": format!("refused: {echoed}"), "data": {"headers": echoed, "nested": [echoed]}}})),
            "log" => sse(&[
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "error", "logger": "auth", "data": format!("saw {echoed}")}}),
                result(json!({"content": [{"type": "text", "text": "logged"}]})),
            ]),
            "ask" if modern => match body["params"].get("inputResponses") {
                None => json_reply(result(json!({"resultType": "input_required",
                    "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                        "message": format!("Confirm the request you sent: {echoed}"),
                        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}}}))),
                Some(_) => json_reply(result(json!({"content": [{"type": "text", "text": "asked"}]}))),
            },
            "ask" => {
                sse(&[json!({"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": {
                "message": format!("Confirm the request you sent: {echoed}"),
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}})])
            }
            _ => json_reply(result(json!({"content": []}))),
        },
        _ => json_reply(result(json!({}))),
    }
}

/// A binding's every quote of the headers it sent, in the era `modern`
/// picks: the static headers, and the URL's query value, are secrets.
async fn reflected_headers_leave_no_trace(modern: bool) {
    let capture = trace_capture::global();
    let url = http_server::serve_mcp(Router::new().route("/mcp", any(reflecting)).with_state(modern)).await;
    let url = format!("{url}?key={}", secret("url-key"));
    let factory = HttpBuilder::new(&url)
        .listen(false)
        .header("X-Api-Key", &secret("api-key"))
        .header("Authorization", &format!("Bearer {}", secret("static-token")))
        .build()
        .unwrap();
    let events = Events::default();
    let logs = Arc::new(Mutex::new(Vec::<LogMessage>::new()));
    let prompts = Arc::new(Mutex::new(Vec::<String>::new()));
    let (log_sink, prompt_sink) = (logs.clone(), prompts.clone());
    let handlers = events
        .handlers()
        .log(move |m: LogMessage| {
            log_sink.lock().unwrap().push(m);
            async { Ok(()) }
        })
        .elicitation(move |r: mcp_stack::handlers::ElicitRequest| {
            prompt_sink.lock().unwrap().push(r.message.clone());
            async { Ok(ElicitResult::decline()) }
        });
    let mut definition = Definition::new("reflect", factory);
    definition =
        definition.with_protocol(if modern { ProtocolChoice::Modern } else { ProtocolChoice::Legacy });
    let capabilities = definition.capabilities().with_elicitation(true);
    definition = definition.with_capabilities(capabilities);
    let binding = tokio::time::timeout(LIMIT, Binding::connect(definition, handlers)).await.unwrap().unwrap();
    let call = |name: &'static str| {
        let binding = binding.clone();
        async move {
            tokio::time::timeout(LIMIT, binding.call_tool(name, json!({}), CallOpts::default()))
                .await
                .unwrap()
        }
    };

    let mut outputs = Vec::new();
    let page = call("page").await.unwrap_err();
    assert_eq!(page.class(), FailureClass::RemoteHttp, "{page}");
    let rpc = call("rpc").await.unwrap_err();
    assert_eq!(rpc.class(), FailureClass::RemoteToolError, "{rpc}");
    for e in [&page, &rpc] {
        let text = shown(e);
        // The quote is there, and what it quoted is gone.
        assert!(text.contains("x-api-key: [redacted]"), "{text}");
        assert!(text.contains("authorization: [redacted]"), "{text}");
        assert!(text.contains("?key=[redacted]"), "{text}");
        outputs.push(text);
    }
    let data =
        std::error::Error::source(&rpc).and_then(|s| s.downcast_ref::<RpcError>()).unwrap().data.clone();
    assert!(data.unwrap()["nested"][0].as_str().unwrap().contains("[redacted]"));

    call("log").await.unwrap();
    let _ = call("ask").await;
    let deadline = tokio::time::Instant::now() + LIMIT;
    while logs.lock().unwrap().is_empty() && !modern {
        assert!(tokio::time::Instant::now() < deadline, "the log record never came");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let logged: Vec<String> = logs.lock().unwrap().iter().map(|m| format!("{m:?}")).collect();
    let prompted = prompts.lock().unwrap().clone();
    assert!(!prompted.is_empty(), "the elicitation reached the handler");
    assert!(prompted.iter().all(|p| p.contains("[redacted]")), "{prompted:?}");
    if !modern {
        assert!(logged.iter().any(|l| l.contains("[redacted]")), "{logged:?}");
    }
    outputs.extend(logged);
    outputs.extend(prompted);
    binding.close().await;
    outputs.push(format!("{:?}", events.all()));
    outputs.push(serde_json::to_string(&events.all()).unwrap());
    outputs.push(capture.text());
    for text in &outputs {
        assert_clean("an output", text);
    }
}

#[tokio::test]
async fn reflected_headers_leave_no_trace_on_2025_11_25() {
    reflected_headers_leave_no_trace(false).await;
}

#[tokio::test]
async fn reflected_headers_leave_no_trace_on_2026_07_28() {
    reflected_headers_leave_no_trace(true).await;
}

/// What every transport shares: a secret the host registered
/// (`redact::register`) that a server quotes in an error's message and
/// data, a log record and an elicitation prompt.
#[tokio::test]
async fn a_secret_quoted_by_a_server_is_scrubbed_on_any_transport() {
    let key = secret("host-key");
    let _known = mcp_stack::redact::register(&key);
    let quoted = key.clone();
    let (factory, _seen) = scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/list" => wire.reply(
            &id_of(req),
            json!({"tools": [
                {"name": "x", "inputSchema": {"type": "object"}},
                {"name": "ask", "inputSchema": {"type": "object"}},
            ]}),
        ),
        "tools/call" if req.params.as_ref().is_some_and(|p| p["name"] == "ask") => {
            wire.raw(
                json!({"jsonrpc": "2.0", "id": 900, "method": "elicitation/create", "params": {
                "message": format!("Type the key {quoted} again"),
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}})
                .to_string(),
            );
        }
        "tools/call" => {
            wire.notify("notifications/message", json!({"level": "error", "data": {"key": quoted}}));
            wire.raw(
                json!({"jsonrpc": "2.0", "id": id_of(req), "error": {"code": -32000,
                "message": format!("bad key {quoted}"), "data": {"key": quoted}}})
                .to_string(),
            );
        }
        _ => wire.reply(&id_of(req), json!({})),
    });
    let events = Events::default();
    let logs = Arc::new(Mutex::new(Vec::<String>::new()));
    let prompts = Arc::new(Mutex::new(Vec::<String>::new()));
    let (log_sink, prompt_sink) = (logs.clone(), prompts.clone());
    let handlers = events
        .handlers()
        .log(move |m: LogMessage| {
            log_sink.lock().unwrap().push(m.text.clone());
            async { Ok(()) }
        })
        .elicitation(move |r: mcp_stack::handlers::ElicitRequest| {
            prompt_sink.lock().unwrap().push(r.message.clone());
            async { Ok(ElicitResult::decline()) }
        });
    let mut definition = Definition::new("memory", factory);
    let capabilities = definition.capabilities().with_elicitation(true);
    definition = definition.with_capabilities(capabilities);
    let binding = tokio::time::timeout(LIMIT, Binding::connect(definition, handlers)).await.unwrap().unwrap();
    let e = binding.call_tool("x", json!({}), CallOpts::default()).await.unwrap_err();
    let text = shown(&e);
    assert!(text.contains("bad key [redacted]"), "{text}");
    let deadline = tokio::time::Instant::now() + LIMIT;
    while logs.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the log record never came");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        binding.call_tool("ask", json!({}), CallOpts::default()),
    )
    .await;
    let deadline = tokio::time::Instant::now() + LIMIT;
    while prompts.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the elicitation never came");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    binding.close().await;
    let outputs = [
        text,
        format!("{:?}", logs.lock().unwrap()),
        format!("{:?}", prompts.lock().unwrap()),
        format!("{:?}", events.all()),
    ];
    assert!(outputs[1].contains("[redacted]") && outputs[2].contains("[redacted]"), "{outputs:?}");
    for text in &outputs {
        assert!(!text.contains(&key), "the key leaked into {text}");
    }
}

/// An authorization server that answers the token request with the client
/// secret as its `error` (and its description), and an MCP server whose
/// challenge quotes the token it refused: neither is quoted.
#[tokio::test]
async fn an_authorization_server_reflecting_the_client_secret_is_not_quoted() {
    let capture = trace_capture::global();
    let client_secret = secret("client-secret");
    let base = Arc::new(Mutex::new(String::new()));
    let b = base.clone();
    let mcp = move |headers: HeaderMap| {
        let base = b.lock().unwrap().clone();
        async move {
            let sent = headers
                .get(header::AUTHORIZATION)
                .map(|v| v.to_str().unwrap_or("").to_owned())
                .unwrap_or_default();
            let challenge = format!(
                "Bearer error=\"invalid_token\", error_description=\"{sent} is not valid\", resource_metadata=\"{base}/prm\""
            );
            (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
        }
    };
    let b = base.clone();
    let prm = move || {
        let base = b.lock().unwrap().clone();
        async move { axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]})) }
    };
    let b = base.clone();
    let metadata = move || {
        let base = b.lock().unwrap().clone();
        async move {
            axum::Json(json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"), "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_post"]}))
        }
    };
    // The token endpoint answers with whatever secret it was sent.
    let token = |body: Bytes| async move {
        let form: std::collections::HashMap<String, String> =
            url::form_urlencoded::parse(&body).into_owned().collect();
        let sent = form.get("client_secret").cloned().unwrap_or_default();
        (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": sent, "error_description": format!("{sent} refused")})),
        )
    };
    let router = Router::new()
        .route("/mcp", any(mcp))
        .route("/prm", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/token", post(token));
    let addr = http_server::serve(router).await;
    *base.lock().unwrap() = format!("http://{addr}");
    let oauth = OAuth::new()
        .client_id("machine")
        .client_secret(client_secret.clone())
        .grant(mcp_stack::auth::Grant::ClientCredentials)
        .handler(AuthorizationHandler::headless("http://127.0.0.1:9/cb", LIMIT).unwrap());
    let factory = HttpBuilder::new(format!("http://{addr}/mcp"))
        .listen(false)
        .header("Authorization", &format!("Bearer {}", secret("stale-token")))
        .oauth(oauth)
        .build()
        .unwrap();
    let events = Events::default();
    let e = tokio::time::timeout(LIMIT, Binding::connect(Definition::new("as", factory), events.handlers()))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthDenied, "{e}");
    let text = shown(&e);
    assert!(text.contains("unregistered_error_code"), "{text}");
    assert_clean("the error", &text);
    assert_clean("the events", &format!("{:?}", events.all()));
    assert_clean("the tracing lines", &capture.text());
}
