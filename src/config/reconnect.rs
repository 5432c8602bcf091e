//! [`ReconnectPolicy`]: whether and how patiently a lost connection is
//! rebuilt.

use super::RetryPolicy;

/// Governs rebuilding a connection that was lost. The zero value (the
/// default) reconnects under [`RetryPolicy`]'s default bounds: up to 5
/// attempts, the first at once, then after 200 ms, 400 ms, 800 ms and
/// 1.6 s (each plus up to 20 % jitter, none above 5 s), all within 60 s of
/// the loss.
///
/// For reconnecting, `retry.attempts` counts reconnect attempts (dial plus
/// handshake): the first is made as soon as the loss is seen, and
/// `retry.base_delay` is the delay before the second. Each attempt is bounded
/// by the binding's startup timeout and by what is left of
/// `retry.max_total`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReconnectPolicy {
    /// Refuses reconnection entirely: a binding whose connection is lost then
    /// stays degraded until its owner closes it.
    ///
    /// A negative flag so that the zero value means "the default", which is
    /// to reconnect. Disable it when re-establishing the connection costs
    /// something the application would rather decide about itself: a
    /// subprocess with side effects at startup, a metered endpoint, an
    /// authorization flow that asks a person.
    pub disabled: bool,
    /// Bounds the attempts. Zero fields select their defaults.
    pub retry: RetryPolicy,
}

impl ReconnectPolicy {
    /// A policy that never reconnects.
    pub fn disabled() -> Self {
        ReconnectPolicy { disabled: true, ..Default::default() }
    }
}
