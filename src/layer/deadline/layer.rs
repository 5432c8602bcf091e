use std::time::Duration;
use tower_layer::Layer;

use super::timer::DeadlineTimer;
use super::Deadline;

/// Applies [`Deadline`] to a service.
///
/// The services a layer (or its clones) makes share one timer: build one
/// layer per stack.
#[derive(Clone)]
pub struct DeadlineLayer {
    default_timeout: Duration,
    timer: DeadlineTimer,
}

impl std::fmt::Debug for DeadlineLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeadlineLayer")
            .field("default_timeout", &self.default_timeout)
            .finish_non_exhaustive()
    }
}

impl DeadlineLayer {
    /// Calls without their own deadline get `default_timeout` from the moment
    /// they enter the layer.
    pub fn new(default_timeout: Duration) -> Self {
        DeadlineLayer { default_timeout, timer: DeadlineTimer::default() }
    }
}

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Deadline<S> {
        Deadline::with_timer(inner, self.default_timeout, self.timer.clone())
    }
}
