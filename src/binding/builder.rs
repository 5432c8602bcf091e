//! [`BindingBuilder`]: a binding's definition, handlers and user layers,
//! before it connects ([`BindingBuilder::connect`], in the parent module).

use std::fmt;
use tower::layer::util::{Identity, Stack};
use tower::util::BoxService;
use tower::{Layer, ServiceExt};
use tower_service::Service;

use super::definition::Definition;
use super::stack::StackParts;
use crate::error::BoxError;
use crate::handlers::Handlers;
use crate::layer::entry::Entry;
use crate::request::{BoxMcpService, McpRequest, McpResponse};

pub(super) type CustomStack = Box<dyn FnOnce(StackParts) -> BoxMcpService + Send>;
/// The user layers, type-erased once they are known: the entry they make
/// over the stack below them.
pub(super) type UserLayers = Box<dyn FnOnce(BoxMcpService) -> Entry + Send>;

/// Builds a [`Binding`](crate::Binding) with the host's handlers and user layers:
/// `Binding::builder(definition).handlers(handlers).layer(a).layer(b).connect().await`.
///
/// User layers sit inside the stack, below the deadline and above the
/// result limit; the [binding docs](crate::Binding#user-layers) say exactly
/// what they see. Like tower's `ServiceBuilder`, the builder's type records
/// the layers added (`L`, a tower [`Stack`] of them), and the stack they
/// make is boxed once, when the binding connects.
pub struct BindingBuilder<L = Identity> {
    pub(super) definition: Definition,
    pub(super) handlers: Handlers,
    layers: L,
    stack: Option<CustomStack>,
}

impl<L> fmt::Debug for BindingBuilder<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingBuilder")
            .field("definition", &self.definition)
            .field("layers", &std::any::type_name::<L>())
            .field("custom_stack", &self.stack.is_some())
            .finish_non_exhaustive()
    }
}

impl BindingBuilder<Identity> {
    pub(super) fn new(definition: Definition) -> Self {
        BindingBuilder { definition, handlers: Handlers::default(), layers: Identity::new(), stack: None }
    }
}

impl<L> BindingBuilder<L> {
    /// The host's services for what the server asks (elicitation,
    /// sampling, roots, logs, events). None by default.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Adds a user layer: any [`tower::Layer`] whose service takes
    /// [`McpRequest`] to [`McpResponse`] and fails with any error that
    /// converts into a [`BoxError`] — tower's own middleware as it is
    /// (`TimeoutLayer`, `RateLimitLayer`, `ConcurrencyLimitLayer`,
    /// `LoadShedLayer`, `BufferLayer`, `RetryLayer`, `FilterLayer`,
    /// `MapRequestLayer`, …) and a layer of the host's own written the
    /// usual way. The first one added is the outermost; every one sees
    /// every request the binding sends for the host, including the
    /// catalog's own list calls after a change.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mcp_stack::Error> {
    /// use mcp_stack::{Binding, CallOpts, Definition};
    /// use std::time::Duration;
    /// use tower::limit::RateLimitLayer;
    /// use tower::timeout::TimeoutLayer;
    ///
    /// let binding = Binding::builder(Definition::new("demo", mcp_stack::demo::factory()))
    ///     .layer(TimeoutLayer::new(Duration::from_secs(5))) // `deadline` when it fires
    ///     .layer(RateLimitLayer::new(10, Duration::from_secs(1))) // not `Clone`: that is fine
    ///     .connect()
    ///     .await?;
    /// let echoed = binding.call_tool("echo", serde_json::json!({"message": "hi"}), CallOpts::default()).await?;
    /// assert_eq!(echoed.content[0].as_text(), Some("hi"));
    /// # binding.close().await;
    /// # Ok(()) }
    /// ```
    ///
    /// What it costs and how errors come out:
    ///
    /// - The layers wrap a [`BoxMcpService`] (always ready: the binding's
    ///   own waits happen inside each call) and are boxed once, together.
    ///   Their service need not be `Clone`: the binding keeps it once and
    ///   lets one caller at a time, first come first served, wait for its
    ///   readiness and call it (as behind tower's `Buffer`, without a
    ///   worker task); responses are awaited concurrently. With no user
    ///   layer there is no such wait.
    /// - Their error is converted into the crate's [`Error`](crate::Error)
    ///   by [`Error::from_boxed`](crate::Error::from_boxed): an `Error`
    ///   anywhere in its source chain keeps its class, tower's `Elapsed` is
    ///   `deadline`, tower's `Overloaded` is `overloaded`, and anything
    ///   else is `unknown`, which is never retried. A layer that refuses a
    ///   request for a reason of its own returns an `Error` of the class
    ///   that says so (say `tool_unavailable` from a policy check).
    pub fn layer<T>(self, layer: T) -> BindingBuilder<Stack<T, L>> {
        BindingBuilder {
            definition: self.definition,
            handlers: self.handlers,
            layers: Stack::new(layer, self.layers),
            stack: self.stack,
        }
    }

    /// Replaces the default stack between the user layers and the
    /// connection with the one `build` makes from the binding's
    /// [`StackParts`]. The catalog, events, handlers, reconnect and session
    /// renewal stay, and so do the tool filter, the catalog's call checks,
    /// the sampling-depth count and the deadline above it.
    pub fn stack(mut self, build: impl FnOnce(StackParts) -> BoxMcpService + Send + 'static) -> Self {
        self.stack = Some(Box::new(build));
        self
    }

    /// The stack below the deadline: the default one or the custom one,
    /// under the user layers.
    pub(super) fn build_stack(layers: UserLayers, stack: Option<CustomStack>, parts: StackParts) -> Entry {
        let below = match stack {
            Some(build) => build(parts),
            None => parts.default_stack(),
        };
        layers(below)
    }
}

impl<L: UserLayer> BindingBuilder<L> {
    pub(super) fn into_parts(self) -> (Definition, Handlers, UserLayers, Option<CustomStack>) {
        let layers = self.layers;
        // The layers wrap an always-ready entry: the binding's own waits
        // (the gate, a permit, a reconnect) happen in each call's response,
        // not while a caller holds the user layers' readiness.
        let user: UserLayers = Box::new(move |below| {
            let always_ready = BoxMcpService::new(Entry::new(below.clone()));
            match layers.boxed_over(always_ready) {
                Some(stack) => Entry::shared(stack),
                None => Entry::new(below),
            }
        });
        (self.definition, self.handlers, user, self.stack)
    }
}

/// What [`BindingBuilder::connect`] asks of the layers added with
/// [`BindingBuilder::layer`]: none, or a stack of them whose service takes
/// [`McpRequest`] to [`McpResponse`] over a [`BoxMcpService`], is `Send`,
/// and fails with an error that converts into a [`BoxError`].
///
/// It is implemented for every such stack and cannot be implemented
/// outside this crate; a compile error naming it means one of the layers
/// does not fit (its service takes another request, or its error or
/// future is not `Send`).
pub trait UserLayer: sealed::Sealed {}

impl<T: sealed::Sealed> UserLayer for T {}

mod sealed {
    use super::*;

    pub trait Sealed: Send + 'static {
        /// The stack these layers make over the one below them, boxed;
        /// `None` without a layer.
        fn boxed_over(self, below: BoxMcpService) -> Option<BoxService<McpRequest, McpResponse, BoxError>>;
    }

    /// No user layer: the stack below is used as it is.
    impl Sealed for Identity {
        fn boxed_over(self, _below: BoxMcpService) -> Option<BoxService<McpRequest, McpResponse, BoxError>> {
            None
        }
    }

    impl<Inner, Outer> Sealed for Stack<Inner, Outer>
    where
        Inner: Send + 'static,
        Outer: Send + 'static,
        Stack<Inner, Outer>: Layer<BoxMcpService>,
        <Stack<Inner, Outer> as Layer<BoxMcpService>>::Service:
            Service<McpRequest, Response = McpResponse> + Send + 'static,
        <<Stack<Inner, Outer> as Layer<BoxMcpService>>::Service as Service<McpRequest>>::Error:
            Into<BoxError>,
        <<Stack<Inner, Outer> as Layer<BoxMcpService>>::Service as Service<McpRequest>>::Future:
            Send + 'static,
    {
        fn boxed_over(self, below: BoxMcpService) -> Option<BoxService<McpRequest, McpResponse, BoxError>> {
            Some(BoxService::new(self.layer(below).map_err(Into::into)))
        }
    }
}
