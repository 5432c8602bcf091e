//! The response future of [`Deadline`](super::Deadline).

use pin_project_lite::pin_project;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

use super::Elapsed;

pin_project! {
    /// The inner future, raced against the call's deadline.
    #[derive(Debug)]
    pub struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
        // What the call was allowed, for the error.
        allowed: Duration,
        // Only read on expiry; a standard method costs no allocation.
        method: Cow<'static, str>,
    }
}

pin_project! {
    #[project = StateProj]
    #[derive(Debug)]
    enum State<F> {
        Running { #[pin] inner: F, #[pin] sleep: Sleep },
        // The deadline passed: the inner future was dropped at that moment
        // (not when the caller drops this one), which is what cancels the
        // request on the wire and gives back what it held.
        Expired,
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn new(inner: F, sleep: Sleep, allowed: Duration, method: Cow<'static, str>) -> Self {
        ResponseFuture { state: State::Running { inner, sleep }, allowed, method }
    }
}

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: From<Elapsed>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let StateProj::Running { inner, sleep } = this.state.as_mut().project() else {
            panic!("ResponseFuture polled after completion");
        };
        // The inner side is polled first: a reply ready in the same poll as
        // the deadline wins. A caller who got an answer gets it.
        if let Poll::Ready(out) = inner.poll(cx) {
            return Poll::Ready(out);
        }
        match sleep.poll(cx) {
            Poll::Ready(()) => {
                this.state.set(State::Expired);
                Poll::Ready(Err(elapsed(this.method, *this.allowed).into()))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The method's name, borrowed when it is one of the protocol's (the
/// common case, and the reason: no allocation per call).
pub(crate) fn method_name(method: &str) -> Cow<'static, str> {
    match crate::protocol::methods::known(method) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(method.to_string()),
    }
}

#[cold]
#[inline(never)]
fn elapsed(method: &str, allowed: Duration) -> Elapsed {
    Elapsed { method: method.to_string(), allowed }
}
