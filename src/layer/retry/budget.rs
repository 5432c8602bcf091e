//! [`RetryBudget`]: how many retries one policy may make, across requests.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::time::Instant;
use tower::retry::budget::Budget;

/// Default [`RetryBudget::new`] `ratio`: a retry for every five requests.
pub(crate) const DEFAULT_BUDGET_RATIO: f32 = 0.2;
/// Default [`RetryBudget::new`] `floor_per_sec`: ten retries a second
/// whatever the traffic.
pub(crate) const DEFAULT_BUDGET_FLOOR_PER_SEC: u32 = 10;
/// Default [`RetryBudget::new`] `max_banked`: at most a hundred retries paid
/// for in advance.
pub(crate) const DEFAULT_BUDGET_MAX_BANKED: u32 = 100;

/// What a retry costs, in the budget's units: requests pay in fractions of
/// it.
const RETRY: u64 = 1_000;

/// How many seconds of its rate the floor holds: a burst of failures may use
/// that many seconds' worth at once (tower's `TpsBudget` keeps as much in
/// reserve over its default ten-second window).
const FLOOR_SECONDS: f64 = 10.0;

/// A tower retry [`Budget`] that caps retries at a fraction of the requests
/// made, plus a small floor per second, so that a server failing everything
/// is not sent every request several times over.
///
/// - Every request pays `ratio` of a retry in ([`Budget::deposit`]); what is
///   paid in and not spent is kept, up to `max_banked` retries' worth.
/// - A retry ([`Budget::withdraw`]) spends one retry's worth of what was
///   paid in. When that is spent, it may use the floor instead: retries
///   refilled at `floor_per_sec` a second, holding ten seconds' worth at
///   most.
///
/// The difference from tower's [`TpsBudget`], which this replaces in
/// [`SafeRetry`](super::SafeRetry): what requests paid in does not expire
/// with time, it is capped instead (`max_banked`), so that paying in reads
/// no clock and takes no lock. Paying in is what every request does, and a
/// budget that is full costs it one atomic load; the clock and a lock are
/// only used by a retry that finds nothing paid in, to draw on the floor.
///
/// [`TpsBudget`]: tower::retry::budget::TpsBudget
#[derive(Debug)]
pub struct RetryBudget {
    /// What was paid in and not spent, in thousandths of a retry.
    banked: AtomicU64,
    per_request: u64,
    max_banked: u64,
    floor_per_sec: u32,
    floor: Mutex<Floor>,
}

/// The floor's bucket: retries left, as of `at`.
#[derive(Debug)]
struct Floor {
    left: f64,
    at: Option<Instant>,
}

impl RetryBudget {
    /// A budget of `ratio` retries per request (a negative or NaN ratio is
    /// taken as 0; above 1000 as 1000) with `floor_per_sec` retries a second
    /// besides, keeping at most `max_banked` retries paid for in advance. The
    /// floor starts full (ten seconds' worth).
    pub fn new(ratio: f32, floor_per_sec: u32, max_banked: u32) -> Self {
        let ratio = if ratio.is_nan() { 0.0 } else { ratio.clamp(0.0, 1_000.0) };
        RetryBudget {
            banked: AtomicU64::new(0),
            per_request: (f64::from(ratio) * RETRY as f64).round() as u64,
            max_banked: u64::from(max_banked) * RETRY,
            floor_per_sec,
            floor: Mutex::new(Floor { left: f64::from(floor_per_sec) * FLOOR_SECONDS, at: None }),
        }
    }

    /// Draws one retry from the floor, refilled for the time since it was
    /// last drawn from.
    #[cold]
    fn draw_on_floor(&self) -> bool {
        if self.floor_per_sec == 0 {
            return false;
        }
        let per_sec = f64::from(self.floor_per_sec);
        let mut floor = self.floor.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        if let Some(at) = floor.at {
            let refilled = floor.left + now.saturating_duration_since(at).as_secs_f64() * per_sec;
            floor.left = refilled.min(per_sec * FLOOR_SECONDS);
        }
        floor.at = Some(now);
        if floor.left >= 1.0 {
            floor.left -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A ratio of 0.2 (a retry for every five requests), a floor of 10 retries
/// a second, and at most 100 retries banked.
impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget::new(DEFAULT_BUDGET_RATIO, DEFAULT_BUDGET_FLOOR_PER_SEC, DEFAULT_BUDGET_MAX_BANKED)
    }
}

impl Budget for RetryBudget {
    fn deposit(&self) {
        // Relaxed: the balance guards nothing but itself.
        let (per_request, max) = (self.per_request, self.max_banked);
        let _ = self.banked.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |banked| {
            (banked < max).then(|| (banked + per_request).min(max))
        });
    }

    fn withdraw(&self) -> bool {
        let spent = self
            .banked
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |banked| banked.checked_sub(RETRY));
        spent.is_ok() || self.draw_on_floor()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    fn withdrawals(budget: &RetryBudget) -> usize {
        (0..1_000_000).take_while(|_| budget.withdraw()).count()
    }

    #[test]
    fn requests_pay_for_retries_at_the_ratio() {
        let budget = RetryBudget::new(0.5, 0, 100);
        assert!(!budget.withdraw(), "nothing paid in, no floor");
        (0..10).for_each(|_| budget.deposit());
        assert_eq!(withdrawals(&budget), 5);
        budget.deposit();
        assert!(!budget.withdraw(), "half a retry is not a retry");
        budget.deposit();
        assert!(budget.withdraw());
    }

    #[test]
    fn what_is_banked_is_capped() {
        let budget = RetryBudget::new(1.0, 0, 3);
        (0..1_000).for_each(|_| budget.deposit());
        assert_eq!(withdrawals(&budget), 3);
        let none = RetryBudget::new(0.0, 0, 100);
        (0..1_000).for_each(|_| none.deposit());
        assert_eq!(withdrawals(&none), 0);
    }

    #[test]
    fn out_of_range_ratios_are_clamped() {
        let nan = RetryBudget::new(f32::NAN, 0, 100);
        nan.deposit();
        assert!(!nan.withdraw());
        let negative = RetryBudget::new(-1.0, 0, 100);
        negative.deposit();
        assert!(!negative.withdraw());
        let huge = RetryBudget::new(1e9, 0, 5);
        huge.deposit();
        assert_eq!(withdrawals(&huge), 5);
    }

    #[tokio::test(start_paused = true)]
    async fn the_floor_refills_with_time_up_to_ten_seconds_worth() {
        let budget = RetryBudget::new(0.0, 4, 100);
        assert_eq!(withdrawals(&budget), 40, "the floor starts full");
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(withdrawals(&budget), 2);
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(withdrawals(&budget), 40, "never more than ten seconds' worth");
    }

    #[tokio::test(start_paused = true)]
    async fn what_was_paid_in_is_spent_before_the_floor() {
        let budget = RetryBudget::new(1.0, 2, 100);
        budget.deposit();
        assert!(budget.withdraw());
        // Had the floor paid, it would hold 19, refill to its 20 in a
        // second, and the paid-in retry would still be there: 21.
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(withdrawals(&budget), 20);
        budget.deposit();
        assert!(budget.withdraw(), "paid in, though the floor is empty");
    }

    #[test]
    fn threads_neither_lose_nor_invent_retries() {
        let budget = Arc::new(RetryBudget::new(1.0, 0, 1_000_000));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let budget = budget.clone();
                std::thread::spawn(move || {
                    (0..10_000).for_each(|_| budget.deposit());
                    (0..5_000).filter(|_| budget.withdraw()).count()
                })
            })
            .collect();
        let spent: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(spent, 20_000);
        assert_eq!(withdrawals(&budget), 20_000);
    }
}
