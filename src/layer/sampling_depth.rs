//! Sampling depth: how deep in a chain of sampling requests a call is made.
//!
//! A host's sampling service may call the server back (a tool, a prompt),
//! and the server may answer that call by sampling again: a chain that,
//! unchecked, recurses until something breaks. The binding numbers the
//! links (the rules, and what they cannot see, are in the
//! [sampling section](crate::handlers#sampling) of the handlers' docs):
//!
//! - while the host's sampling service serves a request at depth *n*, the
//!   task it runs on carries *n* in a task-local ([`sampling_depth`]);
//! - the binding's sampling-depth layer reads it when a request is called,
//!   on the caller's task, records the request as in flight at that depth
//!   until its reply (or until it is dropped), and passes the depth down to
//!   the layers below as a request extension: the
//!   tool-call gate lets such a nested tool call through, since the call
//!   that holds the gate waits for it;
//! - a sampling request that arrives while requests are in flight at depths
//!   *n₁…nₖ* gets depth max(*nᵢ*) + 1.
//!
//! The layer is the binding's own (it shares its tracker with the binding's
//! sampling handler), so only these two functions are public. It must be
//! called on the caller's task: in a binding it sits
//! above the point where the stack is driven inside the call's future, so
//! a user layer that moves calls onto another task (a `Buffer`, say) does
//! not lose the depth. Readiness passes through; it adds no failure.

use pin_project_lite::pin_project;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

use crate::request::McpRequest;

tokio::task_local! {
    static SAMPLING_DEPTH: u32;
}

/// The sampling depth of the current task: *n* inside the host's sampling
/// service serving a depth-*n* request (and in what it awaits), 0 elsewhere.
pub fn sampling_depth() -> u32 {
    SAMPLING_DEPTH.try_with(|d| *d).unwrap_or(0)
}

/// Runs `future` at sampling depth `depth`: what a sampling handler wraps
/// around work it spawns onto another task, so that requests made there are
/// still counted in its chain.
///
/// ```
/// use mcp_stack::layer::sampling_depth::{sampling_depth, with_sampling_depth};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let depth = 2; // inside a handler: sampling_depth()
/// let task = tokio::spawn(with_sampling_depth(depth, async { sampling_depth() }));
/// assert_eq!(task.await.unwrap(), 2);
/// # }
/// ```
pub async fn with_sampling_depth<F: Future>(depth: u32, future: F) -> F::Output {
    SAMPLING_DEPTH.scope(depth, future).await
}

/// The sampling depth of the task a request was made on, as a request
/// extension; absent (or 0) outside sampling work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Depth(pub u32);

/// Requests in flight from sampling work, by depth. Shared by a binding's
/// stack (which records) and its sampling handler (which reads).
#[derive(Debug, Default)]
pub(crate) struct DepthTracker {
    in_flight: Mutex<BTreeMap<u32, usize>>,
}

/// Counts one request at its depth until dropped.
#[derive(Debug)]
pub(crate) struct InFlight {
    tracker: Arc<DepthTracker>,
    depth: u32,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut map = self.tracker.in_flight.lock().expect("depth lock");
        if let Some(count) = map.get_mut(&self.depth) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.depth);
            }
        }
    }
}

impl DepthTracker {
    /// Records a request at `depth` until the returned guard is dropped;
    /// nothing (and `None`) at depth 0.
    pub(crate) fn track(self: &Arc<Self>, depth: u32) -> Option<InFlight> {
        if depth == 0 {
            return None;
        }
        *self.in_flight.lock().expect("depth lock").entry(depth).or_insert(0) += 1;
        Some(InFlight { tracker: self.clone(), depth })
    }

    /// The depth of a sampling request arriving now: one more than the
    /// deepest request in flight, 1 with none.
    pub(crate) fn arrival_depth(&self) -> u32 {
        self.in_flight.lock().expect("depth lock").keys().next_back().map_or(1, |d| d + 1)
    }
}

/// Applies [`SamplingDepth`] to a service.
#[derive(Debug, Clone)]
pub(crate) struct SamplingDepthLayer {
    tracker: Arc<DepthTracker>,
}

impl SamplingDepthLayer {
    /// Records in `tracker`.
    pub(crate) fn new(tracker: Arc<DepthTracker>) -> Self {
        SamplingDepthLayer { tracker }
    }
}

impl<S> Layer<S> for SamplingDepthLayer {
    type Service = SamplingDepth<S>;

    fn layer(&self, inner: S) -> SamplingDepth<S> {
        SamplingDepth { inner, tracker: self.tracker.clone() }
    }
}

/// Counts each request in its caller's sampling chain. See the
/// [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct SamplingDepth<S> {
    inner: S,
    tracker: Arc<DepthTracker>,
}

impl<S: Service<McpRequest>> Service<McpRequest> for SamplingDepth<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let depth = sampling_depth();
        let in_flight = self.tracker.track(depth);
        if depth > 0 {
            req.extensions.insert(Depth(depth));
        }
        ResponseFuture { inner: self.inner.call(req), in_flight }
    }
}

pin_project! {
    /// The inner future; the request counts at its depth until this
    /// completes or is dropped.
    #[derive(Debug)]
    pub(crate) struct ResponseFuture<F> {
        #[pin]
        inner: F,
        in_flight: Option<InFlight>,
    }
}

impl<F: Future> Future for ResponseFuture<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let out = std::task::ready!(this.inner.poll(cx));
        this.in_flight.take();
        Poll::Ready(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    #[tokio::test]
    async fn a_request_from_sampling_work_counts_until_its_reply_and_carries_its_depth() {
        let tracker = Arc::new(DepthTracker::default());
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let released = Arc::new(tokio::sync::Mutex::new(Some(released)));
        let inner = tower::service_fn(move |req: McpRequest| {
            let released = released.clone();
            async move {
                let depth = req.extensions.get::<Depth>().copied();
                if let Some(wait) = released.lock().await.take() {
                    let _ = wait.await;
                }
                Ok::<_, crate::Error>(depth)
            }
        });
        let svc = SamplingDepthLayer::new(tracker.clone()).layer(inner);

        // Outside sampling work: no depth, nothing recorded.
        assert_eq!(tracker.arrival_depth(), 1);
        let call = tokio::spawn(with_sampling_depth(
            2,
            svc.clone().oneshot(McpRequest::new("ping", Default::default())),
        ));
        tokio::task::yield_now().await;
        // While it waits, a sampling request arriving now is one deeper.
        assert_eq!(tracker.arrival_depth(), 3);
        release.send(()).unwrap();
        assert_eq!(call.await.unwrap().unwrap(), Some(Depth(2)));
        assert_eq!(tracker.arrival_depth(), 1);
        assert_eq!(svc.oneshot(McpRequest::new("ping", Default::default())).await.unwrap(), None);
    }
}
