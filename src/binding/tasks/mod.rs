//! Tool calls the server runs as tasks, in both forms behind one handle:
//! 2025-11-25's (`basic/utilities/tasks`: the client asks for a task,
//! polls `tasks/get`, fetches `tasks/result`) and 2026-07-28's Tasks
//! extension (`io.modelcontextprotocol/tasks`: the server decides, and
//! `tasks/get` carries the outcome or the input it asks for; see the
//! `modern` module). [`Binding::call_tool_task`] starts one and returns a
//! [`TaskHandle`], or the result when the server answered at once;
//! [`Binding::task`] takes a task up again by its id (from another binding,
//! or after a restart). How a handle waits is in its docs.
//!
//! The receiver side (a server's task-augmented elicitation or sampling,
//! 2025-11-25) is the binding's inbound handler's, on the table of
//! `tasks::held`.
//!
//! Progress: on 2025-11-25 the start call's progress token stays valid for
//! the task's lifetime, so the sink given to the start
//! ([`CallOpts::progress`]) keeps receiving the server's reports until the
//! task ends; the handle holds the route (see the progress layer's
//! `TaskRoute`). The 2026-07-28 extension sends no progress for tasks.

mod modern;

use serde_json::{json, Map, Value};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Binding;
use crate::content::ToolResult;
use crate::error::{normalize_message, Error, FailureClass};
use crate::layer::progress::TaskRoute;
use crate::protocol::{methods, TaskSupport};
use crate::request::{CallOpts, McpRequest, McpResponse};
use crate::tasks::{Heard, TaskInfo, TaskRecord, TaskStatus, TaskWatch};

/// What [`Binding::call_tool_task`] started.
#[derive(Debug)]
pub enum TaskStart {
    /// The server answered at once instead of making a task.
    Done(ToolResult),
    /// The server runs the call as a task.
    Task(TaskHandle),
}

/// A task at the server: its id, what was last heard of it, its result and
/// a way to cancel it. Cheap to clone; clones share what was last heard.
/// Dropping it stops nothing at the server.
///
/// # Waiting
///
/// [`TaskHandle::result`] polls `tasks/get` at the server's `pollInterval`,
/// held between 250 ms and 30 s (1 s when the server gives none), until
/// the task is terminal or asks for input (a `notifications/tasks/status`
/// saying so ends the wait early; one saying it still works changes
/// nothing, so a flood of them costs no polls), then asks `tasks/result` for
/// the outcome: a `tools/call` result, or the JSON-RPC error the call
/// ended with. While the task asks for input, the server's requests
/// (elicitation, sampling) reach the binding's
/// [`Handlers`](crate::handlers::Handlers) as any others do. A task the
/// server cancelled ends `cancelled` without asking for a result it may
/// have deleted.
///
/// On 2026-07-28 (the Tasks extension) there is no `tasks/result`: the
/// polls' `tasks/get` carries the outcome, and the input a task asks for
/// (`inputRequests`) is answered through the same handlers and sent with
/// `tasks/update`, each request once (see the `modern` module). While it
/// waits, the binding's `subscriptions/listen` stream names the task in its
/// `taskIds`, so a server that pushes `notifications/tasks` brings the next
/// poll forward.
///
/// The wait is bounded by the caller's deadline ([`CallOpts`], or
/// `Timeouts::request`): its expiry ends the *waiting* with `deadline`,
/// never the task, which runs on at the server. Call
/// [`TaskHandle::cancel`] to stop it, or [`TaskHandle::result`] again to
/// wait more. Each request goes through the binding's stack, so a lost
/// connection is waited for (within the deadline) and polling goes on over
/// the new one.
#[derive(Clone)]
pub struct TaskHandle {
    binding: Binding,
    id: Arc<str>,
    latest: Arc<TaskWatch>,
    /// The start call's progress route, kept until the task ends.
    progress: Arc<Mutex<Option<TaskRoute>>>,
}

impl fmt::Debug for TaskHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHandle").field("id", &self.id).field("latest", &*self.latest.borrow()).finish()
    }
}

impl TaskHandle {
    /// A handle fed the task's status notifications too, holding the
    /// start call's progress route (if any) until the task ends.
    fn new(binding: Binding, id: &str, latest: Option<TaskInfo>, progress: Option<TaskRoute>) -> Self {
        let latest = Arc::new(TaskWatch::new(latest));
        binding.inner.tasks.watch(id, &latest);
        TaskHandle { binding, id: id.into(), latest, progress: Arc::new(Mutex::new(progress)) }
    }

    /// The server's id for the task: enough to take it up again with
    /// [`Binding::task`], from here or from another process.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What was last heard of the task; `None` before anything was.
    pub fn latest(&self) -> Option<TaskInfo> {
        self.latest.borrow().clone()
    }

    /// Every change of what is heard of the task, as it is heard (by
    /// [`TaskHandle::status`], [`TaskHandle::result`] or
    /// [`TaskHandle::cancel`] on any clone, or from the server's
    /// `notifications/tasks/status`): a `watch` receiver, which keeps the
    /// latest only.
    pub fn updates(&self) -> watch::Receiver<Option<TaskInfo>> {
        self.latest.subscribe()
    }

    /// Applies what a poll or a cancel (`source`) said of the task, and
    /// returns what is known now: `info`, or the final status it
    /// contradicted (with a warning; see `TaskWatch`).
    fn heard(&self, info: TaskInfo, source: &str) -> TaskInfo {
        let info = match self.latest.publish(&info, source) {
            Heard::Applied => info,
            Heard::Contradicted(kept, warning) => {
                if let Some(warning) = warning {
                    tracing::warn!(binding = %self.binding.inner.name, "{warning}");
                    self.binding.warn(warning);
                }
                kept
            }
        };
        if info.status.is_terminal() {
            // No progress comes after the end.
            self.progress.lock().expect("progress lock").take();
        }
        info
    }

    /// Asks the server where the task is (`tasks/get`).
    pub async fn status(&self, opts: CallOpts) -> Result<TaskInfo, Error> {
        self.get(opts).await.map_err(|e| self.named(e, "task_status"))
    }

    async fn get(&self, opts: CallOpts) -> Result<TaskInfo, Error> {
        self.get_detailed(opts).await.map(|(info, _)| info)
    }

    /// `tasks/get`, and its response: on 2026-07-28 it carries the task's
    /// outcome, or the input it asks for.
    async fn get_detailed(&self, opts: CallOpts) -> Result<(TaskInfo, McpResponse), Error> {
        let request = McpRequest::with_value(methods::TASKS_GET, json!({ "taskId": &*self.id })).opts(opts);
        let response = self.binding.request(request, "task_status").await?;
        let info = self.read_task(response.result.as_object(), "tasks/get")?;
        let info = self.heard(info, "tasks/get answer");
        self.record_status(info.status).await;
        Ok((info, response))
    }

    /// Updates the task's record, if the binding's store has one, when the
    /// task ended (a status that will not change again is all a record
    /// needs). A store that fails costs the update.
    async fn record_status(&self, status: TaskStatus) {
        if !status.is_terminal() {
            return;
        }
        let store = &self.binding.inner.task_store;
        let updated = async {
            match store.load(&self.binding.inner.name, &self.id).await? {
                // A final status recorded is final here too.
                Some(record) if record.status.is_terminal() && record.status != status => {
                    self.binding.warn(format!(
                        "task {:?}: its record says {}; not changed to {status} (a final status)",
                        normalize_message(&self.id, 64),
                        record.status
                    ));
                    Ok(())
                }
                Some(record) if record.status != status => store.save(&TaskRecord { status, ..record }).await,
                _ => Ok(()),
            }
        };
        if let Err(e) = updated.await {
            tracing::warn!(binding = %self.binding.inner.name, error = %e, "the task's record was not updated");
        }
    }

    fn read_task(&self, task: Option<&Map<String, Value>>, method: &str) -> Result<TaskInfo, Error> {
        let Some(task) = task else {
            return Err(Error::new(
                FailureClass::ServerProtocol,
                format!("the {method} result is not a task"),
            ));
        };
        let info = TaskInfo::from_wire_checked(task, &format!("{method} result"))?;
        if info.id != *self.id {
            return Err(Error::new(
                FailureClass::ServerProtocol,
                format!("the {method} result is about another task than the one asked for"),
            ));
        }
        Ok(info)
    }

    /// Waits for the task's outcome within the deadline of `opts` (see
    /// [Waiting](TaskHandle#waiting)): the tool's result (which may be a
    /// tool error, `is_error`), the JSON-RPC error the call ended with, or
    /// `cancelled`. On `deadline` the task runs on.
    pub async fn result(&self, opts: CallOpts) -> Result<ToolResult, Error> {
        let deadline = opts.deadline_from(Instant::now(), self.binding.inner.timeouts.request);
        self.wait(deadline).await.map_err(|e| self.named(e, "task_result"))
    }

    async fn wait(&self, deadline: Instant) -> Result<ToolResult, Error> {
        if is_modern(&self.binding.current_session()) {
            return self.wait_modern(deadline).await;
        }
        let within = within(deadline);
        let mut heard = self.latest.subscribe();
        let mut info = self.get(within()).await?;
        loop {
            match info.status {
                TaskStatus::Cancelled => {
                    let why = info.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
                    return Err(Error::new(
                        FailureClass::Cancelled,
                        format!("the server cancelled the task{why}"),
                    ));
                }
                // Terminal, or blocked on input the server asks for while
                // `tasks/result` is open: ask for the outcome.
                TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired => break,
                TaskStatus::Working => {
                    if let Some(told) = self.pause(&mut heard, &info, deadline).await? {
                        info = told;
                        continue;
                    }
                    info = self.get(within()).await?;
                }
            }
        }
        let request =
            McpRequest::with_value(methods::TASKS_RESULT, json!({ "taskId": &*self.id })).opts(within());
        let response = self.binding.request(request, "task_result").await?;
        // The result must be this task's: another task's is never taken
        // for it.
        crate::tasks::check_related(response.result.get("_meta"), &self.id, "tasks/result result")?;
        let result = ToolResult::from_response(response)?;
        let ended = self.latest.borrow().as_ref().map(|info| info.status).filter(|s| s.is_terminal());
        self.record_status(ended.unwrap_or(TaskStatus::Completed)).await;
        Ok(result)
    }

    /// Waits until the next poll of a working task (`info`), unless a
    /// status notification (or a clone's poll) says it moved on before:
    /// then what it said. One saying it still works changes nothing, so a
    /// flood of them costs no polls. Past `deadline`, `deadline`: the task
    /// runs on at the server.
    async fn pause(
        &self,
        heard: &mut watch::Receiver<Option<TaskInfo>>,
        info: &TaskInfo,
        deadline: Instant,
    ) -> Result<Option<TaskInfo>, Error> {
        let wake = (Instant::now() + info.next_poll()).min(deadline);
        heard.mark_unchanged();
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(wake) => break,
                changed = heard.changed() => {
                    if changed.is_err() {
                        tokio::time::sleep_until(wake).await;
                        break;
                    }
                    let told = heard.borrow_and_update().clone();
                    if let Some(told) = told.filter(|t| t.status != TaskStatus::Working) {
                        return Ok(Some(told));
                    }
                }
            }
        }
        if Instant::now() >= deadline {
            return Err(Error::new(
                FailureClass::Deadline,
                format!(
                    "the task is still working at the deadline; it runs on at the server (task {})",
                    self.id
                ),
            ));
        }
        Ok(None)
    }

    /// Asks the server to cancel the task (`tasks/cancel`) and returns what
    /// it says of it then. A task already ended is refused by the server
    /// (an `invalid_arguments` error). On 2026-07-28 the server only
    /// acknowledges, and the task may end otherwise still (cancelling is
    /// cooperative there); what `tasks/get` says after is returned.
    pub async fn cancel(&self) -> Result<TaskInfo, Error> {
        if is_modern(&self.binding.current_session()) {
            return self.cancel_modern().await.map_err(|e| self.named(e, "task_cancel"));
        }
        let request = McpRequest::with_value(methods::TASKS_CANCEL, json!({ "taskId": &*self.id }));
        let response =
            self.binding.request(request, "task_cancel").await.map_err(|e| self.named(e, "task_cancel"))?;
        let info = self
            .read_task(response.result.as_object(), "tasks/cancel")
            .map_err(|e| self.named(e, "task_cancel"))?;
        let info = self.heard(info, "tasks/cancel answer");
        self.record_status(info.status).await;
        Ok(info)
    }

    fn named(&self, e: Error, op: &'static str) -> Error {
        e.with_binding(&self.binding.inner.name).with_op(op)
    }
}

impl Binding {
    /// Calls the tool `name` as a task: the server answers at once with a
    /// task it runs ([`TaskStart::Task`]), or with the result when it chose
    /// not to make one ([`TaskStart::Done`]).
    ///
    /// On 2025-11-25 the call asks for a task (`params.task`), and `ttl`
    /// asks the server to keep it that long after its creation (it may keep
    /// it shorter or longer; [`TaskInfo::ttl`] says). Refused before
    /// anything is sent, with `tool_unavailable`, when the server does not
    /// declare `tasks.requests.tools.call` or the tool's `taskSupport` is
    /// `forbidden` (or absent).
    ///
    /// On 2026-07-28 (the Tasks extension) the server alone decides, and
    /// `ttl` is not sent (there is no way to); this is a plain tool call
    /// that hands back a task when the server makes one. Refused with
    /// `invalid_config` unless the binding declares the extension
    /// ([`AllowedCapabilities::tasks`](crate::AllowedCapabilities::tasks)),
    /// with `tool_unavailable` when the server does not declare it. A
    /// [`Binding::call_tool`] on such a binding follows a task the server
    /// makes to its result, within the call's deadline.
    ///
    /// The filter, the call checks and the deadline
    /// of `opts` apply as to [`Binding::call_tool`]; the deadline bounds
    /// the start, not the task (see [`TaskHandle::result`]). The progress
    /// sink of `opts` hears the task's progress until the task ends, not
    /// only the start's (2025-11-25 keeps the start's token for the task),
    /// as long as the handle or one of its clones lives.
    pub async fn call_tool_task(
        &self,
        name: &str,
        arguments: Value,
        ttl: Option<Duration>,
        opts: CallOpts,
    ) -> Result<TaskStart, Error> {
        self.call_tool_task_as(name, arguments, ttl, opts, super::operations::Caller::Host).await
    }

    pub(super) async fn call_tool_task_as(
        &self,
        name: &str,
        arguments: Value,
        ttl: Option<Duration>,
        opts: CallOpts,
        caller: super::operations::Caller,
    ) -> Result<TaskStart, Error> {
        let started = async {
            let modern = self.check_tasks(name)?;
            let mut params = super::operations::tool_call_params(name, arguments)?;
            if !modern {
                // 2025-11-25: the client asks for a task. On 2026-07-28 the
                // server alone decides (the extension declared is enough).
                let ttl = ttl.map(|t| t.as_millis().min(u128::from(u64::MAX)) as u64);
                params.insert("task".into(), ttl.map_or_else(|| json!({}), |ttl| json!({ "ttl": ttl })));
            }
            let request = caller.mark(McpRequest::new(methods::TOOLS_CALL, params).opts(opts));
            self.request(request, "call_tool_task").await
        };
        let named = |e: Error| e.with_binding(&self.inner.name).with_op("call_tool_task");
        let response = started.await.map_err(named)?;
        self.task_or_result(name, response).await.map_err(named)
    }

    /// A `tools/call` response: the task it started (2025-11-25's `task`
    /// object, or 2026-07-28's `resultType: "task"`), recorded in the task
    /// store, or its result.
    pub(super) async fn task_or_result(&self, tool: &str, response: McpResponse) -> Result<TaskStart, Error> {
        let task = match response.result.get("resultType").and_then(Value::as_str) {
            Some("task") => response.result.as_object(),
            _ => response.result.get("task").and_then(Value::as_object),
        };
        match task {
            Some(task) => {
                let info = TaskInfo::from_wire_checked(task, "created task")?;
                crate::tasks::check_related(response.result.get("_meta"), &info.id, "tools/call result")?;
                self.record_start(tool, &info).await;
                let id = info.id.clone();
                let progress = response.extensions.get::<TaskRoute>().cloned();
                Ok(TaskStart::Task(TaskHandle::new(self.clone(), &id, Some(info), progress)))
            }
            None => ToolResult::from_response(response).map(TaskStart::Done),
        }
    }

    /// Records a task this binding started in its store; a store that
    /// fails costs the record, not the call.
    async fn record_start(&self, tool: &str, info: &TaskInfo) {
        let record = TaskRecord {
            binding: self.inner.name.clone(),
            id: info.id.clone(),
            tool: tool.to_string(),
            created: std::time::SystemTime::now(),
            ttl: info.ttl,
            status: info.status,
        };
        if let Err(e) = self.inner.task_store.save(&record).await {
            tracing::warn!(binding = %self.inner.name, error = %e, "the task was started but not recorded");
        }
    }

    /// The tasks this binding's name started, as its
    /// [`task_store`](crate::Definition::task_store) recorded them (here,
    /// in an earlier run, or on another replica sharing the store), oldest
    /// first, those past their TTL left out. Take one up again with
    /// [`Binding::task`].
    pub async fn started_tasks(&self) -> Result<Vec<TaskRecord>, Error> {
        let records = self
            .inner
            .task_store
            .list()
            .await
            .map_err(|e| e.with_binding(&self.inner.name).with_op("started_tasks"))?;
        Ok(records.into_iter().filter(|r| r.binding == self.inner.name).collect())
    }

    /// Whether `name` may be called as a task on this session; whether the
    /// session is 2026-07-28's.
    fn check_tasks(&self, name: &str) -> Result<bool, Error> {
        let session = self.current_session();
        if is_modern(&session) {
            if !self.inner.declares_tasks {
                return Err(Error::new(
                    FailureClass::InvalidConfig,
                    "on 2026-07-28 a task needs the tasks extension declared (AllowedCapabilities::tasks)",
                ));
            }
            if !session.capabilities.declares_extension(crate::protocol::TASKS_EXTENSION) {
                return Err(Error::new(
                    FailureClass::ToolUnavailable,
                    "the server does not declare the tasks extension (io.modelcontextprotocol/tasks)",
                ));
            }
            return Ok(true);
        }
        if !session.capabilities.supports_task_tool_calls() {
            return Err(Error::new(
                FailureClass::ToolUnavailable,
                "the server does not run tool calls as tasks",
            ));
        }
        let support = self.catalog().tool(name).map(|t| t.task_support.clone());
        if matches!(support, None | Some(TaskSupport::Forbidden)) {
            return Err(Error::new(
                FailureClass::ToolUnavailable,
                format!("the tool {:?} does not run as a task", normalize_message(name, 128)),
            ));
        }
        Ok(false)
    }

    /// Whether `name` must run as a task (`taskSupport: "required"` on a
    /// 2025-11-25 server that runs tool calls as tasks).
    ///
    /// On every call's path: the session is read in place, not cloned
    /// (a clone of its capabilities was a fortieth of a small call).
    pub(super) fn requires_task(&self, name: &str) -> bool {
        let runs_tasks = self
            .with_session(|session| !is_modern(session) && session.capabilities.supports_task_tool_calls());
        runs_tasks && self.catalog().tool(name).is_some_and(|t| t.task_support == TaskSupport::Required)
    }

    /// One page of the tasks the server holds for this client
    /// (`tasks/list`): the first when `cursor` is `None`, else the page at
    /// a previous page's `next_cursor`; at most `Limits::max_catalog_items`
    /// entries (those past it are counted while the page is parsed, never
    /// built). An entry that is not a valid task is dropped with a
    /// warning, the others kept. A server that does not declare
    /// `tasks.list` is not asked (an empty listing, with a warning); a
    /// 2026-07-28 session is `unsupported_protocol` (that era's extension
    /// has no listing).
    pub async fn list_tasks_page(&self, cursor: Option<&str>) -> Result<super::Listing<TaskInfo>, Error> {
        const OP: &str = "list_tasks_page";
        let Some(listing) = self.task_listing(OP)? else { return Ok(unlisted()) };
        let max = self.inner.limits.max_catalog_items;
        self.list_page(methods::TASKS_LIST, "tasks", cursor, max, OP, listing).await
    }

    /// Every task the server holds for this client (`tasks/list`), page
    /// after page, within the bounds of every list ([`Binding::list_tools`]'s:
    /// a repeated cursor ends it, at most `Limits::max_catalog_pages` pages
    /// and `Limits::max_catalog_items` tasks in all, counted while each
    /// page is parsed; a warning says when the rest was not read). Entries
    /// and servers are taken as [`Binding::list_tasks_page`] takes them.
    pub async fn list_tasks(&self) -> Result<super::Listing<TaskInfo>, Error> {
        const OP: &str = "list_tasks";
        let Some(listing) = self.task_listing(OP)? else { return Ok(unlisted()) };
        let max = self.inner.limits.max_catalog_items;
        self.list_all(methods::TASKS_LIST, "tasks", max, OP, listing).await
    }

    /// How a `tasks/list` entry is read, if the server lists tasks (`None`
    /// when it does not say it does); a 2026-07-28 session's error.
    fn task_listing(
        &self,
        op: &'static str,
    ) -> Result<Option<impl FnMut(Value) -> Result<TaskInfo, String>>, Error> {
        let session = self.current_session();
        if is_modern(&session) {
            let e = Error::new(
                FailureClass::UnsupportedProtocol,
                "tasks/list is not part of 2026-07-28's Tasks extension",
            );
            return Err(e.with_binding(&self.inner.name).with_op(op));
        }
        if session.capabilities.tasks.as_ref().is_none_or(|t| t.get("list").is_none()) {
            return Ok(None);
        }
        Ok(Some(|entry: Value| {
            match entry.as_object().map(|t| TaskInfo::from_wire_checked(t, "tasks/list entry")) {
                Some(info) => info.map_err(|e| e.message().to_owned()),
                None => Err("not an object".to_owned()),
            }
        }))
    }

    /// The task `id` of this binding's server, to ask after, wait for or
    /// cancel: one this process started, or one started elsewhere (another
    /// binding to the same server, a process before a restart). Nothing is
    /// sent until the handle is used.
    pub fn task(&self, id: &str) -> TaskHandle {
        TaskHandle::new(self.clone(), id, None, None)
    }
}

/// The listing of a server that does not list tasks: empty, said so.
fn unlisted() -> super::Listing<TaskInfo> {
    let mut listing = super::Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None };
    crate::request::push_warning(&mut listing.warnings, "the server does not list tasks".into());
    listing
}

/// The options of a poll: within the wait's deadline, and without
/// progress (the server reports a task's progress under the token of the
/// call that started it).
fn within(deadline: Instant) -> impl Fn() -> CallOpts {
    move || CallOpts { progress: None, deadline: Some(deadline), timeout: None }
}

/// Whether the session speaks 2026-07-28, whose tasks are the Tasks
/// extension's.
fn is_modern(session: &crate::session::SessionInfo) -> bool {
    crate::protocol::is_modern_version(&session.protocol_version)
}
