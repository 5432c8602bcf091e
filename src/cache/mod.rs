//! Response caching (SEP-2549, the 2026-07-28 `caching` utility): where a
//! binding keeps the list and read results a server said it may reuse, and
//! the [`ResponseCache`] trait a host implements to keep them elsewhere.
//!
//! # What is cached
//!
//! A result of `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` or `resources/read` whose `ttlMs` is above
//! zero. Nothing else: not `server/discover` (it is the handshake, which
//! must see a server that changed), not a result the server reached
//! through multi round-trip input (it depends on answers that are not in
//! the key), not a request that carries `inputResponses` or
//! `requestState`. A missing, negative or non-integer `ttlMs` is zero:
//! never stored. A TTL above [`MAX_TTL`] (24 hours, as the other SDKs
//! cap it) is cut to it.
//!
//! The key is the method and the params that choose the result: the
//! `cursor` of a list page, the `uri` of a read, and any other param but
//! `_meta`. Each page of a list is its own entry, fresh for its own TTL.
//!
//! # Scopes
//!
//! - `cacheScope: "private"`, and a result without a scope (the other
//!   SDKs' choice, and the safe one), is kept in the binding's own
//!   [`MemoryCache`]: one authorization context, never shared with
//!   another binding, kept across the binding's reconnects.
//! - `cacheScope: "public"` is kept in the definition's shared cache
//!   ([`Caching::shared`]): a process-wide [`MemoryCache`] by default, or
//!   any [`ResponseCache`], such as `RedisCache` (feature `redis`) for a
//!   host's replicas. Bindings share an entry only when they reach the
//!   same server: the same endpoint (a transport without an endpoint
//!   identity shares nothing), the same server name and version, the same
//!   protocol version and the same declared client capabilities. These are
//!   digested into the entry's [`CacheGroup::partition`].
//!
//! # Freshness and invalidation
//!
//! An entry is served while `now < received + ttlMs`. It stops being
//! served at once when the server says its family changed
//! (`notifications/{tools,prompts,resources}/list_changed`; the resources
//! one covers templates too) or, for a read, that its resource was updated
//! (`notifications/resources/updated`), when the host asks for a fresh
//! catalog ([`Binding::refresh_catalog`](crate::Binding::refresh_catalog)),
//! and when a page's cursor is refused (the whole list is then dropped,
//! as the specification asks). An answer fetched while such a change
//! arrived is not stored.
//!
//! A cache is a help, never a cause of failure: a store that fails or is
//! slower than [`STORE_TIMEOUT`] is a miss (and a `tracing` warning), and
//! the request goes to the server. What comes out of a store is checked as
//! an answer from the server is (it must be a JSON object, within the
//! store's size bound), then bounded again by the binding's result limits.

mod memory;
#[cfg(feature = "redis")]
pub(crate) mod redis;

pub use memory::{CacheBounds, MemoryCache};
#[cfg(feature = "redis")]
pub use redis::{RedisCache, DEFAULT_REDIS_TIMEOUT};

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::BoxError;

/// The longest a result is kept, whatever its `ttlMs`: 24 hours.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest one store operation may take before it counts as a miss.
pub const STORE_TIMEOUT: Duration = Duration::from_millis(500);

/// Where cached results are kept.
///
/// Entries are grouped ([`CacheGroup`]): every page of one list family, or
/// the reads of one resource, in one group, so that a change notification
/// drops them together with [`ResponseCache::invalidate`]. A store keeps
/// what it is given as opaque bytes (the result's JSON), and must not
/// return an entry after its TTL.
///
/// Implementations bound themselves: a store may refuse (or silently
/// skip) an entry, and must never grow without bound. Errors are misses
/// for the binding, never a failed request.
#[async_trait]
pub trait ResponseCache: Send + Sync + 'static {
    /// The bytes stored under `key`, unless they expired or were dropped.
    async fn get(&self, key: &CacheKey) -> Result<Option<Vec<u8>>, BoxError>;

    /// Stores `body` under `key`, fresh for `ttl` from now (never more than
    /// [`MAX_TTL`]), replacing what was there.
    async fn put(&self, key: &CacheKey, body: Vec<u8>, ttl: Duration) -> Result<(), BoxError>;

    /// Drops every entry of `group`.
    async fn invalidate(&self, group: &CacheGroup) -> Result<(), BoxError>;
}

/// A set of entries that one notification invalidates: the pages of one
/// list family, or the reads of one resource, for one partition.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheGroup {
    partition: String,
    name: String,
}

impl CacheGroup {
    pub(crate) fn new(partition: String, name: String) -> Self {
        CacheGroup { partition, name }
    }

    /// Who may share the entries: 64 hex digits, a SHA-256 over the server's
    /// identity (see [the module docs](self#scopes)).
    pub fn partition(&self) -> &str {
        &self.partition
    }

    /// Which entries: `list:tools`, `list:prompts`, `list:resources`, or
    /// `read:` and 64 hex digits (a SHA-256 of the resource's URI, which is
    /// not written out).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for CacheGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheGroup({}…/{})", &self.partition[..self.partition.len().min(12)], self.name)
    }
}

/// One entry: its group and the request that produced it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey {
    group: CacheGroup,
    entry: String,
}

impl CacheKey {
    pub(crate) fn new(group: CacheGroup, entry: String) -> Self {
        CacheKey { group, entry }
    }

    /// The group the entry belongs to.
    pub fn group(&self) -> &CacheGroup {
        &self.group
    }

    /// The request within the group: 64 hex digits, a SHA-256 over the
    /// method and its params without `_meta`.
    pub fn entry(&self) -> &str {
        &self.entry
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({:?}/{}…)", self.group, &self.entry[..self.entry.len().min(12)])
    }
}

/// How a binding caches responses ([`Definition::caching`](crate::Definition::caching)).
#[derive(Clone)]
pub struct Caching {
    pub(crate) enabled: bool,
    pub(crate) shared: Arc<dyn ResponseCache>,
    pub(crate) private_bounds: CacheBounds,
}

impl Caching {
    /// No caching: every request goes to the server.
    pub fn off() -> Self {
        Caching { enabled: false, ..Caching::default() }
    }

    /// Whether results are cached at all. On by default; off, every
    /// request goes to the server.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// With caching on or off.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Where public-scope results are kept: by default one
    /// [`MemoryCache`] for the whole process ([`MemoryCache::process_wide`]),
    /// so that bindings to the same server share them.
    pub fn shared(&self) -> &Arc<dyn ResponseCache> {
        &self.shared
    }

    /// With public-scope results kept in `shared` (a `RedisCache` shared by
    /// a host's replicas, say).
    pub fn with_shared(mut self, shared: Arc<dyn ResponseCache>) -> Self {
        self.shared = shared;
        self
    }

    /// The bounds of each binding's own cache of private-scope results.
    pub fn private_bounds(&self) -> CacheBounds {
        self.private_bounds
    }

    /// With other bounds on the private-scope cache.
    pub fn with_private_bounds(mut self, bounds: CacheBounds) -> Self {
        self.private_bounds = bounds;
        self
    }
}

impl Default for Caching {
    fn default() -> Self {
        Caching { enabled: true, shared: MemoryCache::process_wide(), private_bounds: CacheBounds::default() }
    }
}

impl fmt::Debug for Caching {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caching")
            .field("enabled", &self.enabled)
            .field("private_bounds", &self.private_bounds)
            .finish_non_exhaustive()
    }
}
