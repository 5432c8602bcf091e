//! One tool call at a time per binding.
//!
//! [`ToolCallGate`] makes `tools/call` requests take turns: a call waits for
//! the gate (a semaphore of one permit shared by every clone of the service,
//! first come first served), holds it until its response future completes or
//! is dropped, then the next one goes. Tools are often written for one
//! caller at a time — they share a working directory, a browser, a REPL —
//! and running a model's calls in parallel is something a host opts into,
//! with [`Definition::allow_parallel_calls`]; then the layer passes
//! everything straight through ([`ToolCallGateLayer::parallel`]), readiness
//! included.
//!
//! Only tool calls take turns. Listing, reading, prompts, ping — every other
//! method — never wait for the gate, so a long tool call never holds up the
//! rest of the binding.
//!
//! Nor does a tool call the host makes while it serves the server's own
//! request inside a tool call (a sampling handler calling a tool back): the
//! request carries a sampling depth above zero in its extensions (put there
//! by the binding's [sampling-depth layer](crate::layer::sampling_depth)). It is
//! part of the call that holds the gate, which cannot finish before it, so
//! making it wait would deadlock both.
//!
//! # Gate first, then the inner service's readiness
//!
//! With the gate closed, this service is always ready, and each call drives
//! a clone of the inner service in its response future, in this order: the
//! gate's permit (tool calls only), then the inner service's readiness, then
//! the call. The inner service is normally a concurrency limit, whose
//! readiness *is* a permit; reserving that first and then waiting for the
//! gate would let tool calls queued behind a long one sit on concurrency
//! permits they cannot use. A handful of them would take every permit, and
//! then the `tools/list` or `ping` that should pass would wait too — and if
//! the running tool call needed one more request on the same binding (a
//! host answering the server's sampling request by calling back, say), the
//! binding would deadlock. Taking the gate first means a queued tool call
//! holds nothing but its place in the gate's queue.
//!
//! This is the one layer of the stack that does not pass readiness through,
//! because readiness here depends on the request (tower's `Buffer` and
//! `Steer` make the same trade): so it needs a `Clone` inner service, and a
//! call clones it (a few reference counts) to drive it in its future.
//!
//! Waiting for the gate counts against the call's deadline: in a binding
//! this layer sits below the deadline, inside the call's future.
//!
//! The layer adds no failure: its error is the inner service's.
//!
//! ```
//! # use mcp_stack::layer::tool_gate::ToolCallGateLayer;
//! # use mcp_stack::{McpRequest, McpResponse};
//! use serde_json::json;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let svc = ServiceBuilder::new()
//!     .layer(ToolCallGateLayer::serial())
//!     .concurrency_limit(8)
//!     .service(service_fn(|req: McpRequest| async move {
//!         Ok::<_, mcp_stack::Error>(McpResponse::new(json!({ "method": req.method })))
//!     }));
//! let call = |name: &str| McpRequest::with_value("tools/call", json!({ "name": name }));
//! // Both complete; the second started only when the first had finished.
//! let (a, b) = tokio::join!(svc.clone().oneshot(call("a")), svc.clone().oneshot(call("b")));
//! assert!(a.is_ok() && b.is_ok());
//! # }
//! ```
//!
//! [`Definition::allow_parallel_calls`]: crate::Definition::allow_parallel_calls

mod future;
mod layer;

pub use future::ResponseFuture;
pub use layer::ToolCallGateLayer;

use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::Semaphore;
use tower_service::Service;

use crate::layer::sampling_depth::Depth;
use crate::protocol::methods;
use crate::request::McpRequest;

/// Makes tool calls take turns. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ToolCallGate<S> {
    inner: S,
    // `None` when parallel calls are allowed: everything passes through.
    gate: Option<Arc<Semaphore>>,
}

impl<S> ToolCallGate<S> {
    /// Wraps `inner`; tool calls take turns unless `allow_parallel_calls`.
    pub fn new(inner: S, allow_parallel_calls: bool) -> Self {
        let gate = (!allow_parallel_calls).then(|| Arc::new(Semaphore::new(1)));
        ToolCallGate { inner, gate }
    }

    /// Whether tool calls take turns.
    pub fn is_serial(&self) -> bool {
        self.gate.is_some()
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<McpRequest> for ToolCallGate<S>
where
    S: Service<McpRequest> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = future::ResponseFuture<S, McpRequest>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match self.gate {
            // Parallel: the inner service's readiness, passed through.
            None => self.inner.poll_ready(cx),
            // Serial: what a call waits for depends on the call; it waits in
            // its future (see the module docs).
            Some(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let Some(gate) = &self.gate else {
            return future::ResponseFuture::called(self.inner.call(req));
        };
        let nested = req.extensions.get::<Depth>().is_some_and(|depth| depth.0 > 0);
        let gate = (req.method == methods::TOOLS_CALL && !nested).then(|| gate.clone());
        future::ResponseFuture::gated(gate, self.inner.clone(), req)
    }
}

#[cfg(test)]
mod tests;
