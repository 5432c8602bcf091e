use std::fmt;
use std::sync::Arc;
use tower_layer::Layer;

use super::{Dialer, Reconnect, ReconnectPolicy, Report};
use crate::connection::Connection;

/// Receives the supervisor's [`Report`]s, in order, on its task. Must not
/// block: hand anything slow off.
pub type Observer = Arc<dyn Fn(&Report) + Send + Sync>;

/// Makes a [`Reconnect`] over a first [`Connection`]: the connection is the
/// inner service, replaced through the [`Dialer`] whenever it is lost.
///
/// Applying the layer starts the supervisor task (like tower's `BufferLayer`
/// starts its worker), so it must be applied within a tokio runtime.
#[derive(Clone)]
pub struct ReconnectLayer {
    dialer: Dialer,
    policy: ReconnectPolicy,
    observer: Option<Observer>,
}

impl fmt::Debug for ReconnectLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectLayer")
            .field("dialer", &self.dialer)
            .field("policy", &self.policy)
            .field("observer", &self.observer.is_some())
            .finish()
    }
}

impl ReconnectLayer {
    /// Reconnects through `dialer` under `policy`.
    pub fn new(dialer: Dialer, policy: ReconnectPolicy) -> Self {
        ReconnectLayer { dialer, policy, observer: None }
    }

    /// Reports what the supervisor does to `observer`.
    pub fn on_report(mut self, observer: impl Fn(&Report) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }
}

impl Layer<Connection> for ReconnectLayer {
    type Service = Reconnect;

    fn layer(&self, first: Connection) -> Reconnect {
        Reconnect::spawn(first, self.dialer.clone(), self.policy, self.observer.clone())
    }
}
