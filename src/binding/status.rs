//! [`Status`]: a binding's state at a moment, and the lifecycle [`State`]s.

use std::fmt;
use std::time::SystemTime;

use crate::error::FailureClass;
use crate::session::ServerIdentity;

/// A binding's lifecycle state.
///
/// The moves a binding makes (each reported as [`Event::StateChanged`],
/// after the event that explains it, if any):
///
/// ```text
/// configured ─▶ starting ─▶ discovering ─▶ ready ◀──▶ reconnecting ─▶ failed
///                  │             │           │
///                  ▼             ▼           ▼
///                failed        failed     degraded
///
/// any state after starting ─▶ closing ─▶ closed
/// ```
///
/// | from | to | when |
/// | --- | --- | --- |
/// | configured | starting | [`Binding::connect`] begins |
/// | starting | discovering | the first connect and handshake succeeded; the catalog is being read |
/// | starting | failed | they failed or took longer than `Timeouts::startup` (`connect` returns the error; there is no binding to close) |
/// | discovering | ready | the first catalog generation was adopted |
/// | discovering | failed | discovery failed or took longer than `Timeouts::startup` (`connect` returns the error) |
/// | ready | reconnecting | the connection was lost ([`Event::ConnectionLost`], `retrying`) |
/// | ready | degraded | it was lost and [`ReconnectPolicy::disabled`] ([`Event::ConnectionLost`], not `retrying`): calls fail fast with `transport_closed` until the binding is closed |
/// | reconnecting | ready | an attempt succeeded and the catalog has looked at the new connection's offering ([`Event::ConnectionRestored`]; calls already go through meanwhile) |
/// | reconnecting | failed | the policy's attempts or total time are spent (the last [`Event::ConnectionLost`] is not `retrying`): calls fail fast with `transport_closed` |
/// | any but closing, closed | closing | [`Binding::close`] begins |
/// | closing | closed | the supervisor has stopped and the transport is closed |
///
/// `authenticating` is reserved for the authorization flow. A restored
/// connection's catalog is read while the binding is still `reconnecting`
/// (see [`Event::ConnectionRestored`]).
///
/// [`Event::StateChanged`]: crate::Event::StateChanged
/// [`Event::ConnectionLost`]: crate::Event::ConnectionLost
/// [`Event::ConnectionRestored`]: crate::Event::ConnectionRestored
/// [`Binding::connect`]: crate::Binding::connect
/// [`Binding::close`]: crate::Binding::close
/// [`ReconnectPolicy::disabled`]: crate::layer::ReconnectPolicy::disabled
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
    /// What the server of the current connection said it is.
    pub server: ServerIdentity,
    /// The transport's kind, e.g. `stdio`.
    pub transport_kind: String,
    /// A display origin without credentials.
    pub redacted_origin: String,
    /// The last failure, if any.
    pub failure: Option<Failure>,
    /// When the state last changed.
    pub last_change: SystemTime,
    /// While reconnecting, the attempt being made or waited for, counting
    /// from 1; 0 otherwise. It tells "trying" from "stuck": a binding that
    /// stays on attempt 1 is dialing a server that never answers, one whose
    /// attempts climb is being refused.
    pub reconnect_attempt: u32,
    /// Events dropped because the host's event handler fell behind.
    pub dropped_events: u64,
    /// The ordinal of the adopted catalog generation (1 or more once
    /// connected).
    pub catalog_generation: u64,
    /// The adopted generation's hex catalog digest: it identifies the
    /// server's offering independently of this host's policy.
    pub catalog_digest: String,
    /// The ordinal of the candidate waiting for adoption, or 0.
    pub candidate_generation: u64,
    /// The candidate's hex catalog digest, or empty.
    pub candidate_digest: String,
    /// The families the server announced a change to that no refetch has
    /// answered yet (`tools`, `prompts`, `resources`, in that order). Empty
    /// in the normal course; a family that stays here is a binding whose
    /// refreshes are failing, which `state` and `failure` then describe.
    pub stale_families: Vec<String>,
    /// The compatibility profile, as `name/vN`.
    pub compat_profile: String,
    /// Server log records dropped because the host's log service fell
    /// behind (see [`crate::binding::logging`]).
    pub dropped_logs: u64,
    /// Calls in flight that asked for progress: their routes are open. It
    /// returns to 0 when they end, however they end.
    pub progress_routes: usize,
    /// Progress reports dropped because a caller's sink fell behind.
    pub dropped_progress: u64,
}
