//! The axum_gateway example's router, served on a loopback port and sent
//! real HTTP requests.

#[path = "../../examples/axum_gateway/router.rs"]
mod router;

use mcp_stack::{handlers::Handlers, Binding, Definition, ToolFilter};
use serde_json::{json, Value};
use std::future::IntoFuture;

async fn serve(gateway: router::Gateway) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(axum::serve(listener, router::router(gateway)).into_future());
    (base, server)
}

#[tokio::test]
async fn post_tools_name_calls_the_tool_and_answers_json() {
    let mut definition = Definition::new("demo", mcp_stack::demo::factory());
    definition = definition.with_tool_filter(ToolFilter::default().with_denied(["add"]));
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let gateway = router::Gateway::new([binding], "demo");
    let (base, server) = serve(gateway.clone()).await;
    // With `http`, reqwest's rustls needs a provider (no TLS is used here).
    #[cfg(feature = "http")]
    mcp_stack::transport::http::install_crypto_provider();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();

    let rsp = client.post(format!("{base}/tools/echo")).json(&json!({"message": "hi"})).send().await.unwrap();
    assert_eq!(rsp.status(), 200);
    let body: Value = rsp.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "isError": false,
            "content": [{"type": "text", "text": "hi", "truncated": false}],
            "structuredContent": null,
            "warnings": [],
        })
    );

    // An empty body means no arguments.
    let rsp = client.post(format!("{base}/tools/tiny_image")).send().await.unwrap();
    assert_eq!(rsp.status(), 200);
    let body: Value = rsp.json().await.unwrap();
    assert_eq!(body["content"][0]["type"], "image");
    // The demo's one-pixel PNG, base64 (a PNG signature encodes as "iVBORw0KGgo").
    assert!(body["content"][0]["data"].as_str().unwrap().starts_with("iVBORw0KGgo"), "{body}");

    // Failures are 502 with the stable class.
    for (tool, class) in [("add", "tool_unavailable"), ("no_such_tool", "remote_tool_error")] {
        let rsp = client.post(format!("{base}/tools/{tool}")).json(&json!({})).send().await.unwrap();
        assert_eq!(rsp.status(), 502, "{tool}");
        let body: Value = rsp.json().await.unwrap();
        assert_eq!(body["class"], class, "{tool}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!((&body["binding"], &body["op"]), (&json!("demo"), &json!("call_tool")), "{tool}: {body}");
    }

    // A body that is not JSON is the caller's mistake.
    let rsp = client.post(format!("{base}/tools/echo")).body("{not json").send().await.unwrap();
    assert_eq!(rsp.status(), 400);
    let body: Value = rsp.json().await.unwrap();
    assert_eq!(body["class"], "invalid_config");
    assert_eq!(body["binding"], Value::Null, "no binding was asked: {body}");

    server.abort();
    gateway.close().await;
}
