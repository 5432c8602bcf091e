use std::fmt;
use tokio::sync::broadcast;
use tower_layer::Layer;

use super::{Dialer, Reconnect, ReconnectPolicy, Report, Reports};
use crate::connection::Connection;
use std::sync::Arc;

/// Makes a [`Reconnect`] over a first [`Connection`]: the connection is the
/// inner service, replaced through the [`Dialer`] whenever it is lost.
///
/// Applying the layer starts the supervisor task (like tower's `BufferLayer`
/// starts its worker), so it must be applied within a tokio runtime.
#[derive(Clone)]
pub struct ReconnectLayer {
    dialer: Dialer,
    policy: ReconnectPolicy,
    reports: Reports,
}

impl fmt::Debug for ReconnectLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectLayer")
            .field("dialer", &self.dialer)
            .field("policy", &self.policy)
            .field("report_readers", &self.reports.tx.receiver_count())
            .finish()
    }
}

impl ReconnectLayer {
    /// Reconnects through `dialer` under `policy`.
    pub fn new(dialer: Dialer, policy: ReconnectPolicy) -> Self {
        ReconnectLayer { dialer, policy, reports: Reports::new() }
    }

    /// Calls `hook` after each report is sent: for the binding to start
    /// its task over the reports at the first, rather than at connect
    /// (`binding::connect`).
    pub(crate) fn on_report(mut self, hook: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.reports.on_send = Some(hook);
        self
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
