//! User layers inside a live binding: one of your own that counts and logs
//! every request, and tower's `ConcurrencyLimitLayer`.
//!
//! ```text
//! cargo run --example user_layer
//! ```
//!
//! Against the built-in demo server it makes a few calls, has the server
//! announce a change of its tool list (the catalog's refetch passes through
//! your layers too), then has the server die mid-call: the binding
//! reconnects, reports `ConnectionRestored`, and the next call goes through
//! your layers as before. At the end it prints what your layer counted.

use mcp_stack::EventItem;
use mcp_stack::{Binding, CallOpts, Definition, Event, McpRequest};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tower::limit::ConcurrencyLimitLayer;
use tower::{Layer, Service};

/// Counts requests by method and logs each one.
#[derive(Clone, Default)]
struct AuditLayer {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
    started: Option<Instant>,
}

impl<S> Layer<S> for AuditLayer {
    type Service = Audit<S>;

    fn layer(&self, inner: S) -> Audit<S> {
        Audit { inner, audit: self.clone() }
    }
}

#[derive(Clone)]
struct Audit<S> {
    inner: S,
    audit: AuditLayer,
}

impl<S: Service<McpRequest>> Service<McpRequest> for Audit<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> S::Future {
        let at = self.audit.started.map_or(0, |t| t.elapsed().as_millis());
        let name = req.tool_name().map(|n| format!(" {n}")).unwrap_or_default();
        // The deadline is fixed before a user layer sees the request.
        let left = req.opts.deadline().map(|d| d.saturating_duration_since(tokio::time::Instant::now()));
        println!("  [{at:>5} ms] audit: {}{name} (deadline in {:?})", req.method, left.unwrap_or_default());
        *self.audit.counts.lock().unwrap().entry(req.method.clone()).or_insert(0) += 1;
        self.inner.call(req)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let audit = AuditLayer { started: Some(Instant::now()), ..AuditLayer::default() };
    println!("connecting (the catalog's discovery passes through the layers):");
    let binding = Binding::builder(Definition::new("demo", mcp_stack::demo::factory()))
        .layer(audit.clone())
        .layer(ConcurrencyLimitLayer::new(4))
        .connect()
        .await?;
    let mut events = binding.events();

    println!("a call:");
    let echoed = binding.call_tool("echo", json!({ "message": "hello" }), CallOpts::default()).await?;
    println!("  -> {}", echoed.content[0].as_text().unwrap_or_default());

    println!("the server announces a change of its tools; the catalog looks again:");
    binding.call_tool("announce", json!({}), CallOpts::default()).await?;
    wait_for(&mut events, "the refetch", |e| matches!(e, Event::CatalogRefreshed { .. })).await?;

    println!("the server dies mid-call:");
    let lost = binding.call_tool("crash", json!({}), CallOpts::default()).await.unwrap_err();
    println!("  -> {} ({})", lost.class(), lost.message());
    let restored =
        wait_for(&mut events, "the reconnect", |e| matches!(e, Event::ConnectionRestored { .. })).await?;
    if let Event::ConnectionRestored { attempts, generation, .. } = restored {
        println!("  ConnectionRestored after {attempts} attempt(s), catalog generation {generation}");
    }

    println!("a call over the new connection, through the same layers:");
    let opts = CallOpts::default().with_timeout(Duration::from_secs(5));
    let echoed = binding.call_tool("echo", json!({ "message": "still here" }), opts).await?;
    println!("  -> {}", echoed.content[0].as_text().unwrap_or_default());

    println!("what the audit layer counted:");
    let counts = audit.counts.lock().unwrap().clone();
    for (method, n) in &counts {
        println!("  {method:<26} {n}");
    }
    println!("  {:<26} {}", "total", counts.values().sum::<u64>());
    binding.close().await;
    Ok(())
}

/// The next event `wanted` accepts, within ten seconds.
async fn wait_for(
    events: &mut mcp_stack::EventStream,
    what: &str,
    wanted: impl Fn(&Event) -> bool,
) -> Result<Event, Box<dyn std::error::Error>> {
    let wait = async {
        while let Some(item) = events.recv().await {
            if let EventItem::Event(event) = item {
                if wanted(&event) {
                    return Some(event);
                }
            }
        }
        None
    };
    match tokio::time::timeout(Duration::from_secs(10), wait).await {
        Ok(Some(event)) => Ok(event),
        _ => Err(format!("{what} was not reported within 10 s").into()),
    }
}
