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
//! - on the 2026-07-28 era over HTTP, the tool's `x-mcp-header` arguments
//!   go down as `Mcp-Param-*` headers (a typed [`ParamHeaders`] extension
//!   the transport reads), and a server that answers -32020 (its headers do
//!   not match) makes the catalog look again and the call go once more with
//!   the headers the tool's schema asks for now: the server refused it
//!   before running it, so this is not a replay, and it runs inside the
//!   call's one deadline (the deadline layer is above this one);
//! - on the way up, its `structuredContent` is validated against the
//!   adopted tool's output schema, unless the result is an error or a
//!   limit dropped it (the [`ResultMarks`] say so); what a mismatch does
//!   follows the profile (see the [catalog docs](super#output-validation));
//! - a call of a tool the definition says is safe to run twice
//!   ([`RepeatableTools`], by name or by its
//!   `idempotentHint` when the definition trusts that) is marked
//!   [`Idempotent`] for the retry layer below;
//! - a call of a tool whose MCP Apps visibility lacks `"model"` is refused
//!   (`tool_unavailable`, before any I/O) unless it is marked [`FromApp`],
//!   and one marked [`FromApp`] of a tool whose visibility lacks `"app"` is
//!   refused too: the one place the visibility rule is enforced, which
//!   every path to a tool passes.
//!
//! Readiness passes through. Other methods pass through untouched.
//!
//! [`ParamHeaders`]: crate::era::modern::ParamHeaders
//!
//! [`tool_schema_changed`]: crate::FailureClass::ToolSchemaChanged
//! [`ResultMarks`]: crate::content::ResultMarks

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower_service::Service;

use super::apps::{visibility_refusal, FromApp};
use super::generation::{CallPlan, CatalogCell};
use super::Catalog;
use crate::config::RepeatableTools;
use crate::error::{Error, FailureClass};
use crate::layer::retry::Idempotent;
use crate::request::{McpRequest, McpResponse};
use tower::ServiceExt;

/// Plans tool calls and validates their results. See the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct CatalogGuard<S> {
    inner: S,
    cell: Arc<CatalogCell>,
    /// The tools the definition says are safe to run twice: their calls
    /// are marked [`Idempotent`] for the retry layer below.
    repeatable: Arc<RepeatableTools>,
}

impl<S> CatalogGuard<S> {
    pub(crate) fn new(inner: S, cell: Arc<CatalogCell>, repeatable: Arc<RepeatableTools>) -> Self {
        CatalogGuard { inner, cell, repeatable }
    }
}

impl<S> Service<McpRequest> for CatalogGuard<S>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = Error;
    type Future = ResponseFuture<S::Future, S>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: McpRequest) -> Self::Future {
        let Some(name) = req.tool_name() else {
            return ResponseFuture { state: State::Passing { inner: self.inner.call(req) } };
        };
        let plan = self.cell.plan_call(name).and_then(|plan| {
            let visibility = plan.visibility().unwrap_or_default();
            let from_app = req.extensions.get::<FromApp>().is_some();
            match visibility_refusal(name, visibility, from_app) {
                Some(why) => Err(Error::new(FailureClass::ToolUnavailable, why)),
                None => Ok(plan),
            }
        });
        match plan {
            Ok(plan) => {
                if self.repeatable.allows(name, plan.idempotent_hint()) {
                    req.extensions.insert(Idempotent);
                }
                // Only a modern server answers -32020: only then is a copy
                // kept to send again.
                let (modern, headers) = self.cell.modern_headers();
                if headers {
                    attach_param_headers(&mut req, &self.cell.adopted());
                }
                let resend = modern.then(|| (self.inner.clone(), req.clone()));
                let checked = Some(Box::new(Checked { cell: self.cell.clone(), plan, resend }));
                ResponseFuture { state: State::Checking { inner: self.inner.call(req), checked } }
            }
            Err(e) => ResponseFuture { state: State::Refused { error: Some(e) } },
        }
    }
}

/// What a tool call's result is checked against, and what a -32020 needs
/// to send it again.
struct Checked<S> {
    cell: Arc<CatalogCell>,
    plan: CallPlan,
    resend: Option<(S, McpRequest)>,
}

type Resending = Pin<Box<dyn Future<Output = Result<McpResponse, Error>> + Send>>;

pin_project! {
    /// The inner future; a tool call's result is validated when it arrives.
    pub(crate) struct ResponseFuture<F, S> {
        #[pin]
        state: State<F, S>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, S> {
        Passing { #[pin] inner: F },
        // Boxed: the plan is a few words, and most calls through a busy
        // binding are tool calls, but the future should stay small.
        Checking { #[pin] inner: F, checked: Option<Box<Checked<S>>> },
        // After a -32020: the catalog looked again, the call goes once more.
        Resending { resending: Resending },
        Refused { error: Option<Error> },
    }
}

impl<F, S> std::fmt::Debug for ResponseFuture<F, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<F, S> Future for ResponseFuture<F, S>
where
    F: Future<Output = Result<McpResponse, Error>>,
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Send + 'static,
    S::Future: Send + 'static,
{
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Passing { inner } => return inner.poll(cx),
                StateProj::Checking { inner, checked } => {
                    let out = ready!(inner.poll(cx));
                    let checked = *checked.take().expect("ResponseFuture polled after completion");
                    let mut rsp = match out {
                        Err(e) if is_header_mismatch(&e) && checked.resend.is_some() => {
                            this.state.set(State::Resending { resending: resend(checked) });
                            continue;
                        }
                        out => out?,
                    };
                    checked.cell.check_response(&checked.plan, &mut rsp)?;
                    return Poll::Ready(Ok(rsp));
                }
                StateProj::Resending { resending } => return resending.as_mut().poll(cx),
                StateProj::Refused { error } => {
                    return Poll::Ready(Err(error.take().expect("ResponseFuture polled after completion")));
                }
            }
        }
    }
}

/// The `Mcp-Param-*` headers the tool's `x-mcp-header` annotations in
/// `catalog` ask for, as the request's typed extension.
fn attach_param_headers(req: &mut McpRequest, catalog: &Catalog) {
    let Some(tool) = req.tool_name().and_then(|name| catalog.tool(name)) else { return };
    // The catalog kept only tools whose annotations are valid (over HTTP).
    // Most schemas have none: the text says so without parsing it.
    static ANNOTATION: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(super::mcp_header::X_MCP_HEADER));
    if !tool.input_schema.mentions(&ANNOTATION) {
        return;
    }
    let Ok(params) = super::mcp_header::header_params(&tool.input_schema.to_value()) else { return };
    if params.is_empty() {
        return;
    }
    let arguments = req.params().get("arguments").cloned().unwrap_or(serde_json::Value::Null);
    let headers = super::mcp_header::param_headers(&params, &arguments);
    if !headers.0.is_empty() {
        req.extensions.insert(headers);
    }
}

/// Whether `error` is the server's -32020 (its headers do not match the
/// body).
fn is_header_mismatch(error: &Error) -> bool {
    crate::era::rpc_error(error)
        .is_some_and(|rpc| rpc.code == crate::protocol::jsonrpc::codes::HEADER_MISMATCH)
}

/// The call once more after a -32020, with the headers of the tool as the
/// server lists it now (the candidate a refetch found, else the adopted
/// generation). Out of line: only a refused call comes here.
#[cold]
fn resend<S>(checked: Checked<S>) -> Resending
where
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Send + 'static,
    S::Future: Send + 'static,
{
    Box::pin(async move {
        let Checked { cell, plan, resend } = checked;
        let (service, mut req) = resend.expect("a resend is kept for a call that may need one");
        let _ = cell.refresh_all().await;
        let latest = cell.candidate().unwrap_or_else(|| cell.adopted());
        if cell.modern_headers().1 {
            req.extensions.remove::<crate::era::modern::ParamHeaders>();
            attach_param_headers(&mut req, &latest);
        }
        let mut rsp = service.oneshot(req).await?;
        cell.check_response(&plan, &mut rsp)?;
        Ok(rsp)
    })
}
