//! One `tracing` span per request, and the W3C trace context in `_meta`.
//!
//! Every request a binding sends through its stack — the host's calls,
//! `binding.service()`, and the catalog's own reads — runs inside one span,
//! `mcp.request`, opened outermost, so it covers the filter, the deadline,
//! waits at the gate, reconnects, retries and the exchange itself.
//!
//! # Levels: what a busy host reads
//!
//! | target | level | what |
//! | --- | --- | --- |
//! | `mcp_stack::request` | `INFO` | the span of each `tools/call`, and one event when it ends (`tool call done` or `tool call failed`, with `elapsed_ms`) |
//! | `mcp_stack::request` | `DEBUG` | the same for every other request (listings, reads, prompts, ping, completion); and `mcp.connect` (binding, transport, protocol version or error class) around each connect and handshake, whose requests are the connection's own |
//! | `mcp_stack::wire` | `TRACE` | each JSON-RPC send (`id`, `method`, `bytes`) and each reply (`id`, `ok`), in the request's span |
//!
//! Why: tool calls are what an agent *does*, one line each, and what an
//! operator looks for, so `RUST_LOG=mcp_stack::request=info` shows them
//! and nothing else. The catalog's listings and refreshes are frequent
//! and routine: they come at `DEBUG`. Wire detail is per message, and a
//! request may be sent more than once (an `input_required` round, a
//! lost reply re-issued), so it is `TRACE`. A failed tool call is `INFO`
//! too, not `WARN`: models call tools wrongly all the time, and the
//! caller has the classified error; the binding's own trouble (a lost
//! connection, a refresh that gave up) is reported where it happens.
//!
//! # Fields
//!
//! Named after the OpenTelemetry semantic conventions for MCP where they
//! define one, so `tracing-opentelemetry` exports them as the attributes
//! collectors know:
//!
//! | field | value |
//! | --- | --- |
//! | `otel.name` | `{method} {tool or prompt}`, or the method |
//! | `otel.kind` | `client` |
//! | `mcp.binding` | the binding's name |
//! | `mcp.method.name` | the JSON-RPC method |
//! | `gen_ai.operation.name` | `execute_tool`, on `tools/call` |
//! | `gen_ai.tool.name` | the tool's raw name, on `tools/call` |
//! | `mcp.tool.model_name` | the tool's model name (`mcp__binding__tool`), when the adopted catalog lists it |
//! | `gen_ai.prompt.name` | the prompt's name, on `prompts/get` |
//! | `jsonrpc.request.id` | the id the request went out with (the last one, when it was sent again) |
//! | `mcp.protocol.version` | the version the request was sent in |
//! | `error.type` | the [`FailureClass`](crate::FailureClass) of a failed request, or `tool_error` for a result with `isError` |
//! | `otel.status_code` | `ERROR` when it failed |
//!
//! # No secrets
//!
//! What a span or event carries is the list above: names the host chose
//! (binding, method) or the server listed (tool and prompt names, cut to
//! 128 bytes without control characters), ids, versions, classes and
//! times. Never the params: no tool arguments (their values are the
//! user's and the model's, and may hold anything), no resource URIs
//! (which can carry tokens in their query), no completion values; never
//! a header, a token or a URL (the transport never gives them to the
//! stack); never an error's message (a server may echo arguments into
//! it), only its class.
//!
//! # Trace context
//!
//! With [`Definition::trace_context`](crate::Definition::trace_context)
//! set (it is `None` by default: nothing is sent), each request's `_meta`
//! carries `traceparent` and, when there is one, `tracestate`, as
//! SEP-414 documents for MCP (the keys are W3C Trace Context's, without a
//! prefix). The value comes from the definition's [`TraceContextSource`],
//! called inside the request's span; see it for how an OpenTelemetry user
//! connects theirs. It is written on either era: the 2026-07-28 era keeps
//! every `_meta` key it does not own, and a `initialize`-era server
//! ignores keys it does not know. A `traceparent` the caller already put
//! in the request's `_meta` is kept as it is.

mod context;
pub(crate) mod future;

pub use context::{TraceContext, TraceContextSource};

use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::time::Instant;
use tower_service::Service;

use crate::error::{normalize_message, Error};
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};

/// `_meta` key of the W3C `traceparent`.
pub(crate) const META_TRACEPARENT: &str = "traceparent";
/// `_meta` key of the W3C `tracestate`.
pub(crate) const META_TRACESTATE: &str = "tracestate";

/// The target of the request spans and their events.
pub(crate) const TARGET: &str = "mcp_stack::request";

/// Finds a tool's model name from its raw name, in the adopted catalog.
pub(crate) type ModelNames = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Opens a request's span (see the [module docs](self)) and writes the
/// trace context into its `_meta`.
#[derive(Clone)]
pub(crate) struct Trace<S> {
    inner: S,
    binding: Arc<str>,
    model_names: Option<ModelNames>,
    source: Option<Arc<dyn TraceContextSource>>,
}

impl<S> Trace<S> {
    pub(crate) fn new(
        inner: S,
        binding: &str,
        model_names: Option<ModelNames>,
        source: Option<Arc<dyn TraceContextSource>>,
    ) -> Self {
        Trace { inner, binding: binding.into(), model_names, source }
    }
}

impl<S> fmt::Debug for Trace<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trace")
            .field("binding", &self.binding)
            .field("trace_context", &self.source.is_some())
            .finish_non_exhaustive()
    }
}

/// The span's fields, declared once for both levels.
macro_rules! request_span {
    ($level:expr) => {
        tracing::span!(
            target: TARGET,
            $level,
            "mcp.request",
            otel.name = tracing::field::Empty,
            otel.kind = "client",
            mcp.binding = tracing::field::Empty,
            mcp.method.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            mcp.tool.model_name = tracing::field::Empty,
            gen_ai.prompt.name = tracing::field::Empty,
            jsonrpc.request.id = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    };
}

impl<S> Trace<S> {
    fn span(&self, req: &McpRequest) -> tracing::Span {
        let tool = req.method == methods::TOOLS_CALL;
        let span =
            if tool { request_span!(tracing::Level::INFO) } else { request_span!(tracing::Level::DEBUG) };
        if span.is_disabled() {
            return span;
        }
        let name =
            |key: &str| req.params().get(key).and_then(Value::as_str).map(|n| normalize_message(n, 128));
        span.record("mcp.binding", &*self.binding);
        span.record("mcp.method.name", req.method.as_str());
        let target = if tool {
            let raw = req.tool_name().unwrap_or_default();
            span.record("gen_ai.operation.name", "execute_tool");
            if let Some(model) = self.model_names.as_ref().and_then(|names| names(raw)) {
                span.record("mcp.tool.model_name", model.as_str());
            }
            name("name").inspect(|n| {
                span.record("gen_ai.tool.name", n.as_str());
            })
        } else if req.method == methods::PROMPTS_GET {
            name("name").inspect(|n| {
                span.record("gen_ai.prompt.name", n.as_str());
            })
        } else {
            None
        };
        match target {
            Some(target) => span.record("otel.name", format!("{} {target}", req.method).as_str()),
            None => span.record("otel.name", req.method.as_str()),
        };
        span
    }
}

impl<S> Service<McpRequest> for Trace<S>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error>,
{
    type Response = McpResponse;
    type Error = Error;
    type Future = future::ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let span = self.span(&req);
        if let Some(source) = &self.source {
            if let Some(context) = span.in_scope(|| source.current()) {
                put_in_meta(req.params_mut(), &context);
            }
        }
        let tool = req.method == methods::TOOLS_CALL;
        let inner = span.in_scope(|| self.inner.call(req));
        future::ResponseFuture::new(inner, span, tool, Instant::now())
    }
}

/// Writes `traceparent` (and `tracestate`) into `_meta`, unless the caller
/// put a `traceparent` there already, or made `_meta` something other than
/// an object (that is the caller's to answer for).
fn put_in_meta(params: &mut Map<String, Value>, context: &TraceContext) {
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else { return };
    if meta.contains_key(META_TRACEPARENT) {
        return;
    }
    meta.insert(META_TRACEPARENT.into(), context.traceparent().into());
    if let Some(state) = context.tracestate() {
        meta.insert(META_TRACESTATE.into(), state.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tower::ServiceExt;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// Answers with the params it was sent.
    #[derive(Clone)]
    struct Echo;

    impl Service<McpRequest> for Echo {
        type Response = McpResponse;
        type Error = Error;
        type Future = std::future::Ready<Result<McpResponse, Error>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, req: McpRequest) -> Self::Future {
            std::future::ready(Ok(McpResponse::new(Value::Object(req.params().clone()))))
        }
    }

    fn source() -> Option<Arc<dyn TraceContextSource>> {
        Some(Arc::new(|| Some(TraceContext::parse(PARENT).unwrap().with_tracestate("k=v"))))
    }

    #[tokio::test]
    async fn the_sources_context_goes_in_meta_beside_the_callers_keys() {
        let svc = Trace::new(Echo, "b", None, source());
        let req =
            McpRequest::with_value("tools/call", json!({ "name": "t", "_meta": { "progressToken": 1 } }));
        let sent = svc.oneshot(req).await.unwrap().result;
        assert_eq!(sent["_meta"], json!({ "progressToken": 1, "traceparent": PARENT, "tracestate": "k=v" }));
    }

    #[tokio::test]
    async fn nothing_is_written_without_a_source_or_a_context_or_over_the_callers_own() {
        let sent = Trace::new(Echo, "b", None, None)
            .oneshot(McpRequest::with_value("ping", json!({})))
            .await
            .unwrap()
            .result;
        assert_eq!(sent, json!({}));
        let none: Arc<dyn TraceContextSource> = Arc::new(|| None);
        let sent = Trace::new(Echo, "b", None, Some(none))
            .oneshot(McpRequest::with_value("ping", json!({})))
            .await
            .unwrap()
            .result;
        assert_eq!(sent, json!({}), "a source with no context sends nothing");
        let own = json!({ "_meta": { "traceparent": "theirs" } });
        let sent =
            Trace::new(Echo, "b", None, source()).oneshot(McpRequest::with_value("ping", own.clone())).await;
        assert_eq!(sent.unwrap().result, own);
    }
}
