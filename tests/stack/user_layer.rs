//! User layers inside a live binding, and the one call path: what a host
//! sends through `binding.service()` gets the same checks and results as the
//! binding's own methods.

use mcp_stack::compat::Profile;
use mcp_stack::BoxMcpService;
use mcp_stack::EventItem;
use mcp_stack::ToolResult;
use mcp_stack::{
    Binding, CallOpts, Definition, Error, Event, FailureClass, McpRequest, McpResponse, ToolFilter,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tower::limit::ConcurrencyLimitLayer;
use tower::{Layer, Service, ServiceExt};

use crate::support::scripted::{id_of, scripted_lists};

/// The methods a user layer saw, in order.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for method in self.all() {
            *counts.entry(method).or_insert(0) += 1;
        }
        counts
    }
}

/// A user layer of the host's own: records every request it sees.
struct AuditLayer(Seen);

impl<S> Layer<S> for AuditLayer {
    type Service = Audit<S>;

    fn layer(&self, inner: S) -> Audit<S> {
        Audit { inner, seen: self.0.clone() }
    }
}

#[derive(Clone)]
struct Audit<S> {
    inner: S,
    seen: Seen,
}

impl<S: Service<McpRequest>> Service<McpRequest> for Audit<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> S::Future {
        // What a user layer sees: the deadline is already fixed.
        assert!(req.opts.deadline().is_some(), "{} reached a user layer without its deadline", req.method);
        self.seen.0.lock().unwrap().push(req.method.clone());
        self.inner.call(req)
    }
}

async fn next_event(events: &mut mcp_stack::EventStream, wanted: impl Fn(&Event) -> bool) -> Event {
    let wait = async {
        loop {
            match events.recv().await {
                Some(EventItem::Event(event)) if wanted(&event) => return event,
                Some(_) => {}
                None => panic!("the event stream ended"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait).await.expect("the event came")
}

#[tokio::test(start_paused = true)]
async fn user_layers_see_every_request_and_survive_a_reconnect() {
    let seen = Seen::default();
    let definition = Definition::new("demo", mcp_stack::demo::factory());
    let binding = Binding::builder(definition)
        .layer(AuditLayer(seen.clone()))
        .layer(ConcurrencyLimitLayer::new(4))
        .connect()
        .await
        .unwrap();
    let mut events = binding.events();
    let discovery = ["tools/list", "prompts/list", "resources/list", "resources/templates/list"];
    assert_eq!(seen.all(), discovery, "the catalog's discovery goes through the user layers");

    let echo = |message: &str| json!({ "message": message });
    let result = binding.call_tool("echo", echo("one"), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("one"));

    // The server announces a change: the catalog's refetch passes through
    // the user layers too.
    binding.call_tool("announce", json!({}), CallOpts::default()).await.unwrap();
    next_event(&mut events, |e| matches!(e, Event::CatalogRefreshed { .. })).await;
    assert_eq!(seen.counts()["tools/list"], 2);

    // The server dies mid-call; the binding reconnects, and the catalog
    // looks again over the new connection, through the user layers.
    let lost = binding.call_tool("crash", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(lost.class(), FailureClass::Indeterminate);
    next_event(&mut events, |e| matches!(e, Event::ConnectionRestored { .. })).await;
    let result = binding.call_tool("echo", echo("two"), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("two"));

    // Every request the binding sent, counted once each: 4 tool calls, the
    // discovery, the refetch after the change, and the look after the
    // restore.
    let counts = seen.counts();
    assert_eq!(counts["tools/call"], 4);
    assert_eq!(counts["tools/list"], 3);
    for family in &discovery[1..] {
        assert_eq!(counts[*family], 2, "{family}");
    }
    assert_eq!(seen.all().len(), 13);
    assert_eq!(seen.all().last().map(String::as_str), Some("tools/call"));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_user_layer_can_refuse_and_its_wait_counts_against_the_deadline() {
    /// Holds every tool call forever: a user layer's wait.
    #[derive(Clone)]
    struct Stall<S>(S);
    impl<S: Service<McpRequest, Response = McpResponse, Error = Error>> Service<McpRequest> for Stall<S>
    where
        S::Future: Send + 'static,
    {
        type Response = McpResponse;
        type Error = Error;
        type Future = futures_util::future::BoxFuture<'static, Result<McpResponse, Error>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
            self.0.poll_ready(cx)
        }

        fn call(&mut self, req: McpRequest) -> Self::Future {
            if req.method == "tools/call" {
                return Box::pin(std::future::pending());
            }
            Box::pin(self.0.call(req))
        }
    }
    let binding = Binding::builder(Definition::new("demo", mcp_stack::demo::factory()))
        .layer(tower::layer::layer_fn(|inner: BoxMcpService| Stall(inner)))
        .connect()
        .await
        .unwrap();
    let opts = CallOpts::default().with_timeout(Duration::from_secs(2));
    let start = tokio::time::Instant::now();
    let err = binding.call_tool("echo", json!({"message": "x"}), opts).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_filtered_tool_is_refused_alike_through_call_tool_and_the_service() {
    let seen = Seen::default();
    let mut definition = Definition::new("demo", mcp_stack::demo::factory());
    definition = definition.with_tool_filter(ToolFilter::default().with_denied(["add"]));
    let binding = Binding::builder(definition).layer(AuditLayer(seen.clone())).connect().await.unwrap();
    let before = seen.all().len();

    let args = json!({ "a": 1, "b": 2 });
    let through_method = binding.call_tool("add", args.clone(), CallOpts::default()).await.unwrap_err();
    let request = McpRequest::with_value("tools/call", json!({ "name": "add", "arguments": args }));
    let through_service = binding.service().oneshot(request).await.unwrap_err();
    for err in [&through_method, &through_service] {
        assert_eq!(err.class(), FailureClass::ToolUnavailable);
        assert_eq!(err.binding(), Some("demo"));
    }
    assert_eq!(through_method.message(), through_service.message());
    assert_eq!(seen.all().len(), before, "a refused call reaches no user layer");

    // And the listing through the service is filtered too.
    let listed = binding.service().oneshot(McpRequest::new("tools/list", Default::default())).await.unwrap();
    let names: Vec<&str> =
        listed.result["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"echo") && !names.contains(&"add"), "{names:?}");
    binding.close().await;
}

/// A server whose `sum` tool declares an output schema and answers with
/// structured content that breaks it.
fn lying_server() -> mcp_stack::transport::memory::MemoryFactory {
    let (factory, _recorder) = scripted_lists(|wire, req| {
        let answer = match req.method.as_str() {
            "tools/list" => json!({ "tools": [{
                "name": "sum",
                "inputSchema": { "type": "object" },
                "outputSchema": { "type": "object", "properties": { "sum": { "type": "number" } }, "required": ["sum"] },
            }]}),
            "tools/call" => json!({
                "content": [{ "type": "text", "text": "three" }],
                "structuredContent": { "sum": "three" },
            }),
            "prompts/list" => json!({ "prompts": [] }),
            "resources/list" => json!({ "resources": [] }),
            "resources/templates/list" => json!({ "resourceTemplates": [] }),
            _ => json!({}),
        };
        wire.reply(&id_of(req), answer);
    });
    factory
}

#[tokio::test(start_paused = true)]
async fn output_validation_applies_alike_through_call_tool_and_the_service() {
    // The default profile tolerates the mismatch: the structured content is
    // dropped, with a warning, on both paths.
    let binding =
        Binding::connect(Definition::new("liar", lying_server()), Default::default()).await.unwrap();
    let through_method = binding.call_tool("sum", json!({}), CallOpts::default()).await.unwrap();
    let request = McpRequest::with_value("tools/call", json!({ "name": "sum", "arguments": {} }));
    let rsp = binding.service().oneshot(request).await.unwrap();
    assert!(rsp.result.get("structuredContent").is_none());
    let through_service = ToolResult::from_response(rsp).unwrap();
    assert_eq!(through_method, through_service);
    assert!(through_method.structured.is_none());
    assert!(
        through_method.warnings.iter().any(|w| w.contains("fails the output schema")),
        "{:?}",
        through_method.warnings
    );
    binding.close().await;

    // A strict profile refuses the result, on both paths.
    let mut definition = Definition::new("liar", lying_server());
    definition = definition.with_compat(Profile::strict_v1());
    let binding = Binding::connect(definition, Default::default()).await.unwrap();
    let through_method = binding.call_tool("sum", json!({}), CallOpts::default()).await.unwrap_err();
    let request = McpRequest::with_value("tools/call", json!({ "name": "sum", "arguments": {} }));
    let through_service = binding.service().oneshot(request).await.unwrap_err();
    assert_eq!(through_method.class(), FailureClass::ServerProtocol);
    assert_eq!(through_service.class(), FailureClass::ServerProtocol);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_custom_stack_keeps_the_catalog_and_the_deadline() {
    let seen = Seen::default();
    let audit = AuditLayer(seen.clone());
    let binding = Binding::builder(Definition::new("demo", mcp_stack::demo::factory()))
        .stack(move |parts| {
            // No tool-call gate, no retries: the host's choice.
            let stack = tower::ServiceBuilder::new()
                .layer(parts.result_limit())
                .layer(parts.progress())
                .layer(audit)
                .layer(parts.concurrency_limit())
                .service(parts.reconnect());
            BoxMcpService::new(stack)
        })
        .connect()
        .await
        .unwrap();
    assert_eq!(binding.catalog().generation, 1);
    assert!(binding.catalog().tool("echo").is_some());
    let result = binding.call_tool("echo", json!({ "message": "mine" }), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("mine"));
    assert_eq!(seen.counts()["tools/call"], 1);
    let opts = CallOpts::default().with_timeout(Duration::from_millis(50));
    let slow = binding.call_tool("sleep", json!({ "ms": 5_000 }), opts).await.unwrap_err();
    assert_eq!(slow.class(), FailureClass::Deadline);
    binding.close().await;
}
