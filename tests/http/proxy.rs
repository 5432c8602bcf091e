//! Issue 22, item 1 (in part): the HTTP transports reach a server through a
//! proxy: the one a definition names (with credentials kept secret), the
//! environment's by default (`HTTP_PROXY`, `NO_PROXY`, ...), none when
//! turned off; and a host may hand in its own `reqwest::Client`, or its own
//! tower service of HTTP requests.
//!
//! The environment's proxy is read by a child: this test binary run again
//! with the variables set, on the ignored test `env_child` (setting them in
//! this process would reach every other test running beside it).

use crate::support::http_server::serve_mcp;
use crate::support::proxy;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::process::Command;

/// A legacy-era MCP server in one handler: JSON replies, no session, no
/// listening stream. The TLS tests serve it too.
pub(crate) async fn mcp(Json(body): Json<Value>) -> Response {
    let Some(id) = body.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let result = match body["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "behind-a-proxy", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        Some("tools/call") => json!({"content": [{"type": "text", "text": "through"}]}),
        Some("ping") => json!({}),
        _ => {
            let error = json!({"code": -32601, "message": "Method not found"});
            return Json(json!({"jsonrpc": "2.0", "id": id, "error": error})).into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

async fn server() -> String {
    serve_mcp(Router::new().route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))).await
}

/// Connects through `builder`, calls `echo`, closes.
pub(crate) async fn call_through(builder: HttpBuilder) -> Result<String, mcp_stack::Error> {
    let definition = Definition::new("proxied", builder.build()?);
    let binding =
        tokio::time::timeout(Duration::from_secs(30), Binding::connect(definition, Handlers::default()))
            .await
            .expect("bounded")?;
    let result = binding.call_tool("echo", json!({}), CallOpts::default()).await;
    binding.close().await;
    Ok(result?.content[0].as_text().unwrap_or_default().to_string())
}

#[tokio::test]
async fn a_named_proxy_carries_every_request_with_its_credentials_kept_secret() {
    let url = server().await;
    let proxy = proxy::start().await;
    let with_credentials = proxy.url.replace("http://", "http://alice:proxy-pw-0451@");
    let builder = HttpBuilder::new(&url).proxy(&with_credentials);
    let shown = format!("{builder:?}");
    assert!(!shown.contains("proxy-pw-0451"), "{shown}");
    assert_eq!(call_through(builder).await.unwrap(), "through");

    let heads = proxy.heads();
    assert!(!heads.is_empty(), "nothing went through the proxy");
    for head in &heads {
        // Plain HTTP through a proxy: the absolute URL, and the proxy's
        // credentials (basic, `alice:proxy-pw-0451`).
        // (A POST, or the GET that opens the listening stream.)
        assert!(
            head.starts_with(&format!("POST {url} ")) || head.starts_with(&format!("GET {url} ")),
            "{head}"
        );
        assert!(
            head.to_ascii_lowercase().contains("proxy-authorization: basic ywxpy2u6chjvehktchctmdq1mq=="),
            "{head}"
        );
    }
}

#[tokio::test]
async fn a_bad_proxy_url_fails_the_build_without_quoting_it() {
    let e = HttpBuilder::new("http://127.0.0.1:1/mcp").proxy("not a url, pw-0452").build().unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig, "{e}");
    assert!(!e.message().contains("pw-0452"), "{e}");
    // A proxy that refuses fails the call like a server that does: the
    // proxy's status, classified.
    let e = call_through(HttpBuilder::new("http://127.0.0.1:1/mcp").proxy("http://127.0.0.1:1"))
        .await
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::TransportClosed, "{e}");
}

#[tokio::test]
async fn a_hosts_own_client_is_used_as_it_is() {
    let url = server().await;
    let proxy = proxy::start().await;
    mcp_stack::transport::http::install_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .proxy(reqwest::Proxy::all(&proxy.url).unwrap())
        .build()
        .unwrap();
    assert_eq!(call_through(HttpBuilder::new(&url).client(client.clone())).await.unwrap(), "through");
    assert!(!proxy.heads().is_empty(), "the host's client (and its proxy) carried the requests");
    // Proxy settings belong on the host's client, not beside it.
    let e = HttpBuilder::new(&url).client(client).no_proxy().build().unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig, "{e}");
}

/// Runs this test binary's `env_child` with `vars` set; whether it passed
/// (and, when it did not, what it printed).
async fn child(vars: &[(&str, &str)]) -> Result<(), String> {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["proxy::env_child", "--exact", "--ignored", "--test-threads", "1"]);
    for name in proxy::PROXY_VARS {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    // Asynchronously: this test's runtime serves the proxy and the server
    // the child talks to.
    let out = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the child finished")
        .expect("run the test binary again");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(printed);
    }
    assert!(printed.contains("1 passed"), "the child ran no test: {printed}");
    Ok(())
}

#[tokio::test]
async fn the_environments_proxy_is_used_unless_no_proxy_or_the_definition_says_otherwise() {
    let url = server().await;
    let proxy = proxy::start().await;
    // HTTP_PROXY (and its lower-case form) carries a plain-HTTP server.
    for name in ["HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
        let before = proxy.heads().len();
        child(&[(name, &proxy.url), ("MCP_STACK_TEST_URL", &url)])
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(proxy.heads().len() > before, "{name}: nothing went through the proxy");
    }
    // NO_PROXY names the hosts reached directly; the definition's no_proxy
    // turns the environment off.
    let before = proxy.heads().len();
    child(&[("HTTP_PROXY", &proxy.url), ("NO_PROXY", "127.0.0.1"), ("MCP_STACK_TEST_URL", &url)])
        .await
        .unwrap();
    child(&[("HTTP_PROXY", &proxy.url), ("MCP_STACK_TEST_URL", &url), ("MCP_STACK_TEST_NO_PROXY", "1")])
        .await
        .unwrap();
    assert_eq!(proxy.heads().len(), before, "a request went through the proxy: {:?}", proxy.heads());
}

/// The child of the test above: connects to `MCP_STACK_TEST_URL` with the
/// environment it was given.
#[tokio::test]
#[ignore = "a child of the_environments_proxy_is_used_unless_no_proxy_or_the_definition_says_otherwise, which runs it with proxy variables set"]
async fn env_child() {
    let url = std::env::var("MCP_STACK_TEST_URL").expect("MCP_STACK_TEST_URL");
    let mut builder = HttpBuilder::new(&url);
    if std::env::var_os("MCP_STACK_TEST_NO_PROXY").is_some() {
        builder = builder.no_proxy();
    }
    assert_eq!(call_through(builder).await.unwrap(), "through");
}

/// Authorization goes the way the MCP server's requests go: a server that
/// wants a token sends the client to its protected resource metadata, and
/// that discovery goes through the definition's proxy too (an authorization
/// server behind a corporate proxy is reached like the MCP server).
#[cfg(feature = "oauth")]
#[tokio::test]
async fn authorization_discovery_goes_through_the_same_proxy() {
    use axum::http::header::WWW_AUTHENTICATE;
    let router = Router::new().route(
        "/mcp",
        post(|| async {
            (StatusCode::UNAUTHORIZED, [(WWW_AUTHENTICATE, "Bearer realm=\"mcp\"")]).into_response()
        }),
    );
    let url = serve_mcp(router).await;
    let origin = url.trim_end_matches("/mcp").to_string();
    let proxy = proxy::start().await;
    // A machine client: no person, no handler; discovery starts at once.
    let oauth = mcp_stack::auth::OAuth::new()
        .client_id("bot")
        .client_secret("bot-secret")
        .grant(mcp_stack::auth::Grant::ClientCredentials);
    let builder = HttpBuilder::new(&url).proxy(&proxy.url).oauth(oauth);
    let e = call_through(builder).await.unwrap_err();
    assert!(e.class().is_auth(), "{e:?}");
    assert!(!e.message().contains("bot-secret"), "{e}");
    let heads = proxy.heads();
    assert!(
        heads.iter().any(|h| h.starts_with(&format!("GET {origin}/.well-known/oauth-protected-resource"))),
        "discovery did not go through the proxy: {heads:?}"
    );
}

/// A host hands in a tower service of HTTP requests instead of a client:
/// here one that answers in process, recording each hop as the transport
/// built it. No socket is opened.
#[tokio::test]
async fn a_hosts_own_service_sends_every_request() {
    use mcp_stack::transport::http::{HttpRequest, HttpResponse, HttpService};
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let service = tower::service_fn(move |request: HttpRequest| {
        let record = record.clone();
        async move {
            record.lock().unwrap().push(format!("{} {}", request.method(), request.uri()));
            let body: Value = match request.body() {
                Some(bytes) => serde_json::from_slice(bytes).unwrap(),
                None => Value::Null,
            };
            let reply = mcp(Json(body)).await;
            let (parts, body) = reply.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            Ok::<_, mcp_stack::Error>(HttpResponse::from_parts(parts, reqwest::Body::from(bytes)))
        }
    });
    let builder =
        HttpBuilder::new("http://in-process.invalid/mcp").listen(false).service(HttpService::new(service));
    assert_eq!(call_through(builder).await.unwrap(), "through");
    let seen = seen.lock().unwrap().clone();
    assert!(seen.iter().any(|s| s == "POST http://in-process.invalid/mcp"), "{seen:?}");
    assert!(seen.len() >= 3, "discovery or initialize, the listing and the call: {seen:?}");

    // It sends the requests itself: no proxy or client beside it.
    let lone = || {
        HttpService::new(tower::service_fn(|_: HttpRequest| async {
            Err(mcp_stack::Error::new(FailureClass::RemoteHttp, "unused"))
        }))
    };
    for builder in [
        HttpBuilder::new("http://x.invalid/mcp").service(lone()).no_proxy(),
        HttpBuilder::new("http://x.invalid/mcp").service(lone()).client(reqwest::Client::new()),
    ] {
        assert_eq!(builder.build().unwrap_err().class(), FailureClass::InvalidConfig);
    }
}
