//! Absolute per-call deadlines.
//!
//! [`Deadline`] ends a call with class `deadline` when its deadline passes:
//! the one the caller fixed in [`CallOpts::deadline`], or now plus the
//! binding's request timeout, taken when the call enters the layer. The
//! deadline is an instant, fixed before anything is sent, so nothing the
//! server does can move it: progress notifications in particular never extend
//! it (a deadline that reset on activity would be one the server controls).
//!
//! The wait for the inner service to become ready counts against the
//! deadline: a call queued behind a concurrency limit or a reconnect gives up
//! at its deadline like any other. That is why this layer does not pass
//! `poll_ready` through: it is always ready, and each call drives the inner
//! service to readiness inside its own deadline. The call polls the inner
//! service once first: ready, it is called at once; otherwise the call's
//! future takes the service it polled, to drive it, and leaves a clone in
//! its place (so nothing the wait reserves stays behind in this service).
//!
//! The deadline it enforces is written into the request's
//! [`CallOpts::deadline`] on its way down, so that the layers below (the
//! retry policy, which never sleeps past it) work to the same instant.
//!
//! On expiry the inner future is dropped, which cancels the request on the
//! wire (the connection sends `notifications/cancelled`).
//!
//! A reply and the deadline that arrive in the same poll: the reply wins,
//! because the inner future is polled first. A caller who got an answer gets it.
//!
//! ```
//! # use mcp_stack::layer::DeadlineLayer;
//! # use mcp_stack::request::{McpRequest, McpResponse};
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
//! [`CallOpts::deadline`]: crate::request::CallOpts::deadline

mod error;
pub mod future;
mod layer;

pub use error::Elapsed;
pub use layer::DeadlineLayer;

use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tower_service::Service;

use crate::error::Error;
use crate::request::McpRequest;

/// Ends calls at their absolute deadline. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Deadline<S> {
    inner: S,
    default_timeout: Duration,
}

impl<S> Deadline<S> {
    /// Wraps `inner`; calls without a deadline get `default_timeout` from now.
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
    S: Service<McpRequest> + Clone,
    S::Error: Into<Error>,
{
    type Response = S::Response;
    type Error = Error;
    type Future = future::ResponseFuture<S, McpRequest>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        // Readiness is awaited inside each call, under its deadline.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let now = Instant::now();
        // Written into the request so that the layers below (the retry
        // policy) see the same instant this layer enforces.
        let deadline = *req.opts.deadline.get_or_insert(now + self.default_timeout);
        let allowed = deadline.saturating_duration_since(now);
        let method = future::method_name(&req.method);
        let state = match crate::layer::ready_now(&mut self.inner) {
            crate::layer::Readiness::Ready => future::State::Calling { future: self.inner.call(req) },
            crate::layer::Readiness::Pending(service) => {
                future::State::Waiting { service, request: Some(req) }
            }
            crate::layer::Readiness::Failed(e) => future::State::Failed { error: Some(e.into()) },
        };
        future::ResponseFuture::new(state, deadline, allowed, method)
    }
}

#[cfg(test)]
mod tests;
