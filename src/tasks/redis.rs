//! [`RedisTaskStore`]: the records of started tasks in a Redis server,
//! shared by every replica of a host that points at it.

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use super::store::{sort_records, TaskRecord, TaskStore, MAX_RECORD_BYTES, MAX_TASK_RECORDS};
use crate::cache::redis::{connect, now_ms};
use crate::error::{normalize_message, Error, FailureClass};
use crate::files::hex_name;

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
/// Both are written in one transaction. Each command is bounded by 250 ms;
/// the URL, which may hold a password, is never quoted.
#[derive(Clone)]
pub struct RedisTaskStore {
    connection: ConnectionManager,
    prefix: String,
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> Error {
    Error::new(
        FailureClass::TransportClosed,
        format!("the Redis task store failed: {}", normalize_message(&e.to_string(), 256)),
    )
}

fn expires_ms(record: &TaskRecord) -> u64 {
    record.expires_at().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
}

impl RedisTaskStore {
    /// Connects to the Redis server at `url`, as
    /// [`RedisCache::connect`](crate::cache::RedisCache::connect) does.
    pub async fn connect(url: &str) -> Result<RedisTaskStore, Error> {
        Ok(RedisTaskStore { connection: connect(url).await?, prefix: "mcp-stack".into() })
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

/// A record read back: bounded, and refused unless it is the one the key
/// names.
fn parse(body: &[u8], key: Option<(&str, &str)>) -> Option<TaskRecord> {
    if body.len() as u64 > MAX_RECORD_BYTES {
        tracing::warn!("a task record in Redis is larger than {MAX_RECORD_BYTES} bytes; skipped");
        return None;
    }
    match serde_json::from_slice::<TaskRecord>(body) {
        Ok(record) if key.is_none_or(|(b, i)| b == record.binding && i == record.id) => Some(record),
        Ok(_) => {
            tracing::warn!("a task record in Redis is for another task; skipped");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "a task record in Redis is not one; skipped");
            None
        }
    }
}

#[async_trait]
impl TaskStore for RedisTaskStore {
    async fn save(&self, record: &TaskRecord) -> Result<(), Error> {
        let expires = expires_ms(record);
        if expires <= now_ms() {
            return Ok(());
        }
        let body = serde_json::to_vec(record)
            .map_err(|e| Error::new(FailureClass::InvalidArguments, e.to_string()))?;
        let (key, index) = (self.key(&record.binding, &record.id), self.index());
        let mut connection = self.connection.clone();
        let () = redis::pipe()
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
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn load(&self, binding: &str, id: &str) -> Result<Option<TaskRecord>, Error> {
        let mut connection = self.connection.clone();
        let body: Option<Vec<u8>> = redis::cmd("GET")
            .arg(self.key(binding, id))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let record = body.and_then(|body| parse(&body, Some((binding, id))));
        Ok(record.filter(|r| r.expires_at() > SystemTime::now()))
    }

    async fn list(&self) -> Result<Vec<TaskRecord>, Error> {
        let mut connection = self.connection.clone();
        let index = self.index();
        let keys: Vec<String> = redis::cmd("ZRANGE")
            .arg(&index)
            .arg(now_ms() + 1)
            .arg("+inf")
            .arg("BYSCORE")
            .arg("LIMIT")
            .arg(0)
            .arg(MAX_TASK_RECORDS)
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let bodies: Vec<Option<Vec<u8>>> =
            redis::cmd("MGET").arg(&keys).query_async(&mut connection).await.map_err(failed)?;
        let now = SystemTime::now();
        let mut records: Vec<TaskRecord> = keys
            .iter()
            .zip(bodies)
            .filter_map(|(key, body)| parse(&body?, None).filter(|r| *key == self.key(&r.binding, &r.id)))
            .filter(|r| r.expires_at() > now)
            .collect();
        sort_records(&mut records);
        Ok(records)
    }

    async fn remove(&self, binding: &str, id: &str) -> Result<(), Error> {
        let key = self.key(binding, id);
        let mut connection = self.connection.clone();
        let () = redis::pipe()
            .atomic()
            .cmd("DEL")
            .arg(&key)
            .ignore()
            .cmd("ZREM")
            .arg(self.index())
            .arg(&key)
            .ignore()
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        Ok(())
    }
}
