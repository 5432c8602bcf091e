use tower_layer::Layer;

use super::{Progress, ProgressRouter};

/// Applies [`Progress`] to a service, with routes kept in one
/// [`ProgressRouter`] shared with the connection's inbound side.
#[derive(Debug, Clone)]
pub struct ProgressLayer {
    router: ProgressRouter,
}

impl ProgressLayer {
    /// A layer registering routes in `router`.
    pub fn new(router: ProgressRouter) -> Self {
        ProgressLayer { router }
    }
}

impl<S> Layer<S> for ProgressLayer {
    type Service = Progress<S>;

    fn layer(&self, inner: S) -> Progress<S> {
        Progress::new(inner, self.router.clone())
    }
}
