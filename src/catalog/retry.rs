//! [`RetryPolicy`]: the bounds on retrying a failed catalog refresh.
//!
//! Merge note: the reconnect work defines the crate's retry policy for
//! re-dialing; this minimal one exists so that `Definition::refresh` has a
//! type. The two should become one type when both land.

use std::time::Duration;

/// Default [`RetryPolicy::attempts`].
pub const DEFAULT_RETRY_ATTEMPTS: u32 = 4;
/// Default [`RetryPolicy::base_delay`].
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// Default [`RetryPolicy::max_delay`].
pub const DEFAULT_RETRY_MAX_DELAY: Duration = Duration::from_secs(30);
/// Default [`RetryPolicy::max_total`].
pub const DEFAULT_RETRY_MAX_TOTAL: Duration = Duration::from_secs(120);

/// Bounds a retry loop. A zero field selects its default; none means
/// "forever".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total tries, the first included. 1 means no retry.
    pub attempts: u32,
    /// The delay before the second try; each later delay doubles it.
    pub base_delay: Duration,
    /// The longest single delay.
    pub max_delay: Duration,
    /// The longest span from the first try to the start of the last.
    pub max_total: Duration,
}

impl RetryPolicy {
    /// This policy with every zero field replaced by its default.
    pub fn resolved(self) -> Self {
        let or = |d: Duration, default: Duration| if d.is_zero() { default } else { d };
        RetryPolicy {
            attempts: if self.attempts == 0 { DEFAULT_RETRY_ATTEMPTS } else { self.attempts },
            base_delay: or(self.base_delay, DEFAULT_RETRY_BASE_DELAY),
            max_delay: or(self.max_delay, DEFAULT_RETRY_MAX_DELAY),
            max_total: or(self.max_total, DEFAULT_RETRY_MAX_TOTAL),
        }
    }

    /// The delay after failed try number `attempt` (from 1), before the next.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.saturating_sub(1)).unwrap_or(u32::MAX);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_selects_defaults_and_delays_double_to_the_cap() {
        let p = RetryPolicy::default().resolved();
        assert_eq!(p.attempts, DEFAULT_RETRY_ATTEMPTS);
        assert_eq!(p.delay(1), Duration::from_millis(500));
        assert_eq!(p.delay(2), Duration::from_secs(1));
        assert_eq!(p.delay(3), Duration::from_secs(2));
        assert_eq!(p.delay(40), DEFAULT_RETRY_MAX_DELAY);
    }
}
