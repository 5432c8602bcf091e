use std::fmt;
use tokio::sync::broadcast;
use tower_layer::Layer;

use super::{Dialer, Reconnect, ReconnectPolicy, Report, REPORT_BACKLOG};
use crate::connection::Connection;

/// Makes a [`Reconnect`] over a first [`Connection`]: the connection is the
/// inner service, replaced through the [`Dialer`] whenever it is lost.
///
/// Applying the layer starts the supervisor task (like tower's `BufferLayer`
/// starts its worker), so it must be applied within a tokio runtime.
#[derive(Clone)]
pub struct ReconnectLayer {
    dialer: Dialer,
    policy: ReconnectPolicy,
    reports: broadcast::Sender<Report>,
}

impl fmt::Debug for ReconnectLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectLayer")
            .field("dialer", &self.dialer)
            .field("policy", &self.policy)
            .field("report_readers", &self.reports.receiver_count())
            .finish()
    }
}

impl ReconnectLayer {
    /// Reconnects through `dialer` under `policy`.
    pub fn new(dialer: Dialer, policy: ReconnectPolicy) -> Self {
        ReconnectLayer { dialer, policy, reports: broadcast::channel(REPORT_BACKLOG).0 }
    }

    /// A receiver of every report of the services this layer makes, from
    /// the first: take it before applying the layer (the supervisor may
    /// report at once). The services share this one channel.
    pub fn reports(&self) -> broadcast::Receiver<Report> {
        self.reports.subscribe()
    }
}

impl Layer<Connection> for ReconnectLayer {
    type Service = Reconnect;

    fn layer(&self, first: Connection) -> Reconnect {
        Reconnect::spawn(first, self.dialer.clone(), self.policy, self.reports.clone())
    }
}
