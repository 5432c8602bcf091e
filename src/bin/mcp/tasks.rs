//! Tasks from the command line: `call NAME ARGS --task` starts one and
//! follows it to its result; `tasks list|get|result|cancel` reach the tasks
//! a server holds, by id, from this run or an earlier one (at a server that
//! keeps them beyond a connection, such as one over HTTP).
//!
//! While a task runs, its status changes are shown as they come: one line
//! that changes in place when stderr is a terminal, a `task ID: status:
//! message` line per change otherwise, nothing with `--json` (whose `call`
//! document then carries the task's last status as `task`). The progress
//! the server reports for the task (2025-11-25 keeps the start's token) is
//! shown the same way: appended to that line on a terminal, a
//! `progress N/T message` line otherwise. Waiting is
//! bounded by `--request-timeout-ms`; when that passes, the task still runs
//! at the server, and the error says how to take it up again.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_stack::host::Host;
use mcp_stack::{Binding, CallOpts, Error, FailureClass, TaskHandle, TaskInfo, TaskStart, TaskStatus};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cli::{Cli, TaskAction};
use crate::commands::{aligned, one_server, tool_output, Output};
use crate::terminal::{clean_line, err_line};
use crate::{failure, Failure, EXIT_CALL, EXIT_CONNECT};

/// `call NAME ARGS --task`: the tool `target` names (the host routes a
/// model name), started as a task and followed to its result; a server that
/// answers at once is printed as a plain call.
pub(crate) async fn call(
    cli: &Cli,
    host: &Host,
    name: &str,
    target: Option<(Binding, String)>,
    arguments: Value,
    ttl: Option<Duration>,
) -> Result<Output, Failure> {
    let (binding, raw_name) = match target {
        Some(target) => target,
        None => {
            let route = host.route(name).map_err(|e| failure(EXIT_CALL, &e))?;
            let binding = host.ready(&route.binding).await.map_err(|e| failure(EXIT_CONNECT, &e))?;
            (binding, route.raw_name)
        }
    };
    let display = Arc::new(StatusDisplay::new(cli.json));
    let started = binding
        .call_tool_task(&raw_name, arguments, ttl, display.progress_opts())
        .await
        .map_err(|e| failure(EXIT_CALL, &e))?;
    match started {
        TaskStart::Done(result) => {
            display.finish();
            Ok(tool_output(&result))
        }
        TaskStart::Task(handle) => follow(display, &handle, resumable(&binding)).await,
    }
}

/// `tasks ...`, against one server.
pub(crate) async fn command(cli: &Cli, host: &Host, action: &TaskAction) -> Result<Output, Failure> {
    let binding = one_server(cli, host).await?;
    let call_failed = |e: Error| failure(EXIT_CALL, &e);
    Ok(match action {
        TaskAction::List => {
            // The library's listing: every page within the bounds of every
            // list (a repeated cursor, pages, tasks in all).
            let listing = binding.list_tasks().await.map_err(call_failed)?;
            let (tasks, warnings) = (listing.items, listing.warnings);
            let mut lines = if tasks.is_empty() {
                vec![format!("server {} holds no tasks for this client", binding.name())]
            } else {
                let mut rows = vec![["ID", "STATUS", "LAST UPDATED", "MESSAGE"].map(String::from)];
                rows.extend(tasks.iter().map(|t| {
                    [
                        clean_line(&t.id),
                        t.status.to_string(),
                        clean_line(t.last_updated_at.as_deref().unwrap_or("-")),
                        clean_line(t.message.as_deref().unwrap_or("")),
                    ]
                }));
                aligned(&rows)
            };
            lines.extend(warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "tasks": tasks, "warnings": warnings }), lines)
        }
        TaskAction::Get { id } => {
            let info = binding.task(id).status(CallOpts::default()).await.map_err(call_failed)?;
            Output::ok(json!({ "task": info }), vec![status_line(&info)])
        }
        TaskAction::Result { id } => {
            follow(Arc::new(StatusDisplay::new(cli.json)), &binding.task(id), resumable(&binding)).await?
        }
        TaskAction::Cancel { id } => {
            let info = binding.task(id).cancel().await.map_err(call_failed)?;
            Output::ok(json!({ "task": info }), vec![status_line(&info)])
        }
    })
}

/// Shows the task's status changes while waiting for its result, within
/// the request deadline.
async fn follow(
    display: Arc<StatusDisplay>,
    handle: &TaskHandle,
    resumable: Resumable,
) -> Result<Output, Failure> {
    display.show(handle.latest().as_ref());
    let mut updates = handle.updates();
    let shown = display.clone();
    let watcher = tokio::spawn(async move {
        while updates.changed().await.is_ok() {
            let latest = updates.borrow_and_update().clone();
            shown.show(latest.as_ref());
        }
    });
    let outcome = handle.result(CallOpts::default()).await;
    watcher.abort();
    display.show(handle.latest().as_ref());
    display.finish();
    let result = outcome.map_err(|e| still_running(handle.id(), &e, resumable))?;
    let mut output = tool_output(&result);
    if let Some(document) = output.document.as_object_mut() {
        document.insert("task".into(), json!(handle.latest()));
    }
    Ok(output)
}

/// Whether another run of the command can take up a task of this server:
/// only where the task outlives this run's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resumable {
    /// HTTP on 2026-07-28: a task is the server's, named by its id alone.
    Yes,
    /// stdio: the server process ends with this command, its tasks with it.
    NotOverStdio,
    /// HTTP before 2026-07-28: a task belongs to the session, which this
    /// command ends when it exits (and a new run gets a new one).
    NotInASession,
}

fn resumable(binding: &Binding) -> Resumable {
    let status = binding.status();
    match status.transport_kind.as_str() {
        "stdio" => Resumable::NotOverStdio,
        _ if status.protocol_version.as_str() >= MODERN_ERA => Resumable::Yes,
        _ => Resumable::NotInASession,
    }
}

/// The first version of the era whose tasks are not bound to a session.
const MODERN_ERA: &str = "2026-07-28";

/// A wait that ended before the task did: the task runs on at the server,
/// and the message says how to take it up again, where another run can.
fn still_running(id: &str, e: &Error, resumable: Resumable) -> Failure {
    let (code, mut report) = failure(EXIT_CALL, e);
    if e.class() == FailureClass::Deadline {
        let id = clean_line(id);
        let hint = match resumable {
            Resumable::Yes => {
                format!("`mcp tasks result {id}` waits again, `mcp tasks cancel {id}` stops it")
            }
            Resumable::NotOverStdio => format!(
                "task {id} ends with the server process when this command exits (stdio); \
                 raise --request-timeout-ms to wait longer"
            ),
            Resumable::NotInASession => format!(
                "task {id} belongs to this run's HTTP session, which ends when this command exits; \
                 another run cannot take it up: raise --request-timeout-ms to wait longer"
            ),
        };
        report.message = format!("{}: {hint}", report.message);
    }
    (code, report)
}

/// `task ID: status: message`, made safe for a terminal.
fn status_line(info: &TaskInfo) -> String {
    let message = info.message.as_deref().map(|m| format!(": {}", clean_line(m))).unwrap_or_default();
    format!("task {}: {}{message}", clean_line(&info.id), info.status)
}

/// Where a task's status changes are shown, each once, and its progress.
struct StatusDisplay {
    how: How,
    last: Mutex<Option<(TaskStatus, Option<String>)>>,
    /// The line shown for the last status, and for the last progress.
    line: Mutex<(String, String)>,
}

enum How {
    Line(ProgressBar),
    Lines,
    Quiet,
}

impl StatusDisplay {
    fn new(json_out: bool) -> StatusDisplay {
        let how = if json_out {
            How::Quiet
        } else if std::io::stderr().is_terminal() {
            let line = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            line.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("a valid template"));
            line.enable_steady_tick(Duration::from_millis(120));
            How::Line(line)
        } else {
            How::Lines
        };
        StatusDisplay { how, last: Mutex::new(None), line: Mutex::new(Default::default()) }
    }

    fn show(&self, info: Option<&TaskInfo>) {
        let Some(info) = info else { return };
        let now = Some((info.status, info.message.clone()));
        {
            let mut last = self.last.lock().expect("status lock");
            if *last == now {
                return;
            }
            *last = now;
        }
        match &self.how {
            How::Line(_) => self.redraw(|line| line.0 = status_line(info)),
            How::Lines => err_line(&status_line(info)),
            How::Quiet => {}
        }
    }

    /// Call options that show the task's progress here.
    fn progress_opts(self: &Arc<Self>) -> CallOpts {
        if matches!(self.how, How::Quiet) {
            return CallOpts::default();
        }
        let display = self.clone();
        CallOpts::default().with_progress(move |p| {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = clean_line(p.message.as_deref().unwrap_or_default());
            let progress = format!("progress {}{total} {message}", p.progress);
            match &display.how {
                How::Line(_) => display.redraw(|line| line.1 = progress),
                _ => err_line(progress.trim_end()),
            }
        })
    }

    /// Changes the terminal's line: the status, then the progress.
    fn redraw(&self, change: impl FnOnce(&mut (String, String))) {
        let How::Line(bar) = &self.how else { return };
        let mut line = self.line.lock().expect("line lock");
        change(&mut line);
        let text =
            if line.1.is_empty() { line.0.clone() } else { format!("{} · {}", line.0, line.1.trim_end()) };
        bar.set_message(text);
    }

    fn finish(&self) {
        if let How::Line(line) = &self.how {
            line.finish_and_clear();
        }
    }
}
