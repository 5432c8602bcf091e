//! The binding's stack as one named service.
//!
//! The stack is a concrete type, not a boxed one: a `BoxCloneSyncService`
//! would cost an allocation for every clone of the service (and callers
//! clone it for every call, as `oneshot` consumes it) and one for every
//! call's future, and would hide the layers' futures behind a virtual call.
//! [`BindingService`] names the stack instead, and its future,
//! [`BindingFuture`], is the layers' own futures nested in one value.
//!
//! A [`BindingService`] is a handle to the stack, one pointer wide, and
//! each call works on its own copy of the stack. That is possible because
//! the outer layers (the tool filter, the deadline) are always ready and
//! drive the layers below them to readiness inside each call's future, so a
//! caller's `poll_ready` reserves nothing and a call needs no state from
//! the service it was made through. It is what tower's `svc.clone().call()`
//! does anyway; the difference is that what a caller clones, moves into a
//! `oneshot` or into a spawned task is one pointer, not the whole stack.

use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::limit::ConcurrencyLimit;
use tower::retry::Retry;
use tower::util::MapRequest;
use tower_service::Service;

use crate::error::Error;
use crate::layer::reconnect::SharedRequests;
use crate::layer::{Deadline, ProgressService, ResultLimit, SafeRetry, ToolCallGate, ToolFilterService};
use crate::request::{McpRequest, McpResponse};

/// From the retry layer down, requests are shared (see the module docs of
/// [`crate::binding`], position 7).
pub(crate) type Share = fn(McpRequest) -> Arc<McpRequest>;

/// Everything below the tool filter: what the catalog reads the server's
/// whole offering through.
pub(crate) type Unfiltered = Deadline<
    ResultLimit<
        ProgressService<ToolCallGate<ConcurrencyLimit<MapRequest<Retry<SafeRetry, SharedRequests>, Share>>>>,
    >,
>;

type Filtered = ToolFilterService<Unfiltered>;

/// A binding's whole stack, filter included: what [`Binding::service`]
/// returns, for sending requests the binding has no method for. Cheap to
/// clone; clones share the connection, the gate, the limits and the
/// progress routes.
///
/// [`Binding::service`]: crate::Binding::service
#[derive(Clone)]
pub struct BindingService {
    stack: Arc<Filtered>,
}

impl BindingService {
    pub(crate) fn new(stack: Filtered) -> Self {
        BindingService { stack: Arc::new(stack) }
    }
}

impl fmt::Debug for BindingService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingService").finish_non_exhaustive()
    }
}

impl Service<McpRequest> for BindingService {
    type Response = McpResponse;
    type Error = Error;
    type Future = BindingFuture;

    /// Always ready, as the tool filter is: readiness below it is awaited
    /// inside each call, under the call's deadline.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: McpRequest) -> BindingFuture {
        // The filter is always ready, so its copy needs no `poll_ready`
        // (it would only answer `Ready`); whatever the layers below reserve
        // for this call goes into the call's future.
        let mut stack = Filtered::clone(&self.stack);
        BindingFuture { inner: stack.call(req) }
    }
}

pin_project! {
    /// The future of one call through a [`BindingService`].
    pub struct BindingFuture {
        #[pin]
        inner: <Filtered as Service<McpRequest>>::Future,
    }
}

impl fmt::Debug for BindingFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingFuture").finish_non_exhaustive()
    }
}

impl Future for BindingFuture {
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx)
    }
}

// What callers rely on: the service can be shared between tasks and threads,
// and its future sent to another task.
const _: fn() = || {
    fn service<T: Send + Sync + Clone + 'static>() {}
    fn future<T: Send + 'static>() {}
    service::<BindingService>();
    future::<BindingFuture>();
};

#[cfg(test)]
mod tests {
    use super::*;

    /// What a caller clones and moves per call: a handle, and a future whose
    /// size is the layers' own state, with the rare states (waiting for
    /// readiness, a retry's delay, a progress route) boxed. A regression
    /// here shows as copying in every call (see `benches/overhead.rs`).
    #[test]
    fn the_handle_is_a_pointer_and_the_future_stays_small() {
        assert_eq!(std::mem::size_of::<BindingService>(), std::mem::size_of::<usize>());
        let future = std::mem::size_of::<BindingFuture>();
        assert!(future <= 320, "a call's future grew to {future} bytes");
    }
}
