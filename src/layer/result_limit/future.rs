//! The response future of [`ResultLimit`](super::ResultLimit).

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::bounds::{self, Family};
use super::ResultBounds;
use crate::request::McpResponse;

pin_project! {
    /// The inner future; its result is bounded when it arrives.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        // `None` for a method whose result this layer does not cover.
        bound: Option<(Family, ResultBounds)>,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(inner: F, bound: Option<(Family, ResultBounds)>) -> Self {
        ResponseFuture { inner, bound }
    }
}

impl<F, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<McpResponse, E>>,
{
    type Output = Result<McpResponse, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut rsp = ready!(this.inner.poll(cx))?;
        if let Some((family, limits)) = this.bound.take() {
            let marks = bounds::apply(family, &mut rsp.result, &limits, &mut rsp.warnings);
            if !marks.is_empty() {
                rsp.extensions.insert(marks);
            }
        }
        Poll::Ready(Ok(rsp))
    }
}
