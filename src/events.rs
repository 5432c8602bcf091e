//! What a binding reports: [`Event`]s, the lifecycle [`State`]s they move
//! between, and their non-blocking delivery.
//!
//! Events are delivered on a task of their own through a bounded queue of
//! [`EVENT_QUEUE`] entries. When the host's handler falls behind and the
//! queue is full, new events are dropped and counted
//! ([`crate::Status::dropped_events`]); the connection never waits for the
//! host to read its events.
//!
//! This module is a leaf: it imports nothing from the catalog or the
//! binding, so that both can report through it. The types an event names
//! live here or below (the wire model, the session, the error).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc;

use crate::error::FailureClass;
use crate::protocol::elicitation::{ElicitAction, ElicitationMode};
use crate::protocol::family::Family;
use crate::request::Progress;
use crate::session::ServerIdentity;

/// Events queued before new ones are dropped.
pub const EVENT_QUEUE: usize = 1024;

/// Something that happened to a binding.
#[derive(Debug, Clone, PartialEq)]
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
        retry_in: Option<Duration>,
        /// When the loss was observed.
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
        at: SystemTime,
    },
    /// A call reported progress (also delivered to the call's own sink).
    RequestProgress {
        /// The report.
        progress: Progress,
        /// When it was observed.
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
        at: SystemTime,
    },
    /// An elicitation reached the host's elicitation service.
    ElicitationRequested {
        /// The binding whose server asked.
        binding: String,
        /// The mode.
        mode: ElicitationMode,
        /// When it reached the service.
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
        duration: Duration,
        /// When the outcome was observed.
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
        at: SystemTime,
    },
    /// A sampling request arrived.
    SamplingRequested {
        /// The binding whose server asked.
        binding: String,
        /// Its place in a sampling chain (see [`crate::binding::sampling`]).
        depth: u32,
        /// How many messages the conversation carried.
        messages: usize,
        /// The tokens granted: the server's request capped at
        /// `Limits::max_sampling_tokens`.
        max_tokens: u64,
        /// The tokens the server asked for.
        requested_max_tokens: u64,
        /// When it arrived.
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
        duration: Duration,
        /// When the outcome was observed.
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
        at: SystemTime,
    },
    /// A line the server wrote outside the protocol (a stdio child's stderr).
    ServerStderr {
        /// The binding.
        binding: String,
        /// The bounded line.
        line: String,
        /// When it was read.
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

/// Receives a binding's events. Runs on the event task; may take its time
/// (events queue behind it, then drop), but should not block forever.
pub type EventHandler = Arc<dyn Fn(Event) + Send + Sync>;

/// The sending side of a binding's event queue. Cheap to clone.
#[derive(Clone)]
pub(crate) struct EventBus {
    tx: Option<mpsc::Sender<Event>>,
    dropped: Arc<AtomicU64>,
}

impl fmt::Debug for EventBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventBus").field("dropped", &self.dropped()).finish()
    }
}

impl EventBus {
    /// A bus delivering to `handler` on its own task, or discarding
    /// everything when there is no handler.
    pub(crate) fn new(handler: Option<EventHandler>) -> Self {
        let tx = handler.map(|handler| {
            let (tx, mut rx) = mpsc::channel::<Event>(EVENT_QUEUE);
            tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    handler(event);
                }
            });
            tx
        });
        EventBus { tx, dropped: Arc::new(AtomicU64::new(0)) }
    }

    /// Queues an event without waiting.
    pub(crate) fn emit(&self, event: Event) {
        if let Some(tx) = &self.tx {
            if tx.try_send(event).is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
