//! [`BindingBuilder`]: a binding's definition, handlers and user layers,
//! before it connects ([`BindingBuilder::connect`], in the parent module).

use std::fmt;
use tower::util::BoxCloneService;
use tower::Layer;
use tower_service::Service;

use super::definition::Definition;
use super::stack::StackParts;
use crate::error::Error;
use crate::handlers::Handlers;
use crate::request::{BoxMcpService, McpRequest, McpResponse};

/// A user layer, applied to the boxed stack below it.
pub(super) type UserLayer = Box<dyn Fn(BoxMcpService) -> BoxMcpService + Send + Sync>;
pub(super) type CustomStack = Box<dyn FnOnce(StackParts) -> BoxMcpService + Send>;

/// Builds a [`Binding`](crate::Binding) with the host's handlers and user layers:
/// `Binding::builder(definition).handlers(handlers).layer(a).layer(b).connect().await`.
///
/// User layers sit inside the stack, below the deadline and above the
/// result limit; the [binding docs](crate::Binding#user-layers) say exactly
/// what they see.
pub struct BindingBuilder {
    pub(super) definition: Definition,
    pub(super) handlers: Handlers,
    layers: Vec<UserLayer>,
    stack: Option<CustomStack>,
}

impl fmt::Debug for BindingBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingBuilder")
            .field("definition", &self.definition)
            .field("layers", &self.layers.len())
            .field("custom_stack", &self.stack.is_some())
            .finish_non_exhaustive()
    }
}

impl BindingBuilder {
    pub(super) fn new(definition: Definition) -> Self {
        BindingBuilder { definition, handlers: Handlers::default(), layers: Vec::new(), stack: None }
    }

    /// The host's services for what the server asks (elicitation,
    /// sampling, roots, logs, events). None by default.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Adds a user layer. The first one added is the outermost; every one
    /// sees every request the binding sends for the host, including the
    /// catalog's own list calls after a change.
    ///
    /// The layer wraps the stack below it as a boxed [`BoxMcpService`], and
    /// its service is boxed in turn, so each user layer costs each call two
    /// small allocations (a clone of the boxed service and its boxed
    /// future) and a dynamic call: well under a microsecond, against the
    /// tens of microseconds of the shortest exchange with a server.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxMcpService> + Send + Sync + 'static,
        L::Service: Service<McpRequest, Response = McpResponse, Error = Error> + Clone + Send + 'static,
        <L::Service as Service<McpRequest>>::Future: Send + 'static,
    {
        self.layers.push(Box::new(move |inner| BoxCloneService::new(layer.layer(inner))));
        self
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
    pub(super) fn build_stack(
        layers: Vec<UserLayer>,
        stack: Option<CustomStack>,
        parts: StackParts,
    ) -> BoxMcpService {
        let mut service = match stack {
            Some(build) => build(parts),
            None => parts.default_stack(),
        };
        // The first layer added is the outermost, so it is applied last.
        for layer in layers.into_iter().rev() {
            service = layer(service);
        }
        service
    }

    pub(super) fn into_parts(self) -> (Definition, Handlers, Vec<UserLayer>, Option<CustomStack>) {
        (self.definition, self.handlers, self.layers, self.stack)
    }
}
