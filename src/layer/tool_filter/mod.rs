//! The binding's tool filter, enforced at call time.
//!
//! [`EnforceToolFilter`] applies a [`ToolFilter`](crate::ToolFilter) (raw names; a non-empty
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
//! Readiness passes through, as in tower's `Filter`: `poll_ready` is the
//! inner service's, and a refused call leaves whatever it reserved for the
//! next call. A refusal sends nothing and takes nothing, but over an inner
//! service that is not ready it waits for readiness like any call. In a
//! binding the filter sits above the point where the stack is driven to
//! readiness inside each call (see [`Binding`](crate::Binding#the-stack)), so there it is
//! always ready and a refusal is immediate, whatever the state of the
//! connection.
//!
//! ```
//! # use mcp_stack::layer::tool_filter::ToolFilterLayer;
//! # use mcp_stack::{McpRequest, McpResponse};
//! # use mcp_stack::{FailureClass, ToolFilter};
//! use serde_json::json;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let filter = ToolFilter::default().with_denied(["delete_everything"]);
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
//! [`Deadline`]: crate::layer::deadline::Deadline

mod error;
mod future;
mod layer;

pub use error::Filtered;
pub use future::ResponseFuture;
pub use layer::ToolFilterLayer;

use std::sync::Arc;
use std::task::{Context, Poll};
use tower_service::Service;

use crate::config::ToolFilter as Policy;
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};

/// The longest tool name quoted in a refusal.
const MAX_QUOTED_NAME_BYTES: usize = 512;

/// Enforces a tool filter at call time and filters `tools/list` results.
/// See the [module docs](self).
#[derive(Debug, Clone)]
pub struct EnforceToolFilter<S> {
    inner: S,
    // `None` when the filter permits everything: nothing to check or hold.
    policy: Option<Arc<Policy>>,
}

static UNRESTRICTED: Policy = Policy { allow: None, deny: Vec::new() };

fn restricting(policy: Arc<Policy>) -> Option<Arc<Policy>> {
    (!policy.is_unrestricted()).then_some(policy)
}

impl<S> EnforceToolFilter<S> {
    /// Wraps `inner`, enforcing `policy`.
    pub fn new(inner: S, policy: Policy) -> Self {
        EnforceToolFilter { inner, policy: restricting(Arc::new(policy)) }
    }

    /// The filter this service enforces.
    pub fn policy(&self) -> &Policy {
        self.policy.as_deref().unwrap_or(&UNRESTRICTED)
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

impl<S> Service<McpRequest> for EnforceToolFilter<S>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Error: From<Error>,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = future::ResponseFuture<S::Future, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        if let Some(policy) = self.policy.as_ref().filter(|_| req.method == methods::TOOLS_CALL) {
            let name = req.params().get("name").and_then(|n| n.as_str()).unwrap_or("");
            if !policy.permits(name) {
                return future::ResponseFuture::refused(refusal(name).into());
            }
        }
        let list_filter = if req.method == methods::TOOLS_LIST { self.policy.clone() } else { None };
        future::ResponseFuture::permitted(self.inner.call(req), list_filter)
    }
}

#[cold]
#[inline(never)]
fn refusal(name: &str) -> Error {
    let cause = Filtered { tool: normalize_message(name, MAX_QUOTED_NAME_BYTES) };
    Error::new(FailureClass::ToolUnavailable, cause.to_string()).with_source(cause)
}

#[cfg(test)]
mod tests;
