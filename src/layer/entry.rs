//! [`Entry`]: where a binding's stack is driven to readiness inside each
//! call.

use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower::util::{BoxService, Oneshot};
use tower::ServiceExt;
use tower_service::Service;

use crate::error::{BoxError, Error};
use crate::request::{BoxMcpService, McpRequest, McpResponse};

/// The host's user layers over the stack below them, boxed once: any
/// service, `Clone` or not, whose error converts into a [`BoxError`].
pub(crate) type UserStack = BoxService<McpRequest, McpResponse, BoxError>;

/// An always-ready handle to a stack kept once: each call waits for the
/// stack's readiness, and then calls it, inside the call's own future.
///
/// That is what puts every wait of the stack below — for a user layer's
/// rate limit, the tool-call gate, a concurrency permit, a reconnect —
/// inside the call, where the deadline above bounds it, while each layer
/// below still passes readiness through as tower's middleware do. It plays
/// the part tower's `Buffer` plays for a service shared between tasks,
/// without a worker task. Two forms:
///
/// - **the binding's own stack** (cloneable and `Sync`): each call clones it
///   (`svc.clone().oneshot(req)`, the tower idiom) and drives its clone, so
///   calls never wait for one another here;
/// - **with user layers**, which need not be `Clone` (tower's `RateLimit`
///   is not) and whose readiness may be a reservation a clone would not
///   share: the stack is kept once, behind a fair (first come, first
///   served) asynchronous lock held from readiness to `call` and never
///   while the response is awaited. One caller at a time waits for the
///   user layers' readiness, as behind tower's `Buffer`; the stack below
///   the user layers is this entry's first form, so its waits (the gate, a
///   permit, a reconnect) happen in each call's response, not under the
///   lock. A caller whose deadline passes while it waits leaves the queue.
///
/// The user stack's error is converted once, here, by
/// [`Error::from_boxed`] (which searches its source chain).
#[derive(Clone)]
pub(crate) enum Entry {
    /// The binding's own stack.
    Direct(BoxMcpService),
    /// User layers over an [`Entry::Direct`].
    Shared(Arc<tokio::sync::Mutex<UserStack>>),
}

impl Entry {
    /// An entry over the binding's own stack.
    pub(crate) fn new(stack: BoxMcpService) -> Self {
        Entry::Direct(stack)
    }

    /// An entry over the user layers' stack.
    pub(crate) fn shared(stack: UserStack) -> Self {
        Entry::Shared(Arc::new(tokio::sync::Mutex::new(stack)))
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let form = match self {
            Entry::Direct(_) => "direct",
            Entry::Shared(_) => "shared",
        };
        f.debug_struct("Entry").field("form", &form).finish_non_exhaustive()
    }
}

type SharedCall = Pin<Box<dyn Future<Output = Result<McpResponse, Error>> + Send>>;

pin_project! {
    /// The future of one call through an [`Entry`].
    #[project = EntryFutureProj]
    pub(crate) enum EntryFuture {
        Direct { #[pin] call: Oneshot<BoxMcpService, McpRequest> },
        Shared { call: SharedCall },
    }
}

impl Future for EntryFuture {
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            EntryFutureProj::Direct { call } => call.poll(cx),
            EntryFutureProj::Shared { call } => Poll::Ready(ready!(call.as_mut().poll(cx))),
        }
    }
}

impl Service<McpRequest> for Entry {
    type Response = McpResponse;
    type Error = Error;
    type Future = EntryFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: McpRequest) -> EntryFuture {
        match self {
            Entry::Direct(stack) => EntryFuture::Direct { call: stack.clone().oneshot(req) },
            Entry::Shared(stack) => {
                let stack = stack.clone();
                let call = async move {
                    let mut stack = stack.lock_owned().await;
                    stack.ready().await.map_err(Error::from_boxed)?;
                    let response = stack.call(req);
                    // Released before the response is awaited: the lock
                    // orders readiness, not calls.
                    drop(stack);
                    response.await.map_err(Error::from_boxed)
                };
                EntryFuture::Shared { call: Box::pin(call) }
            }
        }
    }
}
