//! The host's connect turns per network origin (see
//! [`HostBuilder::max_concurrent_connects_per_origin`](super::HostBuilder::max_concurrent_connects_per_origin)).

use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// Each origin's connect turns, held by the bindings to it (they redial
/// in them) and here only weakly: an origin no binding reaches any more
/// is forgotten at a later prune, so the map stays within twice the
/// origins in use (or 64).
pub(crate) struct OriginTurns {
    per_origin: usize,
    origins: HashMap<String, Weak<tokio::sync::Semaphore>>,
    prune_at: usize,
}

impl OriginTurns {
    pub(crate) fn new(per_origin: usize) -> Self {
        OriginTurns { per_origin, origins: HashMap::new(), prune_at: 64 }
    }

    /// The turns of `origin`'s bindings, shared with every binding to it.
    pub(super) fn of(&mut self, origin: &str) -> Arc<tokio::sync::Semaphore> {
        if let Some(turns) = self.origins.get(origin).and_then(Weak::upgrade) {
            return turns;
        }
        if self.origins.len() >= self.prune_at {
            self.origins.retain(|_, turns| turns.strong_count() > 0);
            self.prune_at = (self.origins.len() * 2).max(64);
        }
        let turns = Arc::new(tokio::sync::Semaphore::new(self.per_origin));
        self.origins.insert(origin.to_string(), Arc::downgrade(&turns));
        turns
    }
}
