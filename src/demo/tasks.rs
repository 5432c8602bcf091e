//! Tasks (2025-11-25, `basic/utilities/tasks`) on the demo server: `count`
//! and `sleep` may run as tasks (`execution.taskSupport: "optional"`).
//!
//! A connection's tasks are its own, as the specification asks of a server
//! that cannot tell its clients apart: an id means nothing on another
//! connection, and they end with it. The table is the crate's
//! (`tasks::held`, which the binding uses for the tasks a server asks it to
//! run): bounded, each task kept for its TTL. A running `count` says which
//! step it is at in its `statusMessage`; every change of status is also
//! sent as `notifications/tasks/status`.

use serde_json::{json, Value};
use std::sync::Arc;

use super::Peer;
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, ErrorObject, Notification};
use crate::tasks::held::HeldTasks;
use crate::tasks::TaskStatus;

/// The tools that may run as tasks.
pub(super) const TASK_TOOLS: [&str; 2] = ["count", "sleep"];

/// A connection's table of tasks.
pub(super) fn table() -> HeldTasks {
    HeldTasks::new("demo-task-")
}

async fn notify(peer: &Peer, task: Value) {
    peer.notify(Notification::new(methods::NOTIFICATIONS_TASKS_STATUS, Some(task))).await;
}

/// `tools/call` with `params.task`: starts the call as a task and answers
/// with it (`CreateTaskResult`).
pub(super) async fn start(peer: &Arc<Peer>, params: &Value) -> Result<Value, ErrorObject> {
    let name = params["name"].as_str().unwrap_or_default();
    if !TASK_TOOLS.contains(&name) {
        // As the specification asks of a tool that forbids tasks.
        return Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("{name} does not run as a task")));
    }
    let (id, task) = peer.tasks.create(params, Some(format!("{name} started")))?;
    let mut call = params.clone();
    if let Some(call) = call.as_object_mut() {
        call.remove("task");
    }
    let (runner, task_id) = (peer.clone(), id.clone());
    let run = tokio::spawn(async move {
        let on_step = |message: String| runner.tasks.step(&task_id, message);
        let outcome = super::call_tool(&call, &runner, Some(&on_step)).await;
        let status = match &outcome {
            Ok(result) if result["isError"] != true => TaskStatus::Completed,
            _ => TaskStatus::Failed,
        };
        if let Some(task) = runner.tasks.end(&task_id, status, None, outcome) {
            notify(&runner, task).await;
        }
    });
    peer.tasks.attach(&id, run.abort_handle());
    Ok(json!({ "task": task }))
}

/// `tasks/cancel`: the table's, and the change told.
pub(super) async fn cancel(peer: &Peer, params: &Value) -> Result<Value, ErrorObject> {
    let task = peer.tasks.cancel(params)?;
    notify(peer, task.clone()).await;
    Ok(task)
}
