//! [`RedisCache`]: public cached results kept in a Redis server, shared by
//! every process of a host that points at it.

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{CacheGroup, CacheKey, ResponseCache, MAX_TTL};
use crate::error::{normalize_message, BoxError, Error, FailureClass};

/// A [`ResponseCache`] in a Redis server (feature `redis`), for the
/// public-scope results a host's replicas share
/// ([`Caching::shared`](super::Caching::shared)).
///
/// # Layout
///
/// One hash per [`CacheGroup`], at `{prefix}:{partition}:{group name}`
/// (`mcp-stack` is the default prefix); one field per entry, named by
/// [`CacheKey::entry`]. A field holds the entry's expiry (milliseconds
/// since the Unix epoch, 8 bytes big-endian) followed by the result's JSON.
/// Invalidating a group deletes its hash, so a change notification that
/// reaches one replica is seen by all. Redis expires a hash with its
/// longest-lived entry (`PEXPIRE … NX`, then `GT`), so nothing outlives
/// [`MAX_TTL`] past its last write; an expired field is skipped, and
/// deleted when read. How much memory Redis may use is the server's own
/// bound (`maxmemory`).
///
/// Freshness is judged by the wall clock of the replica that reads, so the
/// replicas' clocks should agree (NTP); a skew of a second shortens or
/// lengthens an entry's life by a second.
///
/// Each command is bounded by a response timeout (by default 250 ms), and
/// the connection is re-established by redis-rs's connection manager after
/// a failure; a failure is a miss for the binding, never a failed request.
#[derive(Clone)]
pub struct RedisCache {
    connection: ConnectionManager,
    prefix: String,
    max_entry_bytes: usize,
}

impl fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCache")
            .field("prefix", &self.prefix)
            .field("max_entry_bytes", &self.max_entry_bytes)
            .finish_non_exhaustive()
    }
}

/// The largest entry stored by default: 4 MiB.
const DEFAULT_MAX_ENTRY_BYTES: usize = 4 << 20;

impl RedisCache {
    /// Connects to the Redis server at `url` (`redis://[:password@]host:port[/db]`,
    /// or `rediss://` for TLS). Fails with `invalid_config` for a URL that is
    /// not one, `transport_closed` when the server cannot be reached or
    /// refuses the credentials; the URL, which may hold a password, is
    /// never quoted.
    pub async fn connect(url: &str) -> Result<RedisCache, Error> {
        let connection = connect(url).await?;
        Ok(RedisCache { connection, prefix: "mcp-stack".into(), max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES })
    }

    /// Keys start with `prefix` and a colon instead of `mcp-stack:`, for
    /// hosts that share one Redis between deployments.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Results larger than `bytes` are not stored (default 4 MiB).
    pub fn with_max_entry_bytes(mut self, bytes: usize) -> Self {
        self.max_entry_bytes = bytes;
        self
    }

    fn hash(&self, group: &CacheGroup) -> String {
        format!("{}:{}:{}", self.prefix, group.partition(), group.name())
    }
}

/// A connection to the Redis server at `url` that redis-rs re-establishes
/// after a failure, each command bounded by 250 ms; the errors of
/// [`RedisCache::connect`], never quoting the URL. Shared by every Redis
/// store of the crate (tasks, tokens).
pub(crate) async fn connect(url: &str) -> Result<ConnectionManager, Error> {
    let client = redis::Client::open(url).map_err(|e| {
        Error::new(FailureClass::InvalidConfig, format!("the Redis URL is not valid: {}", e.category()))
    })?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(5)))
        .set_response_timeout(Some(Duration::from_millis(250)))
        .set_number_of_retries(2);
    ConnectionManager::new_with_config(client, config).await.map_err(|e| {
        Error::new(
            FailureClass::TransportClosed,
            format!("could not reach the Redis server: {}", normalize_message(&e.to_string(), 256)),
        )
    })
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
}

#[async_trait]
impl ResponseCache for RedisCache {
    async fn get(&self, key: &CacheKey) -> Result<Option<Vec<u8>>, BoxError> {
        let hash = self.hash(key.group());
        let mut connection = self.connection.clone();
        let value: Option<Vec<u8>> =
            redis::cmd("HGET").arg(&hash).arg(key.entry()).query_async(&mut connection).await?;
        let Some(mut value) = value else { return Ok(None) };
        let expires = match value.get(..8) {
            Some(stamp) => u64::from_be_bytes(stamp.try_into().expect("8 bytes")),
            None => 0,
        };
        if expires <= now_ms() || value.len() - 8 > self.max_entry_bytes {
            let _: Result<(), _> =
                redis::cmd("HDEL").arg(&hash).arg(key.entry()).query_async(&mut connection).await;
            return Ok(None);
        }
        value.drain(..8);
        Ok(Some(value))
    }

    async fn put(&self, key: &CacheKey, body: Vec<u8>, ttl: Duration) -> Result<(), BoxError> {
        let ttl = ttl.min(MAX_TTL);
        if ttl.is_zero() || body.len() > self.max_entry_bytes {
            return Ok(());
        }
        let ms = ttl.as_millis() as u64;
        let mut value = Vec::with_capacity(8 + body.len());
        value.extend_from_slice(&(now_ms() + ms).to_be_bytes());
        value.extend_from_slice(&body);
        let hash = self.hash(key.group());
        let mut connection = self.connection.clone();
        let () = redis::pipe()
            .atomic()
            .cmd("HSET")
            .arg(&hash)
            .arg(key.entry())
            .arg(value)
            .ignore()
            // The hash lives as long as its longest-lived entry: set when it
            // has no expiry yet, lengthened when this one outlives it.
            .cmd("PEXPIRE")
            .arg(&hash)
            .arg(ms)
            .arg("NX")
            .ignore()
            .cmd("PEXPIRE")
            .arg(&hash)
            .arg(ms)
            .arg("GT")
            .ignore()
            .query_async(&mut connection)
            .await?;
        Ok(())
    }

    async fn invalidate(&self, group: &CacheGroup) -> Result<(), BoxError> {
        let mut connection = self.connection.clone();
        let () = redis::cmd("DEL").arg(self.hash(group)).query_async(&mut connection).await?;
        Ok(())
    }
}
