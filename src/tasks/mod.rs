//! What a task is, as the client knows it: [`TaskStatus`] and
//! [`TaskInfo`], read and checked from what a server sends (a created
//! task, `tasks/get`, `tasks/list`, `notifications/tasks/status`), and the
//! feed that hands status notifications to the handles waiting on them.
//! The handle and the binding's methods are in `binding::tasks`.
//!
//! The records of the tasks this client started, kept so that a restarted
//! host or another replica can take them up again, are in a [`TaskStore`]:
//! [`MemoryTaskStore`] (the default), [`FileTaskStore`], and with the
//! feature `redis` `RedisTaskStore`.

pub(crate) mod held;
#[cfg(feature = "redis")]
mod redis;
mod store;

#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;
pub use store::{FileTaskStore, MemoryTaskStore, TaskRecord, TaskStore, MAX_RECORD_AGE, MAX_TASK_RECORDS};

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::watch;

use crate::error::{normalize_message, Error, FailureClass};

/// The shortest wait between two polls, whatever the server asks.
pub(crate) const MIN_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The longest wait between two polls, whatever the server asks.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);
/// The wait between polls when the server suggests none.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The longest task id taken from a server.
const MAX_TASK_ID_BYTES: usize = 256;
/// The longest status message kept (longer ones are cut).
const MAX_STATUS_MESSAGE_BYTES: usize = 1024;

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's input (elicitation, sampling).
    InputRequired,
    /// Done; its result is ready.
    Completed,
    /// Ended with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task can change no more.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// The status as the wire spells it (`working`, `input_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    fn parse(text: &str) -> Option<TaskStatus> {
        Some(match text {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the server last said of a task, checked: the id bounded, the
/// status one of the five, the message cut and its control characters
/// made visible.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInfo {
    /// The server's id for the task.
    pub id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What the server says of it, if anything.
    pub message: Option<String>,
    /// When the server created it (ISO 8601, as sent).
    pub created_at: Option<String>,
    /// When it last changed (ISO 8601, as sent).
    pub last_updated_at: Option<String>,
    /// How long the server keeps it from its creation; `None`: unlimited or
    /// not said.
    #[serde(rename = "ttlMs", serialize_with = "crate::serialize::opt_millis")]
    pub ttl: Option<Duration>,
    /// The wait between polls the server suggests (before the client's
    /// bounds).
    #[serde(rename = "pollIntervalMs", serialize_with = "crate::serialize::opt_millis")]
    pub poll_interval: Option<Duration>,
}

impl TaskInfo {
    /// Reads a task object (`Task` of 2025-11-25); fails with
    /// `server_protocol` on a missing or overlong id or an unknown status.
    pub(crate) fn from_wire(task: &Map<String, Value>) -> Result<TaskInfo, Error> {
        let refused = |why: String| Error::new(FailureClass::ServerProtocol, why);
        let id = match task.get("taskId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() && id.len() <= MAX_TASK_ID_BYTES && !id.chars().any(char::is_control) => id,
            Some(_) => {
                return Err(refused(format!(
                    "the server gave a task id that is empty, over {MAX_TASK_ID_BYTES} bytes or has control characters"
                )))
            }
            None => return Err(refused("the server's task has no taskId".into())),
        };
        let status = task.get("status").and_then(Value::as_str).unwrap_or_default();
        let Some(status) = TaskStatus::parse(status) else {
            return Err(refused(format!(
                "the server's task has an unknown status {:?}",
                normalize_message(status, 64)
            )));
        };
        let text =
            |key: &str, max: usize| task.get(key).and_then(Value::as_str).map(|s| normalize_message(s, max));
        // 2025-11-25 says `ttl` and `pollInterval`; the 2026-07-28
        // extension `ttlMs` and `pollIntervalMs`.
        let millis = |keys: [&str; 2]| {
            keys.iter().find_map(|key| task.get(*key)).and_then(Value::as_u64).map(Duration::from_millis)
        };
        Ok(TaskInfo {
            id: id.to_string(),
            status,
            message: text("statusMessage", MAX_STATUS_MESSAGE_BYTES),
            created_at: text("createdAt", 64),
            last_updated_at: text("lastUpdatedAt", 64),
            ttl: millis(["ttlMs", "ttl"]),
            poll_interval: millis(["pollIntervalMs", "pollInterval"]),
        })
    }

    /// The wait before the next poll, within the client's bounds.
    pub(crate) fn next_poll(&self) -> Duration {
        self.poll_interval.unwrap_or(DEFAULT_POLL_INTERVAL).clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
    }
}

/// What a handle listens with: the latest of its task.
pub(crate) type TaskWatch = watch::Sender<Option<TaskInfo>>;

/// The most tasks whose status notifications are listened for at once, per
/// binding; past it, the oldest are no longer fed (their handles still
/// poll).
const MAX_WATCHED_TASKS: usize = 4096;

/// Where `notifications/tasks/status` land: the live handles of each task,
/// held weakly (a dropped handle stops listening).
#[derive(Debug, Default)]
pub(crate) struct TaskFeed {
    watchers: Mutex<HashMap<String, Vec<Weak<TaskWatch>>>>,
}

impl TaskFeed {
    /// Feeds `watch` the status notifications of task `id`.
    pub(crate) fn watch(&self, id: &str, watch: &Arc<TaskWatch>) {
        let mut watchers = self.watchers.lock().expect("task feed lock");
        if watchers.len() >= MAX_WATCHED_TASKS && !watchers.contains_key(id) {
            watchers.retain(|_, list| {
                list.retain(|w| w.strong_count() > 0);
                !list.is_empty()
            });
            if watchers.len() >= MAX_WATCHED_TASKS {
                return;
            }
        }
        let list = watchers.entry(id.to_string()).or_default();
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(watch));
    }

    /// A `notifications/tasks/status`: the task it describes, to the
    /// handles listening for it. A notification that is not a valid task
    /// is the returned error (for a warning), and feeds nobody.
    pub(crate) fn status(&self, params: Option<&Value>) -> Result<(), Error> {
        let Some(task) = params.and_then(Value::as_object) else {
            return Err(Error::new(
                FailureClass::ServerProtocol,
                "a task status notification without a task",
            ));
        };
        let info = TaskInfo::from_wire(task)?;
        let live: Vec<Arc<TaskWatch>> = {
            let mut watchers = self.watchers.lock().expect("task feed lock");
            let Some(list) = watchers.get_mut(&info.id) else { return Ok(()) };
            list.retain(|w| w.strong_count() > 0);
            list.iter().filter_map(Weak::upgrade).collect()
        };
        for watch in live {
            publish(&watch, &info);
        }
        Ok(())
    }
}

/// Makes `info` the latest of `watch`, waking its receivers only when it
/// changed.
pub(crate) fn publish(watch: &TaskWatch, info: &TaskInfo) {
    watch.send_if_modified(|latest| {
        let changed = latest.as_ref() != Some(info);
        *latest = Some(info.clone());
        changed
    });
}
