//! Build a binding's stack by hand: the crate's layers, two of tower's own,
//! over a [`Connection`] to the demo server.
//!
//! ```text
//! cargo run --example custom_stack
//! ```
//!
//! Each layer works alone, over any service of `McpRequest`. A binding
//! assembles them for you, with its catalog, events, handlers and reconnect
//! around them; to add layers of your own to a live binding, or to replace
//! its default stack, see `examples/user_layer.rs` (`Binding::builder`).
//! Doing it by hand over a bare connection, as here, lets you reorder, drop
//! or add layers and see each one's effect.
//! Here tower's `RateLimit` (two requests a second) goes on the outside, and
//! a `MapRequest` just above the connection prints what actually goes on the
//! wire — so you can see that the filtered call never does, and that only
//! the call with a progress sink carries a progress token. (Progress is
//! delivered on its own task, so its lines may print a little later.)

use mcp_stack::connection::InboundHandler;
use mcp_stack::era::Dialer;
use mcp_stack::layer::{
    deadline::DeadlineLayer,
    progress::{ProgressLayer, ProgressRouter},
    result_limit::ResultLimitLayer,
    tool_filter::ToolFilterLayer,
    tool_gate::ToolCallGateLayer,
};
use mcp_stack::protocol::{Implementation, Notification};
use mcp_stack::transport::ConnectConfig;
use mcp_stack::ProtocolChoice;
use mcp_stack::{CallOpts, McpRequest, McpResponse};
use mcp_stack::{Limits, ToolFilter};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::{Service, ServiceBuilder, ServiceExt};

/// What the server sends on its own: progress goes to the stack's router;
/// the rest is of no interest here. (A binding's own handler also routes
/// logs, and events.)
struct RouteProgress(ProgressRouter);

impl InboundHandler for RouteProgress {
    fn notification(&self, notification: Notification) {
        if notification.method == "notifications/progress" {
            self.0.route(notification.params.as_ref());
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Connect and run the handshake, as Binding::connect does (here pinned
    // to the legacy era, whose initialize the demo server answers).
    let progress = ProgressRouter::new("demo");
    let inbound = Arc::new(RouteProgress(progress.clone()));
    let dialer = Dialer::new(Arc::new(mcp_stack::demo::factory()), ConnectConfig::new("demo"), inbound)
        .protocol(ProtocolChoice::Legacy)
        .client_info(Implementation::new("custom-stack-example", env!("CARGO_PKG_VERSION")));
    let (connection, session) = dialer.dial().await?;
    println!(
        "connected to {} {} ({})",
        session.server.name, session.server.version, session.protocol_version
    );

    let limits = Limits::default().with_max_text_result_bytes(40);
    let mut stack = ServiceBuilder::new()
        // tower's rate limit is not Clone, and the tool-call gate clones the
        // service below it for each call, so it goes above the gate: here on
        // the outside, where every request counts against it, refused ones
        // included. (Inside a live binding, with its catalog, events and
        // reconnect, see examples/user_layer.rs.)
        .rate_limit(2, Duration::from_secs(1))
        .layer(ToolFilterLayer::new(ToolFilter::default().with_denied(["add"])))
        .layer(DeadlineLayer::new(Duration::from_secs(10)))
        .layer(ResultLimitLayer::new(limits))
        .layer(ProgressLayer::new(progress.clone()))
        .layer(ToolCallGateLayer::serial())
        .concurrency_limit(4)
        // tower's map_request: a tap on what reaches the wire.
        .map_request(|req: McpRequest| {
            println!("    wire <- {} {}", req.method, serde_json::Value::Object(req.params().clone()));
            req
        })
        .service(connection.clone());

    let started = Instant::now();
    let requests = [
        ("list the tools (add is filtered out)", McpRequest::new("tools/list", Default::default())),
        ("call echo", tool("echo", json!({ "message": "hello through a hand-built stack" }))),
        ("call add (filtered: refused before any I/O)", tool("add", json!({ "a": 1, "b": 2 }))),
        ("call big_text (cut to 40 bytes)", tool("big_text", json!({ "bytes": 100 }))),
        (
            "call count with a progress sink",
            tool("count", json!({ "steps": 3 })).opts(CallOpts::default().with_progress(|p| {
                println!("    progress {}/{}", p.progress, p.total.unwrap_or_default());
            })),
        ),
        ("ping", McpRequest::new("ping", Default::default())),
    ];
    for (what, request) in requests {
        // The rate limit makes the later requests wait for their turn here.
        let stack = stack.ready().await?;
        println!("[{:>4} ms] {what}", started.elapsed().as_millis());
        match stack.call(request).await {
            Ok(rsp) => print_response(&rsp),
            Err(e) => println!("    failed: {} ({})", e.class(), e.message()),
        }
    }
    println!("[{:>4} ms] done: six requests at two a second", started.elapsed().as_millis());
    connection.close().await;
    Ok(())
}

fn tool(name: &str, arguments: serde_json::Value) -> McpRequest {
    McpRequest::with_value("tools/call", json!({ "name": name, "arguments": arguments }))
}

fn print_response(rsp: &McpResponse) {
    if let Some(tools) = rsp.result["tools"].as_array() {
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        println!("    tools: {}", names.join(", "));
    } else {
        println!("    result: {}", rsp.result);
    }
    for warning in &rsp.warnings {
        println!("    warning: {warning}");
    }
}
