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
    let router = Router::new().route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }));
    serve_counting(router).await
}

/// Serves `router` on a free port; its MCP URL, and how many connections
/// it accepted so far.
async fn serve_counting(router: Router) -> (String, Arc<AtomicUsize>) {
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let listener = listener.tap_io(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
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

/// A server on a free port that holds every `tools/call` until `burst` of
/// them are in (so that each needs a connection of its own), counting the
/// connections it accepts.
async fn bursting_server(burst: usize) -> (String, Arc<AtomicUsize>) {
    use axum::extract::State;
    use axum::Json;
    use serde_json::Value;
    let barrier = Arc::new(tokio::sync::Barrier::new(burst));
    let handler = |State(barrier): State<Arc<tokio::sync::Barrier>>, Json(body): Json<Value>| async move {
        if body["method"] == "tools/call" {
            let all_in = barrier.wait();
            tokio::time::timeout(std::time::Duration::from_secs(20), all_in).await.expect("the whole burst");
        }
        mcp(Json(body)).await
    };
    let router = Router::new()
        .route("/mcp", post(handler).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
        .with_state(barrier);
    serve_counting(router).await
}

#[tokio::test]
async fn a_pool_keeps_at_most_64_idle_connections_to_its_origin() {
    const BURST: usize = 100;
    let (url, accepted) = bursting_server(BURST).await;
    // 13 bindings calling in parallel, each at most 8 calls at once (the
    // default limit), as a host holding many bindings to one origin.
    let mut bindings = Vec::new();
    for i in 0..13 {
        let factory = HttpBuilder::new(&url).no_proxy().listen(false).build().unwrap();
        let definition = Definition::new(format!("b{i}"), factory).with_allow_parallel_calls(true);
        bindings.push(Binding::connect(definition, Handlers::default()).await.unwrap());
    }
    let burst = || {
        let calls = (0..BURST)
            .map(|i| bindings[i % bindings.len()].call_tool("echo", json!({}), CallOpts::default()));
        futures_util::future::join_all(calls)
    };
    let before = accepted.load(Ordering::SeqCst);
    for result in burst().await {
        result.unwrap();
    }
    // Each call of the burst was held until all were in: one connection
    // each, at most one of them opened before the burst.
    let opened = accepted.load(Ordering::SeqCst) - before;
    assert!((BURST - 1..=BURST).contains(&opened), "{opened} opened for the first burst");
    // 64 of them were kept; the second burst opens the rest anew (a few
    // more when a connection was not back in the pool yet: hyper returns
    // it just after its caller has the answer). Without the bound, none.
    let before = accepted.load(Ordering::SeqCst);
    for result in burst().await {
        result.unwrap();
    }
    let reopened = accepted.load(Ordering::SeqCst) - before;
    assert!((BURST - 64..=BURST - 54).contains(&reopened), "{reopened} opened for the second burst");
    for binding in bindings {
        binding.close().await;
    }
}
