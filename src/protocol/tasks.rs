//! Tasks (2025-11-25): a request run in the background, polled with
//! `tasks/get` and collected with `tasks/result`.

use super::open_enum::open_enum;
use super::pagination::Cursor;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `_meta` key that ties a message to the task it belongs to.
pub(crate) const RELATED_TASK_META_KEY: &str = "io.modelcontextprotocol/related-task";

open_enum! {
    /// The state of a task.
    pub(crate) enum TaskStatus {
        /// Being processed.
        Working => "working",
        /// Waiting for input (an elicitation or a sampling request).
        InputRequired => "input_required",
        /// Finished; the result is available.
        Completed => "completed",
        /// Finished without success (including a tool result with `isError`).
        Failed => "failed",
        /// Cancelled before it finished.
        Cancelled => "cancelled",
    }
}

impl TaskStatus {
    /// Whether the task has stopped for good: completed, failed or cancelled.
    /// An unknown status is not terminal: polling goes on until the deadline.
    pub(crate) fn is_terminal(&self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// A task as reported by `tasks/get`, `tasks/cancel`, `tasks/list`,
/// `notifications/tasks/status` or a [`CreateTaskResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Task {
    /// The task's identifier.
    pub task_id: String,
    /// Its state.
    pub status: TaskStatus,
    /// A human-readable account of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601). Required by the schema; tolerated
    /// when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When it last changed (ISO 8601). Required by the schema; tolerated
    /// when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated_at: Option<String>,
    /// How long the task is kept after creation, in milliseconds; `None`
    /// means unlimited. The schema makes this member required and nullable,
    /// so it is always serialized (`null` for `None`); a missing one reads as
    /// `None`.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// The suggested polling interval, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Metadata of the result or notification that carried the task.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The `task` member of a task-augmented request's params: asks the receiver
/// to run the request as a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskMetadata {
    /// The requested retention, in milliseconds from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// The value under [`RELATED_TASK_META_KEY`] in a message's `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RelatedTaskMetadata {
    /// The task the message belongs to.
    pub task_id: String,
}

/// The immediate answer to a task-augmented request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTaskResult {
    /// The task that was created.
    pub task: Task,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTaskParams {
    /// The task to ask about.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl GetTaskParams {
    /// Params naming one task.
    pub(crate) fn new(task_id: impl Into<String>) -> Self {
        GetTaskParams { task_id: task_id.into(), meta: None }
    }
}

/// The result of `tasks/list`: one page of tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTasksResult {
    /// This page's tasks.
    pub tasks: Vec<Task>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn create_task_result_from_spec() {
        let r: CreateTaskResult = serde_json::from_value(json!({
            "task": {
                "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
                "status": "working",
                "statusMessage": "The operation is now in progress.",
                "createdAt": "2025-11-25T10:30:00Z",
                "lastUpdatedAt": "2025-11-25T10:40:00Z",
                "ttl": 60000,
                "pollInterval": 5000
            }
        }))
        .unwrap();
        assert_eq!(r.task.status, TaskStatus::Working);
        assert!(!r.task.status.is_terminal());
        assert_eq!(r.task.ttl, Some(60000));
        assert_eq!(r.task.poll_interval, Some(5000));
    }

    #[test]
    fn statuses_and_unknown_fallback() {
        let t: Task = serde_json::from_value(json!({
            "taskId": "t", "status": "input_required", "createdAt": "x", "lastUpdatedAt": "y", "ttl": null
        }))
        .unwrap();
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert_eq!(t.ttl, None);
        let t: Task = serde_json::from_value(json!({"taskId": "t", "status": "paused"})).unwrap();
        assert_eq!(t.status, TaskStatus::Unknown("paused".into()));
        assert!(!t.status.is_terminal());
        assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"taskId":"t","status":"paused","ttl":null}"#);
        for s in ["completed", "failed", "cancelled"] {
            assert!(TaskStatus::from(s).is_terminal());
        }
    }

    #[test]
    fn task_metadata_and_params() {
        assert_eq!(serde_json::to_string(&TaskMetadata::default()).unwrap(), "{}");
        assert_eq!(serde_json::to_string(&GetTaskParams::new("t1")).unwrap(), r#"{"taskId":"t1"}"#);
        let related: RelatedTaskMetadata = serde_json::from_value(json!({"taskId": "t1"})).unwrap();
        assert_eq!(related.task_id, "t1");
    }
}
