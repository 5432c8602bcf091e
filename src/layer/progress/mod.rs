//! Progress tokens and routing.
//!
//! [`Progress`] attaches a progress token to a request only
//! when the caller installed a progress sink ([`CallOpts::progress`]):
//! installing it is what asks the server for progress, and a call without a
//! sink carries no token, so the server sends nothing for it.
//!
//! The [`ProgressRouter`] is shared between this layer and the connection's
//! inbound side: the binding hands every `notifications/progress` to
//! [`ProgressRouter::route`], which finds the call by its token.
//!
//! - Tokens are unique per binding (a counter, never reused).
//! - A route lives exactly as long as its call: it is removed when the
//!   response future completes *or is dropped* (deadline, cancellation), so
//!   the table never grows with finished calls. Progress for a token without
//!   a route (late, or invented by the server) is dropped and counted.
//! - Except when the reply starts a task (2025-11-25's `CreateTaskResult`):
//!   the token stays valid for the task's lifetime there, so the reply
//!   carries the route on in its extensions, and the binding's
//!   [`TaskHandle`](crate::TaskHandle) keeps it until the task ends (or the
//!   handle and its clones are dropped). A reply nobody follows drops it.
//! - Delivery never blocks the connection. The sinks are called on one
//!   delivery task per router (per binding), in the order the server sent
//!   the reports, and a binding's server log records go through the same
//!   queue to its log service, so that a host that shows both shows them
//!   in the server's order. At most 32 reports of a call wait
//!   there; past that, the *newest* report is dropped and counted
//!   ([`ProgressRouter::dropped`]). Progress is a best-effort hint whose
//!   latest values matter, but the reports already queued are in order and
//!   complete; keeping them and dropping the overflow keeps the sink's view
//!   monotonic. A slow sink (or log service) delays what comes after it on
//!   that binding, never the reader; a sink that panics costs only that
//!   report.
//! - Message text is bounded to 1024 bytes and
//!   normalized.
//!
//! ```
//! # use mcp_stack::layer::progress::{ProgressLayer, ProgressRouter};
//! # use mcp_stack::{CallOpts, McpRequest, McpResponse};
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let router = ProgressRouter::new("demo");
//! let svc = ServiceBuilder::new()
//!     .layer(ProgressLayer::new(router.clone()))
//!     .service(service_fn(|req: McpRequest| async move {
//!         // The token the layer attached is in the request's `_meta`.
//!         let token = req.params()["_meta"]["progressToken"].clone();
//!         Ok::<_, mcp_stack::Error>(McpResponse::new(token))
//!     }));
//! let req = McpRequest::new("tools/call", Default::default())
//!     .opts(CallOpts::default().with_progress(|p| println!("{}", p.progress)));
//! let rsp = svc.oneshot(req).await.unwrap();
//! assert!(rsp.result.is_string());
//! # }
//! ```
//!
//! [`CallOpts::progress`]: crate::request::CallOpts::progress

mod delivery;
mod future;
mod layer;
mod router;

pub(crate) use delivery::{Deliveries, Job, Pending};
pub use future::ResponseFuture;
pub(crate) use future::TaskRoute;
pub use layer::ProgressLayer;
pub use router::{ProgressRouter, ProgressTracker};

use std::task::{Context, Poll};
use tower_service::Service;

use crate::request::{McpRequest, McpResponse};

/// Attaches progress tokens and keeps their routes. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Progress<S> {
    inner: S,
    router: ProgressRouter,
}

impl<S> Progress<S> {
    /// Wraps `inner`, registering routes in `router`.
    pub fn new(inner: S, router: ProgressRouter) -> Self {
        Progress { inner, router }
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

impl<S> Service<McpRequest> for Progress<S>
where
    S: Service<McpRequest, Response = McpResponse>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = future::ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let tracker = req.opts.progress.take().map(|sink| {
            let tracker = self.router.register(sink);
            let meta = req
                .params_mut()
                .entry("_meta")
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let serde_json::Value::Object(meta) = meta {
                meta.insert("progressToken".into(), tracker.token().into());
            }
            Box::new(tracker)
        });
        future::ResponseFuture::new(self.inner.call(req), tracker)
    }
}

#[cfg(test)]
mod tests;
