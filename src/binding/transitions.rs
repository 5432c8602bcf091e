//! A binding's lifecycle: its [`State`], the status fields that move with
//! it, and the events that report each move.
//!
//! Every change goes through [`Lifecycle::update`], under one lock, and the
//! events it causes are queued under that lock too, so that they reach the
//! host in the order the changes happened. An event that says *what
//! happened* (`ConnectionLost`, `ConnectionRestored`) comes before the
//! `StateChanged` it causes.
//!
//! # A new session, in two steps
//!
//! `ConnectionRestored` (and `SessionRenewed`) say which catalog generation
//! the new session offers, which is only known once the catalog has looked
//! again. So a new session is reported in two steps:
//!
//! 1. [`Lifecycle::on_report`] with [`Report::Restored`] or
//!    [`Report::Renewed`] (on the binding's task that reads the reconnect
//!    layer's reports, which must not wait) records the new session and
//!    returns a [`Restore`]; the state stays as it was and nothing is
//!    emitted yet.
//! 2. The binding refetches the catalog in the new session
//!    (`Binding::after_new_session`), then calls
//!    [`Lifecycle::finish_restore`] with the generation it found, which
//!    emits `ConnectionRestored` and then `StateChanged` to `ready` (or
//!    `SessionRenewed`, the state unmoved).
//!
//! A loss reported between the two steps makes the [`Restore`] stale: the
//! connection it describes is gone, and finishing it does nothing (the
//! next restore is reported instead). Calls do not wait for step 2: they go
//! through as soon as the reconnect layer has the new connection.

use std::sync::Mutex;
use std::time::SystemTime;

use crate::events::{Event, EventBus, Failure, State};
use crate::layer::reconnect::Report;
use crate::session::{ServerIdentity, SessionInfo};

/// The status fields that change over a binding's life.
pub(super) struct StatusCore {
    pub(super) state: State,
    pub(super) failure: Option<Failure>,
    pub(super) last_change: SystemTime,
    /// What the current connection's handshake established.
    pub(super) session: SessionInfo,
    pub(super) reconnect_attempt: u32,
    /// Losses reported so far: a [`Restore`] taken before the latest one is
    /// stale.
    losses: u64,
}

/// A new session whose report waits for the catalog (see the
/// [module docs](self)): a restored connection, or a renewed session.
#[must_use = "a new session is reported only when it is finished"]
#[derive(Debug)]
pub(super) struct Restore {
    server: ServerIdentity,
    /// The reconnect attempts it took, or `None` for a renewed session.
    attempts: Option<u32>,
    losses: u64,
}

pub(super) struct Lifecycle {
    pub(super) name: String,
    pub(super) events: EventBus,
    /// What the first connection's server said it was: the reference for
    /// identity drift.
    first_server: ServerIdentity,
    pub(super) status: Mutex<StatusCore>,
}

impl Lifecycle {
    /// A binding that has just become ready over its first connection.
    pub(super) fn ready(name: String, events: EventBus, session: SessionInfo) -> Self {
        Lifecycle {
            name,
            events,
            first_server: session.server.clone(),
            status: Mutex::new(StatusCore {
                state: State::Ready,
                failure: None,
                last_change: SystemTime::now(),
                session,
                reconnect_attempt: 0,
                losses: 0,
            }),
        }
    }

    /// Applies `change` unless the binding is closing or closed (nothing but
    /// `close` moves it then). `change` returns the state to move to and the
    /// event that explains the move, if any; that event is emitted first,
    /// then `StateChanged` if the state changed. Returns the state before.
    pub(super) fn update(
        &self,
        change: impl FnOnce(&mut StatusCore) -> (State, Option<Event>),
    ) -> Option<State> {
        let mut core = self.status.lock().expect("status lock");
        let from = core.state;
        if matches!(from, State::Closing | State::Closed) {
            return None;
        }
        let (to, event) = change(&mut core);
        if let Some(event) = event {
            self.events.emit(event);
        }
        self.move_to(&mut core, to);
        Some(from)
    }

    /// Moves to `to`, reporting it, whatever the state before.
    /// The state now.
    pub(super) fn state(&self) -> State {
        self.status.lock().expect("status lock").state
    }

    pub(super) fn force(&self, to: State) {
        let mut core = self.status.lock().expect("status lock");
        self.move_to(&mut core, to);
    }

    fn move_to(&self, core: &mut StatusCore, to: State) {
        let from = core.state;
        if from == to {
            return;
        }
        core.state = to;
        core.last_change = SystemTime::now();
        self.events.emit(Event::StateChanged { binding: self.name.clone(), from, to, at: core.last_change });
    }

    /// What the reconnect supervisor reports, as state, status and events.
    ///
    /// - lost, retrying: ready (or reconnecting) → reconnecting, with the
    ///   attempt about to be made;
    /// - lost, reconnecting disabled: ready → degraded;
    /// - lost, budget spent: reconnecting → failed;
    /// - restored: records the new session and returns the [`Restore`] to
    ///   finish once the catalog has looked again
    ///   ([`Lifecycle::finish_restore`]: reconnecting → ready, with the new
    ///   server's identity and its drift from the first one).
    ///
    /// `adopted` is the catalog generation in force, which the events
    /// report.
    pub(super) fn on_report(&self, report: &Report, adopted: u64) -> Option<Restore> {
        let at = SystemTime::now();
        match report {
            Report::Lost { class, message, attempt, retry_in } => {
                self.update(|core| {
                    core.losses += 1;
                    let to = match (retry_in, attempt) {
                        (Some(_), _) => State::Reconnecting,
                        (None, 0) => State::Degraded,
                        (None, _) => State::Failed,
                    };
                    core.failure =
                        Some(Failure { class: *class, message: message.clone(), http_status: None });
                    core.reconnect_attempt = if retry_in.is_some() { attempt + 1 } else { 0 };
                    let event = Event::ConnectionLost {
                        binding: self.name.clone(),
                        class: *class,
                        message: message.clone(),
                        adopted,
                        retrying: retry_in.is_some(),
                        attempt: *attempt,
                        retry_in: *retry_in,
                        at,
                    };
                    (to, Some(event))
                });
                None
            }
            Report::Restored { session, attempts } => self.new_session(session, Some(*attempts)),
            Report::Renewed { session } => self.new_session(session, None),
        }
    }

    /// Records a new session (nothing is emitted yet; see the
    /// [module docs](self)).
    fn new_session(&self, session: &SessionInfo, attempts: Option<u32>) -> Option<Restore> {
        let mut restore = None;
        self.update(|core| {
            core.session = session.clone();
            // Whatever was attempted succeeded: none is being made.
            core.reconnect_attempt = 0;
            restore = Some(Restore { server: session.server.clone(), attempts, losses: core.losses });
            (core.state, None)
        });
        restore
    }

    /// Reports a new session in which the catalog found `generation` (the
    /// adopted one when the offering did not change, the candidate's
    /// otherwise, 0 when it could not look): a restored connection as
    /// [`Event::ConnectionRestored`], then reconnecting → ready; a renewed
    /// session as [`Event::SessionRenewed`], the state unmoved. Does nothing
    /// when the binding is closing, or when a loss was reported since
    /// `restore` was taken.
    pub(super) fn finish_restore(&self, restore: Restore, generation: u64, adopted: u64) {
        self.update(|core| {
            if core.losses != restore.losses {
                return (core.state, None);
            }
            let (binding, at) = (self.name.clone(), SystemTime::now());
            let drift = self.first_server.drift(&restore.server);
            let server = restore.server;
            match restore.attempts {
                Some(attempts) => {
                    let event = Event::ConnectionRestored {
                        binding,
                        drift,
                        server,
                        attempts,
                        adopted,
                        generation,
                        at,
                    };
                    (State::Ready, Some(event))
                }
                None => {
                    let event = Event::SessionRenewed { binding, drift, server, adopted, generation, at };
                    (core.state, Some(event))
                }
            }
        });
    }
}
