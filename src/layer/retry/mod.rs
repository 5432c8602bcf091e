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
//! | `remote_http` with HTTP 429 or 503 (the server, or a gateway before it, refused it unprocessed) | every request, after the server's `Retry-After` when it gave one |
//! | `indeterminate` (sent; the connection was lost before the reply), or `remote_http` with HTTP 408 or another 5xx (it may have run) | the requests safe to repeat, and a `tools/call` marked [`Idempotent`] |
//! | anything else (`deadline`, `shutdown`, a JSON-RPC error, a tool result with `isError`, another HTTP status, ...) | nothing |
//!
//! The requests safe to repeat, since sending one twice does no more than
//! sending it once: `ping`, `tools/list`, `prompts/list`, `prompts/get`,
//! `resources/list`, `resources/templates/list`, `resources/read`,
//! `completion/complete`, and a task's `tasks/get`, `tasks/result` and
//! `tasks/list` (reads of what the server holds; the task runs once
//! whatever is asked of it).
//!
//! A `tools/call` that may have run is therefore never replayed unless
//! the host said the tool is safe to run twice: the request carries
//! [`Idempotent`] in its extensions. A binding puts it there for the tools
//! its definition names ([`RepeatableTools`](crate::RepeatableTools)); by
//! default none, and the caller gets `indeterminate` (or the HTTP failure)
//! and decides.
//!
//! # `Retry-After`
//!
//! A 429 or 503 that says how long to wait ([`Error::retry_after`]) is
//! retried after exactly that long, not after the backoff's delay. When
//! that wait would end at or after the request's deadline, the request
//! fails at once, with its class and status, and its message says how long
//! the server asked to wait: sleeping into a `deadline` would only hide
//! that.
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
//! - **Budget**: tower's [`TpsBudget`], shared by every request of one
//!   policy (and its clones), caps retries at a fifth of the requests made
//!   over the last ten seconds, plus ten a second whatever the traffic, so
//!   a server that fails everything is not sent every request several
//!   times over. Any tower [`Budget`] can replace it
//!   ([`SafeRetry::with_budget`]).
//!
//! # Events
//!
//! A binding reports every retry it makes as
//! [`Event::RequestRetried`](crate::Event::RequestRetried): the method,
//! the try that failed, its class and HTTP status, and the delay
//! ([`SafeRetry::on_retry`]).
//!
//! # Off
//!
//! [`Definition::retry_requests`](crate::Definition::retry_requests) set
//! to `false` turns a binding's retries off (one try per request; the
//! reconnect layer below still renews a forgotten session once).
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
//!     .layer(RetryLayer::new(SafeRetry::new(&RetryPolicy::default().with_base_delay(Duration::from_millis(1)))))
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
//! [`TpsBudget`]: tower::retry::budget::TpsBudget
//! [`Error::retry_after`]: crate::Error::retry_after
//! [`CallOpts::deadline`]: crate::request::CallOpts::deadline

use crate::config::RetryPolicy;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Sleep;
use tower::retry::backoff::{Backoff, ExponentialBackoff};
use tower::retry::budget::{Budget, TpsBudget};
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
            | methods::TASKS_GET
            | methods::TASKS_RESULT
            | methods::TASKS_LIST
            // Answers under the server's keys, which it takes once.
            | methods::TASKS_UPDATE
    )
}

/// Marks a `tools/call` as safe to run twice (the tool is idempotent, or
/// the server deduplicates), in the request's extensions: [`SafeRetry`]
/// then retries it after failures that may have let it run, like a read.
/// A binding sets it from [`RepeatableTools`](crate::RepeatableTools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idempotent;

/// What a failure says about sending its request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transient {
    /// It never left the client.
    NotSent,
    /// The server (or a gateway) refused it unprocessed: 429, 503.
    Refused,
    /// It may have run: a lost reply, 408, another 5xx.
    MayHaveRun,
    /// Not a failure that may pass.
    Final,
}

fn transient(error: &Error) -> Transient {
    match error.class() {
        FailureClass::TransportClosed => Transient::NotSent,
        FailureClass::Indeterminate => Transient::MayHaveRun,
        FailureClass::RemoteHttp => match error.http_status() {
            Some(429 | 503) => Transient::Refused,
            Some(408 | 500..=599) => Transient::MayHaveRun,
            _ => Transient::Final,
        },
        _ => Transient::Final,
    }
}

/// Whether `req`, which failed with `error`, may be sent again. See the
/// [module docs](self) for the table.
pub(crate) fn is_retryable(req: &McpRequest, error: &Error) -> bool {
    let tool_call = req.method == methods::TOOLS_CALL;
    match transient(error) {
        Transient::NotSent => is_safe_to_repeat(&req.method) || tool_call,
        Transient::Refused => true,
        Transient::MayHaveRun => {
            is_safe_to_repeat(&req.method) || (tool_call && req.extensions.get::<Idempotent>().is_some())
        }
        Transient::Final => false,
    }
}

/// What a retry tells whoever watches: the request's method, the try that
/// failed (1 for the first), how it failed, and the wait before the next.
#[derive(Debug, Clone)]
pub struct RetryNotice {
    /// The request's method.
    pub method: String,
    /// The try that failed, 1 for the first.
    pub attempt: u32,
    /// Its failure class.
    pub class: FailureClass,
    /// Its HTTP status, when an HTTP answer failed it.
    pub http_status: Option<u16>,
    /// The wait before the next try (the server's `Retry-After`, or the
    /// backoff's delay).
    pub delay: Duration,
}

/// Receives a policy's [`RetryNotice`]s.
pub type RetryObserver = Arc<dyn Fn(RetryNotice) + Send + Sync>;

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
    observer: Option<RetryObserver>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("attempts", &self.attempts).finish_non_exhaustive()
    }
}

impl SafeRetry {
    /// A policy with `policy`'s attempts and delays and the default
    /// budget: tower's [`TpsBudget`] with a retry for every five requests
    /// of the last ten seconds, ten a second at least. `max_total` does not
    /// apply here: each request's own deadline bounds its loop.
    pub fn new(policy: &RetryPolicy) -> Self {
        Self::with_parts(policy.resolved().attempts, policy.backoff(), default_budget(), None)
    }

    /// A policy that never retries (one attempt).
    pub fn never() -> Self {
        Self::with_parts(1, RetryPolicy::default().backoff(), default_budget(), None)
    }

    /// Replaces the shared budget with any tower [`Budget`].
    pub fn with_budget(self, budget: Arc<dyn Budget + Send + Sync>) -> Self {
        let shared = &self.shared;
        Self::with_parts(shared.attempts, shared.backoff.clone(), budget, shared.observer.clone())
    }

    /// Calls `observer` with a [`RetryNotice`] for every retry the policy
    /// decides to make (a binding turns them into events).
    pub fn on_retry(self, observer: RetryObserver) -> Self {
        let shared = &self.shared;
        Self::with_parts(shared.attempts, shared.backoff.clone(), shared.budget.clone(), Some(observer))
    }

    fn with_parts(
        attempts: u32,
        backoff: ExponentialBackoff,
        budget: Arc<dyn Budget + Send + Sync>,
        observer: Option<RetryObserver>,
    ) -> Self {
        SafeRetry {
            tried: 0,
            shared: Arc::new(Shared { attempts, backoff, budget, observer }),
            backoff: None,
        }
    }

    fn decide(
        &mut self,
        req: &McpRequest,
        result: &mut Result<McpResponse, Error>,
    ) -> Option<Pin<Box<Sleep>>> {
        self.tried += 1;
        if self.tried == 1 {
            // Every request pays in once; each retry draws.
            self.shared.budget.deposit();
        }
        let error = result.as_mut().err()?;
        // A forgotten session was renewed once below, at once; waiting and
        // trying again would only repeat that (see
        // `crate::layer::reconnect`).
        if !is_retryable(req, error)
            || self.tried >= self.shared.attempts
            || crate::transport::is_session_expired(error)
        {
            return None;
        }
        let asked = error.retry_after().filter(|_| transient(error) == Transient::Refused);
        let delay = match asked {
            Some(wait) => tokio::time::sleep(wait),
            None => self.backoff.get_or_insert_with(|| Box::new(self.shared.backoff.clone())).next_backoff(),
        };
        if req.opts.deadline.is_some_and(|deadline| delay.deadline() >= deadline) {
            if let Some(wait) = asked {
                let wait = match wait.subsec_millis() {
                    0 => format!("{} s", wait.as_secs()),
                    _ => format!("{} ms", wait.as_millis()),
                };
                error.add_note(&format!(
                    "the server asked to wait {wait} before trying again, past the call's deadline"
                ));
            }
            return None;
        }
        if !self.shared.budget.withdraw() {
            return None;
        }
        if let Some(observer) = &self.shared.observer {
            let wait = delay.deadline().saturating_duration_since(tokio::time::Instant::now());
            observer(RetryNotice {
                method: req.method.clone(),
                attempt: self.tried,
                class: error.class(),
                http_status: error.http_status(),
                delay: wait,
            });
        }
        Some(Box::pin(delay))
    }

    /// Whether a request may ever be sent again, which is when tower's
    /// `Retry` needs to keep it: any request, since a 429 or 503 refused it
    /// unprocessed.
    fn may_retry(&self, _req: &McpRequest) -> bool {
        self.shared.attempts > 1
    }
}

/// The delay before a retry. Boxed: tower's `Retry` keeps it inline in
/// every request's future, and most requests never wait.
pub(crate) type RetryDelay = Pin<Box<Sleep>>;

/// Tower's budget with this policy's defaults: a retry for every five
/// requests of the last ten seconds, and ten a second whatever the traffic.
fn default_budget() -> Arc<dyn Budget + Send + Sync> {
    Arc::new(TpsBudget::new(Duration::from_secs(10), 10, 0.2))
}

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
