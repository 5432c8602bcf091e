//! Absolute per-call deadlines.
//!
//! [`Deadline`] ends a call with [`Elapsed`] when its deadline passes: the
//! one the caller fixed in [`CallOpts`] (an instant, or a timeout counted
//! from the moment the call enters this layer), or else the layer's default
//! timeout from that moment. The deadline is an instant, fixed before
//! anything is sent, so nothing the server does can move it: progress
//! notifications in particular never extend it (a deadline that reset on
//! activity would be one the server controls).
//!
//! It is tower's `Timeout` with an absolute, per-request deadline: readiness
//! passes through (`poll_ready` is the inner service's), and the deadline
//! covers the call's response future. It needs nothing of the crate but
//! [`McpRequest`]: any inner service of it whose error can be made from
//! [`Elapsed`] will do (`crate::Error` and tower's `BoxError` both can), and
//! the inner service need not be `Clone`.
//!
//! A caller that waits for readiness before calling (`ServiceExt::ready`,
//! `oneshot`) waits outside this layer's deadline, as with tower's
//! `Timeout`. A binding bounds that wait too: its handle drives the stack to
//! readiness inside each call's future, under the call's deadline (see
//! [`Binding`](crate::Binding#the-stack)).
//!
//! The deadline it enforces is written into the request's
//! [`CallOpts::deadline`] on its way down (and `CallOpts::timeout` cleared),
//! so that the layers below (the retry policy, which never sleeps past it)
//! work to the same instant.
//!
//! On expiry the inner future is dropped, which cancels the request on the
//! wire (the connection sends `notifications/cancelled`).
//!
//! # Timing
//!
//! Each call has its own tokio `Sleep`. The crate once kept one timer task
//! per layer instead, to save the timer driver's wake-up per call; measured
//! end to end over stdio that saved under 5% of a call (`benches/overhead.rs`
//! has the figures), so the simpler primitive stays.
//!
//! A reply and the deadline that arrive in the same poll: the reply wins,
//! because the inner future is polled first.
//!
//! ```
//! # use mcp_stack::layer::deadline::DeadlineLayer;
//! # use mcp_stack::{McpRequest, McpResponse};
//! # use std::time::Duration;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let svc = ServiceBuilder::new()
//!     .layer(DeadlineLayer::new(Duration::from_secs(5)))
//!     .service(service_fn(|req: McpRequest| async move {
//!         Ok::<_, mcp_stack::Error>(McpResponse::new(serde_json::json!({ "echo": req.method })))
//!     }));
//! let rsp = svc.oneshot(McpRequest::new("ping", Default::default())).await.unwrap();
//! assert_eq!(rsp.result["echo"], "ping");
//! # }
//! ```
//!
//! [`CallOpts`]: crate::request::CallOpts
//! [`CallOpts::deadline`]: crate::request::CallOpts::deadline

mod error;
mod future;
mod layer;

pub use error::Elapsed;
pub use future::ResponseFuture;
pub use layer::DeadlineLayer;

use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tower_service::Service;

use crate::request::McpRequest;

/// Ends calls at their absolute deadline. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Deadline<S> {
    inner: S,
    default_timeout: Duration,
}

impl<S> Deadline<S> {
    /// Wraps `inner`; calls without a deadline get `default_timeout` from the
    /// moment they enter.
    pub fn new(inner: S, default_timeout: Duration) -> Self {
        Deadline { inner, default_timeout }
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

impl<S> Service<McpRequest> for Deadline<S>
where
    S: Service<McpRequest>,
    S::Error: From<Elapsed>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = future::ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let entered = Instant::now();
        let deadline = req.opts.deadline_from(entered, self.default_timeout);
        // Written into the request so that the layers below (the retry
        // policy) see the same instant this layer enforces.
        req.opts.deadline = Some(deadline);
        req.opts.timeout = None;
        let method = future::method_name(&req.method);
        let allowed = deadline.saturating_duration_since(entered);
        let sleep = tokio::time::sleep_until(deadline);
        future::ResponseFuture::new(self.inner.call(req), sleep, allowed, method)
    }
}

#[cfg(test)]
mod tests;
