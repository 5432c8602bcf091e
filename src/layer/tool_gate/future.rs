//! The response future of [`ToolCallGate`](super::ToolCallGate).

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::util::Oneshot;
use tower_service::Service;

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, tokio::sync::AcquireError>> + Send>>;

pin_project! {
    /// The gate's permit (tool calls only), then the inner service's
    /// readiness and call; the permit is given back the moment the inner
    /// call completes or this future is dropped.
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
        // Parallel calls: the inner call, made at once.
        Called { #[pin] future: S::Future },
        // Waiting for the gate; boxed, as waiting is the exception.
        Gating { gate: Acquire, next: Option<Box<(S, R)>> },
        // The inner service driven to readiness, then called.
        Running { #[pin] call: Oneshot<S, R> },
        Done,
    }
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    pub(crate) fn called(future: S::Future) -> Self {
        ResponseFuture { state: State::Called { future }, permit: None }
    }

    /// A call of `request` through `service` that first takes `gate`, if any.
    pub(crate) fn gated(gate: Option<Arc<Semaphore>>, service: S, request: R) -> Self {
        let Some(gate) = gate else {
            return ResponseFuture {
                state: State::Running { call: Oneshot::new(service, request) },
                permit: None,
            };
        };
        match gate.clone().try_acquire_owned() {
            Ok(permit) => ResponseFuture {
                state: State::Running { call: Oneshot::new(service, request) },
                permit: Some(permit),
            },
            Err(_) => ResponseFuture {
                state: State::Gating {
                    gate: Box::pin(gate.acquire_owned()),
                    next: Some(Box::new((service, request))),
                },
                permit: None,
            },
        }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Called { .. } => "called",
            State::Gating { .. } => "gating",
            State::Running { .. } => "running",
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
                StateProj::Called { future } => return future.poll(cx),
                StateProj::Gating { gate, next } => {
                    let permit = ready!(gate.as_mut().poll(cx)).expect("the gate is never closed");
                    *this.permit = Some(permit);
                    let (service, request) = *next.take().expect("the gate is passed once");
                    this.state.set(State::Running { call: Oneshot::new(service, request) });
                }
                StateProj::Running { call } => {
                    let out = ready!(call.poll(cx));
                    // Given back now, not when the caller drops this future.
                    this.permit.take();
                    this.state.set(State::Done);
                    return Poll::Ready(out);
                }
                StateProj::Done => panic!("ResponseFuture polled after completion"),
            }
        }
    }
}
