//! The response future of [`Deadline`](super::Deadline).

use pin_project_lite::pin_project;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::time::Instant;
use tower_service::Service;

use super::timer::Entry;
use super::Elapsed;
use crate::error::{Error, FailureClass};
use crate::layer::Call;

pin_project! {
    /// Drives the inner service to readiness, then its call, both under one
    /// deadline.
    pub struct ResponseFuture<S, R>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R>,
        // The call's place in the layer's timer.
        entry: Entry,
        // When the call entered the layer: what it was allowed is only
        // worked out if it expires.
        entered: Instant,
        // Only read on expiry; a standard method costs no allocation.
        method: Cow<'static, str>,
    }
}

pin_project! {
    #[project = StateProj]
    pub(crate) enum State<S, R>
    where
        S: Service<R>,
    {
        Running { #[pin] call: Call<S, R> },
        // The deadline passed: the inner call was dropped at that moment,
        // which is what cancels the request on the wire.
        Expired,
    }
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    pub(crate) fn new(state: State<S, R>, entry: Entry, entered: Instant, method: Cow<'static, str>) -> Self {
        ResponseFuture { state, entry, entered, method }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").field("method", &self.method).finish_non_exhaustive()
    }
}

impl<S, R> Future for ResponseFuture<S, R>
where
    S: Service<R>,
    S::Error: Into<Error>,
{
    type Output = Result<S::Response, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        // The inner side is polled first: a reply ready in the same poll as
        // the deadline wins.
        let before_sending = match this.state.as_mut().project() {
            StateProj::Running { mut call } => {
                if let Poll::Ready(out) = call.as_mut().poll(cx) {
                    this.entry.leave();
                    return Poll::Ready(out.map_err(Into::into));
                }
                call.is_waiting()
            }
            StateProj::Expired => panic!("ResponseFuture polled after completion"),
        };
        ready!(this.entry.poll_expired(*this.entered, cx));
        this.state.set(State::Expired);
        let allowed = this.entry.deadline().saturating_duration_since(*this.entered);
        Poll::Ready(Err(elapsed(this.method, allowed, before_sending)))
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
fn elapsed(method: &str, allowed: std::time::Duration, before_sending: bool) -> Error {
    let cause = Elapsed { method: method.to_string(), allowed, before_sending };
    Error::new(FailureClass::Deadline, cause.to_string()).with_source(cause)
}
