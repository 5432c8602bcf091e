//! The binding's stack as one named service.
//!
//! The stack is a concrete type, not a boxed one: a `BoxCloneSyncService`
//! would cost an allocation for every clone of the service (and callers
//! clone it for every call, as `oneshot` consumes it) and one for every
//! call's future, and would hide the layers' futures behind a virtual call.
//! [`BindingService`] names the stack instead, and its future,
//! [`BindingFuture`], is the layers' own futures nested in one value.
//!
//! A [`BindingService`] is a handle to the stack, one pointer wide. A call
//! needs the stack mutably (tower's `call` takes `&mut self`), and it needs
//! nothing reserved in advance: the outer layers (the tool filter, the
//! deadline) are always ready and drive the layers below them to readiness
//! inside each call's future, and every layer leaves itself as it was
//! before the call once `call` returns (what it reserved has moved into the
//! call's future). So the handle keeps one copy of the stack that any call
//! may borrow for the moment of its `call`, behind a `try_lock`: a call
//! that finds it borrowed (another thread is inside `call` at that instant)
//! works on a fresh copy instead, so no call ever waits for another. This
//! is what tower's `svc.clone().call()` does, without copying the stack in
//! the common case: a copy takes and gives back a reference count for every
//! shared part (the timer, the routes, the gate, the limit, the retry
//! budget, the connection), and the copy that is kept lets the layers keep
//! what they looked up between calls (the reconnect layer's live
//! connection).

use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, TryLockError};
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
    stacks: Arc<Stacks>,
}

/// The stack as built, and the copy calls borrow (see the module docs).
struct Stacks {
    /// Never called: what a call copies when `spare` is borrowed.
    built: Filtered,
    spare: Mutex<Filtered>,
}

impl BindingService {
    pub(crate) fn new(stack: Filtered) -> Self {
        let spare = Mutex::new(stack.clone());
        BindingService { stacks: Arc::new(Stacks { built: stack, spare }) }
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
        // The filter is always ready, so its `poll_ready` is not called (it
        // would only answer `Ready`).
        let inner = match self.stacks.spare.try_lock() {
            Ok(mut spare) => spare.call(req),
            Err(TryLockError::WouldBlock) => Filtered::clone(&self.stacks.built).call(req),
            Err(TryLockError::Poisoned(poisoned)) => {
                // A call panicked inside the stack, which may have kept what
                // it reserved: start over from a copy of the built stack.
                let mut spare = poisoned.into_inner();
                *spare = Filtered::clone(&self.stacks.built);
                self.stacks.spare.clear_poison();
                spare.call(req)
            }
        };
        BindingFuture { inner }
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
        assert!(future <= 288, "a call's future grew to {future} bytes");
    }

    async fn demo() -> (crate::Binding, BindingService) {
        let definition = crate::Definition::new("demo", crate::demo::factory());
        let binding = crate::Binding::connect(definition, crate::Handlers::default()).await.unwrap();
        let service = binding.service();
        (binding, service)
    }

    fn echo_request(message: &str) -> McpRequest {
        let params = serde_json::json!({ "name": "echo", "arguments": { "message": message } });
        McpRequest::with_value("tools/call", params)
    }

    fn text(rsp: McpResponse) -> String {
        rsp.result["content"][0]["text"].as_str().unwrap_or_default().to_string()
    }

    async fn echo(service: &BindingService, message: &str) -> Result<String, Error> {
        use tower::ServiceExt;
        Ok(text(service.clone().oneshot(echo_request(message)).await?))
    }

    #[tokio::test]
    async fn a_call_that_finds_the_spare_borrowed_works_on_a_copy() {
        let (binding, service) = demo().await;
        let borrowed = service.stacks.spare.lock().unwrap();
        let call = service.clone().call(echo_request("copy"));
        drop(borrowed);
        assert_eq!(text(call.await.unwrap()), "copy");
        assert_eq!(echo(&service, "spare").await.unwrap(), "spare");
        binding.close().await;
    }

    #[tokio::test]
    async fn a_panic_inside_the_stack_leaves_a_fresh_spare() {
        let (binding, service) = demo().await;
        let stacks = service.stacks.clone();
        let panicked = std::thread::spawn(move || {
            let _spare = stacks.spare.lock().unwrap();
            panic!("a call panicked while it held the spare");
        })
        .join();
        assert!(panicked.is_err() && service.stacks.spare.is_poisoned());
        assert_eq!(echo(&service, "after").await.unwrap(), "after");
        assert!(!service.stacks.spare.is_poisoned());
        binding.close().await;
    }

    /// Calls from several threads at once through clones of one service: some
    /// borrow the spare, the others work on copies, and every call is served
    /// and leaves the stack as it found it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn calls_from_many_threads_share_one_service() {
        let (binding, service) = demo().await;
        let tasks: Vec<_> = (0..8)
            .map(|task| {
                let service = service.clone();
                tokio::spawn(async move {
                    for call in 0..100 {
                        let message = format!("{task}/{call}");
                        assert_eq!(echo(&service, &message).await.unwrap(), message);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        // Nothing reserved was left behind: tool calls take the binding's
        // one-at-a-time gate (the default), so a permit kept by the spare or
        // a copy would hold the next call forever.
        let last = tokio::time::timeout(std::time::Duration::from_secs(10), echo(&service, "last")).await;
        assert_eq!(last.expect("the gate was given back").unwrap(), "last");
        binding.close().await;
    }
}
