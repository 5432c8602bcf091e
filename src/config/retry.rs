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
/// all.
///
/// The delay before try `n` (`n >= 2`) is `base_delay × 2^(n-2)`, cut to
/// `max_delay`, plus a random extra of up to `jitter × that`, never past
/// `max_delay`. The first try is never delayed. This is tower's
/// [`ExponentialBackoff`], which the policy builds ([`RetryPolicy::backoff`]).
///
/// | value | default |
/// | --- | --- |
/// | [`attempts`](Self::attempts) | 5 |
/// | [`base_delay`](Self::base_delay) | 200 ms |
/// | [`max_delay`](Self::max_delay) | 5 s |
/// | [`max_total`](Self::max_total) | 60 s |
/// | [`jitter`](Self::jitter) | 0.2 |
///
/// With the defaults the delays are 200, 400, 800 and 1600 ms (each plus up
/// to 20 %).
///
/// ```
/// use mcp_stack::RetryPolicy;
/// use std::time::Duration;
///
/// let p = RetryPolicy::default().with_attempts(3).with_jitter(0.0);
/// assert_eq!(p.attempts(), 3);
/// assert_eq!(p.base_delay(), Duration::from_millis(200));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    pub(crate) attempts: u32,
    pub(crate) base_delay: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) max_total: Duration,
    pub(crate) jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: DEFAULT_RETRY_ATTEMPTS,
            base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_delay: DEFAULT_RETRY_MAX_DELAY,
            max_total: DEFAULT_RETRY_MAX_TOTAL,
            jitter: DEFAULT_RETRY_JITTER,
        }
    }
}

impl RetryPolicy {
    /// The total number of tries, including the first: 1 tries once and
    /// does not retry. At least 1.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// With another number of tries.
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// The delay before the second try; a base above
    /// [`max_delay`](Self::max_delay) is cut to it.
    pub fn base_delay(&self) -> Duration {
        self.base_delay
    }

    /// With another base delay.
    pub fn with_base_delay(mut self, base_delay: Duration) -> Self {
        self.base_delay = base_delay;
        self
    }

    /// Caps one delay.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// With another cap on one delay.
    pub fn with_max_delay(mut self, max_delay: Duration) -> Self {
        self.max_delay = max_delay;
        self
    }

    /// Caps the loop's total span, from the first failure: no delay is
    /// started that would end past it.
    pub fn max_total(&self) -> Duration {
        self.max_total
    }

    /// With another cap on the whole loop.
    pub fn with_max_total(mut self, max_total: Duration) -> Self {
        self.max_total = max_total;
        self
    }

    /// The largest random extra added to a delay, as a fraction of it, in
    /// `0.0..=1.0`; 0 makes the delays exact. Jitter spreads out the
    /// clients of one server that lost it at the same moment.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// With another jitter.
    pub fn with_jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// This policy with the base delay cut to the maximum, as it is applied.
    pub(crate) fn resolved(self) -> Self {
        RetryPolicy { base_delay: self.base_delay.min(self.max_delay), ..self }
    }

    /// Refuses what cannot be a bounded retry loop (`invalid_config`): no
    /// try at all, a zero delay or span, a jitter outside `0.0..=1.0`.
    pub fn validate(&self) -> Result<(), Error> {
        let refuse = |what: String| Err(Error::new(FailureClass::InvalidConfig, what));
        if self.attempts == 0 {
            return refuse("retry attempts must be at least 1 (1 is a single try)".into());
        }
        for (name, d) in
            [("base_delay", self.base_delay), ("max_delay", self.max_delay), ("max_total", self.max_total)]
        {
            if d.is_zero() {
                return refuse(format!("retry {name} must be longer than zero"));
            }
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return refuse(format!("retry jitter {} must be within 0.0..=1.0", self.jitter));
        }
        Ok(())
    }

    /// tower's exponential backoff for this policy. A policy that does not
    /// [`validate`](Self::validate) gets the default's delays.
    pub fn backoff(&self) -> ExponentialBackoff {
        let p = if self.validate().is_ok() { self.resolved() } else { RetryPolicy::default() };
        ExponentialBackoffMaker::new(p.base_delay, p.max_delay, p.jitter, HasherRng::default())
            .expect("a valid policy is a valid backoff: 0 < base <= max, jitter within 0..=1")
            .make_backoff()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::retry::backoff::Backoff;

    #[test]
    fn the_default_holds_the_documented_values() {
        let p = RetryPolicy::default();
        assert_eq!(p.attempts(), 5);
        assert_eq!(p.base_delay(), Duration::from_millis(200));
        assert_eq!(p.max_delay(), Duration::from_secs(5));
        assert_eq!(p.max_total(), Duration::from_secs(60));
        assert_eq!(p.jitter(), 0.2);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn base_is_cut_to_max_and_bad_jitter_is_refused() {
        let p = RetryPolicy::default()
            .with_base_delay(Duration::from_secs(9))
            .with_max_delay(Duration::from_secs(2));
        assert_eq!(p.resolved().base_delay, Duration::from_secs(2));
        for j in [-0.1, 1.5, f64::NAN] {
            let p = RetryPolicy::default().with_jitter(j);
            assert_eq!(p.validate().unwrap_err().class(), FailureClass::InvalidConfig);
        }
        assert!(RetryPolicy::default().with_jitter(1.0).validate().is_ok());
        for bad in [
            RetryPolicy::default().with_attempts(0),
            RetryPolicy::default().with_max_total(Duration::ZERO),
            RetryPolicy::default().with_base_delay(Duration::ZERO),
        ] {
            assert_eq!(bad.validate().unwrap_err().class(), FailureClass::InvalidConfig);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn backoff_doubles_up_to_the_max_without_jitter() {
        let p = RetryPolicy::default()
            .with_base_delay(Duration::from_millis(100))
            .with_max_delay(Duration::from_millis(350))
            .with_jitter(0.0);
        let mut backoff = p.backoff();
        let start = tokio::time::Instant::now();
        let delays: Vec<_> = (0..4).map(|_| backoff.next_backoff().deadline() - start).collect();
        let ms = Duration::from_millis;
        assert_eq!(delays, [ms(100), ms(200), ms(350), ms(350)]);
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_stays_within_its_fraction_and_the_max() {
        let p = RetryPolicy::default()
            .with_base_delay(Duration::from_millis(100))
            .with_max_delay(Duration::from_millis(300))
            .with_jitter(0.5);
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
/// let tools = RepeatableTools::default().with_names(["search", "lookup"]).with_trust_idempotent_hint(true);
/// assert!(tools.trust_idempotent_hint());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepeatableTools {
    pub(crate) names: Vec<String>,
    pub(crate) trust_idempotent_hint: bool,
}

impl RepeatableTools {
    /// Tools safe to run twice, by raw name.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// With these tools (by raw name) safe to run twice, in place of any
    /// named before.
    pub fn with_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the tools whose annotations say `idempotentHint: true` are
    /// repeatable too.
    pub fn trust_idempotent_hint(&self) -> bool {
        self.trust_idempotent_hint
    }

    /// Whether to trust the servers' `idempotentHint: true`.
    pub fn with_trust_idempotent_hint(mut self, trust: bool) -> Self {
        self.trust_idempotent_hint = trust;
        self
    }

    /// Whether a call of the tool `raw_name`, whose annotations say
    /// `idempotent_hint`, may be sent again after it may have run.
    pub(crate) fn allows(&self, raw_name: &str, idempotent_hint: Option<bool>) -> bool {
        self.names.iter().any(|n| n == raw_name)
            || (self.trust_idempotent_hint && idempotent_hint == Some(true))
    }
}
