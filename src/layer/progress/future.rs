//! The response future of [`Progress`](super::Progress).

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::ProgressTracker;

pin_project! {
    /// The inner future, plus the call's progress route: the route is removed
    /// when this future completes or is dropped.
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

impl<F: Future> Future for ResponseFuture<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let out = std::task::ready!(this.inner.poll(cx));
        // Progress that arrives after the reply is dropped from here on.
        this.tracker.take();
        Poll::Ready(out)
    }
}
