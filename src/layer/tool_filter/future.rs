//! The response future of [`ToolFilterService`](super::ToolFilterService).

use pin_project_lite::pin_project;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower_service::Service;

use crate::binding::ToolFilter;
use crate::error::Error;
use crate::request::McpResponse;

pin_project! {
    /// A refusal, ready at once; or the inner service driven to readiness,
    /// then its call, with a `tools/list` result filtered on the way out.
    pub struct ResponseFuture<S, R>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R>,
        // Set for `tools/list` under a filter that removes something.
        list_filter: Option<Arc<ToolFilter>>,
    }
}

pin_project! {
    #[project = StateProj]
    pub(crate) enum State<S, R>
    where
        S: Service<R>,
    {
        // Refused by the filter, or the inner service's readiness failed.
        Refused { error: Option<Error> },
        // Boxed, as in the deadline's future: waiting is the exception, and
        // inline the service and the request would enlarge every call's
        // future.
        Waiting { waiting: Box<(S, Option<R>)> },
        Calling { #[pin] future: S::Future },
    }
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    pub(crate) fn refused(error: Error) -> Self {
        ResponseFuture { state: State::Refused { error: Some(error) }, list_filter: None }
    }

    pub(crate) fn permitted(state: State<S, R>, list_filter: Option<Arc<ToolFilter>>) -> Self {
        ResponseFuture { state, list_filter }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Refused { .. } => "refused",
            State::Waiting { .. } => "waiting",
            State::Calling { .. } => "calling",
        };
        f.debug_struct("ResponseFuture").field("state", &state).finish_non_exhaustive()
    }
}

impl<S, R> Future for ResponseFuture<S, R>
where
    S: Service<R, Response = McpResponse>,
    S::Error: Into<Error>,
{
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Refused { error } => {
                    return Poll::Ready(Err(error.take().expect("ResponseFuture polled after completion")));
                }
                StateProj::Waiting { waiting } => {
                    let called = crate::layer::call_when_ready(&mut waiting.0, &mut waiting.1, cx);
                    let future = ready!(called).map_err(Into::into)?;
                    this.state.set(State::Calling { future });
                }
                StateProj::Calling { future } => {
                    let mut rsp = ready!(future.poll(cx)).map_err(Into::into)?;
                    if let Some(filter) = this.list_filter.take() {
                        remove_filtered(&mut rsp.result, &filter);
                    }
                    return Poll::Ready(Ok(rsp));
                }
            }
        }
    }
}

/// Removes the entries of `result.tools` the filter does not permit. An
/// entry without a string name is left for the listing to reject as
/// malformed.
fn remove_filtered(result: &mut Value, filter: &ToolFilter) {
    if let Some(Value::Array(tools)) = result.get_mut("tools") {
        tools.retain(|tool| tool.get("name").and_then(Value::as_str).is_none_or(|name| filter.permits(name)));
    }
}
