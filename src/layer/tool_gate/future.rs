//! The response future of [`ToolCallGate`](super::ToolCallGate).

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::{AcquireError, OwnedSemaphorePermit};
use tower_service::Service;

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

pin_project! {
    /// In order: the gate's permit (tool calls only), the inner service's
    /// readiness, the inner call. The permit is held until this future
    /// completes or is dropped.
    pub struct ResponseFuture<S, R>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R>,
        permit: Option<OwnedSemaphorePermit>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, R>
    where
        S: Service<R>,
    {
        Gating { acquire: Acquire, service: Option<S>, request: Option<R> },
        Waiting { service: S, request: Option<R> },
        Calling { #[pin] future: S::Future },
        Done,
    }
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    /// Waits for the gate, then for `service`.
    pub(crate) fn gating(acquire: Acquire, service: S, request: R) -> Self {
        let state = State::Gating { acquire, service: Some(service), request: Some(request) };
        ResponseFuture { state, permit: None }
    }

    /// Waits for `service`, holding `permit` (if any) meanwhile.
    pub(crate) fn waiting(service: S, request: R, permit: Option<OwnedSemaphorePermit>) -> Self {
        ResponseFuture { state: State::Waiting { service, request: Some(request) }, permit }
    }

    /// The inner call, already made (no gate).
    pub(crate) fn calling(future: S::Future) -> Self {
        ResponseFuture { state: State::Calling { future }, permit: None }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Gating { .. } => "gating",
            State::Waiting { .. } => "waiting",
            State::Calling { .. } => "calling",
            State::Done => "done",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .field("holds_gate", &self.permit.is_some())
            .finish()
    }
}

impl<S, R> Future for ResponseFuture<S, R>
where
    S: Service<R>,
{
    type Output = Result<S::Response, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Gating { acquire, service, request } => {
                    let permit = ready!(acquire.as_mut().poll(cx)).expect("the gate is never closed");
                    *this.permit = Some(permit);
                    let service = service.take().expect("service is taken once");
                    let request = request.take();
                    this.state.set(State::Waiting { service, request });
                }
                StateProj::Waiting { service, request } => match ready!(service.poll_ready(cx)) {
                    Ok(()) => {
                        let future = service.call(request.take().expect("request is taken once"));
                        this.state.set(State::Calling { future });
                    }
                    Err(e) => {
                        this.permit.take();
                        this.state.set(State::Done);
                        return Poll::Ready(Err(e));
                    }
                },
                StateProj::Calling { future } => {
                    let out = ready!(future.poll(cx));
                    // The next tool call may start now, not when the caller
                    // gets round to dropping this future.
                    this.permit.take();
                    this.state.set(State::Done);
                    return Poll::Ready(out);
                }
                StateProj::Done => panic!("ResponseFuture polled after completion"),
            }
        }
    }
}
