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

/// The most pages of `tasks list` read (each bounded by
/// `--max-catalog-items`).
const MAX_TASK_PAGES: usize = 100;

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
        TaskStart::Task(handle) => follow(display, &handle).await,
    }
}

/// `tasks ...`, against one server.
pub(crate) async fn command(cli: &Cli, host: &Host, action: &TaskAction) -> Result<Output, Failure> {
    let binding = one_server(cli, host).await?;
    let call_failed = |e: Error| failure(EXIT_CALL, &e);
    Ok(match action {
        TaskAction::List => {
            let (mut tasks, mut warnings, mut cursor) = (Vec::new(), Vec::new(), None);
            for _ in 0..MAX_TASK_PAGES {
                let page = binding.list_tasks_page(cursor.as_deref()).await.map_err(call_failed)?;
                tasks.extend(page.items);
                warnings.extend(page.warnings);
                cursor = page.next_cursor;
                if cursor.is_none() {
                    break;
                }
            }
            if cursor.is_some() {
                warnings.push(format!(
                    "the server has more than {MAX_TASK_PAGES} pages of tasks; the rest were not read"
                ));
            }
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
            follow(Arc::new(StatusDisplay::new(cli.json)), &binding.task(id)).await?
        }
        TaskAction::Cancel { id } => {
            let info = binding.task(id).cancel().await.map_err(call_failed)?;
            Output::ok(json!({ "task": info }), vec![status_line(&info)])
        }
    })
}

/// Shows the task's status changes while waiting for its result, within
/// the request deadline.
async fn follow(display: Arc<StatusDisplay>, handle: &TaskHandle) -> Result<Output, Failure> {
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
    let result = outcome.map_err(|e| still_running(handle.id(), &e))?;
    let mut output = tool_output(&result);
    if let Some(document) = output.document.as_object_mut() {
        document.insert("task".into(), json!(handle.latest()));
    }
    Ok(output)
}

/// A wait that ended before the task did: the task runs on at the server,
/// and the message says how to take it up again.
fn still_running(id: &str, e: &Error) -> Failure {
    let (code, mut report) = failure(EXIT_CALL, e);
    if e.class() == FailureClass::Deadline {
        let id = clean_line(id);
        report.message = format!(
            "{}: `mcp tasks result {id}` waits again, `mcp tasks cancel {id}` stops it",
            report.message
        );
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
