//! Connect turns: what a dial waits for before it starts, when a host
//! bounds how many of its bindings connect at once (see [`crate::host`]).
//!
//! Two bounds, taken in this order: the origin's (how many bindings to
//! one network origin connect at once) and then the host's (how many
//! connect at once in all). The origin's comes first so that bindings
//! queued behind a slow origin hold none of the host's turns: they cannot
//! keep bindings to other servers waiting.

use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The turns one binding's connects wait for. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct ConnectTurns {
    all: Arc<Semaphore>,
    /// `None` for a binding that shares its connections with nobody (a
    /// stdio server is a process of its own).
    origin: Option<Arc<Semaphore>>,
}

/// A turn, held until dropped.
#[derive(Debug)]
pub(crate) struct Turn {
    _origin: Option<OwnedSemaphorePermit>,
    _all: Option<OwnedSemaphorePermit>,
}

impl ConnectTurns {
    pub(crate) fn new(all: Arc<Semaphore>, origin: Option<Arc<Semaphore>>) -> Self {
        ConnectTurns { all, origin }
    }

    /// Waits for the origin's turn, then the host's. A closed semaphore is
    /// no bound.
    pub(crate) async fn take(&self) -> Turn {
        let origin = match &self.origin {
            Some(origin) => origin.clone().acquire_owned().await.ok(),
            None => None,
        };
        let all = self.all.clone().acquire_owned().await.ok();
        Turn { _origin: origin, _all: all }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The origin's turn is taken first: a binding waiting for its origin
    /// holds none of the host's turns.
    #[tokio::test]
    async fn a_binding_waiting_for_its_origin_holds_no_turn_of_the_host() {
        let all = Arc::new(Semaphore::new(2));
        let origin = Arc::new(Semaphore::new(1));
        let same = ConnectTurns::new(all.clone(), Some(origin.clone()));
        let first = same.take().await;
        assert_eq!(all.available_permits(), 1);
        let second = tokio::spawn({
            let same = same.clone();
            async move { same.take().await }
        });
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "the origin allows one at a time");
        assert_eq!(all.available_permits(), 1, "the waiting one holds no turn of the host");
        let other = ConnectTurns::new(all.clone(), None).take().await;
        assert_eq!(all.available_permits(), 0);
        drop((first, other));
        let _second = second.await.expect("the second binding's turn");
        assert_eq!(all.available_permits(), 1);
        assert_eq!(origin.available_permits(), 0);
    }

    #[tokio::test]
    async fn a_closed_semaphore_is_no_bound() {
        let all = Arc::new(Semaphore::new(1));
        let origin = Arc::new(Semaphore::new(1));
        all.close();
        origin.close();
        let turns = ConnectTurns::new(all, Some(origin));
        let _a = turns.take().await;
        let _b = turns.take().await;
    }
}
