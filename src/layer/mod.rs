//! The per-binding middleware, one concern per module, each a
//! `tower::Layer`: `FooLayer` makes `Foo<S>`, whose future is
//! `foo::ResponseFuture`. Each type has one path, in its own module (as in
//! tower: `layer::deadline::DeadlineLayer`); nothing is re-exported here.
//!
//! A binding's default stack is assembled in [`Binding`](crate::Binding#the-stack), outermost
//! first; each module documents what it adds and why it sits where it does.
//! Every layer passes readiness through (`poll_ready` is the inner
//! service's) except the tool-call gate, whose wait depends on the request
//! (see [`tool_gate`]).
//!
//! The services are named after what they do to the request:
//! [`tool_filter::EnforceToolFilter`] enforces a [`crate::ToolFilter`] (the
//! policy), and [`progress::Progress`] routes the
//! [`crate::ProgressUpdate`]s a request's progress sink receives.

pub mod cache;
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
