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
        // Boxed: waiting (for the gate, or for the inner service) is the
        // exception, and inline it would enlarge every call's future.
        Waiting { waiting: Box<Waiting<S, R>> },
        Calling { #[pin] future: S::Future },
        // The inner service's readiness failed when the call was made.
        Failed { error: Option<S::Error> },
        Done,
    }
}

/// A call not yet made: the gate to pass first, if any, then the service to
/// drive to readiness.
struct Waiting<S, R> {
    gate: Option<Acquire>,
    service: S,
    request: Option<R>,
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    /// Waits for the gate (if `gate`), then for `service`, holding `permit`
    /// (if any) meanwhile.
    pub(crate) fn waiting(
        gate: Option<Acquire>,
        service: S,
        request: R,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Self {
        let waiting = Box::new(Waiting { gate, service, request: Some(request) });
        ResponseFuture { state: State::Waiting { waiting }, permit }
    }

    /// The inner call, already made, holding `permit` (if any).
    pub(crate) fn calling(future: S::Future, permit: Option<OwnedSemaphorePermit>) -> Self {
        ResponseFuture { state: State::Calling { future }, permit }
    }

    /// The inner service's readiness failed.
    pub(crate) fn failed(error: S::Error) -> Self {
        ResponseFuture { state: State::Failed { error: Some(error) }, permit: None }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Waiting { waiting } if waiting.gate.is_some() => "gating",
            State::Waiting { .. } => "waiting",
            State::Calling { .. } => "calling",
            State::Failed { .. } | State::Done => "done",
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
                StateProj::Waiting { waiting } => {
                    if let Some(gate) = &mut waiting.gate {
                        let permit = ready!(gate.as_mut().poll(cx)).expect("the gate is never closed");
                        *this.permit = Some(permit);
                        waiting.gate = None;
                    }
                    match ready!(crate::layer::call_when_ready(
                        &mut waiting.service,
                        &mut waiting.request,
                        cx
                    )) {
                        Ok(future) => {
                            this.state.set(State::Calling { future });
                        }
                        Err(e) => {
                            this.permit.take();
                            this.state.set(State::Done);
                            return Poll::Ready(Err(e));
                        }
                    }
                }
                StateProj::Calling { future } => {
                    let out = ready!(future.poll(cx));
                    // The next tool call may start now, not when the caller
                    // gets round to dropping this future.
                    this.permit.take();
                    this.state.set(State::Done);
                    return Poll::Ready(out);
                }
                StateProj::Failed { error } => {
                    let error = error.take().expect("ResponseFuture polled after completion");
                    this.state.set(State::Done);
                    return Poll::Ready(Err(error));
                }
                StateProj::Done => panic!("ResponseFuture polled after completion"),
            }
        }
    }
}
