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
//! # Timing
//!
//! The calls of one layer share one timer: a queue of their deadlines and
//! one task that wakes each call when its deadline passes, rather than a
//! tokio `Sleep` per call (why, and how, in the `timer` module's docs).
//! Whether a call expired is decided by comparing its deadline with tokio's
//! clock each time the call is polled (the first time, with the instant it
//! entered the layer), so it holds exactly on tokio's paused clock too. The task runs on the runtime of the first call that waits and
//! ends with the layer; calls must be polled within a tokio runtime, as for
//! any tokio timer.
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
mod timer;

pub use error::Elapsed;
pub use layer::DeadlineLayer;

use std::fmt;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tower_service::Service;

use timer::DeadlineTimer;

use crate::error::Error;
use crate::request::McpRequest;

/// Ends calls at their absolute deadline. See the [module docs](self).
///
/// Clones share one timer (see [Timing](self#timing)).
#[derive(Clone)]
pub struct Deadline<S> {
    inner: S,
    default_timeout: Duration,
    timer: DeadlineTimer,
}

impl<S> Deadline<S> {
    /// Wraps `inner`; calls without a deadline get `default_timeout` from now.
    pub fn new(inner: S, default_timeout: Duration) -> Self {
        Self::with_timer(inner, default_timeout, DeadlineTimer::default())
    }

    pub(crate) fn with_timer(inner: S, default_timeout: Duration, timer: DeadlineTimer) -> Self {
        Deadline { inner, default_timeout, timer }
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

impl<S: fmt::Debug> fmt::Debug for Deadline<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deadline")
            .field("inner", &self.inner)
            .field("default_timeout", &self.default_timeout)
            .finish_non_exhaustive()
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
        let method = future::method_name(&req.method);
        let state = future::State::Running { call: crate::layer::Call::start(&mut self.inner, req) };
        future::ResponseFuture::new(state, self.timer.entry(deadline), now, method)
    }
}

#[cfg(test)]
mod tests;
