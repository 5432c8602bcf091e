//! Tasks (2025-11-25, `basic/utilities/tasks`) on the demo server: `count`
//! and `sleep` may run as tasks (`execution.taskSupport: "optional"`).
//!
//! A connection's tasks are its own, as the specification asks of a server
//! that cannot tell its clients apart: an id means nothing on another
//! connection, and they end with it. At most [`MAX_TASKS`] are kept at once,
//! each for its TTL (the client's, else 5 minutes; at most an hour); past
//! it a task and its result are gone. A running `count` says which step it
//! is at in its `statusMessage`; every change of status is also sent as
//! `notifications/tasks/status`.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::Peer;
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, ErrorObject, Notification};
use crate::serialize::format_rfc3339;

/// The most tasks one connection keeps at once.
pub(crate) const MAX_TASKS: usize = 64;
/// A task's TTL when the client asks for none.
const DEFAULT_TTL_MS: u64 = 300_000;
/// The longest TTL granted.
const MAX_TTL_MS: u64 = 3_600_000;
/// The wait between polls suggested to the client.
const POLL_INTERVAL_MS: u64 = 500;
/// Tasks on one page of `tasks/list`.
const PAGE: usize = 20;

/// The tools that may run as tasks.
pub(super) const TASK_TOOLS: [&str; 2] = ["count", "sleep"];

/// How a call ended: its result, or its JSON-RPC error.
type Outcome = Result<Value, ErrorObject>;

/// One connection's tasks, by creation order.
#[derive(Default)]
pub(super) struct Tasks {
    entries: Mutex<BTreeMap<u64, Entry>>,
    next: AtomicU64,
}

struct Entry {
    status: &'static str,
    message: Option<String>,
    created_at: String,
    updated_at: String,
    ttl_ms: u64,
    expires: Instant,
    /// Set once, when the task ends.
    outcome: watch::Sender<Option<Outcome>>,
    run: Option<AbortHandle>,
}

fn task_id(seq: u64) -> String {
    format!("demo-task-{seq}")
}

fn now() -> String {
    format_rfc3339(SystemTime::now())
}

fn unknown_task() -> ErrorObject {
    ErrorObject::new(codes::INVALID_PARAMS, "no such task (it may have expired)")
}

impl Entry {
    fn is_terminal(&self) -> bool {
        matches!(self.status, "completed" | "failed" | "cancelled")
    }

    fn wire(&self, seq: u64) -> Value {
        let mut task = json!({
            "taskId": task_id(seq),
            "status": self.status,
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

impl Tasks {
    /// The task `params.taskId` names, if this connection holds it.
    fn seq(params: &Value) -> Result<u64, ErrorObject> {
        params["taskId"]
            .as_str()
            .and_then(|id| id.strip_prefix("demo-task-"))
            .and_then(|n| n.parse().ok())
            .ok_or_else(unknown_task)
    }

    /// Forgets the tasks whose TTL has passed.
    fn sweep(entries: &mut BTreeMap<u64, Entry>) {
        let now = Instant::now();
        entries.retain(|_, entry| entry.expires > now);
    }

    /// Moves a task on, never out of a terminal status, and returns it as
    /// sent; `None` when it is gone or ended already.
    fn update(&self, seq: u64, status: &'static str, message: Option<String>) -> Option<Value> {
        let mut entries = self.entries.lock().expect("tasks lock");
        let entry = entries.get_mut(&seq).filter(|entry| !entry.is_terminal())?;
        if status == entry.status && message == entry.message {
            return None;
        }
        (entry.status, entry.message, entry.updated_at) = (status, message, now());
        Some(entry.wire(seq))
    }

    /// What a running `count` says of its step.
    fn step(&self, seq: u64, message: String) {
        self.update(seq, "working", Some(message));
    }

    /// Ends a task: records how, unless it ended already (cancelled), and
    /// says so to the client.
    async fn end(
        &self,
        peer: &Peer,
        seq: u64,
        status: &'static str,
        message: Option<String>,
        outcome: Outcome,
    ) {
        let task = {
            let mut entries = self.entries.lock().expect("tasks lock");
            match entries.get_mut(&seq) {
                Some(entry) if !entry.is_terminal() => {
                    if let Some(run) = entry.run.take() {
                        run.abort();
                    }
                    entry.outcome.send_replace(Some(outcome));
                    (entry.status, entry.message, entry.updated_at) = (status, message, now());
                    entry.wire(seq)
                }
                _ => return,
            }
        };
        peer.notify(Notification::new(methods::NOTIFICATIONS_TASKS_STATUS, Some(task))).await;
    }
}

/// `tools/call` with `params.task`: starts the call as a task and answers
/// with it (`CreateTaskResult`).
pub(super) async fn start(peer: &Arc<Peer>, params: &Value) -> Result<Value, ErrorObject> {
    let name = params["name"].as_str().unwrap_or_default();
    if !TASK_TOOLS.contains(&name) {
        // As the specification asks of a tool that forbids tasks.
        return Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("{name} does not run as a task")));
    }
    let ttl_ms = params["task"]["ttl"].as_u64().unwrap_or(DEFAULT_TTL_MS).min(MAX_TTL_MS);
    let tasks = &peer.tasks;
    let seq = tasks.next.fetch_add(1, Ordering::Relaxed);
    let (outcome, _) = watch::channel(None);
    let created = now();
    let entry = Entry {
        status: "working",
        message: Some(format!("{name} started")),
        created_at: created.clone(),
        updated_at: created,
        ttl_ms,
        expires: Instant::now() + Duration::from_millis(ttl_ms),
        outcome,
        run: None,
    };
    let task = entry.wire(seq);
    {
        let mut entries = tasks.entries.lock().expect("tasks lock");
        Tasks::sweep(&mut entries);
        if entries.len() >= MAX_TASKS {
            return Err(ErrorObject::new(codes::INTERNAL_ERROR, format!("already {MAX_TASKS} tasks")));
        }
        entries.insert(seq, entry);
    }
    let mut call = params.clone();
    if let Some(call) = call.as_object_mut() {
        call.remove("task");
    }
    let runner = peer.clone();
    let run = tokio::spawn(async move {
        let on_step = |message: String| runner.tasks.step(seq, message);
        let outcome = super::call_tool(&call, &runner, Some(&on_step)).await;
        let status = match &outcome {
            Ok(result) if result["isError"] != true => "completed",
            _ => "failed",
        };
        runner.tasks.end(&runner, seq, status, None, outcome).await;
    });
    if let Some(entry) = tasks.entries.lock().expect("tasks lock").get_mut(&seq) {
        entry.run = Some(run.abort_handle());
    }
    Ok(json!({ "task": task }))
}

/// `tasks/get`.
pub(super) fn get(peer: &Peer, params: &Value) -> Result<Value, ErrorObject> {
    let seq = Tasks::seq(params)?;
    let mut entries = peer.tasks.entries.lock().expect("tasks lock");
    Tasks::sweep(&mut entries);
    entries.get(&seq).map(|entry| entry.wire(seq)).ok_or_else(unknown_task)
}

/// `tasks/result`: waits for the task to end, then answers what the call
/// would have.
pub(super) async fn result(peer: &Peer, params: &Value) -> Result<Value, ErrorObject> {
    let seq = Tasks::seq(params)?;
    let mut outcome = {
        let mut entries = peer.tasks.entries.lock().expect("tasks lock");
        Tasks::sweep(&mut entries);
        entries.get(&seq).ok_or_else(unknown_task)?.outcome.subscribe()
    };
    let ended = outcome.wait_for(Option::is_some).await.map_err(|_| unknown_task())?;
    let mut answer = ended.clone().expect("waited for it")?;
    if let Some(result) = answer.as_object_mut() {
        let meta = result.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        meta["io.modelcontextprotocol/related-task"] = json!({ "taskId": task_id(seq) });
    }
    Ok(answer)
}

/// `tasks/list`: pages of [`PAGE`], oldest first; the cursor is the last
/// task of the page before.
pub(super) fn list(peer: &Peer, params: &Value) -> Result<Value, ErrorObject> {
    let after = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(cursor) => Some(
            cursor
                .as_str()
                .and_then(|c| c.parse::<u64>().ok())
                .ok_or_else(|| ErrorObject::new(codes::INVALID_PARAMS, "not a cursor this server gave"))?,
        ),
    };
    let mut entries = peer.tasks.entries.lock().expect("tasks lock");
    Tasks::sweep(&mut entries);
    let mut page = entries.iter().filter(|(seq, _)| after.is_none_or(|after| **seq > after)).take(PAGE + 1);
    let tasks: Vec<(u64, Value)> = page.by_ref().take(PAGE).map(|(seq, e)| (*seq, e.wire(*seq))).collect();
    let more = page.next().is_some();
    let mut answer = json!({ "tasks": tasks.iter().map(|(_, t)| t).collect::<Vec<_>>() });
    if let (true, Some((last, _))) = (more, tasks.last()) {
        answer["nextCursor"] = json!(last.to_string());
    }
    Ok(answer)
}

/// `tasks/cancel`: stops the call and keeps the task, `cancelled`.
pub(super) async fn cancel(peer: &Peer, params: &Value) -> Result<Value, ErrorObject> {
    let seq = Tasks::seq(params)?;
    {
        let mut entries = peer.tasks.entries.lock().expect("tasks lock");
        Tasks::sweep(&mut entries);
        let entry = entries.get(&seq).ok_or_else(unknown_task)?;
        if entry.is_terminal() {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("the task is {} already and cannot be cancelled", entry.status),
            ));
        }
    }
    let cancelled = Err(ErrorObject::new(codes::INTERNAL_ERROR, "the task was cancelled"));
    let message = Some("The task was cancelled by request.".to_string());
    peer.tasks.end(peer, seq, "cancelled", message, cancelled).await;
    get(peer, params)
}
