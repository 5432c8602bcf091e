//! [`ResponseFuture`]: the inner future, polled inside the request's span,
//! and what the request came to, recorded on it.

use pin_project_lite::pin_project;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::time::Instant;

use super::TARGET;
use crate::error::Error;
use crate::request::McpResponse;

pin_project! {
    /// The future of one request through the trace layer.
    pub(crate) struct ResponseFuture<F> {
        #[pin]
        inner: F,
        span: tracing::Span,
        tool: bool,
        started: Instant,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(inner: F, span: tracing::Span, tool: bool, started: Instant) -> Self {
        ResponseFuture { inner, span, tool, started }
    }
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").field("span", &self.span).finish_non_exhaustive()
    }
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<McpResponse, Error>>,
{
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let out = ready!(this.inner.poll(cx));
        if !this.span.is_disabled() {
            finish(this.span, *this.tool, this.started.elapsed().as_millis() as u64, &out);
        }
        Poll::Ready(out)
    }
}

/// Records the outcome on the span and says, once, how the request ended.
fn finish(span: &tracing::Span, tool: bool, elapsed_ms: u64, out: &Result<McpResponse, Error>) {
    match out {
        Ok(rsp) => {
            let tool_error = tool && rsp.result.get("isError") == Some(&Value::Bool(true));
            if tool_error {
                span.record("error.type", "tool_error");
                span.record("otel.status_code", "ERROR");
            }
            if tool {
                tracing::info!(target: TARGET, elapsed_ms, is_error = tool_error, "tool call done");
            } else {
                tracing::debug!(target: TARGET, elapsed_ms, "request done");
            }
        }
        Err(e) => {
            let class = e.class().as_str();
            span.record("error.type", class);
            span.record("otel.status_code", "ERROR");
            if tool {
                tracing::info!(target: TARGET, elapsed_ms, error.type = class, "tool call failed");
            } else {
                tracing::debug!(target: TARGET, elapsed_ms, error.type = class, "request failed");
            }
        }
    }
}
