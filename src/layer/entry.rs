//! [`Entry`]: where a binding's stack is driven to readiness inside each
//! call.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tower::util::Oneshot;
use tower_service::Service;

use crate::error::Error;
use crate::request::{BoxMcpService, McpRequest, McpResponse};

/// An always-ready handle to a stack kept once: each call clones the stack
/// (`svc.clone().oneshot(req)`, the tower idiom) and drives the clone to
/// readiness and then calls it, all inside the call's future.
///
/// That is what puts every wait of the stack below — for a user layer's
/// rate limit, the tool-call gate, a concurrency permit, a reconnect —
/// inside the call, where the deadline above bounds it, while each layer
/// below still passes readiness through as tower's middleware do. It plays
/// the part tower's `Buffer` plays for a service shared between tasks,
/// without a worker task: each call drives its own clone.
///
/// The stack is behind a lock only because a boxed cloneable service is not
/// `Sync`; the lock is held for the clone, never across an await.
#[derive(Clone)]
pub(crate) struct Entry {
    stack: Arc<Mutex<BoxMcpService>>,
}

impl Entry {
    pub(crate) fn new(stack: BoxMcpService) -> Self {
        Entry { stack: Arc::new(Mutex::new(stack)) }
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry").finish_non_exhaustive()
    }
}

impl Service<McpRequest> for Entry {
    type Response = McpResponse;
    type Error = Error;
    type Future = Oneshot<BoxMcpService, McpRequest>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let stack = self.stack.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        Oneshot::new(stack, req)
    }
}
