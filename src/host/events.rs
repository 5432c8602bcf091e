//! [`HostEvent`]s: every binding's events and the host's own, merged into one
//! bounded stream ([`HostEvents`]).
//!
//! The stream is a `tokio::sync::broadcast` channel. Publishing never waits:
//! a binding's event task hands its event over and goes on. A reader that
//! falls more than the channel's capacity behind loses the oldest events it
//! has not read; [`HostEvents::missed`] counts them. Nothing a reader does
//! can hold up a binding.

use std::time::SystemTime;
use tokio::sync::broadcast;

use crate::error::FailureClass;
use crate::events::Event;

/// Events a [`HostEvents`] reader may fall behind by before it loses the
/// oldest (see [`HostBuilder::event_capacity`](super::HostBuilder::event_capacity)).
pub(crate) const DEFAULT_EVENT_CAPACITY: usize = 1024;

/// Something that happened in a host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HostEvent {
    /// A binding reported an event (each one names its binding).
    Binding(Event),
    /// A binding was added and is connecting.
    Added {
        /// The binding.
        binding: String,
        /// When it was added.
        at: SystemTime,
    },
    /// A binding could not be connected: its connect failed, or it did not
    /// finish within the definition's startup timeout and was abandoned
    /// (`startup_timeout`). The binding stays listed as failed until it is
    /// removed.
    ConnectFailed {
        /// The binding.
        binding: String,
        /// Why.
        class: FailureClass,
        /// A bounded description.
        message: String,
        /// When the connect ended.
        at: SystemTime,
    },
    /// A binding was removed (and, if it was connected, closed).
    Removed {
        /// The binding.
        binding: String,
        /// When it was removed.
        at: SystemTime,
    },
}

/// One reader of a host's merged event stream, from
/// [`Host::events`](super::Host::events). It sees the events published after
/// it was made.
#[derive(Debug)]
pub struct HostEvents {
    rx: broadcast::Receiver<HostEvent>,
    missed: u64,
}

impl HostEvents {
    pub(super) fn new(rx: broadcast::Receiver<HostEvent>) -> Self {
        HostEvents { rx, missed: 0 }
    }

    /// The next event, waiting for one. `None` once the host is gone and
    /// every event has been read. Events lost because this reader fell
    /// behind are skipped and counted in [`HostEvents::missed`].
    pub async fn recv(&mut self) -> Option<HostEvent> {
        loop {
            match self.rx.recv().await {
                Ok(event) => return Some(event),
                Err(broadcast::error::RecvError::Lagged(n)) => self.missed += n,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is waiting, without waiting.
    pub fn try_recv(&mut self) -> Option<HostEvent> {
        loop {
            match self.rx.try_recv() {
                Ok(event) => return Some(event),
                Err(broadcast::error::TryRecvError::Lagged(n)) => self.missed += n,
                Err(_) => return None,
            }
        }
    }

    /// How many events this reader lost by falling behind.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}
