//! Retrying what is safe to repeat, after failures that may pass.
//!
//! [`SafeRetry`] is a [`tower::retry::Policy`]: the retrying itself is
//! tower's [`Retry`] service; this module only decides *whether* and *when*.
//! It exists because most MCP requests are not safe to send twice. A
//! `tools/call` may move money, delete a file or send an email; if its
//! connection was lost after it was sent, nobody knows whether it ran, and
//! sending it again could run it twice. So:
//!
//! | failure | retried for |
//! | --- | --- |
//! | `transport_closed` (the request never left the client) | the requests safe to repeat (below), and `tools/call` |
//! | `indeterminate` (sent; the connection was lost before the reply) | the requests safe to repeat only |
//! | anything else (`deadline`, `shutdown`, a server error, ...) | nothing |
//!
//! The requests safe to repeat, since sending one twice does no more than
//! sending it once: `ping`, `tools/list`, `prompts/list`, `prompts/get`,
//! `resources/list`, `resources/templates/list`, `resources/read` and
//! `completion/complete`.
//!
//! A `tools/call` that ended `indeterminate` is therefore never replayed:
//! the caller gets `indeterminate` and decides.
//!
//! A request refused because the server forgot the session
//! ([`SessionExpired`](crate::transport::SessionExpired)) is not retried
//! either: the reconnect layer below already renewed the session at once
//! and sent it again, and waiting to do that once more would only delay
//! the failure.
//!
//! The connection engine ([`crate::connection`]) is what makes the
//! distinction trustworthy: a request that finds its connection ended is not
//! sent and ends `transport_closed`; one that was sent ends `indeterminate`.
//!
//! # Bounds
//!
//! - **Attempts**: at most [`RetryPolicy::attempts`] tries per request, the
//!   first included.
//! - **Delays**: tower's [`ExponentialBackoff`] from the [`RetryPolicy`]
//!   (base, max, jitter).
//! - **Deadline**: a retry whose delay would end at or after the request's
//!   deadline ([`CallOpts::deadline`], which the deadline layer fills in) is
//!   not made: the request fails now with its real failure rather than
//!   sleeping into a `deadline` error.
//! - **Budget**: a [`RetryBudget`] shared by every request of one policy
//!   (and its clones) caps retries at a fraction of the requests made, plus
//!   a small floor per second, so a server that fails everything is not sent
//!   every request several times over. Any tower [`Budget`] can replace it
//!   ([`SafeRetry::with_budget`]).
//!
//! Put it below the deadline (which bounds the whole loop, waits included)
//! and above the reconnect layer (whose readiness is what a retry waits for
//! while the connection is being restored).
//!
//! ```
//! # use mcp_stack::RetryPolicy;
//! # use mcp_stack::layer::retry::SafeRetry;
//! # use mcp_stack::layer::deadline::DeadlineLayer;
//! # use mcp_stack::{McpRequest, McpResponse};
//! # use mcp_stack::{Error, FailureClass};
//! # use std::sync::atomic::{AtomicU32, Ordering};
//! # use std::sync::Arc;
//! # use std::time::Duration;
//! use tower::retry::RetryLayer;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let tries = Arc::new(AtomicU32::new(0));
//! let counter = tries.clone();
//! let svc = ServiceBuilder::new()
//!     .layer(DeadlineLayer::new(Duration::from_secs(5)))
//!     .layer(RetryLayer::new(SafeRetry::new(&RetryPolicy {
//!         base_delay: Duration::from_millis(1),
//!         ..Default::default()
//!     })))
//!     .service(service_fn(move |_req: McpRequest| {
//!         let n = counter.fetch_add(1, Ordering::SeqCst);
//!         async move {
//!             if n == 0 {
//!                 Err(Error::new(FailureClass::Indeterminate, "lost before the reply"))
//!             } else {
//!                 Ok(McpResponse::new(serde_json::json!({ "tools": [] })))
//!             }
//!         }
//!     }));
//! // tools/list is safe to repeat: the lost first try is retried.
//! svc.oneshot(McpRequest::new("tools/list", Default::default())).await.unwrap();
//! assert_eq!(tries.load(Ordering::SeqCst), 2);
//! # }
//! ```
//!
//! [`Retry`]: tower::retry::Retry
//! [`ExponentialBackoff`]: tower::retry::backoff::ExponentialBackoff
//! [`Budget`]: tower::retry::budget::Budget
//! [`CallOpts::deadline`]: crate::request::CallOpts::deadline

mod budget;

use crate::config::RetryPolicy;
pub use budget::RetryBudget;

use std::pin::Pin;
use std::sync::Arc;
use tokio::time::Sleep;
use tower::retry::backoff::{Backoff, ExponentialBackoff};
use tower::retry::budget::Budget;
use tower::retry::Policy;

use crate::error::{Error, FailureClass};
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};

/// Whether sending `method` twice does no more than sending it once: the
/// lists, the reads, `ping` and `completion/complete`.
pub(crate) fn is_safe_to_repeat(method: &str) -> bool {
    matches!(
        method,
        methods::PING
            | methods::TOOLS_LIST
            | methods::PROMPTS_LIST
            | methods::PROMPTS_GET
            | methods::RESOURCES_LIST
            | methods::RESOURCES_TEMPLATES_LIST
            | methods::RESOURCES_READ
            | methods::COMPLETION_COMPLETE
    )
}

/// Whether a request for `method` that failed with `class` may be sent
/// again. See the [module docs](self) for the table.
pub(crate) fn is_retryable(method: &str, class: FailureClass) -> bool {
    match class {
        FailureClass::TransportClosed => is_safe_to_repeat(method) || method == methods::TOOLS_CALL,
        FailureClass::Indeterminate => is_safe_to_repeat(method),
        _ => false,
    }
}

/// A [`tower::retry::Policy`] that retries only what is safe to repeat,
/// after failures that may pass. See the [module docs](self).
///
/// Tower clones the policy for each request (into the request's future); the
/// attempt count and the backoff are per request, the budget is shared. The
/// policy is kept small for that reason: what never changes is shared, and a
/// request's backoff is made only when it is first retried.
#[derive(Debug, Clone)]
pub struct SafeRetry {
    tried: u32,
    shared: Arc<Shared>,
    /// This request's delays, from its first retry on.
    backoff: Option<Box<ExponentialBackoff>>,
}

/// What every clone of a policy shares.
struct Shared {
    attempts: u32,
    /// Cloned for a request's first retry: the delays start from the base.
    backoff: ExponentialBackoff,
    budget: Arc<dyn Budget + Send + Sync>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("attempts", &self.attempts).finish_non_exhaustive()
    }
}

impl SafeRetry {
    /// A policy with `policy`'s attempts and delays and a default
    /// [`RetryBudget`] (a retry for every five requests, ten a second at
    /// least). `max_total` does not apply here: each request's own deadline
    /// bounds its loop.
    pub fn new(policy: &RetryPolicy) -> Self {
        Self::with_parts(policy.resolved().attempts, policy.backoff(), Arc::new(RetryBudget::default()))
    }

    /// A policy that never retries (one attempt).
    pub fn never() -> Self {
        Self::with_parts(1, RetryPolicy::default().backoff(), Arc::new(RetryBudget::default()))
    }

    /// Replaces the shared budget with any tower [`Budget`] (tower's own
    /// [`TpsBudget`](tower::retry::budget::TpsBudget), for one).
    pub fn with_budget(self, budget: Arc<dyn Budget + Send + Sync>) -> Self {
        Self::with_parts(self.shared.attempts, self.shared.backoff.clone(), budget)
    }

    fn with_parts(attempts: u32, backoff: ExponentialBackoff, budget: Arc<dyn Budget + Send + Sync>) -> Self {
        SafeRetry { tried: 0, shared: Arc::new(Shared { attempts, backoff, budget }), backoff: None }
    }

    fn decide(&mut self, req: &McpRequest, result: &Result<McpResponse, Error>) -> Option<Pin<Box<Sleep>>> {
        self.tried += 1;
        if self.tried == 1 {
            // Every request pays in once; each retry draws.
            self.shared.budget.deposit();
        }
        let error = result.as_ref().err()?;
        // A forgotten session was renewed once below, at once; waiting and
        // trying again would only repeat that (see
        // `crate::layer::reconnect`).
        if !is_retryable(&req.method, error.class())
            || self.tried >= self.shared.attempts
            || crate::transport::is_session_expired(error)
        {
            return None;
        }
        let delay = self.backoff.get_or_insert_with(|| Box::new(self.shared.backoff.clone())).next_backoff();
        if req.opts.deadline.is_some_and(|deadline| delay.deadline() >= deadline) {
            return None;
        }
        self.shared.budget.withdraw().then(|| Box::pin(delay))
    }

    /// Whether a request may ever be sent again, which is when tower's
    /// `Retry` needs to keep it.
    fn may_retry(&self, req: &McpRequest) -> bool {
        self.shared.attempts > 1 && (is_safe_to_repeat(&req.method) || req.method == methods::TOOLS_CALL)
    }
}

/// The delay before a retry. Boxed: tower's `Retry` keeps it inline in
/// every request's future, and most requests never wait.
pub(crate) type RetryDelay = Pin<Box<Sleep>>;

impl Policy<McpRequest, McpResponse, Error> for SafeRetry {
    type Future = RetryDelay;

    fn retry(&mut self, req: &mut McpRequest, result: &mut Result<McpResponse, Error>) -> Option<RetryDelay> {
        self.decide(req, result)
    }

    /// A copy of the request, when it may be retried: cheap, as the params
    /// are shared (see [`McpRequest`]).
    fn clone_request(&mut self, req: &McpRequest) -> Option<McpRequest> {
        self.may_retry(req).then(|| req.clone())
    }
}

#[cfg(test)]
mod tests;
