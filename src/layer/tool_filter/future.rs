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
use crate::layer::Call;
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
    enum State<S, R>
    where
        S: Service<R>,
    {
        Refused { error: Option<Error> },
        Permitted { #[pin] call: Call<S, R> },
    }
}

impl<S: Service<R>, R> ResponseFuture<S, R> {
    pub(crate) fn refused(error: Error) -> Self {
        ResponseFuture { state: State::Refused { error: Some(error) }, list_filter: None }
    }

    pub(crate) fn permitted(call: Call<S, R>, list_filter: Option<Arc<ToolFilter>>) -> Self {
        ResponseFuture { state: State::Permitted { call }, list_filter }
    }
}

impl<S, R> std::fmt::Debug for ResponseFuture<S, R>
where
    S: Service<R>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Refused { .. } => "refused",
            State::Permitted { call } if call.is_waiting() => "waiting",
            State::Permitted { .. } => "calling",
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
        let this = self.project();
        match this.state.project() {
            StateProj::Refused { error } => {
                Poll::Ready(Err(error.take().expect("ResponseFuture polled after completion")))
            }
            StateProj::Permitted { call } => {
                let mut rsp = ready!(call.poll(cx)).map_err(Into::into)?;
                if let Some(filter) = this.list_filter.take() {
                    remove_filtered(&mut rsp.result, &filter);
                }
                Poll::Ready(Ok(rsp))
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
