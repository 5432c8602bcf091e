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
    ///
    /// The reply waits for the reports the server sent before it to reach
    /// the caller's sink (the server writes them first; the sinks run on
    /// the binding's delivery task, so that a slow sink never holds the
    /// connection up): a call's progress is delivered before its result,
    /// always. That wait is the delivery task's, bounded by the call's
    /// deadline above.
    pub struct ResponseFuture<F: Future> {
        #[pin]
        inner: F,
        // Boxed: most calls ask for no progress, and inline the route would
        // enlarge every call's future.
        tracker: Option<Box<ProgressTracker>>,
        // The reply, held while the reports before it are delivered.
        delivering: Option<Box<(F::Output, tokio::sync::oneshot::Receiver<()>)>>,
    }
}

impl<F: Future> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("tracker", &self.tracker)
            .field("delivering", &self.delivering.is_some())
            .finish_non_exhaustive()
    }
}

impl<F: Future> ResponseFuture<F> {
    pub(crate) fn new(inner: F, tracker: Option<Box<ProgressTracker>>) -> Self {
        ResponseFuture { inner, tracker, delivering: None }
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
        if let Some(delivering) = this.delivering {
            // A delivery task that is gone has delivered all it will.
            let _ = std::task::ready!(Pin::new(&mut delivering.1).poll(cx));
            let (out, _) = *this.delivering.take().expect("held until delivered");
            return Poll::Ready(out);
        }
        let mut out = std::task::ready!(this.inner.poll(cx));
        let Some(tracker) = this.tracker.take() else { return Poll::Ready(out) };
        if let Ok(response) = out.as_mut() {
            if starts_task(&response.result) {
                response.extensions.insert(TaskRoute { _route: Arc::from(tracker) });
                return Poll::Ready(out);
            }
        }
        // Progress that arrives after the reply is dropped from here on;
        // what came before it is delivered first.
        let mut delivery = tracker.finish();
        match Pin::new(&mut delivery).poll(cx) {
            Poll::Ready(_) => Poll::Ready(out),
            Poll::Pending => {
                *this.delivering = Some(Box::new((out, delivery)));
                Poll::Pending
            }
        }
    }
}
