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
pub use retry::{RetryBudget, RetryPolicy, SafeRetry};
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
        Poll::Pending => Readiness::Pending(replace_with_clone(service)),
        Poll::Ready(Err(e)) => {
            drop(replace_with_clone(service));
            Readiness::Failed(e)
        }
    }
}

/// Puts a clone of `service` in its place and returns the original. Out of
/// line: only a call that cannot go at once comes here, and the clone (of
/// everything below) would otherwise be inlined into every call.
#[cold]
#[inline(never)]
fn replace_with_clone<S: Clone>(service: &mut S) -> S {
    let fresh = service.clone();
    std::mem::replace(service, fresh)
}

/// For a call waiting in its future for `service` (see [`ready_now`]): once
/// the service is ready, makes the call with `request` (taken, so once).
/// Out of line, as the way there is: it instantiates the whole call below,
/// which the common path already has inline, and would make the waiting
/// future's `poll` as large again.
#[cold]
#[inline(never)]
pub(crate) fn call_when_ready<S, R>(
    service: &mut S,
    request: &mut Option<R>,
    cx: &mut Context<'_>,
) -> Poll<Result<S::Future, S::Error>>
where
    S: Service<R>,
{
    match service.poll_ready(cx) {
        Poll::Ready(Ok(())) => {
            let request = request.take().expect("a waiting call is made once");
            Poll::Ready(Ok(service.call(request)))
        }
        Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
        Poll::Pending => Poll::Pending,
    }
}

/// What the layers' unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};
    use tower_service::Service;

    use crate::error::Error;
    use crate::request::{McpRequest, McpResponse};

    /// Counts its clones; always ready; answers at once with an empty tool
    /// result.
    #[derive(Debug)]
    pub(crate) struct CountsClones(pub(crate) Arc<AtomicUsize>);

    impl Clone for CountsClones {
        fn clone(&self) -> Self {
            self.0.fetch_add(1, Ordering::SeqCst);
            CountsClones(self.0.clone())
        }
    }

    impl Service<McpRequest> for CountsClones {
        type Response = McpResponse;
        type Error = Error;
        type Future = std::future::Ready<Result<McpResponse, Error>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _req: McpRequest) -> Self::Future {
            std::future::ready(Ok(McpResponse::new(serde_json::json!({ "content": [] }))))
        }
    }
}
