//! One call through a layer that is always ready and drives its inner
//! service to readiness inside the call (the deadline, the tool filter, the
//! tool-call gate).
//!
//! Such a layer cannot ask its caller to wait in `poll_ready`: the wait must
//! happen inside the call (under its deadline, after the filter's verdict,
//! behind the gate). [`Call::start`] polls the inner service once, without a
//! task to wake. Ready, it is called at once, with no clone to make and
//! drop: the common case. Otherwise the service that was polled — which may
//! hold a half-made reservation, a semaphore waiter say, that must belong to
//! this call and not stay behind in a service nobody polls — goes with the
//! call (or, failed, is dropped), and a clone of it takes its place. A clone
//! holds no reservation, so either way the layer's own inner service is left
//! with nothing reserved, as if the call had driven a clone.

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};
use tower_service::Service;

pin_project! {
    /// The inner service driven to readiness, then its call: a future of
    /// the inner service's result.
    #[project = CallProj]
    pub(crate) enum Call<S, R>
    where
        S: Service<R>,
    {
        // Boxed: waiting is the exception (a saturated limit, a reconnect),
        // and inline the service and the request would enlarge every call's
        // future.
        Waiting { waiting: Box<(S, Option<R>)> },
        Calling { #[pin] future: S::Future },
        // The inner service's readiness failed when the call was made.
        Failed { error: Option<S::Error> },
    }
}

impl<S, R> Call<S, R>
where
    S: Service<R> + Clone,
{
    /// Starts a call of `request` through `service` (see the module docs).
    pub(crate) fn start(service: &mut S, request: R) -> Self {
        let mut cx = Context::from_waker(Waker::noop());
        match service.poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => Call::Calling { future: service.call(request) },
            Poll::Pending => Call::waiting(replace_with_clone(service), request),
            Poll::Ready(Err(error)) => {
                drop(replace_with_clone(service));
                Call::Failed { error: Some(error) }
            }
        }
    }
}

impl<S: Service<R>, R> Call<S, R> {
    /// A call that first waits for `service`, not polled yet.
    pub(crate) fn waiting(service: S, request: R) -> Self {
        Call::Waiting { waiting: Box::new((service, Some(request))) }
    }

    /// Whether the request is still waiting for the service, not sent.
    pub(crate) fn is_waiting(&self) -> bool {
        matches!(self, Call::Waiting { .. })
    }
}

impl<S: Service<R>, R> Future for Call<S, R> {
    type Output = Result<S::Response, S::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                CallProj::Waiting { waiting } => {
                    let (service, request) = &mut **waiting;
                    let future = match ready!(call_when_ready(service, request, cx)) {
                        Ok(future) => future,
                        Err(error) => return Poll::Ready(Err(error)),
                    };
                    self.set(Call::Calling { future });
                }
                CallProj::Calling { future } => return future.poll(cx),
                CallProj::Failed { error } => {
                    return Poll::Ready(Err(error.take().expect("Call polled after completion")));
                }
            }
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

/// Once `service` is ready, makes the call with `request` (taken, so once).
/// Out of line, as the way there is: it instantiates the whole call below,
/// which the common path already has inline, and would make the waiting
/// call's `poll` as large again.
#[cold]
#[inline(never)]
fn call_when_ready<S, R>(
    service: &mut S,
    request: &mut Option<R>,
    cx: &mut Context<'_>,
) -> Poll<Result<S::Future, S::Error>>
where
    S: Service<R>,
{
    ready!(service.poll_ready(cx))?;
    let request = request.take().expect("a waiting call is made once");
    Poll::Ready(Ok(service.call(request)))
}
