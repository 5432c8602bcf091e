//! [`CatalogGuard`]: tool calls checked against the adopted generation, and
//! their structured results validated, inside the stack.
//!
//! Both paths a host has to a server — the binding's methods and
//! `binding.service()` — go through this layer, so a call is planned and
//! its result validated the same way on either:
//!
//! - on the way down, a `tools/call` is checked against the adopted
//!   generation ([`tool_schema_changed`] before any I/O when a waiting
//!   candidate changes or removes the tool);
//! - on the way up, its `structuredContent` is validated against the
//!   adopted tool's output schema, unless the result is an error or a
//!   limit dropped it (the [`ResultMarks`] say so); what a mismatch does
//!   follows the profile (see the [catalog docs](super#output-validation)).
//!
//! Readiness passes through. Other methods pass through untouched.
//!
//! [`tool_schema_changed`]: crate::FailureClass::ToolSchemaChanged
//! [`ResultMarks`]: crate::content::ResultMarks

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower_service::Service;

use super::generation::{CallPlan, CatalogCell};
use crate::error::Error;
use crate::request::{McpRequest, McpResponse};

/// Plans tool calls and validates their results. See the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct CatalogGuard<S> {
    inner: S,
    cell: Arc<CatalogCell>,
}

impl<S> CatalogGuard<S> {
    pub(crate) fn new(inner: S, cell: Arc<CatalogCell>) -> Self {
        CatalogGuard { inner, cell }
    }
}

impl<S> Service<McpRequest> for CatalogGuard<S>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error>,
{
    type Response = McpResponse;
    type Error = Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let Some(name) = req.tool_name() else {
            return ResponseFuture { state: State::Passing { inner: self.inner.call(req) } };
        };
        match self.cell.plan_call(name) {
            Ok(plan) => {
                let checked = Some(Box::new((self.cell.clone(), plan)));
                ResponseFuture { state: State::Checking { inner: self.inner.call(req), checked } }
            }
            Err(e) => ResponseFuture { state: State::Refused { error: Some(e) } },
        }
    }
}

pin_project! {
    /// The inner future; a tool call's result is validated when it arrives.
    pub(crate) struct ResponseFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Passing { #[pin] inner: F },
        // Boxed: the plan is a few words, and most calls through a busy
        // binding are tool calls, but the future should stay small.
        Checking { #[pin] inner: F, checked: Option<Box<(Arc<CatalogCell>, CallPlan)>> },
        Refused { error: Option<Error> },
    }
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<McpResponse, Error>>,
{
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Passing { inner } => inner.poll(cx),
            StateProj::Checking { inner, checked } => {
                let mut rsp = ready!(inner.poll(cx))?;
                let (cell, plan) = *checked.take().expect("ResponseFuture polled after completion");
                cell.check_response(&plan, &mut rsp)?;
                Poll::Ready(Ok(rsp))
            }
            StateProj::Refused { error } => {
                Poll::Ready(Err(error.take().expect("ResponseFuture polled after completion")))
            }
        }
    }
}
