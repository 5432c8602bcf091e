//! A binding's lifecycle: its [`State`], the status fields that move with
//! it, and the events that report each move.
//!
//! Every change goes through [`Lifecycle::update`], under one lock, and the
//! events it causes are queued under that lock too, so that they reach the
//! host in the order the changes happened. An event that says *what
//! happened* (`ConnectionLost`, `ConnectionRestored`) comes before the
//! `StateChanged` it causes.

use std::sync::Mutex;
use std::time::SystemTime;

use super::events::{Event, EventBus};
use super::status::{Failure, State};
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
    /// - restored: reconnecting → ready, with the new server's identity and
    ///   its drift from the first one.
    pub(super) fn on_report(&self, report: &Report) {
        let at = SystemTime::now();
        match report {
            Report::Lost { class, message, attempt, retry_in } => {
                self.update(|core| {
                    let to = match (retry_in, attempt) {
                        (Some(_), _) => State::Reconnecting,
                        (None, 0) => State::Degraded,
                        (None, _) => State::Failed,
                    };
                    core.failure = Some(Failure { class: *class, message: message.clone() });
                    core.reconnect_attempt = if retry_in.is_some() { attempt + 1 } else { 0 };
                    let event = Event::ConnectionLost {
                        binding: self.name.clone(),
                        class: *class,
                        message: message.clone(),
                        retrying: retry_in.is_some(),
                        attempt: *attempt,
                        retry_in: *retry_in,
                        at,
                    };
                    (to, Some(event))
                });
            }
            Report::Restored { session, attempts } => {
                self.update(|core| {
                    core.session = (**session).clone();
                    core.reconnect_attempt = 0;
                    let event = Event::ConnectionRestored {
                        binding: self.name.clone(),
                        server: session.server.clone(),
                        drift: self.first_server.drift(&session.server),
                        attempts: *attempts,
                        at,
                    };
                    (State::Ready, Some(event))
                });
            }
        }
    }
}
