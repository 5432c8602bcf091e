//! The response future of [`EnforceToolFilter`](super::EnforceToolFilter).

use pin_project_lite::pin_project;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use crate::config::ToolFilter as Policy;
use crate::request::McpResponse;

pin_project! {
    /// A refusal, or the inner future whose `tools/list` result is filtered.
    #[derive(Debug)]
    pub struct ResponseFuture<F, E> {
        #[pin]
        state: State<F, E>,
        list_filter: Option<Arc<Policy>>,
    }
}

pin_project! {
    #[project = StateProj]
    #[derive(Debug)]
    enum State<F, E> {
        Refused { error: Option<E> },
        Permitted { #[pin] inner: F },
    }
}

impl<F, E> ResponseFuture<F, E> {
    pub(crate) fn refused(error: E) -> Self {
        ResponseFuture { state: State::Refused { error: Some(error) }, list_filter: None }
    }

    pub(crate) fn permitted(inner: F, list_filter: Option<Arc<Policy>>) -> Self {
        ResponseFuture { state: State::Permitted { inner }, list_filter }
    }
}

impl<F, E> Future for ResponseFuture<F, E>
where
    F: Future<Output = Result<McpResponse, E>>,
{
    type Output = Result<McpResponse, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.state.project() {
            StateProj::Refused { error } => {
                Poll::Ready(Err(error.take().expect("ResponseFuture polled after completion")))
            }
            StateProj::Permitted { inner } => {
                let mut rsp = ready!(inner.poll(cx))?;
                if let Some(policy) = this.list_filter.take() {
                    remove_filtered(&mut rsp.result, &policy);
                }
                Poll::Ready(Ok(rsp))
            }
        }
    }
}

fn remove_filtered(result: &mut Value, policy: &Policy) {
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        tools.retain(|tool| tool.get("name").and_then(Value::as_str).is_none_or(|name| policy.permits(name)));
    }
}
