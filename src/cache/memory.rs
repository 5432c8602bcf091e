//! [`MemoryCache`]: the in-process [`ResponseCache`], bounded in entries and
//! bytes.

use async_trait::async_trait;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

use super::{CacheGroup, CacheKey, ResponseCache, MAX_TTL};
use crate::error::BoxError;

/// The bounds of a [`MemoryCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBounds {
    pub(crate) max_entries: usize,
    pub(crate) max_bytes: usize,
    pub(crate) max_entry_bytes: usize,
}

impl CacheBounds {
    /// The most entries it holds. Default 512.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// With another entry count.
    pub fn with_max_entries(mut self, n: usize) -> Self {
        self.max_entries = n;
        self
    }

    /// The most bytes of results it holds. Default 16 MiB.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// With another byte bound.
    pub fn with_max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }

    /// The largest one entry may be; a larger result is not stored.
    /// Default 4 MiB.
    pub fn max_entry_bytes(&self) -> usize {
        self.max_entry_bytes
    }

    /// With another bound on one entry.
    pub fn with_max_entry_bytes(mut self, n: usize) -> Self {
        self.max_entry_bytes = n;
        self
    }
}

impl Default for CacheBounds {
    fn default() -> Self {
        CacheBounds { max_entries: 512, max_bytes: 16 << 20, max_entry_bytes: 4 << 20 }
    }
}

/// A [`ResponseCache`] in this process's memory.
///
/// When it is full, expired entries go first, then those closest to
/// expiring: an entry that would have been refetched soonest is the
/// cheapest to lose. Expiry uses tokio's clock.
#[derive(Debug)]
pub struct MemoryCache {
    bounds: CacheBounds,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<CacheKey, Entry>,
    /// The entries by expiry (and insertion, to tell equal instants apart).
    by_expiry: BTreeMap<(Instant, u64), CacheKey>,
    bytes: usize,
    inserted: u64,
}

#[derive(Debug)]
struct Entry {
    body: Arc<[u8]>,
    expires: Instant,
    seq: u64,
}

impl State {
    fn remove(&mut self, key: &CacheKey) {
        if let Some(entry) = self.entries.remove(key) {
            self.by_expiry.remove(&(entry.expires, entry.seq));
            self.bytes -= entry.body.len();
        }
    }

    /// Drops the entry closest to expiring; false when there is none.
    fn evict_one(&mut self) -> bool {
        match self.by_expiry.pop_first() {
            Some((_, key)) => {
                if let Some(entry) = self.entries.remove(&key) {
                    self.bytes -= entry.body.len();
                }
                true
            }
            None => false,
        }
    }

    fn purge_expired(&mut self, now: Instant) {
        while let Some(entry) = self.by_expiry.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            if let Some(gone) = self.entries.remove(&key) {
                self.bytes -= gone.body.len();
            }
        }
    }
}

impl MemoryCache {
    /// An empty cache within `bounds`.
    pub fn new(bounds: CacheBounds) -> Self {
        MemoryCache { bounds, state: Mutex::default() }
    }

    /// The one cache of the process that [`Caching`](super::Caching) shares
    /// public results through by default, within the default bounds.
    pub fn process_wide() -> Arc<dyn ResponseCache> {
        static SHARED: OnceLock<Arc<MemoryCache>> = OnceLock::new();
        SHARED.get_or_init(|| Arc::new(MemoryCache::new(CacheBounds::default()))).clone()
    }

    /// How many entries it holds (expired ones included until they are
    /// purged).
    pub fn len(&self) -> usize {
        self.state.lock().expect("cache lock").entries.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of results it holds.
    pub fn bytes(&self) -> usize {
        self.state.lock().expect("cache lock").bytes
    }

    pub(crate) fn lookup(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let mut state = self.state.lock().expect("cache lock");
        let now = Instant::now();
        match state.entries.get(key) {
            Some(entry) if entry.expires > now => Some(entry.body.to_vec()),
            Some(_) => {
                state.remove(key);
                None
            }
            None => None,
        }
    }

    pub(crate) fn store(&self, key: &CacheKey, body: Vec<u8>, ttl: Duration) {
        let len = body.len();
        if ttl.is_zero() || len > self.bounds.max_entry_bytes || len > self.bounds.max_bytes {
            return;
        }
        let mut state = self.state.lock().expect("cache lock");
        let now = Instant::now();
        state.remove(key);
        state.purge_expired(now);
        while state.entries.len() >= self.bounds.max_entries.max(1)
            || state.bytes + len > self.bounds.max_bytes
        {
            if !state.evict_one() {
                break;
            }
        }
        if self.bounds.max_entries == 0 {
            return;
        }
        let expires = now + ttl.min(MAX_TTL);
        state.inserted += 1;
        let seq = state.inserted;
        state.by_expiry.insert((expires, seq), key.clone());
        state.bytes += len;
        state.entries.insert(key.clone(), Entry { body: body.into(), expires, seq });
    }

    pub(crate) fn drop_group(&self, group: &CacheGroup) {
        let mut state = self.state.lock().expect("cache lock");
        let doomed: Vec<CacheKey> = state.entries.keys().filter(|k| k.group() == group).cloned().collect();
        for key in &doomed {
            state.remove(key);
        }
    }
}

/// An empty cache within the default bounds.
impl Default for MemoryCache {
    fn default() -> Self {
        MemoryCache::new(CacheBounds::default())
    }
}

#[async_trait]
impl ResponseCache for MemoryCache {
    async fn get(&self, key: &CacheKey) -> Result<Option<Vec<u8>>, BoxError> {
        Ok(self.lookup(key))
    }

    async fn put(&self, key: &CacheKey, body: Vec<u8>, ttl: Duration) -> Result<(), BoxError> {
        self.store(key, body, ttl);
        Ok(())
    }

    async fn invalidate(&self, group: &CacheGroup) -> Result<(), BoxError> {
        self.drop_group(group);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(group: &str, entry: &str) -> CacheKey {
        CacheKey::new(CacheGroup::new("p".into(), group.into()), entry.into())
    }

    #[tokio::test(start_paused = true)]
    async fn an_entry_is_served_until_its_ttl_and_not_after() {
        let cache = MemoryCache::new(CacheBounds::default());
        cache.store(&key("list:tools", "a"), b"{}".to_vec(), Duration::from_secs(5));
        tokio::time::advance(Duration::from_millis(4_999)).await;
        assert_eq!(cache.lookup(&key("list:tools", "a")).as_deref(), Some(&b"{}"[..]));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(cache.lookup(&key("list:tools", "a")), None);
        assert!(cache.is_empty(), "an expired entry is dropped when found");
        assert_eq!(cache.bytes(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_ttl_is_cut_to_a_day() {
        let cache = MemoryCache::new(CacheBounds::default());
        cache.store(&key("list:tools", "a"), b"{}".to_vec(), Duration::from_secs(7 * 24 * 3600));
        tokio::time::advance(MAX_TTL).await;
        assert_eq!(cache.lookup(&key("list:tools", "a")), None);
    }

    #[tokio::test(start_paused = true)]
    async fn full_it_drops_expired_entries_then_the_closest_to_expiring() {
        let bounds = CacheBounds { max_entries: 3, max_bytes: 1 << 20, max_entry_bytes: 1 << 20 };
        let cache = MemoryCache::new(bounds);
        cache.store(&key("g", "short"), b"1".to_vec(), Duration::from_secs(1));
        cache.store(&key("g", "long"), b"2".to_vec(), Duration::from_secs(100));
        cache.store(&key("g", "mid"), b"3".to_vec(), Duration::from_secs(50));
        cache.store(&key("g", "new"), b"4".to_vec(), Duration::from_secs(10));
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.lookup(&key("g", "short")), None, "the entry closest to expiring went");
        assert!(cache.lookup(&key("g", "long")).is_some());
        tokio::time::advance(Duration::from_secs(60)).await;
        cache.store(&key("g", "later"), b"5".to_vec(), Duration::from_secs(10));
        assert!(cache.lookup(&key("g", "long")).is_some(), "expired ones made the room");
        assert_eq!(cache.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_are_bounded_and_an_oversized_entry_is_not_stored() {
        let bounds = CacheBounds { max_entries: 100, max_bytes: 10, max_entry_bytes: 6 };
        let cache = MemoryCache::new(bounds);
        cache.store(&key("g", "big"), vec![b'x'; 7], Duration::from_secs(10));
        assert!(cache.is_empty());
        cache.store(&key("g", "a"), vec![b'x'; 6], Duration::from_secs(10));
        cache.store(&key("g", "b"), vec![b'x'; 6], Duration::from_secs(20));
        assert_eq!(cache.bytes(), 6, "the first made room for the second");
        assert!(cache.lookup(&key("g", "b")).is_some());
        cache.store(&key("g", "b"), vec![b'y'; 2], Duration::from_secs(20));
        assert_eq!(cache.bytes(), 2, "a replaced entry's bytes are released");
    }

    #[tokio::test(start_paused = true)]
    async fn invalidating_a_group_drops_only_its_entries() {
        let cache = MemoryCache::new(CacheBounds::default());
        cache.store(&key("list:tools", "p1"), b"1".to_vec(), Duration::from_secs(10));
        cache.store(&key("list:tools", "p2"), b"2".to_vec(), Duration::from_secs(10));
        cache.store(&key("list:prompts", "p1"), b"3".to_vec(), Duration::from_secs(10));
        cache.drop_group(&CacheGroup::new("p".into(), "list:tools".into()));
        assert_eq!(cache.len(), 1);
        assert!(cache.lookup(&key("list:prompts", "p1")).is_some());
        assert_eq!(cache.bytes(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_ttl_is_never_stored() {
        let cache = MemoryCache::new(CacheBounds::default());
        cache.store(&key("g", "a"), b"1".to_vec(), Duration::ZERO);
        assert!(cache.is_empty());
    }
}
