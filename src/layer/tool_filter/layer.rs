use std::sync::Arc;
use tower_layer::Layer;

use super::ToolFilterService;
use crate::binding::ToolFilter;

/// Applies [`ToolFilterService`] to a service. Every service it makes shares
/// one copy of the filter.
#[derive(Debug, Clone)]
pub struct ToolFilterLayer {
    filter: Arc<ToolFilter>,
}

impl ToolFilterLayer {
    /// A layer enforcing `filter`.
    pub fn new(filter: ToolFilter) -> Self {
        ToolFilterLayer { filter: Arc::new(filter) }
    }
}

impl<S> Layer<S> for ToolFilterLayer {
    type Service = ToolFilterService<S>;

    fn layer(&self, inner: S) -> ToolFilterService<S> {
        ToolFilterService { inner, filter: super::restricting(self.filter.clone()) }
    }
}
