//! The per-binding middleware, one concern per module, each a
//! `tower::Layer`: `FooLayer` makes `Foo<S>`, whose future is
//! `foo::future::ResponseFuture`.
//!
//! A binding's default stack is assembled in [`crate::binding`], outermost
//! first; each module documents what it adds and why it sits where it does.
//! Every layer passes readiness through (`poll_ready` is the inner
//! service's) except the tool-call gate, whose wait depends on the request
//! (see [`tool_gate`]).
//!
//! Two services are named like the types they enforce or route:
//! [`tool_filter::ToolFilter`] (the service) enforces a
//! [`crate::ToolFilter`] (the policy), and [`progress::Progress`] (the
//! service) routes [`crate::Progress`] reports. Only the layers are
//! re-exported here.

pub mod deadline;
pub(crate) mod entry;
pub mod progress;
pub mod reconnect;
pub mod result_limit;
pub mod retry;
pub mod sampling_depth;
pub mod tool_filter;
pub mod tool_gate;
pub mod trace;

pub use deadline::{Deadline, DeadlineLayer};
pub use progress::{ProgressLayer, ProgressRouter, ProgressTracker};
pub use reconnect::{Reconnect, ReconnectLayer};
pub use result_limit::{ResultLimit, ResultLimitLayer};
pub use retry::{RetryBudget, SafeRetry};
pub use sampling_depth::{SamplingDepth, SamplingDepthLayer};
pub use tool_filter::ToolFilterLayer;
pub use tool_gate::{ToolCallGate, ToolCallGateLayer};

/// What the layers' unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};
    use tower_service::Service;

    use crate::error::Error;
    use crate::request::{McpRequest, McpResponse};

    /// Counts its clones; always ready; answers at once with an empty tool
    /// result.
    #[derive(Debug)]
    pub(crate) struct CountsClones(pub(crate) Arc<AtomicUsize>);

    impl Clone for CountsClones {
        fn clone(&self) -> Self {
            self.0.fetch_add(1, Ordering::SeqCst);
            CountsClones(self.0.clone())
        }
    }

    impl Service<McpRequest> for CountsClones {
        type Response = McpResponse;
        type Error = Error;
        type Future = std::future::Ready<Result<McpResponse, Error>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _req: McpRequest) -> Self::Future {
            std::future::ready(Ok(McpResponse::new(serde_json::json!({ "content": [] }))))
        }
    }
}
