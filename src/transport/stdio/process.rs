//! The child process and its group, shared by both halves of a
//! connection: its exit status, signals to the whole group, waiting for the
//! group to empty, and the error for a child that went while nobody was
//! closing.
//!
//! Apart from the sender and the receiver because both need it: closing
//! signals the group, and the receiver explains a stdout that ended.

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::process::ExitStatus;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::{timeout, timeout_at, Instant};

use super::stderr::{summarize_tail, StderrTail};
use super::EXIT_STATUS_WAIT;
use crate::error::{Error, FailureClass};
use crate::transport::RedactedOrigin;

/// How much of the stderr tail an error quotes, in bytes (most recent lines
/// first to be kept).
const STDERR_IN_ERROR_BYTES: usize = 600;

/// How often closing checks whether the process group has emptied.
const GROUP_POLL: Duration = Duration::from_millis(10);

/// The exit status, or why it could not be had.
type ExitResult = Result<ExitStatus, String>;

/// What both halves of one connection share.
pub(super) struct Shared {
    pub(super) origin: RedactedOrigin,
    pub(super) binding: String,
    /// The child's pid, which is also its process group's id.
    pub(super) pid: Pid,
    pub(super) grace: Duration,
    /// Set once `close` has begun: the end of stdout is then expected.
    pub(super) closing: AtomicBool,
    pub(super) exit: watch::Receiver<Option<ExitResult>>,
    pub(super) stderr_done: watch::Receiver<bool>,
    pub(super) stderr_tail: StderrTail,
    pub(super) group: GroupGuard,
}

/// Kills the process group when the connection goes without being closed.
pub(super) struct GroupGuard {
    pub(super) pgid: Pid,
    pub(super) released: AtomicBool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !*self.released.get_mut() {
            signal_group(self.pgid, Signal::SIGKILL);
        }
    }
}

fn signal_group(pgid: Pid, signal: Signal) {
    match killpg(pgid, signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(err) => tracing::debug!(%err, ?signal, "signalling a stdio server's process group failed"),
    }
}

impl Shared {
    fn exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    /// Whether anything is left in the child's process group (an unreaped
    /// child counts).
    fn group_alive(&self) -> bool {
        !matches!(killpg(self.group.pgid, None), Err(Errno::ESRCH))
    }

    /// Signals the group, and the child itself should it have left it.
    pub(super) fn signal_all(&self, signal: Signal) {
        signal_group(self.group.pgid, signal);
        // Until it is reaped, the pid cannot have been reused.
        if !self.exited() {
            let _ = kill(self.pid, signal);
        }
    }

    pub(super) async fn wait_exit(&self, limit: Duration) -> Option<ExitResult> {
        let mut exit = self.exit.clone();
        let status = match timeout(limit, exit.wait_for(Option::is_some)).await {
            Ok(Ok(status)) => status.clone(),
            _ => None,
        };
        status
    }

    /// Waits until the child has exited and its group is empty, or until
    /// `deadline`. Returns whether that happened.
    pub(super) async fn wait_group_gone(&self, deadline: Instant) -> bool {
        loop {
            if self.exited() && !self.group_alive() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(GROUP_POLL).await;
        }
    }

    /// The error for a stdout that ended while nobody was closing.
    pub(super) async fn ended(&self, what: &str) -> Error {
        let deadline = Instant::now() + EXIT_STATUS_WAIT;
        let status = match timeout_at(deadline, self.exit.clone().wait_for(Option::is_some)).await {
            Ok(Ok(status)) => status.clone(),
            _ => None,
        };
        // Let the drain catch up with what the child wrote before it went.
        let _ = timeout_at(deadline, self.stderr_done.clone().wait_for(|done| *done)).await;
        let status = match status {
            Some(Ok(status)) => describe_status(status),
            Some(Err(err)) => format!("exit status unknown ({err})"),
            None => format!("still running after {} ms", EXIT_STATUS_WAIT.as_millis()),
        };
        Error::new(
            FailureClass::TransportClosed,
            format!("{} {what}; server process {status}; {}", self.origin, self.stderr_summary()),
        )
        .with_binding(&self.binding)
    }

    /// The most recent stderr lines that fit in [`STDERR_IN_ERROR_BYTES`].
    fn stderr_summary(&self) -> String {
        match summarize_tail(&self.stderr_tail, STDERR_IN_ERROR_BYTES) {
            Some(lines) => format!("last stderr: {lines}"),
            None => "no stderr output".to_string(),
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        format!("exited with status {code}")
    } else if let Some(signal) = status.signal() {
        let name = Signal::try_from(signal).map(|s| s.as_str()).unwrap_or("unknown");
        format!("killed by signal {signal} ({name})")
    } else {
        format!("ended ({status})")
    }
}
