use tower_layer::Layer;

use super::{ResultBounds, ResultLimit};
use crate::config::limits::Limits;

/// Applies [`ResultLimit`] to a service.
#[derive(Debug, Clone, Copy)]
pub struct ResultLimitLayer {
    bounds: ResultBounds,
}

impl ResultLimitLayer {
    /// A layer bounding results by `limits`' result fields
    /// (`max_text_result_bytes`, `max_structured_bytes`,
    /// `max_binary_item_bytes`, `max_binary_items`), as they are: a zero
    /// bound allows nothing ([`Limits::validate`] refuses one in a
    /// binding's definition).
    pub fn new(limits: Limits) -> Self {
        ResultLimitLayer { bounds: ResultBounds::from_limits(limits) }
    }
}

impl<S> Layer<S> for ResultLimitLayer {
    type Service = ResultLimit<S>;

    fn layer(&self, inner: S) -> ResultLimit<S> {
        ResultLimit { inner, bounds: self.bounds }
    }
}
