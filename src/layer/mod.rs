//! The per-binding middleware, one concern per module, each a
//! `tower::Layer`.
//!
//! A binding's default stack is assembled in [`crate::binding`], outermost
//! first; each module documents what it adds and why it sits where it does.

pub mod deadline;
pub mod progress;
pub mod reconnect;
pub mod result_limit;
pub mod retry;
pub mod tool_filter;
pub mod tool_gate;

pub use deadline::{Deadline, DeadlineLayer};
pub use progress::{ProgressLayer, ProgressRouter, ProgressService, ProgressTracker};
pub use reconnect::{Dialer, Reconnect, ReconnectLayer, ReconnectPolicy};
pub use result_limit::{ResultLimit, ResultLimitLayer};
pub use retry::{RetryPolicy, SafeRetry};
pub use tool_filter::{ToolFilterLayer, ToolFilterService};
pub use tool_gate::{ToolCallGate, ToolCallGateLayer};

use std::task::{Context, Poll, Waker};
use tower_service::Service;

/// What [`ready_now`] found.
pub(crate) enum Readiness<S, E> {
    /// Ready: call the service itself now.
    Ready,
    /// Not yet: drive this service (the one that was polled) to readiness
    /// in the call's future.
    Pending(S),
    /// Its readiness failed with this error.
    Failed(E),
}

/// For a layer that is always ready and drives its inner service to
/// readiness inside each call (the deadline, the tool filter): polls
/// `service` once, without a task to wake. Ready, it is called at once,
/// with no clone to make and drop. Otherwise the service that was polled —
/// which may hold a half-made reservation, a semaphore waiter say, that must
/// belong to this call and not stay behind in a service nobody polls — goes
/// with the call (or, failed, is dropped), and a clone of it takes its place.
/// A clone holds no reservation, so either way the layer's own inner service
/// is left with nothing reserved, as if the call had driven a clone.
pub(crate) fn ready_now<S, R>(service: &mut S) -> Readiness<S, S::Error>
where
    S: Service<R> + Clone,
{
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => Readiness::Ready,
        Poll::Pending => {
            let fresh = service.clone();
            Readiness::Pending(std::mem::replace(service, fresh))
        }
        Poll::Ready(Err(e)) => {
            let fresh = service.clone();
            drop(std::mem::replace(service, fresh));
            Readiness::Failed(e)
        }
    }
}
