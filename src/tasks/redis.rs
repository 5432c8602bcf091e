//! [`RedisTaskStore`]: the records of started tasks in a Redis server,
//! shared by every replica of a host that points at it.

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::store::{sort_records, TaskRecord, TaskStore, MAX_RECORD_BYTES, MAX_TASK_RECORDS};
use super::MAX_TASK_ID_BYTES;
use crate::cache::redis::{bounded, connect, now_ms, RedisFailure, DEFAULT_REDIS_TIMEOUT};
use crate::error::{Error, FailureClass};
use crate::files::hex_name;
use crate::store_record::{self, Kind, Unreadable};

/// A [`TaskStore`] in a Redis server (feature `redis`): what one replica
/// starts, another lists and takes up again.
///
/// # Layout
///
/// One string per record, at `{prefix}:task:{sha256(binding, id)}`, holding
/// its JSON, which Redis expires at the record's
/// [`expires_at`](TaskRecord::expires_at) (`PEXPIREAT`); and a sorted set
/// `{prefix}:tasks` of those keys scored by the same instant, which
/// [`TaskStore::list`] reads (after trimming what has expired) and
/// [`TaskStore::save`] trims to [`MAX_TASK_RECORDS`], the oldest first.
/// Both are written in one transaction. A value is a format tag (`mcs`,
/// the format version, a kind byte) and the record's JSON.
///
/// # Faults
///
/// Each command is bounded by 250 ms and each operation by
/// [`DEFAULT_REDIS_TIMEOUT`](crate::cache::DEFAULT_REDIS_TIMEOUT) (or
/// [`with_timeout`](Self::with_timeout)): a paused, restarting or absent
/// server fails the operation in time with `transport_closed`, and a
/// server full under `maxmemory` with `noeviction` fails a save with
/// `limit_exceeded` (a record that cannot be written is always an error of
/// that call, never a silent loss). The URL, which may hold a password,
/// and the records are never quoted.
///
/// What is read back is checked as a server's answer is: a value of a
/// newer format version, that is not this crate's, over 16 KiB, for
/// another task than its key names, or whose binding, id or tool is empty,
/// too long or holds control characters, is skipped (a `tracing` warning
/// that never quotes it), as if there were none.
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: ConnectionManager,
    prefix: String,
    timeout: Duration,
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

fn failed(e: RedisFailure) -> Error {
    e.error("task store")
}

fn expires_ms(record: &TaskRecord) -> u64 {
    record.expires_at().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
}

impl RedisTaskStore {
    /// Connects to the Redis server at `url`, as
    /// [`RedisCache::connect`](crate::cache::RedisCache::connect) does.
    pub async fn connect(url: &str) -> Result<RedisTaskStore, Error> {
        Ok(RedisTaskStore {
            connection: connect(url).await?,
            prefix: "mcp-stack".into(),
            timeout: DEFAULT_REDIS_TIMEOUT,
        })
    }

    /// Bounds each operation (default
    /// [`DEFAULT_REDIS_TIMEOUT`](crate::cache::DEFAULT_REDIS_TIMEOUT)).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Keys start with `prefix` and a colon instead of `mcp-stack:`.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn key(&self, binding: &str, id: &str) -> String {
        format!("{}:task:{}", self.prefix, hex_name(&TaskRecord::key(binding, id)))
    }

    fn index(&self) -> String {
        format!("{}:tasks", self.prefix)
    }
}

/// The longest binding name or tool name believed in a record read back
/// (a raw name's bound).
const MAX_NAME_BYTES: usize = 512;

/// Whether `name` is a name a record may carry: not empty, bounded, no
/// control characters.
fn plausible(name: &str, max: usize) -> bool {
    !name.is_empty() && name.len() <= max && !name.chars().any(char::is_control)
}

/// A record read back: in its envelope, bounded, checked as a server's
/// task would be, and refused unless it is the one the key names.
fn parse(body: &[u8], key: Option<(&str, &str)>) -> Option<TaskRecord> {
    match check(body, key) {
        Ok(record) => Some(record),
        Err(why) => {
            store_record::skipped("task store", why);
            None
        }
    }
}

fn check(body: &[u8], key: Option<(&str, &str)>) -> Result<TaskRecord, Unreadable> {
    let json = store_record::open_as(body, Kind::Task, MAX_RECORD_BYTES as usize)?;
    let record: TaskRecord = serde_json::from_slice(json).map_err(|_| Unreadable::Invalid)?;
    let sound = plausible(&record.binding, MAX_NAME_BYTES)
        && plausible(&record.id, MAX_TASK_ID_BYTES)
        && plausible(&record.tool, MAX_NAME_BYTES)
        // A record from the future (past a clock skew) would outlive its bound.
        && record.created <= SystemTime::now() + Duration::from_secs(300)
        && key.is_none_or(|(b, i)| b == record.binding && i == record.id);
    if sound {
        Ok(record)
    } else {
        Err(Unreadable::Invalid)
    }
}

#[async_trait]
impl TaskStore for RedisTaskStore {
    async fn save(&self, record: &TaskRecord) -> Result<(), Error> {
        let expires = expires_ms(record);
        if expires <= now_ms() {
            return Ok(());
        }
        let json = serde_json::to_vec(record)
            .map_err(|e| Error::new(FailureClass::InvalidArguments, e.to_string()))?;
        if json.len() as u64 > MAX_RECORD_BYTES {
            return Err(Error::new(
                FailureClass::LimitExceeded,
                format!("the task record is larger than {MAX_RECORD_BYTES} bytes"),
            ));
        }
        let body = store_record::wrap(Kind::Task, &json);
        let (key, index) = (self.key(&record.binding, &record.id), self.index());
        let mut connection = self.connection.clone();
        bounded(self.timeout, async {
            redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(&key)
                .arg(body)
                .arg("PXAT")
                .arg(expires)
                .ignore()
                .cmd("ZADD")
                .arg(&index)
                .arg(expires)
                .arg(&key)
                .ignore()
                .cmd("ZREMRANGEBYSCORE")
                .arg(&index)
                .arg("-inf")
                .arg(now_ms())
                .ignore()
                // Past the bound, the records closest to expiry go.
                .cmd("ZREMRANGEBYRANK")
                .arg(&index)
                .arg(0)
                .arg(-(MAX_TASK_RECORDS as i64) - 1)
                .ignore()
                .query_async::<()>(&mut connection)
                .await
        })
        .await
        .map_err(failed)
    }

    async fn load(&self, binding: &str, id: &str) -> Result<Option<TaskRecord>, Error> {
        let mut connection = self.connection.clone();
        let key = self.key(binding, id);
        let body: Option<Vec<u8>> = match bounded(self.timeout, async {
            redis::cmd("GET").arg(&key).query_async(&mut connection).await
        })
        .await
        {
            Ok(body) => body,
            Err(e) if e.is_wrong_type() => {
                store_record::skipped("task store", Unreadable::OtherKind);
                None
            }
            Err(e) => return Err(failed(e)),
        };
        let record = body.and_then(|body| parse(&body, Some((binding, id))));
        Ok(record.filter(|r| r.expires_at() > SystemTime::now()))
    }

    async fn list(&self) -> Result<Vec<TaskRecord>, Error> {
        let mut connection = self.connection.clone();
        let index = self.index();
        let bodies = bounded(self.timeout, async {
            // Members as bytes: a member that is not UTF-8 is skipped below,
            // never quoted in a conversion error.
            let keys: Vec<Vec<u8>> = redis::cmd("ZRANGE")
                .arg(&index)
                .arg(now_ms() + 1)
                .arg("+inf")
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(0)
                .arg(MAX_TASK_RECORDS)
                .query_async(&mut connection)
                .await?;
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let bodies: Vec<Option<Vec<u8>>> =
                redis::cmd("MGET").arg(&keys).query_async(&mut connection).await?;
            Ok(keys.into_iter().zip(bodies).collect::<Vec<_>>())
        })
        .await
        .map_err(failed)?;
        let now = SystemTime::now();
        let mut records: Vec<TaskRecord> = bodies
            .into_iter()
            .filter_map(|(key, body)| {
                parse(&body?, None).filter(|r| key == self.key(&r.binding, &r.id).as_bytes())
            })
            .filter(|r| r.expires_at() > now)
            .collect();
        sort_records(&mut records);
        Ok(records)
    }

    async fn remove(&self, binding: &str, id: &str) -> Result<(), Error> {
        let key = self.key(binding, id);
        let index = self.index();
        let mut connection = self.connection.clone();
        bounded(self.timeout, async {
            redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(&key)
                .ignore()
                .cmd("ZREM")
                .arg(&index)
                .arg(&key)
                .ignore()
                .query_async::<()>(&mut connection)
                .await
        })
        .await
        .map_err(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TaskStatus;
    use std::time::UNIX_EPOCH;

    fn record() -> TaskRecord {
        TaskRecord {
            binding: "gateway".into(),
            id: "task-1".into(),
            tool: "research".into(),
            created: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            ttl: Some(Duration::from_secs(600)),
            status: TaskStatus::Working,
        }
    }

    fn stored(record: &TaskRecord) -> Vec<u8> {
        store_record::wrap(Kind::Task, &serde_json::to_vec(record).unwrap())
    }

    #[test]
    fn records_read_back_are_checked_as_a_servers_tasks_are() {
        let good = record();
        assert_eq!(check(&stored(&good), Some(("gateway", "task-1"))), Ok(good.clone()));
        assert_eq!(check(&stored(&good), Some(("gateway", "task-2"))), Err(Unreadable::Invalid));
        for bad in [
            TaskRecord { id: String::new(), ..good.clone() },
            TaskRecord { id: "x".repeat(MAX_TASK_ID_BYTES + 1), ..good.clone() },
            TaskRecord { id: "task\n1".into(), ..good.clone() },
            TaskRecord { binding: "\u{7}".into(), ..good.clone() },
            TaskRecord { tool: "t".repeat(MAX_NAME_BYTES + 1), ..good.clone() },
            TaskRecord { created: SystemTime::now() + Duration::from_secs(86_400), ..good.clone() },
        ] {
            assert_eq!(check(&stored(&bad), None), Err(Unreadable::Invalid), "{bad:?}");
        }
        // Bare JSON (no envelope), garbage, a newer format, another kind.
        assert_eq!(check(&serde_json::to_vec(&good).unwrap(), None), Err(Unreadable::NotOurs));
        assert_eq!(check(b"\xde\xad\xbe\xef", None), Err(Unreadable::NotOurs));
        let mut newer = stored(&good);
        newer[3] = store_record::VERSION + 1;
        assert_eq!(check(&newer, None), Err(Unreadable::Newer(store_record::VERSION + 1)));
        assert_eq!(check(&store_record::wrap(Kind::Tokens, b"{}"), None), Err(Unreadable::OtherKind));
        assert_eq!(check(&store_record::wrap(Kind::Task, b"{\"id\":1}"), None), Err(Unreadable::Invalid));
        let huge = store_record::wrap(Kind::Task, &vec![b' '; MAX_RECORD_BYTES as usize + 1]);
        assert_eq!(check(&huge, None), Err(Unreadable::TooLarge));
    }
}
