use std::time::Duration;
use tower_layer::Layer;

use super::Deadline;

/// Applies [`Deadline`] to a service.
#[derive(Debug, Clone, Copy)]
pub struct DeadlineLayer {
    default_timeout: Duration,
}

impl DeadlineLayer {
    /// Calls without their own deadline get `default_timeout` from the moment
    /// they enter the layer.
    pub fn new(default_timeout: Duration) -> Self {
        DeadlineLayer { default_timeout }
    }
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Deadline<S> {
        Deadline::new(inner, self.default_timeout)
    }
}
