//! [`RetryPolicy`]: how often and how patiently to try again.

use std::time::Duration;
use tower::retry::backoff::{ExponentialBackoff, ExponentialBackoffMaker, MakeBackoff};
use tower::util::rng::HasherRng;

use crate::error::{Error, FailureClass};

/// Default [`RetryPolicy::attempts`]: five tries in all.
const DEFAULT_RETRY_ATTEMPTS: u32 = 5;
/// Default [`RetryPolicy::base_delay`]: 200 ms before the second try.
const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(200);
/// Default [`RetryPolicy::max_delay`]: no single wait above 5 s.
const DEFAULT_RETRY_MAX_DELAY: Duration = Duration::from_secs(5);
/// Default [`RetryPolicy::max_total`]: the whole loop within 60 s.
const DEFAULT_RETRY_MAX_TOTAL: Duration = Duration::from_secs(60);
/// Default [`RetryPolicy::jitter`]: up to 20 % added to each delay.
const DEFAULT_RETRY_JITTER: f64 = 0.2;

/// Bounds a retry loop: how many tries, how long between them, how long in
/// all. A zero field (or `None` jitter) selects its default, so the zero
/// value is a safe, bounded policy.
///
/// The delay before try `n` (`n >= 2`) is `base_delay × 2^(n-2)`, cut to
/// `max_delay`, plus a random extra of up to `jitter × that`, never past
/// `max_delay`. The first try is never delayed. This is tower's
/// [`ExponentialBackoff`], which the policy builds ([`RetryPolicy::backoff`]).
///
/// | field | default |
/// | --- | --- |
/// | `attempts` | 5 |
/// | `base_delay` | 200 ms |
/// | `max_delay` | 5 s |
/// | `max_total` | 60 s |
/// | `jitter` | 0.2 |
///
/// With the defaults the delays are 200, 400, 800 and 1600 ms (each plus up
/// to 20 %).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RetryPolicy {
    /// The total number of tries, including the first. 1 means try once and
    /// do not retry. Zero means 5.
    pub attempts: u32,
    /// The delay before the second try. Zero means
    /// 200 ms. A base above `max_delay` is cut to it.
    pub base_delay: Duration,
    /// Caps one delay. Zero means 5 s.
    pub max_delay: Duration,
    /// Caps the loop's total span, from the first failure: no delay is
    /// started that would end past it. Zero means 60 s.
    pub max_total: Duration,
    /// The largest random extra added to a delay, as a fraction of it, in
    /// `0.0..=1.0`; `Some(0.0)` makes the delays exact. `None` means
    /// 0.2. Jitter spreads out the clients of one server
    /// that lost it at the same moment.
    pub jitter: Option<f64>,
}

impl RetryPolicy {
    /// This policy with every zero field replaced by its default, the base
    /// delay cut to the maximum, and the jitter within `0.0..=1.0`.
    pub fn resolved(self) -> Self {
        fn or(d: Duration, default: Duration) -> Duration {
            if d.is_zero() {
                default
            } else {
                d
            }
        }
        let max_delay = or(self.max_delay, DEFAULT_RETRY_MAX_DELAY);
        let jitter = self.jitter.unwrap_or(DEFAULT_RETRY_JITTER);
        RetryPolicy {
            attempts: if self.attempts == 0 { DEFAULT_RETRY_ATTEMPTS } else { self.attempts },
            base_delay: or(self.base_delay, DEFAULT_RETRY_BASE_DELAY).min(max_delay),
            max_delay,
            max_total: or(self.max_total, DEFAULT_RETRY_MAX_TOTAL),
            jitter: Some(if jitter.is_finite() { jitter.clamp(0.0, 1.0) } else { 0.0 }),
        }
    }

    /// Checks the fields [`RetryPolicy::resolved`] would otherwise have to
    /// correct silently: a jitter outside `0.0..=1.0` is `invalid_config`.
    pub fn validate(&self) -> Result<(), Error> {
        match self.jitter {
            Some(j) if !(0.0..=1.0).contains(&j) => Err(Error::new(
                FailureClass::InvalidConfig,
                format!("retry jitter {j} must be within 0.0..=1.0"),
            )),
            _ => Ok(()),
        }
    }

    /// The delays between tries, as tower's backoff: its first
    /// `next_backoff` is the delay before the second try.
    pub fn backoff(&self) -> ExponentialBackoff {
        let p = self.resolved();
        let jitter = p.jitter.unwrap_or(DEFAULT_RETRY_JITTER);
        ExponentialBackoffMaker::new(p.base_delay, p.max_delay, jitter, HasherRng::default())
            .expect("a resolved policy is a valid backoff: 0 < base <= max, jitter within 0..=1")
            .make_backoff()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::retry::backoff::Backoff;

    #[test]
    fn zero_selects_the_defaults() {
        let p = RetryPolicy::default().resolved();
        assert_eq!(p.attempts, 5);
        assert_eq!(p.base_delay, Duration::from_millis(200));
        assert_eq!(p.max_delay, Duration::from_secs(5));
        assert_eq!(p.max_total, Duration::from_secs(60));
        assert_eq!(p.jitter, Some(0.2));
    }

    #[test]
    fn base_is_cut_to_max_and_bad_jitter_is_refused() {
        let p = RetryPolicy {
            base_delay: Duration::from_secs(9),
            max_delay: Duration::from_secs(2),
            ..Default::default()
        };
        assert_eq!(p.resolved().base_delay, Duration::from_secs(2));
        for j in [-0.1, 1.5, f64::NAN] {
            let p = RetryPolicy { jitter: Some(j), ..Default::default() };
            assert_eq!(p.validate().unwrap_err().class(), FailureClass::InvalidConfig);
        }
        assert!(RetryPolicy { jitter: Some(1.0), ..Default::default() }.validate().is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn backoff_doubles_up_to_the_max_without_jitter() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            jitter: Some(0.0),
            ..Default::default()
        };
        let mut backoff = p.backoff();
        let start = tokio::time::Instant::now();
        let delays: Vec<_> = (0..4).map(|_| backoff.next_backoff().deadline() - start).collect();
        let ms = Duration::from_millis;
        assert_eq!(delays, [ms(100), ms(200), ms(350), ms(350)]);
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_stays_within_its_fraction_and_the_max() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            jitter: Some(0.5),
            ..Default::default()
        };
        let start = tokio::time::Instant::now();
        for _ in 0..50 {
            let mut backoff = p.backoff();
            let d1 = backoff.next_backoff().deadline() - start;
            let d2 = backoff.next_backoff().deadline() - start;
            let d3 = backoff.next_backoff().deadline() - start;
            assert!((Duration::from_millis(100)..=Duration::from_millis(150)).contains(&d1), "{d1:?}");
            assert!((Duration::from_millis(200)..=Duration::from_millis(300)).contains(&d2), "{d2:?}");
            assert_eq!(d3, Duration::from_millis(300));
        }
    }
}

/// Which tool calls a binding may send again after a failure that may have
/// let them run: a reply lost on the way, HTTP 408, or a 5xx other than
/// 503. None by default: a tool may move money, delete a file or send an
/// email, and running it twice is the host's decision, not the client's.
/// (A call that never left the client, or that a 429 or 503 refused, is
/// retried whatever this says: it did not run.)
///
/// ```
/// use mcp_stack::RepeatableTools;
/// // `search` and `lookup` are safe to run twice; so is any tool the
/// // server annotates with `idempotentHint: true` (trust that only for a
/// // server you trust: annotations are its word, not a guarantee).
/// let tools = RepeatableTools { names: vec!["search".into(), "lookup".into()], trust_idempotent_hint: true };
/// # let _ = tools;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepeatableTools {
    /// Tools safe to run twice, by raw name.
    pub names: Vec<String>,
    /// Also the tools whose annotations say `idempotentHint: true`.
    pub trust_idempotent_hint: bool,
}

impl RepeatableTools {
    /// Whether a call of the tool `raw_name`, whose annotations say
    /// `idempotent_hint`, may be sent again after it may have run.
    pub(crate) fn allows(&self, raw_name: &str, idempotent_hint: Option<bool>) -> bool {
        self.names.iter().any(|n| n == raw_name)
            || (self.trust_idempotent_hint && idempotent_hint == Some(true))
    }
}
