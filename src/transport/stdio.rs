//! A server run as a child process, speaking newline-delimited JSON-RPC on
//! its stdin and stdout.
//!
//! [`StdioFactory`] starts one child per connection. What the child gets:
//!
//! - **Environment**: it starts empty (`env_clear`). Of the parent's
//!   environment only the variables in [`INHERITED_ENV`] are passed on, when
//!   set: `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `LANG`,
//!   `LC_ALL`, `LC_CTYPE`, `TMPDIR` and `TZ`; the certificate-bundle paths
//!   (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, `SSL_CERT_DIR`,
//!   `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`, `PIP_CERT`); and the proxy
//!   settings of [`INHERITED_PROXY_ENV`] (`HTTPS_PROXY`, `HTTP_PROXY`,
//!   `ALL_PROXY`, `NO_PROXY`, in both cases), and nothing else. Then the
//!   variables the definition names ([`StdioFactory::env`]) are added; they
//!   win over an inherited one of the same name. A token the host holds in
//!   its own environment therefore never reaches a server unless the
//!   definition passes it on explicitly.
//!
//!   Why those: a server started through `npx` or `uvx` first fetches
//!   itself, and behind a TLS-intercepting proxy that fails without the
//!   proxy and the company's certificate bundle, silently, until the
//!   startup timeout. The certificate variables hold paths, not secrets.
//!   A proxy URL may hold credentials (`http://user:password@proxy:3128`):
//!   they are passed on, since the server cannot reach the network without
//!   them and the host's user set them for exactly that, but every proxy
//!   value (and its user and password) is registered with
//!   [`crate::redact`] while the factory lives, so no error, event or log
//!   shows it, and no `Debug` output names it. `NO_PROXY` holds host
//!   names and is not registered.
//! - **Process group**: the child leads a new process group (its pid is the
//!   group id), so that closing can signal everything it started.
//! - **stdin / stdout**: piped. Each message is written as one line
//!   (`message + "\n"`); replies are read by a [`FrameReader`], which bounds
//!   every frame to [`ConnectConfig::max_frame_bytes`] while reading. A
//!   message the server splits over several lines (pretty-printed JSON) is
//!   recognised by a [`SplitCheck`]: reported once as a damaged frame, and
//!   when it was a reply, its request ends at once with `framing` (see
//!   [`super::framing`] for the decision).
//! - **stderr**: piped, never inherited, and drained continuously by a task,
//!   so a chatty child can never block on a full pipe. Each line (cut at
//!   [`STDERR_LINE_BYTES`]) goes to [`ConnectConfig::diagnostics`] if set, and
//!   the last [`STDERR_TAIL_LINES`] are kept to explain a child that dies,
//!   or one that does not finish starting
//!   ([`TransportFactory::startup_hint`], quoted by the dialer's
//!   `startup_timeout` error with the environment it was given). Blank
//!   lines are dropped.
//!
//! When the child's stdout ends without [`MessageSender::close`] having been
//! called, the receiver returns a `transport_closed` error naming the exit
//! status (waited for at most [`EXIT_STATUS_WAIT`]) and the last stderr lines.
//!
//! Closing ([`MessageSender::close`], idempotent, bounded by about three
//! times the shutdown grace, [`DEFAULT_SHUTDOWN_GRACE`] unless set):
//!
//! 1. close the child's stdin, and wait up to the grace for it to exit;
//! 2. if anything in its process group is still alive (the child, or
//!    something it started, even after the child itself has exited), send
//!    `SIGTERM` to the whole group and wait up to the grace for the group to
//!    empty;
//! 3. then `SIGKILL` the group, and reap the child.
//!
//! A transport dropped without being closed sends `SIGKILL` to the group
//! when its last half goes; `kill_on_drop` covers the direct child should even
//! that be skipped.
//!
//! The [`RedactedOrigin`] is `stdio:<program file name>`; the arguments are
//! never part of it, nor of any error or `Debug` output, since they may hold
//! secrets. The same goes for the values of the definition's variables.

use async_trait::async_trait;
use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{watch, Mutex, OnceCell};
use tokio::time::{timeout, timeout_at, Instant};

use super::framing::{FrameReader, SplitCheck};
use super::{
    ConnectConfig, Inbound, MessageReceiver, MessageSender, RedactedOrigin, Transport, TransportFactory,
};
use crate::error::{normalize_message, truncate_utf8, Error, FailureClass};

/// The parent's environment variables a child inherits (when set), besides
/// the proxy settings of [`INHERITED_PROXY_ENV`]. Nothing else of the
/// parent's environment reaches it. The certificate-bundle variables are
/// here so that `npx`, `uvx` and `pip` work behind a TLS-intercepting
/// proxy; they hold paths.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
];

/// The proxy settings a child inherits (when set). Their values may hold
/// credentials: every one but `NO_PROXY` is registered with
/// [`crate::redact`] (see the [module docs](self)).
pub const INHERITED_PROXY_ENV: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// How long each step of closing waits before the next, stronger one.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How many of the child's last stderr lines are kept.
pub const STDERR_TAIL_LINES: usize = 32;

/// The longest stderr line kept or passed to diagnostics, in bytes; the rest
/// of a longer line is dropped (and the line marked with `…`).
pub const STDERR_LINE_BYTES: usize = 1024;

/// How long the receiver waits, once stdout has ended, for the child's exit
/// status and the rest of its stderr.
pub const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

/// How much of the stderr tail an error quotes, in bytes (most recent lines
/// first to be kept).
const STDERR_IN_ERROR_BYTES: usize = 600;

/// How much of the stderr tail a startup hint quotes, in bytes: less than an
/// error of a dead child, since the hint shares the timeout's message.
const STDERR_IN_HINT_BYTES: usize = 480;

/// How often closing checks whether the process group has emptied.
const GROUP_POLL: Duration = Duration::from_millis(10);

/// The size of the stderr drain's read buffer.
const STDERR_READ_BYTES: usize = 8 << 10;

/// Starts an MCP server as a child process per connection.
///
/// ```no_run
/// # use mcp_stack::transport::stdio::StdioFactory;
/// # use std::time::Duration;
/// let factory = StdioFactory::new("uvx")
///     .arg("mcp-server-fetch")
///     .env("FETCH_TOKEN", "…")
///     .shutdown_grace(Duration::from_secs(1));
/// ```
pub struct StdioFactory {
    program: OsString,
    args: Vec<OsString>,
    current_dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    shutdown_grace: Duration,
    origin: RedactedOrigin,
    last_pid: StdMutex<Option<u32>>,
    /// The stderr tail of the child started last, for [`TransportFactory::startup_hint`].
    last_stderr: StdMutex<Option<StderrTail>>,
    /// The inherited proxy values, known to the redaction point while the
    /// factory lives (replaced at each start).
    proxy_secrets: StdMutex<Vec<crate::redact::Registration>>,
}

/// The last stderr lines of one child.
type StderrTail = Arc<StdMutex<VecDeque<String>>>;

impl fmt::Debug for StdioFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Arguments and variable values may hold secrets: count or name them only.
        let env_keys: Vec<_> = self.env.iter().map(|(k, _)| k.to_string_lossy()).collect();
        f.debug_struct("StdioFactory")
            .field("origin", &self.origin)
            .field("args", &self.args.len())
            .field("env_keys", &env_keys)
            .field("has_current_dir", &self.current_dir.is_some())
            .field("shutdown_grace", &self.shutdown_grace)
            .finish_non_exhaustive()
    }
}

impl StdioFactory {
    /// A factory that runs `program` (looked up in the child's `PATH` if it
    /// has no slash) with no arguments.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        let program = program.as_ref().to_os_string();
        let origin = origin_for(&program);
        StdioFactory {
            program,
            args: Vec::new(),
            current_dir: None,
            env: Vec::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            origin,
            last_pid: StdMutex::new(None),
            last_stderr: StdMutex::new(None),
            proxy_secrets: StdMutex::new(Vec::new()),
        }
    }

    /// A factory from a shell-like command line: words separated by
    /// whitespace, `'single'` and `"double"` quotes, and backslash escapes, as
    /// a POSIX shell splits them. Nothing is expanded (no `$VAR`, `~`, globs
    /// or comments) and no shell runs. The first word is the program.
    ///
    /// An empty line or an unterminated quote is an `invalid_config` error
    /// (which does not quote the line, since it may hold secrets).
    pub fn from_command_line(line: &str) -> Result<Self, Error> {
        let words = split_command_line(line)
            .map_err(|why| Error::new(FailureClass::InvalidConfig, format!("stdio command line: {why}")))?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| Error::new(FailureClass::InvalidConfig, "stdio command line is empty"))?;
        Ok(StdioFactory::new(program).args(words))
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Runs the child in `dir`.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Sets a variable in the child's environment, on top of the inherited
    /// allowlist ([`INHERITED_ENV`]). Setting the same key again replaces it.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let key = key.as_ref().to_os_string();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.as_ref().to_os_string()));
        self
    }

    /// How long each step of closing waits (default
    /// [`DEFAULT_SHUTDOWN_GRACE`]).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The process id of the child this factory started last, if any. Each
    /// child leads its own process group, so this is also that group's id.
    /// For diagnostics and tests; the process may have exited since.
    pub fn last_pid(&self) -> Option<u32> {
        *self.last_pid.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn command(&self) -> Result<Command, Error> {
        if self.program.is_empty() {
            return Err(Error::new(FailureClass::InvalidConfig, "stdio program is empty"));
        }
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).env_clear();
        for key in INHERITED_ENV {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        let mut secrets = Vec::new();
        for key in INHERITED_PROXY_ENV {
            if let Some(value) = std::env::var_os(key) {
                if !key.eq_ignore_ascii_case("NO_PROXY") {
                    secrets.extend(
                        proxy_secrets(&value.to_string_lossy()).iter().map(|s| crate::redact::register(s)),
                    );
                }
                cmd.env(key, value);
            }
        }
        *self.proxy_secrets.lock().unwrap_or_else(|e| e.into_inner()) = secrets;
        for (key, value) in &self.env {
            let bytes = key.as_encoded_bytes();
            if bytes.is_empty() || bytes.contains(&b'=') || bytes.contains(&0) {
                return Err(Error::new(
                    FailureClass::InvalidConfig,
                    format!("{}: invalid environment variable name {:?}", self.origin, key.to_string_lossy()),
                ));
            }
            cmd.env(key, value);
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        Ok(cmd)
    }
}

#[async_trait]
impl TransportFactory for StdioFactory {
    fn kind(&self) -> &'static str {
        "stdio"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.origin.clone()
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let binding = config.binding.clone();
        let mut cmd = self.command().map_err(|e| e.with_binding(&binding))?;
        let mut child = cmd.spawn().map_err(|e| {
            Error::new(
                FailureClass::TransportClosed,
                format!("{}: could not start the server: {e}", self.origin),
            )
            .with_binding(&binding)
            .with_source(e)
        })?;
        let missing = || {
            Error::new(FailureClass::TransportClosed, format!("{}: child has no pipes", self.origin))
                .with_binding(&binding)
        };
        let (Some(pid), Some(stdin), Some(stdout), Some(stderr)) =
            (child.id(), child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // `kill_on_drop` ends the child.
            return Err(missing());
        };
        let Ok(raw_pid) = i32::try_from(pid) else {
            return Err(missing());
        };
        *self.last_pid.lock().unwrap_or_else(|e| e.into_inner()) = Some(pid);
        let pid = Pid::from_raw(raw_pid);

        let tail = Arc::new(StdMutex::new(VecDeque::with_capacity(STDERR_TAIL_LINES)));
        *self.last_stderr.lock().unwrap_or_else(|e| e.into_inner()) = Some(tail.clone());
        let (stderr_done_tx, stderr_done) = watch::channel(false);
        tokio::spawn(drain_stderr(stderr, tail.clone(), config.diagnostics.clone(), stderr_done_tx));

        // The reaper owns the child: it records the exit status as soon as
        // there is one, and its `kill_on_drop` is the last resort.
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.map_err(|e| e.to_string());
            exit_tx.send_replace(Some(status));
        });

        let shared = Arc::new(Shared {
            origin: self.origin.clone(),
            binding,
            pid,
            grace: self.shutdown_grace,
            closing: AtomicBool::new(false),
            exit,
            stderr_done,
            stderr_tail: tail,
            group: GroupGuard { pgid: pid, released: AtomicBool::new(false) },
        });
        let sender = StdioSender {
            stdin: Mutex::new(StdinState { stdin: Some(stdin), dirty: false }),
            closed: OnceCell::new(),
            shared: shared.clone(),
        };
        let receiver = StdioReceiver {
            reader: FrameReader::new(stdout, config.max_frame_bytes),
            split: SplitCheck::new(config.max_frame_bytes),
            ready: VecDeque::new(),
            shared,
            finished: false,
        };
        Ok(Transport { sender: Arc::new(sender), receiver: Box::new(receiver) })
    }

    /// What the child started last wrote on stderr, and the environment it
    /// was given: a server that does not finish starting is most often one
    /// that `npx` or `uvx` could not fetch, or one missing a variable.
    fn startup_hint(&self) -> Option<String> {
        let tail = self.last_stderr.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
        let said = match summarize_tail(&tail, STDERR_IN_HINT_BYTES) {
            Some(lines) => format!("the server's last stderr: {lines}"),
            None => "the server wrote nothing on stderr".to_string(),
        };
        let hint = format!(
            "{said}; a stdio server gets only an allowlist of this environment (PATH, HOME, LANG, \
             the certificate-bundle and proxy variables, …: mcp_stack::transport::stdio::INHERITED_ENV) \
             and what its definition sets: pass what it needs with --env KEY=VALUE (\"env\" in a config file)"
        );
        Some(normalize_message(&hint, 900))
    }
}

/// What of a proxy setting is secret: the whole value, and the user
/// information and password of a URL that carries them.
fn proxy_secrets(value: &str) -> Vec<String> {
    let mut secrets = vec![value.to_string()];
    let rest = value.split_once("://").map_or(value, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if let Some((userinfo, _host)) = authority.rsplit_once('@') {
        secrets.push(userinfo.to_string());
        if let Some((_user, password)) = userinfo.split_once(':') {
            secrets.push(password.to_string());
        }
    }
    secrets
}

/// `stdio:` and the program's file name, without its directory or arguments.
fn origin_for(program: &OsStr) -> RedactedOrigin {
    let path = Path::new(program);
    let name = path.file_name().unwrap_or(program).to_string_lossy();
    RedactedOrigin::from_redacted(format!("stdio:{}", normalize_message(&name, 128)))
}

/// The exit status, or why it could not be had.
type ExitResult = Result<ExitStatus, String>;

/// What both halves of one connection share.
struct Shared {
    origin: RedactedOrigin,
    binding: String,
    /// The child's pid, which is also its process group's id.
    pid: Pid,
    grace: Duration,
    /// Set once `close` has begun: the end of stdout is then expected.
    closing: AtomicBool,
    exit: watch::Receiver<Option<ExitResult>>,
    stderr_done: watch::Receiver<bool>,
    stderr_tail: Arc<StdMutex<VecDeque<String>>>,
    group: GroupGuard,
}

/// Kills the process group when the connection goes without being closed.
struct GroupGuard {
    pgid: Pid,
    released: AtomicBool,
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
    fn signal_all(&self, signal: Signal) {
        signal_group(self.group.pgid, signal);
        // Until it is reaped, the pid cannot have been reused.
        if !self.exited() {
            let _ = kill(self.pid, signal);
        }
    }

    async fn wait_exit(&self, limit: Duration) -> Option<ExitResult> {
        let mut exit = self.exit.clone();
        let status = match timeout(limit, exit.wait_for(Option::is_some)).await {
            Ok(Ok(status)) => status.clone(),
            _ => None,
        };
        status
    }

    /// Waits until the child has exited and its group is empty, or until
    /// `deadline`. Returns whether that happened.
    async fn wait_group_gone(&self, deadline: Instant) -> bool {
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
    async fn ended(&self, what: &str) -> Error {
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

/// The most recent lines of `tail` that fit in `max` bytes, oldest first and
/// joined by ` | ` (the last one cut when even it does not fit), or `None`
/// when there are none.
fn summarize_tail(tail: &StdMutex<VecDeque<String>>, max: usize) -> Option<String> {
    let tail = tail.lock().unwrap_or_else(|e| e.into_inner());
    let mut kept = Vec::new();
    let mut used = 0;
    for line in tail.iter().rev() {
        if used + line.len() + 3 > max {
            if kept.is_empty() {
                let mut cut = line.clone();
                truncate_utf8(&mut cut, max);
                kept.push(cut);
            }
            break;
        }
        used += line.len() + 3;
        kept.push(line.clone());
    }
    if kept.is_empty() {
        return None;
    }
    kept.reverse();
    Some(kept.join(" | "))
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

struct StdinState {
    stdin: Option<ChildStdin>,
    /// A write began and did not finish (its future was dropped): the child
    /// may hold part of a line, which the next send ends first.
    dirty: bool,
}

struct StdioSender {
    stdin: Mutex<StdinState>,
    closed: OnceCell<()>,
    shared: Arc<Shared>,
}

impl StdioSender {
    fn closed_error(&self, detail: &str) -> Error {
        Error::new(FailureClass::TransportClosed, format!("{}: {detail}", self.shared.origin))
            .with_binding(&self.shared.binding)
    }

    async fn shutdown(&self) {
        let shared = &*self.shared;
        shared.closing.store(true, Ordering::SeqCst);
        let grace = shared.grace;

        // 1. End stdin, the polite request to exit. A send stuck on a full
        // pipe holds the lock; the signals below unstick it.
        let deadline = Instant::now() + grace;
        if let Ok(mut state) = timeout_at(deadline, self.stdin.lock()).await {
            if let Some(mut stdin) = state.stdin.take() {
                let _ = timeout_at(deadline, stdin.shutdown()).await;
            }
        }
        let _ = timeout_at(deadline, self.shared.exit.clone().wait_for(Option::is_some)).await;

        // 2. Whatever is left of the group gets SIGTERM, even if the child
        // itself has gone: what it started must not outlive it.
        if !shared.wait_group_gone(Instant::now()).await {
            shared.signal_all(Signal::SIGTERM);
            // 3. Then SIGKILL.
            if !shared.wait_group_gone(Instant::now() + grace).await {
                shared.signal_all(Signal::SIGKILL);
            }
        }

        // Reap.
        if shared.wait_exit(grace).await.is_none() {
            tracing::warn!(origin = %shared.origin, "stdio server did not exit after SIGKILL");
        }
        if shared.wait_group_gone(Instant::now() + grace).await {
            shared.group.released.store(true, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl MessageSender for StdioSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        if message.contains('\n') {
            return Err(Error::new(
                FailureClass::Framing,
                "message contains a newline, which would split its stdio frame",
            )
            .with_binding(&self.shared.binding));
        }
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(self.closed_error("transport closed"));
        }
        let mut state = self.stdin.lock().await;
        let StdinState { stdin, dirty } = &mut *state;
        let Some(stdin) = stdin.as_mut() else {
            return Err(self.closed_error("transport closed"));
        };
        let write_failed =
            |e: std::io::Error| self.closed_error(&format!("writing to the server failed: {e}"));
        if *dirty {
            // End the line a cancelled send left unfinished; the server skips
            // it as one damaged frame.
            stdin.write_all(b"\n").await.map_err(write_failed)?;
        }
        *dirty = true;
        let mut frame = message.into_bytes();
        frame.push(b'\n');
        stdin.write_all(&frame).await.map_err(write_failed)?;
        stdin.flush().await.map_err(write_failed)?;
        *dirty = false;
        Ok(())
    }

    async fn close(&self) -> Result<(), Error> {
        self.closed.get_or_init(|| self.shutdown()).await;
        Ok(())
    }
}

struct StdioReceiver {
    reader: FrameReader<ChildStdout>,
    split: SplitCheck,
    /// What the split check handed back and is not yet delivered (at most
    /// two items).
    ready: VecDeque<Inbound>,
    shared: Arc<Shared>,
    finished: bool,
}

#[async_trait]
impl MessageReceiver for StdioReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        let mut out = Vec::new();
        // Each turn delivers, or reads one frame from the child, or ends;
        // the state changes only after a read completes, so this stays
        // cancel-safe.
        let end = loop {
            if let Some(ready) = self.ready.pop_front() {
                return Ok(Some(ready));
            }
            if self.finished {
                return Ok(None);
            }
            let end = match self.reader.next_frame().await {
                Ok(Some(inbound)) => {
                    self.split.feed(inbound, &mut out);
                    self.ready.extend(out.drain(..));
                    continue;
                }
                Ok(None) => "closed its stdout".to_string(),
                Err(err) => format!("stdout read failed: {err}"),
            };
            // A split message cut short by the end is reported before it.
            self.split.finish(&mut out);
            if out.is_empty() {
                break end;
            }
            self.ready.extend(out.drain(..));
        };
        self.finished = true;
        if self.shared.closing.load(Ordering::SeqCst) {
            return Ok(None);
        }
        Err(self.shared.ended(&end).await)
    }
}

/// Reads the child's stderr to its end, keeping the tail and feeding
/// diagnostics. Never stops reading early, so the child never blocks on it.
async fn drain_stderr(
    mut stderr: ChildStderr,
    tail: Arc<StdMutex<VecDeque<String>>>,
    mut diagnostics: Option<Arc<dyn Fn(String) + Send + Sync>>,
    done: watch::Sender<bool>,
) {
    let mut buf = vec![0u8; STDERR_READ_BYTES];
    let mut line = StderrLine::default();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        while let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
            line.push(&chunk[..pos]);
            line.emit(&tail, &mut diagnostics);
            chunk = &chunk[pos + 1..];
        }
        line.push(chunk);
    }
    line.emit(&tail, &mut diagnostics);
    done.send_replace(true);
}

#[derive(Default)]
struct StderrLine {
    bytes: Vec<u8>,
    cut: bool,
}

impl StderrLine {
    fn push(&mut self, piece: &[u8]) {
        let room = STDERR_LINE_BYTES - self.bytes.len();
        if piece.len() > room {
            self.cut = true;
        }
        self.bytes.extend_from_slice(&piece[..room.min(piece.len())]);
    }

    fn emit(
        &mut self,
        tail: &StdMutex<VecDeque<String>>,
        diagnostics: &mut Option<Arc<dyn Fn(String) + Send + Sync>>,
    ) {
        if self.bytes.last() == Some(&b'\r') {
            self.bytes.pop();
        }
        let blank = self.bytes.iter().all(u8::is_ascii_whitespace);
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        self.bytes.clear();
        if std::mem::take(&mut self.cut) {
            truncate_utf8(&mut text, STDERR_LINE_BYTES - '…'.len_utf8());
            text.push('…');
        } else if blank {
            return;
        }
        {
            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text.clone());
        }
        if let Some(callback) = diagnostics {
            let callback = callback.clone();
            // A panicking callback must not stop the drain (the child would
            // then block on a full pipe): it is dropped instead.
            let panicked =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || callback(text))).is_err();
            if panicked {
                tracing::warn!("the diagnostics callback panicked; stderr lines are no longer passed to it");
                *diagnostics = None;
            }
        }
    }
}

/// Splits a command line as a POSIX shell would, without expanding anything.
fn split_command_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated single quote"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated double quote"),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated double quote"),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    word.push(c);
                }
                None => return Err("trailing backslash"),
            },
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_command_line(line).unwrap()
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(split("cmd arg1 'arg two'"), ["cmd", "arg1", "arg two"]);
        assert_eq!(split("  a\t b  "), ["a", "b"]);
        assert_eq!(split(r#"a "b \"c\" \$d \x" e\ f"#), ["a", r#"b "c" $d \x"#, "e f"]);
        assert_eq!(split("a '' \"\" b"), ["a", "", "", "b"]);
        assert_eq!(split("'it''s' x"), ["its", "x"]);
        assert_eq!(split("x'y'\"z\"w"), ["xyzw"]);
        assert_eq!(split("$HOME ~ *"), ["$HOME", "~", "*"]);
        assert!(split("").is_empty());
        assert!(split_command_line("a 'b").is_err());
        assert!(split_command_line("a \"b").is_err());
        assert!(split_command_line("a \\").is_err());
    }

    #[test]
    fn from_command_line_needs_a_program_and_hides_the_line() {
        let err = StdioFactory::from_command_line("   ").unwrap_err();
        assert_eq!(err.class(), FailureClass::InvalidConfig);
        let err = StdioFactory::from_command_line("server --token 'sekrit").unwrap_err();
        assert_eq!(err.class(), FailureClass::InvalidConfig);
        assert!(!err.to_string().contains("sekrit"));
        let factory = StdioFactory::from_command_line("/opt/bin/server --token sekrit 'a b'").unwrap();
        assert_eq!(factory.args, ["--token", "sekrit", "a b"]);
        assert_eq!(factory.redacted_origin().as_str(), "stdio:server");
    }

    #[test]
    fn origin_and_debug_hold_no_arguments_or_values() {
        let factory = StdioFactory::new("/usr/local/bin/mcp-server")
            .args(["--api-key", "sekrit"])
            .env("API_TOKEN", "hunter2")
            .env("API_TOKEN", "hunter3");
        assert_eq!(factory.kind(), "stdio");
        assert_eq!(factory.redacted_origin().as_str(), "stdio:mcp-server");
        let debug = format!("{factory:?}");
        assert!(!debug.contains("sekrit") && !debug.contains("hunter"), "{debug}");
        assert!(debug.contains("API_TOKEN"));
        assert_eq!(factory.env.len(), 1);
    }

    #[test]
    fn stderr_lines_are_bounded() {
        let tail = StdMutex::new(VecDeque::new());
        let mut diagnostics = None;
        let mut line = StderrLine::default();
        line.push(&[b'e'; 3000]);
        line.push(b"more");
        line.emit(&tail, &mut diagnostics);
        for i in 0..100 {
            line.push(format!("line {i}\r").as_bytes());
            line.emit(&tail, &mut diagnostics);
            line.push(b"  ");
            line.emit(&tail, &mut diagnostics);
        }
        let tail = tail.into_inner().unwrap();
        assert_eq!(tail.len(), STDERR_TAIL_LINES);
        assert_eq!(tail.back().unwrap(), "line 99");
        assert!(tail.iter().all(|l| l.len() <= STDERR_LINE_BYTES));
    }

    #[test]
    fn proxy_credentials_are_secrets() {
        assert_eq!(
            proxy_secrets("http://alice:s3cr3t-pw@proxy.corp:3128/"),
            ["http://alice:s3cr3t-pw@proxy.corp:3128/", "alice:s3cr3t-pw", "s3cr3t-pw"]
        );
        assert_eq!(proxy_secrets("proxy.corp:3128"), ["proxy.corp:3128"]);
        assert_eq!(proxy_secrets("http://tok@p:1"), ["http://tok@p:1", "tok"]);
    }

    #[test]
    fn invalid_variable_names_are_refused() {
        let err = StdioFactory::new("sh").env("A=B", "x").command().unwrap_err();
        assert_eq!(err.class(), FailureClass::InvalidConfig);
    }
}
