use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::delivery::{Deliveries, Pending};
use crate::error::normalize_message;
use crate::protocol::progress::{ProgressParams, ProgressToken};
use crate::request::{ProgressSink, ProgressUpdate};

/// Reports queued (not yet delivered) per call before the newest are
/// dropped.
pub(crate) const PROGRESS_QUEUE: usize = 32;
/// The longest progress message kept, in bytes.
pub(crate) const MAX_PROGRESS_MESSAGE_BYTES: usize = 1024;

/// The table from progress tokens to the calls waiting for their reports.
/// Cheap to clone; clones share the table.
#[derive(Clone)]
pub struct ProgressRouter {
    inner: Arc<RouterInner>,
}

struct RouterInner {
    binding: String,
    next: AtomicU64,
    routes: Mutex<HashMap<String, Route>>,
    /// The binding's one ordered queue to the sinks (and its log service).
    deliveries: Deliveries,
    dropped: AtomicU64,
    unrouted: AtomicU64,
}

/// A call's sink and how many of its reports are queued.
#[derive(Clone)]
struct Route {
    sink: ProgressSink,
    pending: Arc<Pending>,
}

impl fmt::Debug for ProgressRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressRouter")
            .field("binding", &self.inner.binding)
            .field("routes", &self.len())
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl ProgressRouter {
    /// An empty table for the binding `binding`.
    pub fn new(binding: impl Into<String>) -> Self {
        ProgressRouter {
            inner: Arc::new(RouterInner {
                binding: binding.into(),
                next: AtomicU64::new(1),
                routes: Mutex::new(HashMap::new()),
                deliveries: Deliveries::default(),
                dropped: AtomicU64::new(0),
                unrouted: AtomicU64::new(0),
            }),
        }
    }

    /// Registers a call's sink under a fresh token. The route lives as
    /// long as the returned tracker.
    pub fn register(&self, sink: ProgressSink) -> ProgressTracker {
        let n = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let token = format!("mcp-stack-{n}");
        let route = Route { sink, pending: Arc::default() };
        self.inner.routes.lock().expect("routes lock").insert(token.clone(), route);
        ProgressTracker { router: self.clone(), token }
    }

    /// The binding's ordered delivery queue, which its log records share
    /// so that they reach the host in the server's order with the reports.
    pub(crate) fn deliveries(&self) -> &Deliveries {
        &self.inner.deliveries
    }

    /// Routes one `notifications/progress` (its params) to its call. Never
    /// blocks. Returns the report when a call took it (a copy, for the
    /// binding's [`Event::RequestProgress`](crate::Event::RequestProgress)),
    /// `None` when none did.
    pub fn route(&self, params: Option<&Value>) -> Option<ProgressUpdate> {
        // Read from the value in place (`from_value` would take a copy).
        let Some(params) = params.and_then(|p| <ProgressParams as serde::Deserialize>::deserialize(p).ok())
        else {
            self.inner.unrouted.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let key = match &params.progress_token {
            ProgressToken::String(s) => s.clone(),
            ProgressToken::Number(n) => n.to_string(),
        };
        let route = self.inner.routes.lock().expect("routes lock").get(&key).cloned();
        let Some(route) = route else {
            self.inner.unrouted.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let progress = ProgressUpdate {
            binding: self.inner.binding.clone(),
            progress: params.progress,
            total: params.total,
            message: params.message.map(|m| normalize_message(&m, MAX_PROGRESS_MESSAGE_BYTES)),
        };
        if !route.pending.take(PROGRESS_QUEUE) {
            self.inner.dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        self.inner.deliveries.progress(route.sink, progress.clone(), route.pending);
        Some(progress)
    }

    /// How many calls have a live route.
    pub fn len(&self) -> usize {
        self.inner.routes.lock().expect("routes lock").len()
    }

    /// Whether no call has a live route.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reports dropped because a sink's queue was full.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Reports dropped because no call had their token (late or invented).
    pub fn unrouted(&self) -> u64 {
        self.inner.unrouted.load(Ordering::Relaxed)
    }
}

/// One call's route. Dropping it removes the route; the reports already
/// queued are still delivered.
pub struct ProgressTracker {
    router: ProgressRouter,
    token: String,
}

impl ProgressTracker {
    /// The token sent to the server.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Removes the route and hands back a receiver answered once what the
    /// server sent before the reply (the call's reports, the binding's log
    /// records) has been delivered: what the call's future waits for
    /// before its reply, so that a call's progress always comes before its
    /// result.
    pub(crate) fn finish(self) -> oneshot::Receiver<()> {
        self.remove_route();
        self.router.inner.deliveries.flush()
    }

    fn remove_route(&self) {
        self.router.inner.routes.lock().expect("routes lock").remove(&self.token);
    }
}

impl fmt::Debug for ProgressTracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressTracker").field("token", &self.token).finish()
    }
}

impl Drop for ProgressTracker {
    fn drop(&mut self) {
        self.remove_route();
    }
}
