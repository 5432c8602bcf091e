//! The binding's tool filter, enforced at call time.
//!
//! [`ToolFilterService`] applies a [`ToolFilter`] (raw names; a non-empty
//! `allow` is the complete set, `deny` always wins):
//!
//! - a `tools/call` to a tool the filter does not permit ends at once with
//!   class `tool_unavailable` (its source is a [`Filtered`]), and nothing is
//!   sent: no request reaches the inner service, so no deadline, progress
//!   route, gate or permit is taken and the server sees nothing;
//! - a `tools/list` result has the tools the filter does not permit removed
//!   from `result.tools`, so a filtered tool is never offered to a model.
//!
//! Enforcing at call time, not only when listing, is the point: a caller who
//! learned a tool's name elsewhere (an older listing, a model's guess) still
//! cannot call it.
//!
//! # Readiness
//!
//! `poll_ready` does not ask the inner service; this service is always
//! ready, and each permitted call drives a clone of the inner service to
//! readiness in its own response future (as [`Deadline`] does). The reason
//! is that the decision needs the request, and `poll_ready` does not see it:
//! if `poll_ready` waited for the inner service, a refused call would first
//! wait for capacity it will never use — behind a full concurrency limit, or
//! a reconnect — and a connection that had failed would make it fail with
//! that failure instead of `tool_unavailable`. As it is, a refusal neither
//! needs nor consumes anything below: it is immediate and the same in every
//! state of the connection. A permitted call polls the inner service once:
//! ready (in the binding's stack it always is: the deadline is below), it is
//! called at once; otherwise the call's future takes the service it polled
//! and drives it, and a clone takes its place.
//!
//! ```
//! # use mcp_stack::layer::ToolFilterLayer;
//! # use mcp_stack::request::{McpRequest, McpResponse};
//! # use mcp_stack::{FailureClass, ToolFilter};
//! use serde_json::json;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let filter = ToolFilter { allow: vec![], deny: vec!["delete_everything".into()] };
//! let svc = ServiceBuilder::new().layer(ToolFilterLayer::new(filter)).service(service_fn(
//!     |_req: McpRequest| async move {
//!         let tools = json!({ "tools": [{ "name": "echo" }, { "name": "delete_everything" }] });
//!         Ok::<_, mcp_stack::Error>(McpResponse::new(tools))
//!     },
//! ));
//!
//! let listed = svc.clone().oneshot(McpRequest::new("tools/list", Default::default())).await.unwrap();
//! assert_eq!(listed.result["tools"], json!([{ "name": "echo" }]));
//!
//! let call = McpRequest::with_value("tools/call", json!({ "name": "delete_everything" }));
//! let err = svc.oneshot(call).await.unwrap_err();
//! assert_eq!(err.class(), FailureClass::ToolUnavailable);
//! # }
//! ```
//!
//! [`ToolFilter`]: crate::ToolFilter
//! [`Deadline`]: crate::layer::Deadline

mod error;
pub mod future;
mod layer;

pub use error::Filtered;
pub use layer::ToolFilterLayer;

use std::sync::Arc;
use std::task::{Context, Poll};
use tower_service::Service;

use crate::binding::ToolFilter;
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};

/// The longest tool name quoted in a refusal, in bytes (a raw name's bound).
const MAX_QUOTED_NAME_BYTES: usize = 512;

/// Refuses calls to filtered tools and removes them from listings. See the
/// [module docs](self).
#[derive(Debug, Clone)]
pub struct ToolFilterService<S> {
    inner: S,
    /// `None` when the filter restricts nothing (the default): then the
    /// service holds nothing shared, and a copy of it no reference to count.
    filter: Option<Arc<ToolFilter>>,
}

/// The filter that restricts nothing.
static UNRESTRICTED: ToolFilter = ToolFilter { allow: Vec::new(), deny: Vec::new() };

/// `filter`, unless it restricts nothing.
fn restricting(filter: Arc<ToolFilter>) -> Option<Arc<ToolFilter>> {
    (!(filter.allow.is_empty() && filter.deny.is_empty())).then_some(filter)
}

impl<S> ToolFilterService<S> {
    /// Wraps `inner`, enforcing `filter`.
    pub fn new(inner: S, filter: ToolFilter) -> Self {
        ToolFilterService { inner, filter: restricting(Arc::new(filter)) }
    }

    /// The filter in force.
    pub fn filter(&self) -> &ToolFilter {
        self.filter.as_deref().unwrap_or(&UNRESTRICTED)
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

impl<S> Service<McpRequest> for ToolFilterService<S>
where
    S: Service<McpRequest, Response = McpResponse> + Clone,
    S::Error: Into<Error>,
{
    type Response = McpResponse;
    type Error = Error;
    type Future = future::ResponseFuture<S, McpRequest>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        // Readiness is awaited inside each permitted call; see the module docs.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        if let Some(filter) = self.filter.as_ref().filter(|_| req.method == methods::TOOLS_CALL) {
            // A call without a string name is judged as the empty name: refused
            // under an allow list, passed on (for the server to reject) otherwise.
            let name = req.params.get("name").and_then(|n| n.as_str()).unwrap_or("");
            if !filter.permits(name) {
                return future::ResponseFuture::refused(refusal(name));
            }
        }
        let list_filter = if req.method == methods::TOOLS_LIST { self.filter.clone() } else { None };
        future::ResponseFuture::permitted(crate::layer::Call::start(&mut self.inner, req), list_filter)
    }
}

/// The error for a call the filter refuses.
#[cold]
#[inline(never)]
fn refusal(name: &str) -> Error {
    let cause = Filtered { tool: normalize_message(name, MAX_QUOTED_NAME_BYTES) };
    Error::new(FailureClass::ToolUnavailable, cause.to_string()).with_source(cause)
}

#[cfg(test)]
mod tests;
