//! A server run as a child process, speaking newline-delimited JSON-RPC on
//! its stdin and stdout.
//!
//! [`StdioFactory`] starts one child per connection. What the child gets:
//!
//! - **Environment**: it starts empty (`env_clear`). Of the parent's
//!   environment only these variables are passed on, when
//!   set: `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `LANG`,
//!   `LC_ALL`, `LC_CTYPE`, `TMPDIR` and `TZ`; the certificate-bundle paths
//!   (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, `SSL_CERT_DIR`,
//!   `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`, `PIP_CERT`); and the proxy
//!   settings (`HTTPS_PROXY`, `HTTP_PROXY`,
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
//!   (`message + "\n"`); replies are read by a `FrameReader`, which bounds
//!   every frame to [`ConnectConfig::max_frame_bytes`] while reading. A
//!   message the server splits over several lines (pretty-printed JSON) is
//!   recognised by a `SplitCheck`: reported once as a damaged frame, and
//!   when it was a reply, its request ends at once with `framing` (see
//!   `super::framing` for the decision).
//! - **stderr**: piped, never inherited, and drained continuously by a task,
//!   so a chatty child can never block on a full pipe. Each line (cut at
//!   1024 bytes) goes to [`ConnectConfig::diagnostics`] if set, and
//!   the last 32 are kept to explain a child that dies,
//!   or one that does not finish starting
//!   ([`TransportFactory::startup_hint`], quoted by the dialer's
//!   `startup_timeout` error with the environment it was given). Blank
//!   lines are dropped.
//!
//! When the child's stdout ends without [`MessageSender::close`] having been
//! called, the receiver returns a `transport_closed` error naming the exit
//! status (waited for at most 1 s) and the last stderr lines.
//!
//! Closing ([`MessageSender::close`], idempotent, bounded by about three
//! times the shutdown grace, 2 s unless set):
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
//!
//! [`MessageSender::close`]: crate::transport::MessageSender::close

use async_trait::async_trait;
use nix::unistd::Pid;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;
use tokio::sync::{watch, Mutex, OnceCell};

use super::framing::{FrameReader, SplitCheck};
use super::{ConnectConfig, RedactedOrigin, Transport, TransportFactory};
use crate::error::{normalize_message, Error, FailureClass};
use command::split_command_line;
use process::{GroupGuard, Shared};
use receiver::StdioReceiver;
use sender::{StdinState, StdioSender};
use stderr::{drain_stderr, summarize_tail, StderrTail};

mod command;
mod process;
mod receiver;
mod sender;
mod stderr;
#[cfg(test)]
mod tests;

/// The parent's environment variables a child inherits (when set), besides
/// the proxy settings of [`INHERITED_PROXY_ENV`]. Nothing else of the
/// parent's environment reaches it. The certificate-bundle variables are
/// here so that `npx`, `uvx` and `pip` work behind a TLS-intercepting
/// proxy; they hold paths.
pub(crate) const INHERITED_ENV: &[&str] = &[
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
pub(crate) const INHERITED_PROXY_ENV: &[&str] = &[
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
pub(crate) const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How many of the child's last stderr lines are kept.
pub(crate) const STDERR_TAIL_LINES: usize = 32;

/// The longest stderr line kept or passed to diagnostics, in bytes; the rest
/// of a longer line is dropped (and the line marked with `…`).
pub(crate) const STDERR_LINE_BYTES: usize = 1024;

/// How long the receiver waits, once stdout has ended, for the child's exit
/// status and the rest of its stderr.
pub(crate) const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

/// How much of the stderr tail a startup hint quotes, in bytes: less than an
/// error of a dead child, since the hint shares the timeout's message.
const STDERR_IN_HINT_BYTES: usize = 480;

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
    /// allowlist (see the [module docs](self)). Setting the same key again replaces it.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let key = key.as_ref().to_os_string();
        self.env.retain(|(k, _)| *k != key);
        self.env.push((key, value.as_ref().to_os_string()));
        self
    }

    /// How long each step of closing waits (default
    /// 2 s).
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
}

#[async_trait]
impl TransportFactory for StdioFactory {
    fn kind(&self) -> &'static str {
        "stdio"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.origin.clone()
    }

    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        let mut part = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_be_bytes());
            h.update(bytes);
        };
        part(self.program.as_encoded_bytes());
        for arg in &self.args {
            part(arg.as_encoded_bytes());
        }
        part(self.current_dir.as_deref().map(|d| d.as_os_str().as_encoded_bytes()).unwrap_or(b"\0"));
        for (k, v) in &self.env {
            part(k.as_encoded_bytes());
            part(v.as_encoded_bytes());
        }
        Some(h.finalize().into())
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

        // Grows as lines come (to STDERR_TAIL_LINES): a quiet child costs
        // nothing here.
        let tail = Arc::new(StdMutex::new(VecDeque::new()));
        *self.last_stderr.lock().unwrap_or_else(|e| e.into_inner()) = Some(tail.clone());
        let (stderr_done_tx, stderr_done) = watch::channel(false);
        let drain = drain_stderr(stderr, tail.clone(), config.diagnostics.clone(), stderr_done_tx);

        // The reaper owns the child: it records the exit status as soon as
        // there is one, and its `kill_on_drop` is the last resort.
        let (exit_tx, exit) = watch::channel(None);
        let reap = async move {
            let status = child.wait().await.map_err(|e| e.to_string());
            exit_tx.send_replace(Some(status));
        };
        // One task for both: each goes on while the other has ended (a
        // grandchild may hold stderr open after the child exits).
        tokio::spawn(async move {
            tokio::join!(drain, reap);
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
             the certificate-bundle and proxy variables, …: see StdioFactory's docs) \
             and what its definition sets: pass what it needs with --env KEY=VALUE (\"env\" in a config file)"
        );
        Some(normalize_message(&hint, 900))
    }
}

/// `stdio:` and the program's file name, without its directory or arguments.
fn origin_for(program: &OsStr) -> RedactedOrigin {
    let path = Path::new(program);
    let name = path.file_name().unwrap_or(program).to_string_lossy();
    RedactedOrigin::from_redacted(format!("stdio:{}", normalize_message(&name, 128)))
}
