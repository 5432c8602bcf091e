//! What a binding reports: [`Event`]s, the lifecycle [`State`]s they move
//! between, and their non-blocking delivery.

use serde::{Serialize, Serializer};
use std::fmt;
use std::time::{Duration, SystemTime};

use crate::error::FailureClass;
use crate::protocol::elicitation::{ElicitAction, ElicitationMode};
use crate::protocol::family::Family;
use crate::request::ProgressUpdate;
use crate::session::ServerIdentity;

mod delivery;
pub(crate) use delivery::EventBus;
pub use delivery::{EventHandler, EventItem, EventStream};

/// Events queued before new ones are dropped.
pub(crate) const EVENT_QUEUE: usize = 1024;

/// Something that happened to a binding.
///
/// # As JSON
///
/// `Serialize` gives an object tagged with the event's kind in `type`, in
/// snake_case like the crate's other stable ids (`"state_changed"`,
/// `"catalog_candidate"`), and its fields in camelCase. Times are RFC 3339
/// strings in UTC with milliseconds; durations are whole milliseconds in
/// fields named `…Ms` (`retryInMs`, `durationMs`); states, classes,
/// families and outcomes are their snake_case ids:
///
/// ```text
/// {"type": "state_changed", "binding": "files", "from": "ready", "to": "closing",
///  "at": "2025-06-18T09:30:00.125Z"}
/// ```
///
/// A host reads a binding's events in either of two ways, or both:
///
/// - a handler (`Handlers::with_events`), called on a task of its own
///   through a bounded queue of 1024 entries. When it falls
///   behind and the queue is full, new events are dropped and counted
///   ([`crate::Status::dropped_events`]);
/// - any number of [`EventStream`]s (`Binding::events`), each of which sees
///   every event emitted after it was made. One that falls more than
///   1024 events behind loses the oldest ones and is told how
///   many ([`EventItem::Missed`]).
///
/// Either way the connection never waits for the host to read its events:
/// a slow reader loses events, it never slows the binding down.
///
/// This module is a leaf: it imports nothing from the catalog or the
/// binding, so that both can report through it. The types an event names
/// live here or below (the wire model, the session, the error).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum Event {
    /// The binding moved from one lifecycle state to another.
    StateChanged {
        /// The binding.
        binding: String,
        /// The state before.
        from: State,
        /// The state after.
        to: State,
        /// When it moved.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The connection was lost (`attempt` 0), or reconnect attempt
    /// `attempt` failed. One loss gives one report, then one per failed
    /// attempt, so the attempts climb here as in
    /// [`Status::reconnect_attempt`](crate::Status::reconnect_attempt).
    ConnectionLost {
        /// The binding.
        binding: String,
        /// Why.
        class: FailureClass,
        /// A bounded description.
        message: String,
        /// The ordinal of the catalog generation still in force: it
        /// survives a lost connection (0 when the connection was lost before
        /// the first generation was adopted, while connecting).
        adopted: u64,
        /// Whether the binding will try to reconnect. False when its policy
        /// forbids it (the binding is then degraded), and on the last report
        /// when the retry budget is spent (the binding has then failed).
        retrying: bool,
        /// 0 for the loss of the live connection, `n` for reconnect attempt
        /// `n`.
        attempt: u32,
        /// How long until the next attempt, when `retrying`.
        #[serde(rename = "retryInMs", serialize_with = "crate::serialize::opt_millis")]
        retry_in: Option<Duration>,
        /// When the loss was observed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A lost connection was restored: a new connection's handshake
    /// succeeded, and the catalog has looked at what the server offers over
    /// it. Reported once that refetch is done (within `Timeouts::startup`),
    /// right before the binding's state moves to `ready`; calls go through
    /// the new connection from the moment it is up.
    ConnectionRestored {
        /// The binding.
        binding: String,
        /// What the reconnected server claims to be. Cosmetic: it names a
        /// peer, it never authorizes one.
        server: ServerIdentity,
        /// How its identity differs from the one the binding first connected
        /// to, or `None` when it is the same. Reported, never enforced: a
        /// restarted server with a new version is the ordinary reason to be
        /// reconnecting.
        drift: Option<String>,
        /// The reconnect attempts it took, from 1.
        attempts: u32,
        /// The ordinal of the catalog generation still in force, which the
        /// reconnect did not touch (0 when the connection was restored while
        /// connecting, before the first generation was adopted).
        adopted: u64,
        /// The ordinal of the generation discovered over the new connection:
        /// equal to `adopted` when the offering is the adopted one (nothing
        /// to adopt), else the candidate's (see [`Event::CatalogCandidate`];
        /// adopt it with `Binding::adopt`). 0 when the catalog could not be
        /// read over the new connection (a [`Event::Warning`] says why; the
        /// adopted generation stays in force) or, like `adopted`, while
        /// connecting.
        generation: u64,
        /// When it was restored.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The server forgot the session (an HTTP server that answered 404 to
    /// its session id), and a new one was initialized over the same
    /// connection, at once: the connection was never lost, and the binding's
    /// state does not move. Reported once the catalog has looked again at
    /// what the server offers in the new session (within
    /// `Timeouts::startup`).
    SessionRenewed {
        /// The binding.
        binding: String,
        /// What the server claims to be in the new session.
        server: ServerIdentity,
        /// How its identity differs from the one the binding first connected
        /// to, or `None` when it is the same (reported, never enforced).
        drift: Option<String>,
        /// The ordinal of the catalog generation still in force.
        adopted: u64,
        /// The ordinal of the generation found in the new session: equal to
        /// `adopted` when the offering did not change, the candidate's
        /// otherwise, 0 when the catalog could not be read.
        generation: u64,
        /// When it was renewed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A request failed in a way that may pass, and the binding sends it
    /// again after `delay_ms` (see [`crate::layer::retry`] for what is
    /// retried, and [`Definition::retry_requests`](crate::Definition::retry_requests)
    /// to turn it off). The request's deadline bounds every try and wait.
    RequestRetried {
        /// The binding.
        binding: String,
        /// The request's method.
        method: String,
        /// The try that failed, 1 for the first.
        attempt: u32,
        /// How it failed.
        class: FailureClass,
        /// The HTTP status that failed it, if one did.
        #[serde(skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
        /// The wait before the next try, in milliseconds: the server's
        /// `Retry-After` when it gave one, the backoff's delay otherwise.
        delay_ms: u64,
        /// When it was decided.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The streamable HTTP server assigned a session id (in its
    /// `initialize` response), or replaced the one the connection started
    /// with ([`HttpBuilder::session_id`](crate::transport::http::HttpBuilder::session_id)).
    /// The id is a secret: it shows as `<redacted>` here and in JSON;
    /// [`SessionId::expose`](crate::transport::SessionId::expose) gives it
    /// to code that keeps it, to resume the session later.
    HttpSessionAssigned {
        /// The binding.
        binding: String,
        /// The new session id.
        session: crate::transport::SessionId,
        /// When the server assigned it.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The streamable HTTP server no longer knows the session id in use
    /// (it answered 404 to a request that carried it). The binding runs the
    /// handshake again ([`Event::SessionRenewed`] follows) and the server
    /// assigns a new one.
    HttpSessionExpired {
        /// The binding.
        binding: String,
        /// The id that expired.
        session: crate::transport::SessionId,
        /// When the server said so.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The server reported progress on a call that asked for it (a
    /// [`CallOpts`](crate::CallOpts) progress sink): the same report that
    /// call's sink gets. A report no call took (a late or invented token)
    /// is none. Queued like every event: dropped and counted when the
    /// queue is full.
    RequestProgress {
        /// The report.
        #[serde(serialize_with = "crate::serialize::progress")]
        progress: ProgressUpdate,
        /// When it was observed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The server logged a message (`notifications/message`).
    ServerLog {
        /// The binding.
        binding: String,
        /// The severity the server claimed.
        level: String,
        /// The server-side logger, if named.
        logger: Option<String>,
        /// The bounded message.
        text: String,
        /// When it was observed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// An elicitation reached the host's elicitation service.
    ElicitationRequested {
        /// The binding whose server asked.
        binding: String,
        /// The mode.
        mode: ElicitationMode,
        /// When it reached the service.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// An elicitation ended: answered, refused, invalid or timed out.
    ElicitationResolved {
        /// The binding whose server asked.
        binding: String,
        /// The mode, repeated so that an observer need not correlate.
        mode: ElicitationMode,
        /// What the server was told, or `None` when it got an error instead
        /// (a refused request, an answer that broke the schema, a failed
        /// service).
        action: Option<ElicitAction>,
        /// The failure class: `None` for an accepted answer;
        /// `elicitation_declined`, `elicitation_cancelled`,
        /// `elicitation_timeout` for those answers; `elicitation_invalid`
        /// for a refused request or an invalid answer; the service's own
        /// class otherwise.
        class: Option<FailureClass>,
        /// Why, bounded, when it did not simply succeed. Validation
        /// reports name locations, never the values a person typed.
        message: Option<String>,
        /// How long the host's service took: the time a person was waited
        /// on (zero for a request refused before it reached the service).
        #[serde(rename = "durationMs", serialize_with = "crate::serialize::millis")]
        duration: Duration,
        /// When the outcome was observed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A server reported that a URL elicitation this binding accepted
    /// finished out of band (`notifications/elicitation/complete`).
    ElicitationComplete {
        /// The binding.
        binding: String,
        /// The server's id of the elicitation.
        elicitation_id: String,
        /// When the notice arrived.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A sampling request arrived.
    SamplingRequested {
        /// The binding whose server asked.
        binding: String,
        /// Its place in a sampling chain (see `crate::handlers::sampling`).
        depth: u32,
        /// How many messages the conversation carried.
        messages: usize,
        /// The tokens granted: the server's request capped at
        /// `Limits::max_sampling_tokens`.
        max_tokens: u64,
        /// The tokens the server asked for.
        requested_max_tokens: u64,
        /// When it arrived.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A sampling request ended.
    SamplingResolved {
        /// The binding whose server asked.
        binding: String,
        /// Its place in a sampling chain.
        depth: u32,
        /// How it ended.
        outcome: SampleOutcome,
        /// The failure class, `None` when completed.
        class: Option<FailureClass>,
        /// The model the host used (bounded), or `None` when none answered.
        model: Option<String>,
        /// The tokens that were granted.
        max_tokens: u64,
        /// Why, bounded, when it did not complete.
        message: Option<String>,
        /// How long the host's service worked: what the server cost.
        #[serde(rename = "durationMs", serialize_with = "crate::serialize::millis")]
        duration: Duration,
        /// When the outcome was observed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A resource the binding subscribed to changed
    /// (`notifications/resources/updated`).
    ResourceUpdated {
        /// The binding.
        binding: String,
        /// The resource the server says changed; it may be a sub-resource
        /// of the one subscribed to. An opaque identifier, never a host
        /// path.
        uri: String,
        /// When the notice arrived.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A line the server wrote outside the protocol (a stdio child's stderr).
    ServerStderr {
        /// The binding.
        binding: String,
        /// The bounded line.
        line: String,
        /// When it was read.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A defect the binding tolerated (a damaged frame, a reply to an unknown
    /// id).
    Warning {
        /// The binding.
        binding: String,
        /// A bounded description.
        text: String,
        /// When it happened.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// The server announced a change to a catalog family that was fresh.
    /// Reported once per family until a refetch answers it, however many
    /// notifications arrive.
    CatalogStale {
        /// The binding.
        binding: String,
        /// The family the server says changed.
        family: Family,
        /// When the notification was observed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A refetch found an offering that differs from the adopted generation
    /// and published it as a candidate.
    CatalogCandidate {
        /// The binding.
        binding: String,
        /// The candidate's ordinal: what `Binding::adopt` takes.
        generation: u64,
        /// The candidate's hex catalog digest.
        digest: String,
        /// The ordinal of the generation still in force.
        adopted: u64,
        /// When the candidate was published.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A generation was adopted (generation 1 at connect, then each
    /// `Binding::adopt`).
    CatalogAdopted {
        /// The binding.
        binding: String,
        /// The newly adopted ordinal.
        generation: u64,
        /// Its hex catalog digest.
        digest: String,
        /// The ordinal it replaced, or 0 if there was none.
        previous: u64,
        /// When adoption happened.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A refetch found the offering unchanged (identical to the adopted
    /// generation, or to the candidate already waiting).
    CatalogRefreshed {
        /// The binding.
        binding: String,
        /// The ordinal of the generation still in force.
        generation: u64,
        /// Its hex catalog digest.
        digest: String,
        /// When the refresh completed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
    /// A refetch failed; the adopted generation stays in force.
    CatalogRejected {
        /// The binding.
        binding: String,
        /// Why the refresh failed.
        class: FailureClass,
        /// A bounded description.
        message: String,
        /// The ordinal of the generation still in force.
        adopted: u64,
        /// Whether the binding will try again under `Definition::refresh`.
        retrying: bool,
        /// When the refresh failed.
        #[serde(serialize_with = "crate::serialize::rfc3339")]
        at: SystemTime,
    },
}

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
/// | ready | degraded | it was lost and reconnection is off ([`ReconnectPolicy::never`]) ([`Event::ConnectionLost`], not `retrying`): calls fail fast with `transport_closed` until the binding is closed |
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
/// [`ReconnectPolicy::never`]: crate::config::ReconnectPolicy::never
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

/// Serialized as its stable name ([`State::as_str`]).
impl Serialize for State {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The last failure, summarized. As JSON: `{"class": "deadline", "message":
/// "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// What kind of failure.
    pub class: FailureClass,
    /// A bounded description.
    pub message: String,
    /// The HTTP status behind it, when an HTTP answer caused it (see
    /// [`Error::http_status`](crate::Error::http_status)). As JSON
    /// `httpStatus`, left out when there is none.
    #[serde(rename = "httpStatus", skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

impl From<&crate::Error> for Failure {
    fn from(e: &crate::Error) -> Self {
        Failure { class: e.class(), message: e.message().to_string(), http_status: e.http_status() }
    }
}

/// How a sampling request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleOutcome {
    /// The host's model answered and the answer was sent.
    Completed,
    /// The host refused (its service failed with `sampling_denied`).
    Denied,
    /// Over a budget: tokens, size, concurrency or depth.
    OverBudget,
    /// The request or the host's answer broke the protocol (undeclared
    /// tools, a malformed request or result).
    Invalid,
    /// The host's service failed otherwise, or ran out of time.
    Failed,
}

impl SampleOutcome {
    /// The stable snake_case name of the outcome.
    pub fn as_str(self) -> &'static str {
        match self {
            SampleOutcome::Completed => "completed",
            SampleOutcome::Denied => "denied",
            SampleOutcome::OverBudget => "over_budget",
            SampleOutcome::Invalid => "invalid",
            SampleOutcome::Failed => "failed",
        }
    }
}

/// Serialized as its stable name ([`SampleOutcome::as_str`]).
impl Serialize for SampleOutcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
