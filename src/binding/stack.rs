//! The binding's stack: the handle users call ([`BindingService`]) and the
//! parts a custom stack is made of ([`StackParts`]).

use pin_project_lite::pin_project;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tower::limit::ConcurrencyLimitLayer;
use tower::retry::RetryLayer;
use tower::{Layer, ServiceBuilder};
use tower_service::Service;

use crate::catalog::CatalogGuard;
use crate::config::Limits;
use crate::error::Error;
use crate::layer::entry::Entry;
use crate::layer::tool_filter::EnforceToolFilter;
use crate::layer::trace::Trace;
use crate::layer::{
    cache::CacheLayer,
    deadline::Deadline,
    progress::{ProgressLayer, ProgressRouter},
    reconnect::Reconnect,
    result_limit::ResultLimitLayer,
    retry::SafeRetry,
    sampling_depth::SamplingDepth,
    tool_gate::ToolCallGateLayer,
};
use crate::request::{BoxMcpService, McpRequest, McpResponse};

/// Everything above the point where the stack is driven to readiness: the
/// request's span, the filter, the deadline, the catalog's call checks, and
/// the sampling-depth count (which must run on the caller's task).
type Front = Trace<EnforceToolFilter<Deadline<CatalogGuard<SamplingDepth<Entry>>>>>;

/// A binding's whole stack: what [`Binding::service`](crate::Binding::service) returns, for sending
/// requests through the same layers as the binding's own methods (and for
/// requests the binding has no method for). Cheap to clone; clones share the
/// connection, the gate, the limits and the progress routes.
///
/// It is always ready, as tower's `Buffer` is: each call drives the stack
/// below the deadline to readiness inside its own future, so every wait
/// counts against the call's deadline (see [the stack](crate::Binding#the-stack)).
/// Errors carry the binding's name.
#[derive(Clone)]
pub struct BindingService {
    front: Front,
    binding: Arc<str>,
}

impl BindingService {
    pub(super) fn new(front: Front, binding: &str) -> Self {
        BindingService { front, binding: binding.into() }
    }
}

impl fmt::Debug for BindingService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingService").field("binding", &self.binding).finish_non_exhaustive()
    }
}

impl Service<McpRequest> for BindingService {
    type Response = McpResponse;
    type Error = Error;
    type Future = BindingFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.front.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> BindingFuture {
        BindingFuture { inner: self.front.call(req), binding: Some(self.binding.clone()) }
    }
}

pin_project! {
    /// The future of one call through a [`BindingService`].
    pub struct BindingFuture {
        #[pin]
        inner: <Front as Service<McpRequest>>::Future,
        binding: Option<Arc<str>>,
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
        let this = self.project();
        let out = ready!(this.inner.poll(cx));
        let binding = this.binding.take().expect("BindingFuture polled after completion");
        Poll::Ready(out.map_err(|e| e.with_binding(&*binding)))
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

/// The parts of a binding's default stack, for building another one with
/// [`BindingBuilder::stack`](crate::binding::BindingBuilder::stack): the
/// layers, configured from the [`Definition`](crate::Definition), and the bottom service over the live connection.
///
/// Whatever stack is built from them, the binding keeps its catalog, events,
/// handlers, reconnect and session renewal: those live in the bottom
/// service and around the stack, not in these layers. A stack without
/// [`StackParts::result_limit`] takes results unbounded, one without
/// [`StackParts::progress`] never delivers progress, one without
/// [`StackParts::tool_gate`] lets tool calls run in parallel: the choice is
/// the builder's.
pub struct StackParts {
    limits: Limits,
    allow_parallel_calls: bool,
    progress: ProgressRouter,
    retry: SafeRetry,
    reconnect: Reconnect,
    cache: CacheLayer,
}

impl fmt::Debug for StackParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StackParts").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl StackParts {
    /// Bounds results by the definition's [`Limits`].
    pub fn result_limit(&self) -> ResultLimitLayer {
        ResultLimitLayer::new(self.limits)
    }

    /// Serves list and read results from the cache while the server says
    /// they are fresh, and keeps those it lets clients keep
    /// ([`Definition::caching`](crate::Definition::caching); see
    /// [`crate::layer::cache`]). Without it, nothing is cached.
    pub fn response_cache(&self) -> CacheLayer {
        self.cache.clone()
    }

    /// Attaches progress tokens and routes `notifications/progress` to the
    /// caller's sink.
    pub fn progress(&self) -> ProgressLayer {
        ProgressLayer::new(self.progress.clone())
    }

    /// One tool call at a time, unless the definition allows parallel calls.
    pub fn tool_gate(&self) -> ToolCallGateLayer {
        ToolCallGateLayer::new(self.allow_parallel_calls)
    }

    /// At most `Limits::max_concurrent_requests` requests in flight.
    pub fn concurrency_limit(&self) -> ConcurrencyLimitLayer {
        ConcurrencyLimitLayer::new(self.limits.max_concurrent_requests)
    }

    /// The bottom service: whichever connection is live, reconnected by the
    /// binding's supervisor, with forgotten sessions renewed. No retries.
    pub fn reconnect(&self) -> Reconnect {
        self.reconnect.clone()
    }

    /// The binding's retry policy as tower's retry layer ([`SafeRetry`]:
    /// only what is safe to repeat; never, when the definition turns
    /// retries off), for a custom stack that places it itself.
    pub fn retry(&self) -> RetryLayer<SafeRetry> {
        RetryLayer::new(self.retry.clone())
    }

    /// The bottom service with the binding's retry policy above it
    /// ([`SafeRetry`]: only what is safe to repeat), as the default stack
    /// has it.
    pub fn retrying_reconnect(&self) -> BoxMcpService {
        BoxMcpService::new(self.retrying())
    }

    fn retrying(&self) -> tower::retry::Retry<SafeRetry, Reconnect> {
        self.retry().layer(self.reconnect.clone())
    }

    /// The default stack: these parts in the order, and for the reasons,
    /// of [the stack](crate::Binding#the-stack) (7 to 13).
    pub fn default_stack(self) -> BoxMcpService {
        let stack = ServiceBuilder::new()
            .layer(self.result_limit())
            .layer(self.response_cache())
            .layer(self.progress())
            .layer(self.tool_gate())
            .layer(self.concurrency_limit())
            .service(self.retrying());
        BoxMcpService::new(stack)
    }
}

impl StackParts {
    pub(super) fn new(
        limits: Limits,
        allow_parallel_calls: bool,
        progress: ProgressRouter,
        retry: SafeRetry,
        reconnect: Reconnect,
        cache: CacheLayer,
    ) -> Self {
        StackParts { limits, allow_parallel_calls, progress, retry, reconnect, cache }
    }
}
