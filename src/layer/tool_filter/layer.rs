use std::sync::Arc;
use tower_layer::Layer;

use super::EnforceToolFilter;
use crate::config::ToolFilter as Policy;

/// Applies [`EnforceToolFilter`] to a service. Every service it makes shares one
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
    type Service = EnforceToolFilter<S>;

    fn layer(&self, inner: S) -> EnforceToolFilter<S> {
        EnforceToolFilter { inner, policy: super::restricting(self.policy.clone()) }
    }
}
