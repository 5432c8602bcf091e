//! Where the tasks this client started are recorded, so that a host that
//! restarts (or another replica) can list them and take them up again:
//! the [`TaskStore`] trait, [`MemoryTaskStore`] (the default, one per
//! process) and [`FileTaskStore`]; `RedisTaskStore`
//! with the feature `redis`.
//!
//! A record is what it takes to find the task again: the binding that
//! started it, the server's task id, the tool, when it started, its TTL and
//! the last status seen. It is kept until the task's TTL has passed (the
//! server may delete the task then), and never longer than
//! [`MAX_RECORD_AGE`]; a store holds at most [`MAX_TASK_RECORDS`], the
//! oldest going first.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use super::TaskStatus;
use crate::error::{normalize_message, Error, FailureClass};
use crate::files::{hex_name, read_bounded, remove, write_private};

/// The most records a store keeps (the oldest go first).
pub const MAX_TASK_RECORDS: usize = 4096;
/// The longest a record is kept, whatever the task's TTL: 7 days.
pub const MAX_RECORD_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// The largest record read back (a file, a Redis value).
pub(crate) const MAX_RECORD_BYTES: u64 = 16 * 1024;

/// A task this client started, as a [`TaskStore`] keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The binding that started it: take it up again with
    /// [`Binding::task`](crate::Binding::task) on a binding of that name.
    pub binding: String,
    /// The server's task id.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// When the client started it.
    #[serde(rename = "createdMs", with = "epoch_millis")]
    pub created: SystemTime,
    /// The TTL the server gave the task; `None`: unlimited or unsaid.
    #[serde(rename = "ttlMs", with = "opt_millis")]
    pub ttl: Option<Duration>,
    /// The last status the client saw.
    pub status: TaskStatus,
}

impl TaskRecord {
    /// When the record may be forgotten: at the end of the task's TTL, at
    /// most [`MAX_RECORD_AGE`] after its start.
    pub fn expires_at(&self) -> SystemTime {
        self.created + self.ttl.unwrap_or(MAX_RECORD_AGE).min(MAX_RECORD_AGE)
    }

    fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at() <= now
    }

    /// The key of the record: binding and id, which neither may forge.
    pub(crate) fn key(binding: &str, id: &str) -> String {
        format!("{binding}\n{id}")
    }
}

/// Keeps the records of started tasks. Every method is bounded: a store
/// that cannot answer fails with a classified error, and the binding that
/// asked carries on (a failure to record costs the record, never the
/// call; see [`Definition::task_store`](crate::Definition::task_store)).
#[async_trait]
pub trait TaskStore: Send + Sync + fmt::Debug {
    /// Keeps `record`, replacing the one of the same binding and id.
    async fn save(&self, record: &TaskRecord) -> Result<(), Error>;
    /// The record of task `id` of `binding`, unless it has expired.
    async fn load(&self, binding: &str, id: &str) -> Result<Option<TaskRecord>, Error>;
    /// Every record that has not expired, oldest first.
    async fn list(&self) -> Result<Vec<TaskRecord>, Error>;
    /// Forgets the record of task `id` of `binding` (none is no error).
    async fn remove(&self, binding: &str, id: &str) -> Result<(), Error>;
}

/// Oldest first, then by binding and id, so that a listing is stable.
pub(crate) fn sort_records(records: &mut [TaskRecord]) {
    records.sort_by(|a, b| (a.created, &a.binding, &a.id).cmp(&(b.created, &b.binding, &b.id)));
}

/// Records in this process's memory, lost when it ends.
#[derive(Debug, Default, Clone)]
pub struct MemoryTaskStore {
    records: Arc<Mutex<HashMap<String, TaskRecord>>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The store every definition records into unless given another: one
    /// per process, so that a host's bindings share it.
    pub(crate) fn process_wide() -> Arc<dyn TaskStore> {
        static STORE: OnceLock<Arc<dyn TaskStore>> = OnceLock::new();
        STORE.get_or_init(|| Arc::new(MemoryTaskStore::new())).clone()
    }
}

#[async_trait]
impl TaskStore for MemoryTaskStore {
    async fn save(&self, record: &TaskRecord) -> Result<(), Error> {
        let now = SystemTime::now();
        let mut records = self.records.lock().expect("task records lock");
        let key = TaskRecord::key(&record.binding, &record.id);
        if !records.contains_key(&key) && records.len() >= MAX_TASK_RECORDS {
            records.retain(|_, r| !r.is_expired(now));
            if records.len() >= MAX_TASK_RECORDS {
                let oldest = records.iter().min_by_key(|(_, r)| r.created).map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    records.remove(&oldest);
                }
            }
        }
        records.insert(key, record.clone());
        Ok(())
    }

    async fn load(&self, binding: &str, id: &str) -> Result<Option<TaskRecord>, Error> {
        let records = self.records.lock().expect("task records lock");
        let record = records.get(&TaskRecord::key(binding, id));
        Ok(record.filter(|r| !r.is_expired(SystemTime::now())).cloned())
    }

    async fn list(&self) -> Result<Vec<TaskRecord>, Error> {
        let now = SystemTime::now();
        let mut records = self.records.lock().expect("task records lock");
        records.retain(|_, r| !r.is_expired(now));
        let mut list: Vec<TaskRecord> = records.values().cloned().collect();
        sort_records(&mut list);
        Ok(list)
    }

    async fn remove(&self, binding: &str, id: &str) -> Result<(), Error> {
        self.records.lock().expect("task records lock").remove(&TaskRecord::key(binding, id));
        Ok(())
    }
}

/// Records in files, one per task, in a directory the caller names
/// (created `0700`; files `0600`, replaced atomically, named by the SHA-256
/// of binding and id). Processes on one machine may share the directory:
/// each writes only whole files. An unreadable file costs only its record
/// (a warning in `tracing`); an expired one is deleted when seen. At most
/// [`MAX_TASK_RECORDS`] files are read by [`TaskStore::list`].
#[derive(Debug, Clone)]
pub struct FileTaskStore {
    dir: PathBuf,
}

impl FileTaskStore {
    /// A store in `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileTaskStore { dir: dir.into() }
    }

    fn path_for(&self, binding: &str, id: &str) -> PathBuf {
        self.dir.join(file_name(binding, id))
    }
}

/// The file of task `id` of `binding`.
fn file_name(binding: &str, id: &str) -> String {
    format!("task-{}.json", hex_name(&TaskRecord::key(binding, id)))
}

fn store_error(e: io::Error) -> Error {
    Error::new(
        FailureClass::TransportClosed,
        format!("the task store failed: {}", normalize_message(&e.to_string(), 256)),
    )
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> io::Result<T> + Send + 'static) -> Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| store_error(io::Error::other(e.to_string())))?
        .map_err(store_error)
}

/// Reads one record file: `None` when there is none, or it has expired
/// (then it is deleted). A file whose name is not its record's (copied or
/// renamed over another) is refused.
fn read_record(path: &std::path::Path) -> io::Result<Option<TaskRecord>> {
    let Some(body) = read_bounded(path, MAX_RECORD_BYTES, "task record file")? else { return Ok(None) };
    let record: TaskRecord = serde_json::from_slice(&body)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("task record file: {e}")))?;
    let named = path.file_name().and_then(|n| n.to_str());
    if named != Some(file_name(&record.binding, &record.id).as_str()) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the task record file is for another task"));
    }
    if record.is_expired(SystemTime::now()) {
        let _ = remove(path);
        return Ok(None);
    }
    Ok(Some(record))
}

#[async_trait]
impl TaskStore for FileTaskStore {
    async fn save(&self, record: &TaskRecord) -> Result<(), Error> {
        let body = serde_json::to_vec(record).map_err(|e| store_error(io::Error::other(e.to_string())))?;
        let (dir, path) = (self.dir.clone(), self.path_for(&record.binding, &record.id));
        blocking(move || write_private(&dir, &path, &body)).await
    }

    async fn load(&self, binding: &str, id: &str) -> Result<Option<TaskRecord>, Error> {
        let path = self.path_for(binding, id);
        blocking(move || read_record(&path)).await
    }

    async fn list(&self) -> Result<Vec<TaskRecord>, Error> {
        let dir = self.dir.clone();
        blocking(move || {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(e),
            };
            let mut records = Vec::new();
            let names = entries.filter_map(Result::ok).map(|entry| entry.path()).filter(|path| {
                path.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("task-") && n.ends_with(".json"))
            });
            for path in names.take(MAX_TASK_RECORDS) {
                match read_record(&path) {
                    Ok(Some(record)) => records.push(record),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "a task record file was skipped"),
                }
            }
            sort_records(&mut records);
            Ok(records)
        })
        .await
    }

    async fn remove(&self, binding: &str, id: &str) -> Result<(), Error> {
        let path = self.path_for(binding, id);
        blocking(move || remove(&path)).await
    }
}

/// `SystemTime` as milliseconds since the Unix epoch.
mod epoch_millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    pub(super) fn serialize<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(time.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SystemTime, D::Error> {
        let ms = u64::deserialize(deserializer)?;
        UNIX_EPOCH
            .checked_add(Duration::from_millis(ms))
            .ok_or_else(|| serde::de::Error::custom("a time out of range"))
    }
}

/// `Option<Duration>` as milliseconds or `null`.
mod opt_millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(super) fn serialize<S: Serializer>(
        duration: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        crate::serialize::opt_millis(duration, serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(deserializer)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(binding: &str, id: &str, age: Duration, ttl: Option<Duration>) -> TaskRecord {
        TaskRecord {
            binding: binding.into(),
            id: id.into(),
            tool: "slow".into(),
            // Whole milliseconds, as the stores keep it.
            created: std::time::UNIX_EPOCH
                + Duration::from_millis(
                    (SystemTime::now() - age).duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
                        as u64,
                ),
            ttl,
            status: TaskStatus::Working,
        }
    }

    const HOUR: Duration = Duration::from_secs(3600);

    async fn keeps_replaces_expires_and_removes(store: &dyn TaskStore) {
        let first = record("a", "t-1", HOUR, Some(2 * HOUR));
        store.save(&first).await.unwrap();
        store.save(&record("b", "t-1", Duration::ZERO, None)).await.unwrap();
        // Its TTL has passed: the server may have deleted the task.
        store.save(&record("a", "gone", 2 * HOUR, Some(HOUR))).await.unwrap();
        // No TTL: kept for MAX_RECORD_AGE at most.
        store.save(&record("a", "ancient", MAX_RECORD_AGE + HOUR, None)).await.unwrap();
        let ids: Vec<(String, String)> =
            store.list().await.unwrap().into_iter().map(|r| (r.binding, r.id)).collect();
        assert_eq!(ids, [("a".to_string(), "t-1".to_string()), ("b".into(), "t-1".into())]);
        assert_eq!(store.load("a", "t-1").await.unwrap(), Some(first.clone()));
        assert_eq!(store.load("a", "gone").await.unwrap(), None);
        assert_eq!(store.load("c", "t-1").await.unwrap(), None);

        let done = TaskRecord { status: TaskStatus::Completed, ..first };
        store.save(&done).await.unwrap();
        assert_eq!(store.load("a", "t-1").await.unwrap().unwrap().status, TaskStatus::Completed);
        store.remove("a", "t-1").await.unwrap();
        store.remove("a", "t-1").await.unwrap();
        assert_eq!(store.list().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn the_memory_store_keeps_replaces_expires_and_removes() {
        keeps_replaces_expires_and_removes(&MemoryTaskStore::new()).await;
    }

    #[tokio::test]
    async fn the_file_store_keeps_replaces_expires_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileTaskStore::new(dir.path().join("tasks"));
        assert_eq!(store.list().await.unwrap(), vec![], "no directory yet is no error");
        keeps_replaces_expires_and_removes(&store).await;
        // The expired ones were deleted when seen.
        assert_eq!(std::fs::read_dir(dir.path().join("tasks")).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn record_files_are_private_and_a_bad_one_costs_only_itself() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let store = FileTaskStore::new(dir.path());
        store.save(&record("a", "t-1", Duration::ZERO, None)).await.unwrap();
        let path = store.path_for("a", "t-1");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::write(dir.path().join("task-bad.json"), b"{not json").unwrap();
        std::fs::write(dir.path().join("task-big.json"), vec![b' '; MAX_RECORD_BYTES as usize + 1]).unwrap();
        // A file renamed to another task's name is not taken for it.
        std::fs::copy(&path, store.path_for("a", "t-2")).unwrap();
        assert!(store.load("a", "t-2").await.is_err());
        let listed = store.list().await.unwrap();
        assert_eq!(listed.len(), 1, "only the good file: {listed:?}");
        assert_eq!(listed[0].id, "t-1");
    }

    #[tokio::test]
    async fn the_memory_store_is_bounded_and_drops_the_oldest() {
        let store = MemoryTaskStore::new();
        for i in 0..MAX_TASK_RECORDS + 5 {
            let age = Duration::from_secs((MAX_TASK_RECORDS + 5 - i) as u64);
            store.save(&record("a", &format!("t-{i}"), age, None)).await.unwrap();
        }
        let listed = store.list().await.unwrap();
        assert_eq!(listed.len(), MAX_TASK_RECORDS);
        assert_eq!(listed[0].id, "t-5", "the five oldest went first");
    }
}
