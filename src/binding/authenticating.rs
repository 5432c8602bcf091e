//! The state `authenticating`: what the transport's authorization layer
//! reports (a flow started, a flow ended) as the binding's state.
//!
//! A flow can run while the binding starts (the first `401`), while it
//! reads its catalog, or later (a refresh, a step-up). The binding shows
//! `authenticating` meanwhile and then returns to the state it came from:
//! before the binding is ready, the phase its connect has reached; after,
//! the lifecycle's own state (unless something else moved it meanwhile).

use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use super::transitions::Lifecycle;
use crate::events::{Event, EventBus, State};

pub(super) struct AuthPhase {
    events: EventBus,
    name: String,
    inner: Mutex<PhaseState>,
}

struct PhaseState {
    /// The connect's phase, until the lifecycle is attached.
    phase: State,
    lifecycle: Option<Weak<Lifecycle>>,
    /// The state to return to, while a flow runs.
    resume: Option<State>,
    active: usize,
}

impl AuthPhase {
    pub(super) fn new(events: EventBus, name: String) -> Arc<Self> {
        Arc::new(AuthPhase {
            events,
            name,
            inner: Mutex::new(PhaseState {
                phase: State::Starting,
                lifecycle: None,
                resume: None,
                active: 0,
            }),
        })
    }

    /// The hook for [`ConnectConfig::authenticating`](crate::transport::ConnectConfig::authenticating).
    pub(super) fn hook(self: &Arc<Self>) -> Arc<dyn Fn(bool) + Send + Sync> {
        // Strong: the connections (through the dialer) keep the hook for
        // the binding's life; this holds the lifecycle only weakly.
        let this = self.clone();
        Arc::new(move |active| this.on(active))
    }

    /// The connect moved on to `phase`.
    pub(super) fn set_phase(&self, phase: State) {
        self.lock().phase = phase;
    }

    /// The binding is ready: from now on its lifecycle holds the state.
    pub(super) fn attach(&self, lifecycle: &Arc<Lifecycle>) {
        self.lock().lifecycle = Some(Arc::downgrade(lifecycle));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PhaseState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn on(&self, active: bool) {
        let mut st = self.lock();
        if active {
            st.active += 1;
            if st.active > 1 {
                return;
            }
        } else {
            if st.active == 0 {
                return;
            }
            st.active -= 1;
            if st.active > 0 {
                return;
            }
        }
        match st.lifecycle.as_ref().and_then(Weak::upgrade) {
            Some(lifecycle) => {
                if active {
                    st.resume = Some(lifecycle.state());
                    lifecycle.force(State::Authenticating);
                } else if let Some(resume) = st.resume.take() {
                    if lifecycle.state() == State::Authenticating {
                        lifecycle.force(resume);
                    }
                }
            }
            None => {
                let (from, to) = if active {
                    st.resume = Some(st.phase);
                    (st.phase, State::Authenticating)
                } else {
                    (State::Authenticating, st.resume.take().unwrap_or(st.phase))
                };
                self.events.emit(Event::StateChanged {
                    binding: self.name.clone(),
                    from,
                    to,
                    at: SystemTime::now(),
                });
            }
        }
    }
}
