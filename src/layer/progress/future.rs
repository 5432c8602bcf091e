//! The response future of [`Progress`](super::Progress).

use pin_project_lite::pin_project;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::ProgressTracker;
use crate::request::McpResponse;

/// A call's progress route handed on with its reply, because the reply
/// started a task: 2025-11-25 keeps the call's progress token valid for the
/// task's lifetime, so the route must outlive the call. Whoever follows the
/// task (the binding's `TaskHandle`) takes it from the reply's extensions
/// and drops it when the task ends; a reply nobody takes it from drops it
/// with itself.
#[derive(Debug, Clone)]
pub(crate) struct TaskRoute {
    /// Held for its `Drop`, which removes the route.
    _route: Arc<ProgressTracker>,
}

pin_project! {
    /// The inner future, plus the call's progress route: the route is removed
    /// when this future completes or is dropped, unless the reply started a
    /// task (then the reply carries it on, see [`Progress`](super::Progress)).
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        // Boxed: most calls ask for no progress, and inline the route would
        // enlarge every call's future.
        tracker: Option<Box<ProgressTracker>>,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(inner: F, tracker: Option<Box<ProgressTracker>>) -> Self {
        ResponseFuture { inner, tracker }
    }
}

/// Whether a reply is a task the server made of the call: 2025-11-25's
/// `CreateTaskResult` (`task`) or 2026-07-28's `resultType: "task"`.
fn starts_task(result: &Value) -> bool {
    result.get("task").is_some_and(Value::is_object)
        || result.get("resultType").and_then(Value::as_str) == Some("task")
}

impl<F, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<McpResponse, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut out = std::task::ready!(this.inner.poll(cx));
        if let (Some(tracker), Ok(response)) = (this.tracker.take(), out.as_mut()) {
            if starts_task(&response.result) {
                response.extensions.insert(TaskRoute { _route: Arc::from(tracker) });
            }
            // Otherwise progress that arrives after the reply is dropped
            // from here on.
        }
        Poll::Ready(out)
    }
}
