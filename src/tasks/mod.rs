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
pub(crate) const MAX_TASK_ID_BYTES: usize = 256;
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

    /// Reads a task object, as [`TaskInfo::from_wire`], that must also
    /// not name another task in its `_meta` (see [`check_related`]).
    pub(crate) fn from_wire_checked(task: &Map<String, Value>, what: &str) -> Result<TaskInfo, Error> {
        let info = TaskInfo::from_wire(task)?;
        check_related(task.get("_meta"), &info.id, what)?;
        Ok(info)
    }

    /// The wait before the next poll, within the client's bounds.
    pub(crate) fn next_poll(&self) -> Duration {
        self.poll_interval.unwrap_or(DEFAULT_POLL_INTERVAL).clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
    }
}

/// Checks that a message of the task `id` (its result, a `tasks/get`,
/// `tasks/cancel` or `tasks/update` answer, a status notification, in
/// either era), whose `_meta` is `meta`, does not say it belongs to
/// another task (`io.modelcontextprotocol/related-task`): one that names
/// another task, or names none in a malformed way, is `server_protocol`,
/// and nothing of it is taken. A message without the key is taken: its
/// request, or the id it carries, says which task it is about.
pub(crate) fn check_related(meta: Option<&Value>, id: &str, what: &str) -> Result<(), Error> {
    let Some(related) = meta.and_then(|m| m.get(crate::protocol::tasks::RELATED_TASK_META_KEY)) else {
        return Ok(());
    };
    match related.get("taskId").and_then(Value::as_str) {
        Some(named) if named == id => Ok(()),
        named => Err(Error::new(
            FailureClass::ServerProtocol,
            format!(
                "the {what} belongs to another task ({}) than {:?}",
                named.map_or_else(
                    || "a malformed related-task".to_owned(),
                    |n| format!("{:?}", normalize_message(n, 64))
                ),
                normalize_message(id, 64)
            ),
        )),
    }
}

/// The most warnings one handle (and its clones) gives about reports that
/// contradict its task's final status; the rest are counted, not reported.
const MAX_CONTRADICTION_WARNINGS: u64 = 4;

/// What a handle listens with: the latest of its task, and how many
/// reports contradicted its final status.
///
/// A terminal status (completed, failed, cancelled) is final: once one is
/// heard, a later report of another status (a notification, a poll, a
/// clone's poll) is not applied, and is a warning instead (at most
/// [`MAX_CONTRADICTION_WARNINGS`] per handle; the last says the rest go
/// unreported). A later report of the same terminal status is applied (its
/// message or times may be newer).
#[derive(Debug)]
pub(crate) struct TaskWatch {
    latest: watch::Sender<Option<TaskInfo>>,
    contradictions: std::sync::atomic::AtomicU64,
}

/// What became of a report given to [`TaskWatch::publish`].
#[derive(Debug)]
pub(crate) enum Heard {
    /// It is now the latest.
    Applied,
    /// It contradicted the final status, which stays: the latest, and the
    /// warning to give (`None` past the bound).
    Contradicted(TaskInfo, Option<String>),
}

impl TaskWatch {
    /// A watch whose latest is `latest`.
    pub(crate) fn new(latest: Option<TaskInfo>) -> TaskWatch {
        TaskWatch { latest: watch::channel(latest).0, contradictions: Default::default() }
    }

    /// The latest heard.
    pub(crate) fn borrow(&self) -> watch::Ref<'_, Option<TaskInfo>> {
        self.latest.borrow()
    }

    /// Every change of the latest.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Option<TaskInfo>> {
        self.latest.subscribe()
    }

    /// Makes `info` the latest, waking receivers only when it changed,
    /// unless the latest is terminal and `info` says otherwise (see the
    /// type's docs); `source` names the report for the warning.
    pub(crate) fn publish(&self, info: &TaskInfo, source: &str) -> Heard {
        let mut kept = None;
        self.latest.send_if_modified(|latest| match latest {
            Some(last) if last.status.is_terminal() && last.status != info.status => {
                kept = Some(last.clone());
                false
            }
            _ => {
                let changed = latest.as_ref() != Some(info);
                *latest = Some(info.clone());
                changed
            }
        });
        let Some(kept) = kept else { return Heard::Applied };
        let n = self.contradictions.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let warning = (n <= MAX_CONTRADICTION_WARNINGS).then(|| {
            let rest = if n == MAX_CONTRADICTION_WARNINGS { "; further ones are not reported" } else { "" };
            format!(
                "task {:?}: ignored a {source} saying {} after it was {} (a final status){rest}",
                normalize_message(&kept.id, 64),
                info.status,
                kept.status
            )
        });
        Heard::Contradicted(kept, warning)
    }
}

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
    /// (or names another in its `_meta`) is the returned error (for a
    /// warning), and feeds nobody; one that contradicts a handle's final
    /// status is not applied there, and the warnings to give are returned.
    pub(crate) fn status(&self, params: Option<&Value>) -> Result<Vec<String>, Error> {
        let Some(task) = params.and_then(Value::as_object) else {
            return Err(Error::new(
                FailureClass::ServerProtocol,
                "a task status notification without a task",
            ));
        };
        let info = TaskInfo::from_wire_checked(task, "task status notification")?;
        let live: Vec<Arc<TaskWatch>> = {
            let mut watchers = self.watchers.lock().expect("task feed lock");
            let Some(list) = watchers.get_mut(&info.id) else { return Ok(Vec::new()) };
            list.retain(|w| w.strong_count() > 0);
            list.iter().filter_map(Weak::upgrade).collect()
        };
        let mut warnings = Vec::new();
        for watch in live {
            if let Heard::Contradicted(_, Some(warning)) = watch.publish(&info, "status notification") {
                warnings.push(warning);
            }
        }
        Ok(warnings)
    }
}
