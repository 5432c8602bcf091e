//! [`ReconnectPolicy`]: whether and how patiently a lost connection is
//! rebuilt.

use super::RetryPolicy;

/// Governs rebuilding a connection that was lost. The default reconnects
/// under [`RetryPolicy`]'s default bounds: up to 5 attempts, the first at
/// once, then after 200 ms, 400 ms, 800 ms and 1.6 s (each plus up to 20 %
/// jitter, none above 5 s), all within 60 s of the loss.
///
/// For reconnecting, the retry policy's attempts count reconnect attempts
/// (dial plus handshake): the first is made as soon as the loss is seen,
/// and its base delay is the delay before the second. Each attempt is
/// bounded by the binding's startup timeout and by what is left of the
/// policy's total span.
///
/// ```
/// use mcp_stack::{ReconnectPolicy, RetryPolicy};
///
/// let patient = ReconnectPolicy::default().with_retry(RetryPolicy::default().with_attempts(10));
/// assert!(patient.enabled());
/// assert!(!ReconnectPolicy::never().enabled());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReconnectPolicy {
    pub(crate) enabled: bool,
    pub(crate) retry: RetryPolicy,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy { enabled: true, retry: RetryPolicy::default() }
    }
}

impl ReconnectPolicy {
    /// A policy that never reconnects: a binding whose connection is lost
    /// stays degraded until its owner closes it. For a connection whose
    /// rebuilding costs something the application would rather decide
    /// about itself: a subprocess with side effects at startup, a metered
    /// endpoint, an authorization flow that asks a person.
    pub fn never() -> Self {
        ReconnectPolicy { enabled: false, ..Default::default() }
    }

    /// Whether a lost connection is rebuilt (by default it is).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// With reconnection on or off.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// The bounds of the attempts (and, for a binding, of its request
    /// retries: see [`Definition::retry_requests`](crate::Definition::retry_requests)).
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// With other bounds on the attempts.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}
