//! Issue 22, item 1: bindings to one origin share one pool of connections
//! (and TLS sessions): a second binding to a server reuses the sockets the
//! first opened, where bindings with clients of their own each open
//! theirs. Counted by the server, which sees every accepted connection.

use crate::proxy::mcp;
use axum::http::StatusCode;
use axum::routing::post;
use axum::serve::ListenerExt;
use axum::Router;
use mcp_stack::handlers::Handlers;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{Binding, CallOpts, Definition};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The MCP handler of `proxy` on a free port, counting the connections it
/// accepts.
async fn counting_server() -> (String, Arc<AtomicUsize>) {
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let listener = listener.tap_io(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let router = Router::new().route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, accepted)
}

/// Connects `n` bindings one after the other (each calls `echo` once) and
/// keeps them open; how many connections the server accepted.
async fn connections_for(n: usize, builder: impl Fn(&str) -> HttpBuilder) -> usize {
    let (url, accepted) = counting_server().await;
    let mut bindings = Vec::new();
    for i in 0..n {
        let factory = builder(&url).listen(false).build().unwrap();
        let binding =
            Binding::connect(Definition::new(format!("b{i}"), factory), Handlers::default()).await.unwrap();
        binding.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
        bindings.push(binding);
    }
    let count = accepted.load(Ordering::SeqCst);
    for binding in bindings {
        binding.close().await;
    }
    count
}

#[tokio::test]
async fn bindings_to_one_origin_share_their_connections() {
    let shared = connections_for(4, |url: &str| HttpBuilder::new(url).no_proxy()).await;
    let own = connections_for(4, |url: &str| {
        mcp_stack::transport::http::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .unwrap();
        HttpBuilder::new(url).client(client)
    })
    .await;
    println!("connections accepted for four bindings: shared pool {shared}, a client each {own}");
    assert!(own >= 4, "each binding with a client of its own opened at least one connection: {own}");
    assert!(shared < own, "the shared pool opened as many connections ({shared}) as a client each ({own})");
    assert!(shared <= 2, "four sequential bindings needed {shared} connections");
}
