use std::sync::Arc;
use tower_layer::Layer;

use super::ToolFilter;
use crate::config::ToolFilter as Policy;

/// Applies [`ToolFilter`] to a service. Every service it makes shares one
/// copy of the filter.
#[derive(Debug, Clone)]
pub struct ToolFilterLayer {
    policy: Arc<Policy>,
}

impl ToolFilterLayer {
    /// A layer enforcing `policy`.
    pub fn new(policy: Policy) -> Self {
        ToolFilterLayer { policy: Arc::new(policy) }
    }
}

impl<S> Layer<S> for ToolFilterLayer {
    type Service = ToolFilter<S>;

    fn layer(&self, inner: S) -> ToolFilter<S> {
        ToolFilter { inner, policy: super::restricting(self.policy.clone()) }
    }
}
