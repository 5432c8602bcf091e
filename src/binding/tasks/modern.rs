//! Waiting for and cancelling a task of the 2026-07-28 Tasks extension
//! (`io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! `tasks/get` carries everything: a completed task's tool result inline
//! (`result`, bounded by the binding's result limits as a tool call's is;
//! an `isError` result is `completed`), a failed one's JSON-RPC `error`,
//! and while the task is `input_required` the requests it is waiting on
//! (`inputRequests`, under keys the server chose). Those are answered
//! through the binding's [`Handlers`](crate::handlers::Handlers), exactly as
//! a multi round-trip request's are, and sent with `tasks/update`. A key is
//! answered once: the same request seen again on a later poll (the server's
//! state is eventually consistent) is skipped, the same key naming another
//! request is a `server_protocol` error, and a task may ask at most
//! [`MAX_INPUT_KEYS`] questions in one wait. `tasks/cancel` is how a task
//! is cancelled, never `notifications/cancelled`; over HTTP every `tasks/*`
//! request carries `Mcp-Name: <taskId>` (the era's wire headers). While a
//! handle waits, the listen stream asks for the task's
//! `notifications/tasks` (`taskIds`, see the binding's `subscriptions`
//! module); one saying the task moved on is a reason to poll at once.

use serde_json::{json, Map, Value};
use sha2::Digest as _;
use std::collections::HashMap;
use tokio::time::Instant;

use super::{within, TaskHandle};
use crate::content::ToolResult;
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::methods;
use crate::request::{CallOpts, McpRequest};
use crate::tasks::{TaskInfo, TaskStatus};

/// The most input requests one task may make during one wait.
pub(crate) const MAX_INPUT_KEYS: usize = 256;
/// The longest input request key taken.
const MAX_INPUT_KEY_BYTES: usize = 256;

fn protocol(message: String) -> Error {
    Error::new(FailureClass::ServerProtocol, message)
}

/// A canonical digest of an input request, to tell one asked again from
/// another under the same key.
fn fingerprint(request: &Value) -> String {
    let mut hasher = sha2::Sha256::new();
    crate::canonical::Encoder::new(&mut hasher).value(request);
    crate::canonical::hex(&hasher.finalize())
}

impl TaskHandle {
    /// [`TaskHandle::result`] for a 2026-07-28 task: polls `tasks/get`
    /// until it carries the outcome, answering what it asks for on the way.
    pub(super) async fn wait_modern(&self, deadline: Instant) -> Result<ToolResult, Error> {
        let within = within(deadline);
        let mut heard = self.latest.subscribe();
        // The server may push the task's changes on the listen stream.
        let _listened = self.binding.listen_for_task(&self.id);
        // Key → fingerprint of every input request answered.
        let mut answered: HashMap<String, String> = HashMap::new();
        loop {
            let (info, mut response) = self.get_detailed(within()).await?;
            match info.status {
                TaskStatus::Completed => {
                    let outcome = response.result.as_object_mut().and_then(|r| r.remove("result"));
                    let Some(outcome @ Value::Object(_)) = outcome else {
                        return Err(protocol("the completed task's tasks/get carries no result".into()));
                    };
                    crate::tasks::check_related(outcome.get("_meta"), &self.id, "completed task's result")?;
                    response.result = outcome;
                    return ToolResult::from_response(response);
                }
                TaskStatus::Failed => return Err(failed(&response.result, &info)),
                TaskStatus::Cancelled => {
                    let why = info.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
                    return Err(Error::new(FailureClass::Cancelled, format!("the task was cancelled{why}")));
                }
                TaskStatus::InputRequired => {
                    let requests = match response.result.get_mut("inputRequests").map(Value::take) {
                        Some(Value::Object(requests)) if !requests.is_empty() => requests,
                        _ => return Err(protocol("the task asks for input but names none".into())),
                    };
                    let fresh = fresh_requests(requests, &answered)?;
                    if !fresh.is_empty() {
                        self.answer(fresh, &mut answered, within()).await?;
                        continue;
                    }
                    // All answered already: the server has yet to see it.
                }
                TaskStatus::Working => {}
            }
            // What a notification says is only a reason to poll: the
            // outcome comes with `tasks/get`.
            self.pause(&mut heard, &info, deadline).await?;
        }
    }

    /// Answers `fresh` input requests through the handlers and sends the
    /// answers with `tasks/update`; the keys count as answered once the
    /// server took them.
    async fn answer(
        &self,
        fresh: Map<String, Value>,
        answered: &mut HashMap<String, String>,
        opts: CallOpts,
    ) -> Result<(), Error> {
        let prints: Vec<(String, String)> = fresh.iter().map(|(k, r)| (k.clone(), fingerprint(r))).collect();
        let inbound = self.binding.inner.inbound.clone();
        let responses = crate::connection::answer_input_requests(&*inbound, fresh).await?;
        let params = json!({ "taskId": &*self.id, "inputResponses": responses });
        let request = McpRequest::with_value(methods::TASKS_UPDATE, params).opts(opts);
        let response = self.binding.request(request, "task_update").await?;
        crate::tasks::check_related(response.result.get("_meta"), &self.id, "tasks/update result")?;
        answered.extend(prints);
        Ok(())
    }

    /// `tasks/cancel`, which the extension only acknowledges; then what
    /// `tasks/get` says (a server that forgot the task at once: the last
    /// thing heard, as cancelled).
    pub(super) async fn cancel_modern(&self) -> Result<TaskInfo, Error> {
        let request = McpRequest::with_value(methods::TASKS_CANCEL, json!({ "taskId": &*self.id }));
        self.binding.request(request, "task_cancel").await?;
        match self.get(CallOpts::default()).await {
            Ok(info) => Ok(info),
            Err(e) if e.class() == FailureClass::RemoteError => match self.latest() {
                Some(latest) => Ok(TaskInfo { status: TaskStatus::Cancelled, ..latest }),
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }
}

/// The input requests not answered yet; the same key for another request
/// is the server's error, as is a key over [`MAX_INPUT_KEY_BYTES`] or a
/// task asking more than [`MAX_INPUT_KEYS`] questions.
fn fresh_requests(
    requests: Map<String, Value>,
    answered: &HashMap<String, String>,
) -> Result<Map<String, Value>, Error> {
    let mut fresh = Map::new();
    for (key, request) in requests {
        if key.len() > MAX_INPUT_KEY_BYTES {
            return Err(protocol(format!(
                "the task names an input request key over {MAX_INPUT_KEY_BYTES} bytes"
            )));
        }
        match answered.get(&key) {
            Some(seen) if *seen == fingerprint(&request) => continue,
            Some(_) => {
                return Err(protocol(format!(
                    "the task reused the input request key {:?} for another request",
                    normalize_message(&key, 64)
                )))
            }
            None => {}
        }
        if answered.len() + fresh.len() >= MAX_INPUT_KEYS {
            return Err(Error::new(
                FailureClass::LimitExceeded,
                format!("the task asked for more than {MAX_INPUT_KEYS} inputs"),
            ));
        }
        fresh.insert(key, request);
    }
    Ok(fresh)
}

/// A failed task's error: the JSON-RPC error its call ended with, as a
/// tool call's is classified.
fn failed(detail: &Value, info: &TaskInfo) -> Error {
    let error = &detail["error"];
    let message = error["message"].as_str().or(info.message.as_deref()).unwrap_or("no reason given");
    let code = error["code"].as_i64().map(|c| format!(" (code {c})")).unwrap_or_default();
    Error::new(
        FailureClass::RemoteToolError,
        format!("the task failed: {}{code}", normalize_message(message, 1024)),
    )
}
