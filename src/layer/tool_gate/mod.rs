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
//! request inside a tool call (a sampling handler calling a tool back, seen
//! through [`sampling_depth`](crate::binding::sampling_depth)): it is part
//! of the call that holds the gate, which cannot finish before it, so
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
//! Waiting for the gate counts against the call's deadline (this layer sits
//! below [`Deadline`]): a tool call stuck behind another ends with `deadline`
//! at its own deadline, leaving the queue. Because the waits happen inside
//! the call's future rather than in `poll_ready`, the deadline layer above
//! cannot tell them from waiting for the reply, and reports such an expiry
//! with [`Elapsed::before_sending`] false. That errs on the safe side: a call
//! is never taken for unsent when it might have been sent.
//!
//! The layer adds no failure: its error is the inner service's.
//!
//! ```
//! # use mcp_stack::layer::ToolCallGateLayer;
//! # use mcp_stack::request::{McpRequest, McpResponse};
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
//! [`Deadline`]: crate::layer::Deadline
//! [`Elapsed::before_sending`]: crate::layer::deadline::Elapsed::before_sending

pub mod future;
mod layer;

pub use layer::ToolCallGateLayer;

use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::Semaphore;
use tower_service::Service;

use crate::layer::Call;
use crate::protocol::methods;
use crate::request::McpRequest;

/// Runs tool calls one at a time. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ToolCallGate<S> {
    inner: S,
    // `None`: parallel calls are allowed and the service is a pass-through.
    gate: Option<Arc<Semaphore>>,
}

impl<S> ToolCallGate<S> {
    /// Wraps `inner` with a gate of its own (shared with its clones), or
    /// none if `allow_parallel_calls`.
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
            // A pass-through: readiness is the inner service's.
            None => self.inner.poll_ready(cx),
            // Readiness is awaited in each call, after the gate.
            Some(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let Some(gate) = &self.gate else {
            // Readiness was passed through: the inner service is ready.
            return future::ResponseFuture::running(Call::Calling { future: self.inner.call(req) }, None);
        };
        // A tool call made while the host serves the server's own request
        // (a sampling handler calling back) belongs to the tool call that
        // holds the gate: that call cannot finish until this one does, so
        // waiting at the gate would deadlock both.
        let permit = if req.method != methods::TOOLS_CALL || crate::binding::sampling_depth() > 0 {
            None
        } else {
            match gate.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => {
                    let wait = Box::pin(gate.clone().acquire_owned());
                    return future::ResponseFuture::gating(wait, self.inner.clone(), req);
                }
            }
        };
        // Past the gate: the inner service, ready, is called at once.
        let call = Call::start(&mut self.inner, req);
        // A call whose service failed is over: it gives the gate back now.
        let permit = permit.filter(|_| !matches!(call, Call::Failed { .. }));
        future::ResponseFuture::running(call, permit)
    }
}

#[cfg(test)]
mod tests;
