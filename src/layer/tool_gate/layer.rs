use std::sync::Arc;
use tokio::sync::Semaphore;
use tower_layer::Layer;

use super::ToolCallGate;

/// Applies [`ToolCallGate`] to a service.
///
/// The gate belongs to the layer: every service this layer (or a clone of
/// it) makes shares it, so build one layer per binding.
#[derive(Debug, Clone)]
pub struct ToolCallGateLayer {
    gate: Option<Arc<Semaphore>>,
}

impl ToolCallGateLayer {
    /// One tool call at a time, unless `allow_parallel_calls` (as in
    /// [`Definition::allow_parallel_calls`]), when the layer passes
    /// everything straight through.
    ///
    /// [`Definition::allow_parallel_calls`]: crate::Definition::allow_parallel_calls
    pub fn new(allow_parallel_calls: bool) -> Self {
        if allow_parallel_calls {
            Self::parallel()
        } else {
            Self::serial()
        }
    }

    /// One tool call at a time.
    pub fn serial() -> Self {
        ToolCallGateLayer { gate: Some(Arc::new(Semaphore::new(1))) }
    }

    /// No gate: tool calls run in parallel (within whatever concurrency
    /// limit lies below).
    pub fn parallel() -> Self {
        ToolCallGateLayer { gate: None }
    }
}

impl<S> Layer<S> for ToolCallGateLayer {
    type Service = ToolCallGate<S>;

    fn layer(&self, inner: S) -> ToolCallGate<S> {
        ToolCallGate { inner, gate: self.gate.clone() }
    }
}
