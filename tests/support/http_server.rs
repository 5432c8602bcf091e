//! The tests' in-process HTTP servers: an axum router on a free loopback
//! port, served until the test's runtime ends.

use std::net::SocketAddr;

/// Serves `router` on `127.0.0.1` at a free port; its address.
pub async fn serve(router: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free loopback port");
    let addr = listener.local_addr().expect("the listener's address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

/// Serves `router` (with its MCP endpoint at `/mcp`); that endpoint's URL.
pub async fn serve_mcp(router: axum::Router) -> String {
    format!("http://{}/mcp", serve(router).await)
}
