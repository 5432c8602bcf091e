//! The response future of [`Deadline`](super::Deadline).

use pin_project_lite::pin_project;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::time::{sleep_until, Instant, Sleep};
use tower_service::Service;

use super::Elapsed;
use crate::error::{Error, FailureClass};

pin_project! {
    /// Drives the inner service to readiness, then its call, both under one
    /// deadline.
    pub struct ResponseFuture<S, R>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R>,
        #[pin]
        sleep: Sleep,
        allowed: std::time::Duration,
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
        Waiting { service: S, request: Option<R> },
        Calling { #[pin] future: S::Future },
        // The inner service's readiness failed when the call was made.
        Failed { error: Option<Error> },
        // The deadline passed: the inner future was dropped at that moment,
        // which is what cancels the request on the wire.
        Expired,
    }
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    pub(crate) fn new(
        state: State<S, R>,
        deadline: Instant,
        allowed: std::time::Duration,
        method: Cow<'static, str>,
    ) -> Self {
        ResponseFuture { state, sleep: sleep_until(deadline), allowed, method }
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
        loop {
            // The inner side is polled first: a reply ready in the same poll
            // as the deadline wins.
            match this.state.as_mut().project() {
                StateProj::Waiting { service, request } => match service.poll_ready(cx) {
                    Poll::Ready(Ok(())) => {
                        let request = request.take().expect("request is taken once");
                        let future = service.call(request);
                        this.state.set(State::Calling { future });
                        continue;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e.into())),
                    Poll::Pending => {
                        ready!(this.sleep.as_mut().poll(cx));
                        this.state.set(State::Expired);
                        return Poll::Ready(Err(elapsed(this.method, *this.allowed, true)));
                    }
                },
                StateProj::Calling { future } => {
                    if let Poll::Ready(out) = future.poll(cx) {
                        return Poll::Ready(out.map_err(Into::into));
                    }
                    ready!(this.sleep.as_mut().poll(cx));
                    this.state.set(State::Expired);
                    return Poll::Ready(Err(elapsed(this.method, *this.allowed, false)));
                }
                StateProj::Failed { error } => {
                    return Poll::Ready(Err(error.take().expect("ResponseFuture polled after completion")));
                }
                StateProj::Expired => panic!("ResponseFuture polled after completion"),
            }
        }
    }
}

/// The method's name, borrowed when it is one of the protocol's (the
/// common case, and the reason: no allocation per call).
pub(crate) fn method_name(method: &str) -> Cow<'static, str> {
    match crate::protocol::methods::ALL.iter().find(|m| **m == method) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(method.to_string()),
    }
}

fn elapsed(method: &str, allowed: std::time::Duration, before_sending: bool) -> Error {
    let cause = Elapsed { method: method.to_string(), allowed, before_sending };
    Error::new(FailureClass::Deadline, cause.to_string()).with_source(cause)
}
