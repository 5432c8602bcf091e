//! Serving list and read results from a cache while the server says they
//! are fresh (SEP-2549). What is cached, under which key, for whom and
//! until when is in [`crate::cache`]; this module is the layer that does
//! it, and what the binding tells it (a new session, a change notification,
//! a refresh).
//!
//! It sits below the result limit (so that a result served from a store,
//! which may be another replica's, is bounded again like one from the
//! server) and above the progress routes, the gate and the concurrency
//! limit. The catalog's own list calls pass through it, so a catalog
//! refetched after a reconnect comes from the cache when its pages are
//! still fresh.
//!
//! # Invalidation, in order
//!
//! A notification lands on the connection's reader and cannot wait for a
//! store, so it is recorded at once: the binding's own cache drops the
//! group there and then, and the group is noted as pending for the shared
//! store. Before its lookup, every cacheable request first makes the
//! pending invalidations in the shared store; a group whose invalidation
//! failed stays pending, and is not looked up in the shared store (nor
//! written to it) until one succeeds. Each kind of entry also counts its
//! notifications: an answer fetched while one arrived is not stored, since
//! it may predate the change.

#[cfg(test)]
mod tests;

use pin_project_lite::pin_project;
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;
use tower_layer::Layer;
use tower_service::Service;

use crate::cache::{CacheGroup, CacheKey, Caching, MemoryCache, ResponseCache, MAX_TTL, STORE_TIMEOUT};
use crate::canonical::{hex, Encoder};
use crate::connection::InputGiven;
use crate::error::Error;
use crate::protocol::family::Family;
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};
use crate::session::SessionInfo;

/// The most resources whose shared-store invalidation may wait at once;
/// past it, reads are not served from the shared store for [`MAX_TTL`]
/// (by then every entry stored before has expired).
const MAX_PENDING: usize = 1024;

/// The longest `uri` a read is cached under; a longer one is not cached.
const MAX_URI_BYTES: usize = 8 * 1024;

/// Marks a response served from a cache rather than by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FromCache;

/// What a binding's cache holds and knows: its own store for private
/// results, the shared store, who it is, and what was invalidated.
pub(crate) struct CacheState {
    enabled: bool,
    private: MemoryCache,
    /// The shared store, when the transport names its server (without
    /// that, public results are kept in `private`).
    shared: Option<Arc<dyn ResponseCache>>,
    max_entry_bytes: usize,
    /// What identifies the server and this client across sessions, but
    /// for the session's own facts (see [`CacheState::set_session`]).
    base: [u8; 32],
    /// The partition of the live session; none before the first.
    partition: Mutex<Option<String>>,
    marks: Mutex<Marks>,
}

impl fmt::Debug for CacheState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheState")
            .field("enabled", &self.enabled)
            .field("private", &self.private.len())
            .field("shares", &self.shared.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Marks {
    /// Notifications counted per kind: the three list families, then reads.
    seq: [u64; 4],
    /// Groups still to invalidate in the shared store, with the count of
    /// their kind when noted.
    pending: BTreeMap<CacheGroup, u64>,
    /// Until when reads skip the shared store (after `pending` overflowed).
    reads_bypass_until: Option<Instant>,
}

const READS: usize = 3;

/// What one cacheable request is.
struct Plan {
    key: CacheKey,
    kind: usize,
    seq: u64,
    /// A list page asked for with a cursor: an error drops the list.
    cursor: bool,
    /// The bound the reply's entries were read within, if any: a reply
    /// cut at it is not the server's whole page, and is not kept.
    bound: Option<crate::protocol::bounded_list::ListBound>,
}

impl CacheState {
    /// The state of one binding: `endpoint` is its transport's
    /// [`endpoint_digest`](crate::transport::TransportFactory::endpoint_digest),
    /// `client` what the client declares to the server (capabilities and
    /// identity), which may change what the server lists.
    pub(crate) fn new(caching: &Caching, endpoint: Option<[u8; 32]>, client: &Value) -> Arc<Self> {
        let mut h = Sha256::new();
        match endpoint {
            Some(digest) => h.update(digest),
            // Nothing shared: a partition of this binding alone.
            None => h.update(unique_salt()),
        }
        Encoder::new(&mut h).value(client);
        Arc::new(CacheState {
            enabled: caching.enabled,
            private: MemoryCache::new(caching.private_bounds),
            shared: endpoint.map(|_| caching.shared.clone()),
            max_entry_bytes: caching.private_bounds.max_entry_bytes,
            base: h.finalize().into(),
            partition: Mutex::new(None),
            marks: Mutex::default(),
        })
    }

    /// A new session: entries are shared only with sessions of the same
    /// server name and version and protocol version.
    pub(crate) fn set_session(&self, session: &SessionInfo) {
        let mut h = Sha256::new();
        h.update(self.base);
        let mut e = Encoder::new(&mut h);
        e.str(&session.protocol_version);
        e.str(&session.server.name);
        e.str(&session.server.version);
        drop(e);
        *self.partition.lock().expect("partition lock") = Some(hex(&h.finalize()));
    }

    /// The server changed `family`'s list.
    pub(crate) fn list_changed(&self, family: Family) {
        self.invalidate(family.index(), list_group(family));
    }

    /// The server updated the resource at `uri`.
    pub(crate) fn resource_updated(&self, uri: &str) {
        self.invalidate(READS, read_group(uri));
    }

    /// Every list is to be fetched again (the host asked for a fresh
    /// catalog).
    pub(crate) fn lists_refreshed(&self) {
        for family in Family::ALL {
            self.list_changed(family);
        }
    }

    fn invalidate(&self, kind: usize, name: String) {
        let Some(partition) = self.partition.lock().expect("partition lock").clone() else { return };
        let group = CacheGroup::new(partition, name);
        self.private.drop_group(&group);
        let mut marks = self.marks.lock().expect("marks lock");
        marks.seq[kind] = marks.seq[kind].wrapping_add(1);
        if self.shared.is_none() {
            return;
        }
        if marks.pending.len() >= MAX_PENDING && !marks.pending.contains_key(&group) {
            // The reads' marks make room; reads then skip the shared store
            // until whatever it holds of them has expired.
            marks.pending.retain(|g, _| !g.name().starts_with("read:"));
            marks.reads_bypass_until = Some(Instant::now() + MAX_TTL);
            if kind == READS {
                return;
            }
        }
        let seq = marks.seq[kind];
        marks.pending.insert(group, seq);
    }

    /// What `req` is, if its result may be cached.
    fn plan(&self, req: &McpRequest) -> Option<Plan> {
        if !self.enabled {
            return None;
        }
        let params = req.params();
        let (kind, name) = match req.method.as_str() {
            methods::TOOLS_LIST => (Family::Tools.index(), list_group(Family::Tools)),
            methods::PROMPTS_LIST => (Family::Prompts.index(), list_group(Family::Prompts)),
            methods::RESOURCES_LIST | methods::RESOURCES_TEMPLATES_LIST => {
                (Family::Resources.index(), list_group(Family::Resources))
            }
            methods::RESOURCES_READ => {
                let uri = params.get("uri").and_then(Value::as_str).filter(|u| u.len() <= MAX_URI_BYTES)?;
                (READS, read_group(uri))
            }
            _ => return None,
        };
        if params.contains_key("inputResponses") || params.contains_key("requestState") {
            return None;
        }
        let partition = self.partition.lock().expect("partition lock").clone()?;
        let mut h = Sha256::new();
        let mut e = Encoder::new(&mut h);
        e.str(&req.method);
        // The params but `_meta`, in the canonical encoding of an object,
        // without copying them.
        let mut keys: Vec<&String> = params.keys().filter(|k| k.as_str() != "_meta").collect();
        keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        e.len(keys.len());
        for key in keys {
            e.str(key);
            e.value(&params[key]);
        }
        drop(e);
        let entry = hex(&h.finalize());
        let seq = self.marks.lock().expect("marks lock").seq[kind];
        let cursor = kind != READS && params.get("cursor").is_some_and(|c| !c.is_null());
        let bound = req.extensions.get::<crate::protocol::bounded_list::ListBound>().cloned();
        Some(Plan { key: CacheKey::new(CacheGroup::new(partition, name), entry), kind, seq, cursor, bound })
    }

    /// Makes the pending invalidations in the shared store. Returns
    /// whether `group` may be looked up there (and written).
    async fn flush(&self, shared: &dyn ResponseCache, group: &CacheGroup) -> bool {
        let pending: Vec<(CacheGroup, u64)> = {
            let marks = self.marks.lock().expect("marks lock");
            marks.pending.iter().map(|(g, s)| (g.clone(), *s)).collect()
        };
        for (pending_group, seq) in pending {
            let done = matches!(
                tokio::time::timeout(STORE_TIMEOUT, shared.invalidate(&pending_group)).await,
                Ok(Ok(()))
            );
            if done {
                let mut marks = self.marks.lock().expect("marks lock");
                if marks.pending.get(&pending_group) == Some(&seq) {
                    marks.pending.remove(&pending_group);
                }
            } else {
                tracing::warn!(target: "mcp_stack::cache", "could not invalidate {pending_group:?} in the shared cache; it is not used for that group until it can be");
            }
        }
        let marks = self.marks.lock().expect("marks lock");
        let reads_bypassed = group.name().starts_with("read:")
            && marks.reads_bypass_until.is_some_and(|until| Instant::now() < until);
        !marks.pending.contains_key(group) && !reads_bypassed
    }

    /// The cached response for `plan`, if a store has a fresh one.
    async fn lookup(&self, plan: &Plan) -> Option<(McpResponse, bool)> {
        if let Some(response) = self.private.lookup(&plan.key).and_then(|body| self.decode(body)) {
            return Some((response, false));
        }
        let shared = self.shared.as_deref()?;
        let shared_usable = self.flush(shared, plan.key.group()).await;
        if !shared_usable {
            return None;
        }
        match tokio::time::timeout(STORE_TIMEOUT, shared.get(&plan.key)).await {
            Ok(Ok(Some(body))) => match self.decode(body) {
                Some(response) => Some((response, true)),
                None => {
                    tracing::warn!(target: "mcp_stack::cache", "the shared cache held an entry that is not a result object; ignored");
                    None
                }
            },
            Ok(Ok(None)) => None,
            Ok(Err(e)) => {
                tracing::warn!(target: "mcp_stack::cache", "the shared cache failed a lookup: {}", crate::error::normalize_message(&e.to_string(), 256));
                None
            }
            Err(_) => {
                tracing::warn!(target: "mcp_stack::cache", "the shared cache did not answer a lookup within {STORE_TIMEOUT:?}");
                None
            }
        }
    }

    fn decode(&self, body: Vec<u8>) -> Option<McpResponse> {
        if body.len() > self.max_entry_bytes {
            return None;
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(result @ Value::Object(_)) => {
                let mut response = McpResponse::new(result);
                response.extensions.insert(FromCache);
                Some(response)
            }
            _ => None,
        }
    }

    /// Keeps `response` for as long as it says, where its scope says.
    async fn keep(&self, plan: &Plan, response: &McpResponse) {
        if response.extensions.get::<InputGiven>().is_some() {
            return;
        }
        if plan.bound.as_ref().is_some_and(|b| b.dropped() > 0) {
            return; // a page cut at the reader's bound
        }
        let Some(result) = response.result.as_object() else { return };
        if result.get("resultType").is_some_and(|t| t != "complete") {
            return;
        }
        let Some(ttl) = ttl_of(result.get("ttlMs")) else { return };
        let public = result.get("cacheScope").and_then(Value::as_str) == Some("public");
        if self.marks.lock().expect("marks lock").seq[plan.kind] != plan.seq {
            return; // a change arrived while this was fetched
        }
        let Ok(body) = serde_json::to_vec(&response.result) else { return };
        if body.len() > self.max_entry_bytes {
            return;
        }
        match (&self.shared, public) {
            (Some(shared), true) => {
                if !self.flush(shared.as_ref(), plan.key.group()).await {
                    return;
                }
                match tokio::time::timeout(STORE_TIMEOUT, shared.put(&plan.key, body, ttl)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        tracing::warn!(target: "mcp_stack::cache", "the shared cache failed to store a result: {}", crate::error::normalize_message(&e.to_string(), 256))
                    }
                    Err(_) => {
                        tracing::warn!(target: "mcp_stack::cache", "the shared cache did not store a result within {STORE_TIMEOUT:?}")
                    }
                }
            }
            _ => self.private.store(&plan.key, body, ttl),
        }
    }

    /// A list page asked for with a cursor failed: the cursor may be
    /// stale, so the whole list goes (the specification's advice).
    fn cursor_refused(&self, plan: &Plan) {
        if plan.cursor {
            self.invalidate(plan.kind, plan.key.group().name().to_string());
        }
    }
}

/// The `ttlMs` of a result: a positive integer, at most [`MAX_TTL`];
/// anything else (absent, zero, negative, fractional, not a number) is no
/// caching.
fn ttl_of(value: Option<&Value>) -> Option<Duration> {
    let ms = value?.as_u64().filter(|ms| *ms > 0)?;
    Some(Duration::from_millis(ms).min(MAX_TTL))
}

fn list_group(family: Family) -> String {
    format!("list:{}", family.as_str())
}

fn read_group(uri: &str) -> String {
    format!("read:{}", hex(&Sha256::digest(uri.as_bytes())))
}

/// Bytes no other binding of this process (or another) will have.
fn unique_salt() -> [u8; 32] {
    use std::hash::{BuildHasher, Hasher};
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let mut h = Sha256::new();
    h.update(hasher.finish().to_be_bytes());
    h.update(std::process::id().to_be_bytes());
    h.update(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
            .to_be_bytes(),
    );
    h.finalize().into()
}

/// Applies [`ResponseCaching`] to a service. Made by the binding
/// ([`StackParts::response_cache`](crate::binding::StackParts::response_cache)),
/// which tells it of sessions and notifications.
#[derive(Debug, Clone)]
pub struct CacheLayer {
    state: Arc<CacheState>,
}

impl CacheLayer {
    pub(crate) fn new(state: Arc<CacheState>) -> Self {
        CacheLayer { state }
    }
}

impl<S> Layer<S> for CacheLayer {
    type Service = ResponseCaching<S>;

    fn layer(&self, inner: S) -> ResponseCaching<S> {
        ResponseCaching { inner, state: self.state.clone() }
    }
}

/// Serves fresh cached results of lists and reads, and keeps the results
/// the server lets it keep (see [the module docs](self)). A response it
/// served carries [`FromCache`] in its extensions.
#[derive(Debug, Clone)]
pub struct ResponseCaching<S> {
    inner: S,
    state: Arc<CacheState>,
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<McpResponse, Error>> + Send>>;

impl<S> Service<McpRequest> for ResponseCaching<S>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let Some(plan) = self.state.plan(&req) else {
            return ResponseFuture { kind: Kind::Passthrough { future: self.inner.call(req) } };
        };
        // The service that was made ready goes into the future; this one
        // keeps a clone (tower's usual way to call a service later).
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        let future: BoxFuture = Box::pin(async move {
            if let Some((response, shared)) = state.lookup(&plan).await {
                tracing::debug!(target: "mcp_stack::cache", method = %req.method, shared, "served from the cache");
                return Ok(response);
            }
            let mut ready = ready;
            match ready.call(req).await {
                Ok(response) => {
                    state.keep(&plan, &response).await;
                    Ok(response)
                }
                Err(e) => {
                    state.cursor_refused(&plan);
                    Err(e)
                }
            }
        });
        ResponseFuture { kind: Kind::Cacheable { future } }
    }
}

pin_project! {
    /// The future of [`ResponseCaching`].
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Passthrough { #[pin] future: F },
        Cacheable { future: BoxFuture },
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<F: Future<Output = Result<McpResponse, Error>>> Future for ResponseFuture<F> {
    type Output = Result<McpResponse, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Passthrough { future } => future.poll(cx),
            KindProj::Cacheable { future } => future.as_mut().poll(cx),
        }
    }
}
