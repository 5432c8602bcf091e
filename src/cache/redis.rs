//! [`RedisCache`]: public cached results kept in a Redis server, shared by
//! every process of a host that points at it.

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{CacheGroup, CacheKey, ResponseCache, MAX_TTL};
use crate::error::{normalize_message, BoxError, Error, FailureClass};
use crate::store_record::{self, Kind, Unreadable};

/// A [`ResponseCache`] in a Redis server (feature `redis`), for the
/// public-scope results a host's replicas share
/// ([`Caching::shared`](super::Caching::shared)).
///
/// # Layout
///
/// One hash per [`CacheGroup`], at `{prefix}:{partition}:{group name}`
/// (`mcp-stack` is the default prefix); one field per entry, named by
/// [`CacheKey::entry`]. A field holds a format tag (`mcs`, the format
/// version, a kind byte), the entry's expiry (milliseconds since the Unix
/// epoch, 8 bytes big-endian), then the result's JSON.
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
/// Each command is bounded by a response timeout (250 ms) and each
/// operation by [`DEFAULT_REDIS_TIMEOUT`] (or
/// [`with_timeout`](Self::with_timeout)); the connection is re-established
/// by redis-rs's connection manager after a failure. A failure (the server
/// gone, restarting, paused, or full under `maxmemory` with `noeviction`)
/// is a miss for the binding, never a failed request.
///
/// What is read back is not trusted: a field of a newer format version,
/// of another kind, that is not this crate's at all, larger than the entry
/// bound, or stamped to live past [`MAX_TTL`] from now is a miss (with a
/// `tracing` warning that never quotes it), and the binding checks the
/// JSON of a hit as it checks a server's answer.
#[derive(Clone)]
pub struct RedisCache {
    connection: ConnectionManager,
    prefix: String,
    max_entry_bytes: usize,
    timeout: Duration,
}

impl fmt::Debug for RedisCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCache")
            .field("prefix", &self.prefix)
            .field("max_entry_bytes", &self.max_entry_bytes)
            .field("timeout", &self.timeout)
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
        Ok(RedisCache {
            connection,
            prefix: "mcp-stack".into(),
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
            timeout: DEFAULT_REDIS_TIMEOUT,
        })
    }

    /// Bounds each operation (default [`DEFAULT_REDIS_TIMEOUT`]); past it,
    /// a lookup is a miss and a store is skipped.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
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

/// How long one operation of a Redis store (its commands together) may
/// take unless the store is told otherwise: 1 s. A paused, restarting or
/// unreachable server costs a caller at most this, never a hang.
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_secs(1);

/// Why a Redis operation failed, in words that never quote a value, a key
/// or the URL (redis-rs's own messages may quote a reply, so they are not
/// passed on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RedisFailure {
    /// No answer within the bound (a paused or sleeping server, a
    /// reconnection that takes too long).
    TimedOut(Duration),
    /// The server refused a write: `maxmemory` reached with `noeviction`.
    Full,
    /// The connection was lost or could not be made.
    Unreachable,
    /// Any other error reply; its code only (`WRONGTYPE`, `NOAUTH`, ...).
    Refused(String),
}

impl RedisFailure {
    fn from_redis(e: &redis::RedisError) -> RedisFailure {
        // A transaction one of whose commands was refused (EXECABORT)
        // names why in the commands' own errors.
        let refused = e.clone().into_server_errors().unwrap_or_default();
        if refused.iter().any(|(_, error)| error.code() == "OOM") {
            return RedisFailure::Full;
        }
        match e.code() {
            Some("OOM") => RedisFailure::Full,
            Some(code) => {
                let code: String =
                    code.chars().take(32).filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                RedisFailure::Refused(code)
            }
            None if e.is_timeout() => RedisFailure::TimedOut(Duration::ZERO),
            None => RedisFailure::Unreachable,
        }
    }

    /// The crate's class: `limit_exceeded` for a full server,
    /// `transport_closed` for the rest (nothing was stored).
    pub(crate) fn class(&self) -> FailureClass {
        match self {
            RedisFailure::Full => FailureClass::LimitExceeded,
            _ => FailureClass::TransportClosed,
        }
    }

    /// The `io::ErrorKind` the token store's errors carry.
    #[cfg(feature = "oauth")]
    pub(crate) fn io_kind(&self) -> std::io::ErrorKind {
        match self {
            RedisFailure::TimedOut(_) => std::io::ErrorKind::TimedOut,
            RedisFailure::Full => std::io::ErrorKind::StorageFull,
            RedisFailure::Unreachable => std::io::ErrorKind::ConnectionAborted,
            RedisFailure::Refused(_) => std::io::ErrorKind::Other,
        }
    }

    /// Whether the key holds a value of another Redis type: garbage under
    /// one of our keys, which a read takes as a miss.
    pub(crate) fn is_wrong_type(&self) -> bool {
        matches!(self, RedisFailure::Refused(code) if code == "WRONGTYPE")
    }

    /// The crate's error for a failed operation of `store`.
    pub(crate) fn error(&self, store: &str) -> Error {
        Error::new(self.class(), format!("the Redis {store} failed: {self}"))
    }
}

impl fmt::Display for RedisFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisFailure::TimedOut(bound) if bound.is_zero() => {
                f.write_str("the server did not answer in time")
            }
            RedisFailure::TimedOut(bound) => write!(f, "the server did not answer within {bound:?}"),
            RedisFailure::Full => f.write_str("the server is full (maxmemory) and refused the write"),
            RedisFailure::Unreachable => f.write_str("the connection to the server was lost"),
            RedisFailure::Refused(code) => write!(f, "the server refused the command ({code})"),
        }
    }
}

/// Runs one store operation within `bound`; its failure, classified.
pub(crate) async fn bounded<T>(
    bound: Duration,
    operation: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, RedisFailure> {
    match tokio::time::timeout(bound, operation).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(RedisFailure::from_redis(&e)),
        Err(_) => Err(RedisFailure::TimedOut(bound)),
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
}

/// The JSON of a cached field, when it is one of ours, fresh, and within
/// the bounds; why not otherwise (`None` reason: merely expired).
fn unpack(value: &[u8], max_entry_bytes: usize, now: u64) -> Result<&[u8], Option<Unreadable>> {
    let payload =
        store_record::open_as(value, Kind::Cached, max_entry_bytes.saturating_add(8)).map_err(Some)?;
    let Some((stamp, body)) = payload.split_first_chunk::<8>() else { return Err(Some(Unreadable::Invalid)) };
    let expires = u64::from_be_bytes(*stamp);
    if expires <= now {
        return Err(None);
    }
    if expires > now.saturating_add(MAX_TTL.as_millis() as u64 + 60_000) {
        // Nothing this crate writes lives that long: forged.
        return Err(Some(Unreadable::Invalid));
    }
    Ok(body)
}

#[async_trait]
impl ResponseCache for RedisCache {
    async fn get(&self, key: &CacheKey) -> Result<Option<Vec<u8>>, BoxError> {
        let hash = self.hash(key.group());
        let mut connection = self.connection.clone();
        let value: Option<Vec<u8>> = match bounded(self.timeout, async {
            redis::cmd("HGET").arg(&hash).arg(key.entry()).query_async(&mut connection).await
        })
        .await
        {
            Ok(value) => value,
            Err(e) if e.is_wrong_type() => {
                store_record::skipped("cache", Unreadable::OtherKind);
                return Ok(None);
            }
            Err(e) => return Err(e.error("cache").into()),
        };
        let Some(value) = value else { return Ok(None) };
        match unpack(&value, self.max_entry_bytes, now_ms()) {
            Ok(body) => Ok(Some(body.to_vec())),
            Err(why) => {
                if let Some(why) = why {
                    store_record::skipped("cache", why);
                }
                // Expired, or not ours to serve: gone, so nobody reads it again.
                let _ = bounded(self.timeout, async {
                    redis::cmd("HDEL").arg(&hash).arg(key.entry()).query_async::<()>(&mut connection).await
                })
                .await;
                Ok(None)
            }
        }
    }

    async fn put(&self, key: &CacheKey, body: Vec<u8>, ttl: Duration) -> Result<(), BoxError> {
        let ttl = ttl.min(MAX_TTL);
        if ttl.is_zero() || body.len() > self.max_entry_bytes {
            return Ok(());
        }
        let ms = ttl.as_millis() as u64;
        let mut payload = Vec::with_capacity(8 + body.len());
        payload.extend_from_slice(&(now_ms() + ms).to_be_bytes());
        payload.extend_from_slice(&body);
        let value = store_record::wrap(Kind::Cached, &payload);
        let hash = self.hash(key.group());
        let mut connection = self.connection.clone();
        bounded(self.timeout, async {
            redis::pipe()
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
                .query_async::<()>(&mut connection)
                .await
        })
        .await
        .map_err(|e| e.error("cache"))?;
        Ok(())
    }

    async fn invalidate(&self, group: &CacheGroup) -> Result<(), BoxError> {
        let mut connection = self.connection.clone();
        let hash = self.hash(group);
        bounded(self.timeout, async {
            redis::cmd("DEL").arg(&hash).query_async::<()>(&mut connection).await
        })
        .await
        .map_err(|e| e.error("cache"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_served_only_when_ours_fresh_and_bounded() {
        let now = 1_000_000;
        let field = |expires: u64, body: &[u8]| {
            let mut payload = expires.to_be_bytes().to_vec();
            payload.extend_from_slice(body);
            store_record::wrap(Kind::Cached, &payload)
        };
        assert_eq!(unpack(&field(now + 1, b"{}"), 16, now), Ok(&b"{}"[..]));
        assert_eq!(unpack(&field(now, b"{}"), 16, now), Err(None), "expired");
        assert_eq!(unpack(&field(u64::MAX, b"{}"), 16, now), Err(Some(Unreadable::Invalid)), "forged stamp");
        assert_eq!(unpack(&field(now + 1, &[b' '; 17]), 16, now), Err(Some(Unreadable::TooLarge)));
        assert_eq!(
            unpack(&store_record::wrap(Kind::Cached, b"1234"), 16, now),
            Err(Some(Unreadable::Invalid))
        );
        assert_eq!(unpack(b"\x00\x00\x00\x00\x00\x0f\x42\x41{}", 16, now), Err(Some(Unreadable::NotOurs)));
        let mut newer = field(now + 1, b"{}");
        newer[3] += 1;
        assert!(matches!(unpack(&newer, 16, now), Err(Some(Unreadable::Newer(_)))));
    }
}
