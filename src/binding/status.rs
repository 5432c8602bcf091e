//! [`Status`]: a binding's state at a moment. Its [`State`] and
//! [`Failure`] live in [`crate::events`], which reports their changes.

use serde::Serialize;
use std::time::SystemTime;

use crate::events::{Failure, State};
use crate::session::ServerIdentity;

/// A binding's state at the moment [`Binding::status`] was called.
///
/// Serialized with camelCase names, `lastChange` as an RFC 3339 string (see
/// [`Event`](crate::Event#as-json)).
///
/// [`Binding::status`]: crate::Binding::status
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    #[serde(serialize_with = "crate::serialize::rfc3339")]
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
    /// behind (see `crate::handlers::logging`).
    pub dropped_logs: u64,
    /// Calls in flight that asked for progress, and tasks they started
    /// that have not ended (2025-11-25 keeps a task's start token): their
    /// routes are open. It returns to 0 when they end, however they end.
    pub progress_routes: usize,
    /// Progress reports dropped because a caller's sink fell behind.
    pub dropped_progress: u64,
}
