//! The events a binding reports, recorded for a test to read or wait for.

use mcp_stack::{handlers::Handlers, Event};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Every event of the bindings whose handlers it installed itself in.
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<Event>>>);

impl Events {
    /// Default handlers that record into this.
    pub fn handlers(&self) -> Handlers {
        self.install(Handlers::default())
    }

    /// `handlers` with the event sink recording into this.
    pub fn install(&self, handlers: Handlers) -> Handlers {
        let sink = self.0.clone();
        handlers.with_events(move |e| sink.lock().unwrap().push(e))
    }

    /// A copy of every event so far.
    pub fn all(&self) -> Vec<Event> {
        self.0.lock().unwrap().clone()
    }

    /// What `f` finds in the events so far.
    pub fn matching<T>(&self, f: impl Fn(&Event) -> Option<T>) -> Vec<T> {
        self.0.lock().unwrap().iter().filter_map(f).collect()
    }

    /// Waits, at most `within` (tokio time: virtual on a paused clock),
    /// until `f` finds an event.
    pub async fn wait_for<T>(&self, within: Duration, f: impl Fn(&Event) -> Option<T>) -> T {
        let deadline = Instant::now() + within;
        loop {
            if let Some(found) = self.0.lock().unwrap().iter().find_map(&f) {
                return found;
            }
            assert!(Instant::now() < deadline, "the expected event never came");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
