//! Tasks held for a requester (2025-11-25, the receiver's side): work a
//! task-augmented request started, what `tasks/get`, `tasks/result`,
//! `tasks/list` and `tasks/cancel` answer of it, bounded in number and in
//! lifetime. The binding holds the tasks a server asked it to run
//! (task-augmented `elicitation/create` and `sampling/createMessage`); the
//! demo server holds its tool calls' the same way.
//!
//! At most [`MAX_HELD_TASKS`] are held at once (one more is refused, after
//! the expired ones are dropped), each for its TTL: the requester's, else
//! [`DEFAULT_TTL`], never more than [`MAX_TTL`]. Past it a task and its
//! outcome are gone, and asking after it is `-32602`, as for an id never
//! given.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::TaskStatus;
use crate::protocol::jsonrpc::codes;
use crate::protocol::ErrorObject;
use crate::serialize::format_rfc3339;

/// The most tasks held at once.
pub(crate) const MAX_HELD_TASKS: usize = 64;
/// A task's TTL when the requester asks for none: 5 minutes.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// The longest TTL granted: an hour.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(3600);
/// The wait between polls suggested to the requester.
const POLL_INTERVAL_MS: u64 = 500;
/// Tasks on one page of `tasks/list`.
const PAGE: usize = 20;

/// How the work ended: its result, or its JSON-RPC error.
pub(crate) type Outcome = Result<Value, ErrorObject>;

/// The tasks one side holds, by creation order.
pub(crate) struct HeldTasks {
    entries: Mutex<BTreeMap<u64, Entry>>,
    next: AtomicU64,
    /// What every id starts with (ids are the prefix and a sequence).
    prefix: String,
}

struct Entry {
    id: String,
    status: TaskStatus,
    message: Option<String>,
    created_at: String,
    updated_at: String,
    ttl_ms: u64,
    expires: Instant,
    /// Set once, when the task ends.
    outcome: watch::Sender<Option<Outcome>>,
    run: Option<AbortHandle>,
}

fn now() -> String {
    format_rfc3339(SystemTime::now())
}

fn unknown_task() -> ErrorObject {
    ErrorObject::new(codes::INVALID_PARAMS, "no such task (it may have expired)")
}

impl Entry {
    fn wire(&self) -> Value {
        let mut task = json!({
            "taskId": self.id,
            "status": self.status.as_str(),
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        });
        if let Some(message) = &self.message {
            task["statusMessage"] = json!(message);
        }
        task
    }
}

impl HeldTasks {
    /// An empty table whose ids start with `prefix`.
    pub(crate) fn new(prefix: impl Into<String>) -> Self {
        HeldTasks { entries: Mutex::new(BTreeMap::new()), next: AtomicU64::new(0), prefix: prefix.into() }
    }

    /// Forgets the tasks whose TTL has passed.
    fn sweep(entries: &mut BTreeMap<u64, Entry>) {
        let now = Instant::now();
        entries.retain(|_, entry| entry.expires > now);
    }

    /// Runs `f` on the live task `params.taskId` names.
    fn with<T>(&self, params: &Value, f: impl FnOnce(&mut Entry) -> T) -> Result<T, ErrorObject> {
        let id = params.get("taskId").and_then(Value::as_str).ok_or_else(unknown_task)?;
        let mut entries = self.entries.lock().expect("held tasks lock");
        Self::sweep(&mut entries);
        entries.values_mut().find(|e| e.id == id).map(f).ok_or_else(unknown_task)
    }

    /// A new `working` task, for a request whose `params.task` asks for
    /// `ttl` milliseconds: its id and the task as `CreateTaskResult`
    /// carries it. Refused (`-32603`) when [`MAX_HELD_TASKS`] are held.
    pub(crate) fn create(
        &self,
        params: &Value,
        message: Option<String>,
    ) -> Result<(String, Value), ErrorObject> {
        let ttl =
            params["task"]["ttl"].as_u64().map(Duration::from_millis).unwrap_or(DEFAULT_TTL).min(MAX_TTL);
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        let (outcome, _) = watch::channel(None);
        let created = now();
        let entry = Entry {
            id: format!("{}{seq}", self.prefix),
            status: TaskStatus::Working,
            message,
            created_at: created.clone(),
            updated_at: created,
            ttl_ms: ttl.as_millis() as u64,
            expires: Instant::now() + ttl,
            outcome,
            run: None,
        };
        let (id, task) = (entry.id.clone(), entry.wire());
        let mut entries = self.entries.lock().expect("held tasks lock");
        Self::sweep(&mut entries);
        if entries.len() >= MAX_HELD_TASKS {
            return Err(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!("already {MAX_HELD_TASKS} tasks held"),
            ));
        }
        entries.insert(seq, entry);
        Ok((id, task))
    }

    /// Ties the work running task `id` to it, so that a cancel stops it.
    pub(crate) fn attach(&self, id: &str, run: AbortHandle) {
        let _ = self.with(&json!({ "taskId": id }), |entry| match entry.status.is_terminal() {
            true => run.abort(),
            false => entry.run = Some(run),
        });
    }

    /// What a working task says it is doing (the demo server's `count`).
    #[cfg_attr(not(feature = "demo"), allow(dead_code))]
    pub(crate) fn step(&self, id: &str, message: String) {
        let _ = self.with(&json!({ "taskId": id }), |entry| {
            if !entry.status.is_terminal() && entry.message.as_deref() != Some(&message) {
                (entry.message, entry.updated_at) = (Some(message), now());
            }
        });
    }

    /// Ends task `id` with `outcome`, unless it ended already (its work
    /// calls this when done); the task as a status notification carries
    /// it, when it changed.
    pub(crate) fn end(
        &self,
        id: &str,
        status: TaskStatus,
        message: Option<String>,
        outcome: Outcome,
    ) -> Option<Value> {
        self.with(&json!({ "taskId": id }), |entry| {
            if entry.status.is_terminal() {
                return None;
            }
            entry.run = None;
            entry.outcome.send_replace(Some(outcome));
            (entry.status, entry.message, entry.updated_at) = (status, message, now());
            Some(entry.wire())
        })
        .ok()
        .flatten()
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, params: &Value) -> Result<Value, ErrorObject> {
        self.with(params, |entry| entry.wire())
    }

    /// `tasks/result`: waits for the task to end, then answers what its
    /// request would have, marked as the task's
    /// (`io.modelcontextprotocol/related-task`).
    pub(crate) async fn result(&self, params: &Value) -> Result<Value, ErrorObject> {
        let (id, mut outcome) = self.with(params, |entry| (entry.id.clone(), entry.outcome.subscribe()))?;
        let ended = outcome.wait_for(Option::is_some).await.map_err(|_| unknown_task())?;
        let mut answer = ended.clone().expect("waited for it")?;
        if let Some(result) = answer.as_object_mut() {
            let meta = result.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("io.modelcontextprotocol/related-task".into(), json!({ "taskId": id }));
            }
        }
        Ok(answer)
    }

    /// `tasks/list`: pages of [`PAGE`], oldest first; the cursor is the
    /// sequence of the page's last task.
    pub(crate) fn list(&self, params: &Value) -> Result<Value, ErrorObject> {
        let after = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(cursor) => Some(
                cursor
                    .as_str()
                    .and_then(|c| c.parse::<u64>().ok())
                    .ok_or_else(|| ErrorObject::new(codes::INVALID_PARAMS, "not a cursor this side gave"))?,
            ),
        };
        let mut entries = self.entries.lock().expect("held tasks lock");
        Self::sweep(&mut entries);
        let mut page =
            entries.iter().filter(|(seq, _)| after.is_none_or(|after| **seq > after)).take(PAGE + 1);
        let tasks: Vec<(u64, Value)> = page.by_ref().take(PAGE).map(|(seq, e)| (*seq, e.wire())).collect();
        let more = page.next().is_some();
        let mut answer = json!({ "tasks": tasks.iter().map(|(_, t)| t).collect::<Vec<_>>() });
        if let (true, Some((last, _))) = (more, tasks.last()) {
            answer["nextCursor"] = json!(last.to_string());
        }
        Ok(answer)
    }

    /// `tasks/cancel`: stops the work and keeps the task, `cancelled`; a
    /// task that ended already is refused (`-32602`), as the specification
    /// asks. The task as it is then.
    pub(crate) fn cancel(&self, params: &Value) -> Result<Value, ErrorObject> {
        let (id, status) = self.with(params, |entry| {
            if !entry.status.is_terminal() {
                if let Some(run) = entry.run.take() {
                    run.abort();
                }
            }
            (entry.id.clone(), entry.status)
        })?;
        if status.is_terminal() {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("the task is {status} already and cannot be cancelled"),
            ));
        }
        let cancelled = Err(ErrorObject::new(codes::INTERNAL_ERROR, "the task was cancelled"));
        self.end(&id, TaskStatus::Cancelled, Some("The task was cancelled by request.".into()), cancelled);
        self.get(params)
    }
}
