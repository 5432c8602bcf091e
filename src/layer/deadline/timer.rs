//! One timer for all the calls of a deadline layer.
//!
//! A call could carry a tokio `Sleep` of its own. It does not, for two
//! reasons `benches/overhead.rs` measured: a `Sleep` is over a hundred bytes
//! that every call's future carries (and moves, at every layer above), and
//! registering one with tokio's timer when the timer has no earlier wake-up
//! recorded — after the runtime parked with no timer pending, which is how a
//! burst of calls starts — unparks the runtime's driver, which on a runtime
//! with I/O enabled is a write to an eventfd: a system call per call.
//!
//! Instead, the calls of one layer (and of its clones) keep their deadlines
//! in one table, and one task sleeps until the earliest and wakes the calls
//! whose deadline passed. A deadline at or after the instant the task is
//! armed for — the common case, since most deadlines are the same timeout
//! from now — costs taking a slot in the table and nothing else. The task
//! stays armed after the table empties, so that steady traffic does not wake
//! it for every call; when it finds nothing to do, it disarms.
//!
//! The table is a slab: a call takes a free slot and gives it back, each in
//! constant time, which is what every call pays. Finding the earliest
//! deadline is a scan of the table, which only the task does, when it wakes:
//! at the instant it armed for, or when a call brings an earlier deadline.
//! The table never holds more slots than the most calls that waited at once.
//!
//! The task only wakes calls; the clock decides. A call compares its
//! deadline with the clock each time it is polled with its reply pending
//! ([`Entry::poll_expired`]; the first time, with the instant it entered
//! the layer, read just before), so when the task runs, or whether it runs
//! late, never changes whether a call expired — and tests on tokio's paused
//! clock see a call expire as soon as the clock reaches its deadline.
//!
//! The task is spawned on the runtime of the first call that waits, and holds
//! the queue weakly: it ends when the last handle to the queue (the layer,
//! its services, their calls) is dropped. If its runtime shuts down first,
//! the calls still waiting are woken, and the next one to wait spawns a task
//! on its own runtime.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use tokio::time::Instant;

/// The queue of one layer's deadlines. Clones share it.
#[derive(Clone, Default)]
pub(crate) struct DeadlineTimer {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The calls' deadlines, by slot.
    slots: Vec<Slot>,
    /// The free slots, most recently freed last.
    free: Vec<usize>,
    task: Task,
}

struct Slot {
    deadline: Instant,
    /// `None` once the task has woken the call (or while the slot is free).
    waker: Option<Waker>,
}

/// Where the waking task stands.
#[derive(Default)]
enum Task {
    /// No task: the next call to wait spawns one.
    #[default]
    Absent,
    /// The task exists. It wakes by itself at `armed`, when set; `waker`,
    /// when set, wakes it sooner (it is taken by whoever wakes it, so one
    /// wake-up is asked for at a time).
    Running { armed: Option<Instant>, waker: Option<Waker> },
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent between statements; a panic elsewhere
        // while it was held does not make it unusable.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Shared {
    /// The task holds the queue weakly and may be waiting for a deadline
    /// that no call needs any more, or for nothing: woken, it finds the
    /// queue gone and ends.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Task::Running { waker: Some(waker), .. } = &mut state.task {
            waker.wake_by_ref();
        }
    }
}

impl DeadlineTimer {
    /// A place in the queue for a call that must end at `deadline`. Nothing
    /// is queued until the call first waits.
    pub(crate) fn entry(&self, deadline: Instant) -> Entry {
        Entry { timer: self.clone(), deadline, slot: None }
    }

    /// How many calls are queued (for tests).
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        let state = self.shared.lock();
        state.slots.len() - state.free.len()
    }

    /// Queues `deadline` to wake `waker` in a new slot (`slot` is `None`),
    /// or refreshes the waker of `slot`.
    fn wait(&self, deadline: Instant, slot: &mut Option<usize>, waker: &Waker) {
        let mut state = self.shared.lock();
        let mut wake_task = None;
        match *slot {
            Some(taken) => match &mut state.slots[taken].waker {
                Some(registered) if registered.will_wake(waker) => {}
                registered => *registered = Some(waker.clone()),
            },
            None => {
                let entry = Slot { deadline, waker: Some(waker.clone()) };
                let taken = match state.free.pop() {
                    Some(free) => {
                        state.slots[free] = entry;
                        free
                    }
                    None => {
                        state.slots.push(entry);
                        state.slots.len() - 1
                    }
                };
                *slot = Some(taken);
                if let Task::Running { armed, waker } = &mut state.task {
                    if armed.is_none_or(|armed| deadline < armed) {
                        wake_task = waker.take();
                    }
                }
            }
        }
        let spawn = matches!(state.task, Task::Absent);
        if spawn {
            state.task = Task::Running { armed: None, waker: None };
        }
        drop(state);
        if spawn {
            spawn_task(Arc::downgrade(&self.shared));
        }
        if let Some(task) = wake_task {
            task.wake();
        }
    }

    fn forget(&self, slot: usize) {
        let removed = {
            let mut state = self.shared.lock();
            state.free.push(slot);
            state.slots[slot].waker.take()
        };
        // Dropped outside the lock: a waker's drop is foreign code.
        drop(removed);
    }
}

/// One call's place in a [`DeadlineTimer`]: queued while the call waits,
/// removed when it ends or is dropped.
pub(crate) struct Entry {
    timer: DeadlineTimer,
    deadline: Instant,
    /// Its slot in the table while queued.
    slot: Option<usize>,
}

impl Entry {
    /// The deadline this entry waits for.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Ready once the deadline has passed by the clock. Until then the call
    /// is queued, to be woken through `cx` when it passes.
    ///
    /// The first time, the call is queued without reading the clock: `entered`
    /// (when the call entered the layer, just read) tells whether the
    /// deadline was already past. A call first polled later than that, and
    /// past its deadline by then, is woken by the task at once (its deadline
    /// is earlier than anything the task is armed for) and expires on that
    /// next poll. Every later poll reads the clock.
    pub(crate) fn poll_expired(&mut self, entered: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let now = if self.slot.is_none() { entered } else { Instant::now() };
        if now >= self.deadline {
            self.leave();
            return Poll::Ready(());
        }
        self.timer.wait(self.deadline, &mut self.slot, cx.waker());
        Poll::Pending
    }

    /// Leaves the queue, if queued: the call no longer needs waking.
    pub(crate) fn leave(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.timer.forget(slot);
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Marks the task gone when its future is dropped: when it ends, or when
/// its runtime drops it unfinished (shutting down). In the second case the
/// calls still queued are woken, so that the next one to wait spawns a task
/// where it runs.
struct TaskGuard(Weak<Shared>);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        let Some(shared) = self.0.upgrade() else { return };
        let wakers: Vec<Waker> = {
            let mut state = shared.lock();
            state.task = Task::Absent;
            state.slots.iter().filter_map(|slot| slot.waker.clone()).collect()
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

#[cold]
#[inline(never)]
fn spawn_task(shared: Weak<Shared>) {
    // Made before spawning, so that it marks the task gone even if the
    // runtime drops the task before it ever runs.
    let guard = TaskGuard(shared.clone());
    tokio::spawn(async move {
        let _guard = guard;
        wake_expired(shared).await;
    });
}

/// The task: wakes the calls whose deadline passed, then sleeps until the
/// next one (see the module docs for when it re-arms).
async fn wake_expired(shared: Weak<Shared>) {
    let mut sleep = Box::pin(tokio::time::sleep_until(Instant::now()));
    let mut armed: Option<Instant> = None;
    std::future::poll_fn(move |cx| {
        let Some(shared) = shared.upgrade() else { return Poll::Ready(()) };
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            let target = {
                let mut state = shared.lock();
                // Free slots and woken calls have no waker: neither is due
                // nor counts for the next deadline.
                let mut next: Option<Instant> = None;
                for slot in state.slots.iter_mut().filter(|slot| slot.waker.is_some()) {
                    if slot.deadline <= now {
                        due.extend(slot.waker.take());
                    } else if next.is_none_or(|next| slot.deadline < next) {
                        next = Some(slot.deadline);
                    }
                }
                // An instant still ahead that comes no later than the next
                // deadline stays armed: re-arming costs a timer registration.
                let keep = armed.filter(|armed| *armed > now && next.is_none_or(|next| *armed <= next));
                let target = keep.or(next);
                // Recorded before the timer is polled, under the lock that
                // queues deadlines: a call queued from here on sees where the
                // task stands and wakes it if it needs to be earlier.
                state.task = Task::Running { armed: target, waker: Some(cx.waker().clone()) };
                target
            };
            due.into_iter().for_each(Waker::wake);
            let Some(target) = target else {
                armed = None;
                return Poll::Pending;
            };
            if armed != Some(target) {
                sleep.as_mut().reset(target);
                armed = Some(target);
            }
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_queued_call_is_woken_at_its_deadline_and_no_sooner() {
        let timer = DeadlineTimer::default();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut entry = timer.entry(deadline);
        let entered = Instant::now();
        let mut call =
            tokio_test::task::spawn(std::future::poll_fn(move |cx| entry.poll_expired(entered, cx)));
        assert!(call.poll().is_pending());
        assert_eq!(timer.queued(), 1);
        tokio::time::sleep(Duration::from_millis(4_999)).await;
        tokio::task::yield_now().await;
        assert!(!call.is_woken());
        tokio::time::sleep(Duration::from_millis(1)).await;
        // The waking task runs once this one yields.
        tokio::task::yield_now().await;
        // The task woke it; the clock says it expired.
        assert!(call.is_woken());
        assert!(call.poll().is_ready());
        assert_eq!(timer.queued(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_first_polled_after_its_deadline_expires_on_the_next_poll() {
        let timer = DeadlineTimer::default();
        let entered = Instant::now();
        let mut entry = timer.entry(entered + Duration::from_secs(1));
        let mut call =
            tokio_test::task::spawn(std::future::poll_fn(move |cx| entry.poll_expired(entered, cx)));
        tokio::time::advance(Duration::from_secs(2)).await;
        // Queued without reading the clock...
        assert!(call.poll().is_pending());
        // ...and woken by the task at once, the deadline being past.
        tokio::task::yield_now().await;
        assert!(call.is_woken());
        assert!(call.poll().is_ready());
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_deadline_rearms_the_task() {
        let timer = DeadlineTimer::default();
        let late = timer.entry(Instant::now() + Duration::from_secs(60));
        let early = timer.entry(Instant::now() + Duration::from_secs(1));
        let mut late = tokio_test::task::spawn(wait(late));
        let mut early = tokio_test::task::spawn(wait(early));
        assert!(late.poll().is_pending());
        // Let the task arm for the late deadline first.
        tokio::task::yield_now().await;
        assert!(early.poll().is_pending());
        tokio::time::sleep(Duration::from_secs(1)).await;
        tokio::task::yield_now().await;
        assert!(early.is_woken());
        assert!(early.poll().is_ready());
        assert!(!late.is_woken());
        assert!(late.poll().is_pending());
    }

    #[tokio::test(start_paused = true)]
    async fn dropped_entries_leave_the_queue() {
        let timer = DeadlineTimer::default();
        for _ in 0..1_000 {
            let mut call =
                tokio_test::task::spawn(wait(timer.entry(Instant::now() + Duration::from_secs(30))));
            assert!(call.poll().is_pending());
        }
        assert_eq!(timer.queued(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_task_ends_with_the_last_handle() {
        let timer = DeadlineTimer::default();
        let mut call = tokio_test::task::spawn(wait(timer.entry(Instant::now() + Duration::from_secs(30))));
        assert!(call.poll().is_pending());
        tokio::task::yield_now().await;
        let weak = Arc::downgrade(&timer.shared);
        drop(call);
        drop(timer);
        assert!(weak.upgrade().is_none());
        // Woken by the drop, the task sees the queue gone and ends; with it
        // ended, the runtime has no task left.
        tokio::task::yield_now().await;
        assert_eq!(tokio::runtime::Handle::current().metrics().num_alive_tasks(), 0);
    }

    #[test]
    fn a_task_lost_with_its_runtime_is_replaced_on_the_next() {
        let timer = DeadlineTimer::default();
        let mut entry = timer.entry(Instant::now() + Duration::from_millis(50));
        let first = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        first.block_on(async {
            std::future::poll_fn(|cx| {
                assert!(entry.poll_expired(Instant::now(), cx).is_pending());
                Poll::Ready(())
            })
            .await;
        });
        // The task was spawned on `first`; dropping it drops the task.
        drop(first);
        assert!(matches!(timer.shared.lock().task, Task::Absent));
        let second = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        second.block_on(std::future::poll_fn(|cx| entry.poll_expired(Instant::now(), cx)));
        assert_eq!(timer.queued(), 0);
    }

    /// Many calls on several threads, queued and leaving concurrently while
    /// the task re-arms: every one is woken once its deadline passes (no
    /// wake-up is lost), and the table ends empty. Real time, short
    /// deadlines; what is asserted does not depend on how late anything is.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn under_concurrency_no_wake_up_is_lost() {
        let timer = DeadlineTimer::default();
        let start = Instant::now();
        let calls: Vec<_> = (0..2_000u64)
            .map(|i| {
                let entry = timer.entry(start + Duration::from_millis(i % 30));
                tokio::spawn(wait(entry))
            })
            .collect();
        let all = async {
            for call in calls {
                call.await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(20), all).await.expect("every call expired");
        assert!(Instant::now() >= start + Duration::from_millis(29));
        assert_eq!(timer.queued(), 0);
    }

    async fn wait(mut entry: Entry) {
        let entered = Instant::now();
        std::future::poll_fn(|cx| entry.poll_expired(entered, cx)).await
    }
}
