//! [`Status`]: a binding's state at a moment, and the lifecycle [`State`]s.

use std::fmt;
use std::time::SystemTime;

use crate::error::FailureClass;
use crate::session::ServerIdentity;

/// A binding's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Defined, not yet started.
    Configured,
    /// Connecting and running the handshake.
    Starting,
    /// Waiting for authorization.
    Authenticating,
    /// Handshake done; reading the catalog.
    Discovering,
    /// Serving calls.
    Ready,
    /// Usable only in part: the connection was lost and is not being
    /// restored, or a refresh is failing.
    Degraded,
    /// Re-establishing a lost connection.
    Reconnecting,
    /// Could not start, or gave up reconnecting.
    Failed,
    /// Closing.
    Closing,
    /// Closed; every call fails with `shutdown`.
    Closed,
}

impl State {
    /// The stable snake_case name of the state.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Configured => "configured",
            State::Starting => "starting",
            State::Authenticating => "authenticating",
            State::Discovering => "discovering",
            State::Ready => "ready",
            State::Degraded => "degraded",
            State::Reconnecting => "reconnecting",
            State::Failed => "failed",
            State::Closing => "closing",
            State::Closed => "closed",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The last failure, summarized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What kind of failure.
    pub class: FailureClass,
    /// A bounded description.
    pub message: String,
}

/// A binding's state at the moment [`Binding::status`] was called.
///
/// [`Binding::status`]: crate::Binding::status
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The binding's name.
    pub binding: String,
    /// Its lifecycle state.
    pub state: State,
    /// The negotiated protocol version; empty before the handshake.
    pub protocol_version: String,
    /// What the server said it is.
    pub server: ServerIdentity,
    /// The transport's kind, e.g. `stdio`.
    pub transport_kind: String,
    /// A display origin without credentials.
    pub redacted_origin: String,
    /// The last failure, if any.
    pub failure: Option<Failure>,
    /// When the state last changed.
    pub last_change: SystemTime,
    /// The reconnect attempt in flight (from 1), or 0.
    pub reconnect_attempt: u32,
    /// Events dropped because the host's event handler fell behind.
    pub dropped_events: u64,
    /// Server log records dropped because the host's log service fell
    /// behind (see [`crate::binding::logging`]).
    pub dropped_logs: u64,
}
