//! The response future of [`ToolCallGate`](super::ToolCallGate).

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::{AcquireError, OwnedSemaphorePermit};
use tower_service::Service;

use crate::layer::Call;

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
        // Boxed: waiting at the gate is the exception, and inline it would
        // enlarge every call's future. Taken once the gate is passed.
        Gating { gating: Option<Box<Gating<S, R>>> },
        Running { #[pin] call: Call<S, R> },
        // Ended: the inner future is dropped at once, with whatever it
        // holds (a concurrency permit below, say).
        Done,
    }
}

/// A tool call waiting for the gate, then to be made through `service`.
struct Gating<S, R> {
    gate: Acquire,
    service: S,
    request: R,
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    /// Waits for the gate, then for `service`.
    pub(crate) fn gating(gate: Acquire, service: S, request: R) -> Self {
        let gating = Some(Box::new(Gating { gate, service, request }));
        ResponseFuture { state: State::Gating { gating }, permit: None }
    }

    /// `call`, holding `permit` (if any) until it ends.
    pub(crate) fn running(call: Call<S, R>, permit: Option<OwnedSemaphorePermit>) -> Self {
        ResponseFuture { state: State::Running { call }, permit }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Gating { .. } => "gating",
            State::Running { call } if call.is_waiting() => "waiting",
            State::Running { .. } => "calling",
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
                StateProj::Gating { gating } => {
                    let waiting = gating.as_mut().expect("ResponseFuture polled after completion");
                    let permit = ready!(waiting.gate.as_mut().poll(cx)).expect("the gate is never closed");
                    *this.permit = Some(permit);
                    let Gating { service, request, .. } = *gating.take().expect("the gate is passed once");
                    this.state.set(State::Running { call: Call::waiting(service, request) });
                }
                StateProj::Running { call } => {
                    let out = ready!(call.poll(cx));
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
