//! The request and response types that flow through a binding's stack.

use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// One progress report from a server about one call.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// The binding of the server reporting progress.
    pub binding: String,
    /// How far the server claims to have got.
    pub progress: f64,
    /// The server's claimed total, or `None` when it did not say.
    pub total: Option<f64>,
    /// The server's bounded description of what it is doing.
    pub message: Option<String>,
}

/// Receives one call's progress reports.
///
/// It runs on the binding's delivery task, never on the task that reads
/// from the server, so a slow sink cannot stall the connection; that task
/// feeds every call's sink and the log service in the server's order, so a
/// slow sink delays them all and falls behind, and then reports are
/// dropped (see [`crate::layer::progress`]). Hand expensive work off.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(ProgressUpdate) + Send + Sync>);

impl ProgressSink {
    /// Wraps a function.
    pub fn new(f: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        ProgressSink(Arc::new(f))
    }

    /// Delivers one report.
    pub fn deliver(&self, progress: ProgressUpdate) {
        (self.0)(progress)
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink(..)")
    }
}

/// Per-call options.
///
/// ```
/// use mcp_stack::CallOpts;
/// use std::time::Duration;
///
/// let opts = CallOpts::default().with_timeout(Duration::from_secs(5)).with_progress(|p| println!("{}", p.progress));
/// assert_eq!(opts.timeout(), Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallOpts {
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) deadline: Option<Instant>,
    pub(crate) timeout: Option<Duration>,
}

impl CallOpts {
    /// Receives this call's progress. Installing it is what asks the server
    /// for progress: a progress token is attached only when it is set.
    /// Progress never extends the deadline.
    pub fn progress(&self) -> Option<&ProgressSink> {
        self.progress.as_ref()
    }

    /// An absolute deadline for this call. Nothing the server does moves it.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// A timeout for this call, counted from the moment the call enters the
    /// stack (not from when these options were built). With neither this nor
    /// a [`deadline`](Self::deadline), the binding's
    /// [`Timeouts::request`](crate::Timeouts::request) applies; with both,
    /// the earlier instant wins.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Options with a progress sink.
    pub fn with_progress(mut self, f: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressSink::new(f));
        self
    }

    /// Options with an absolute deadline: a [`tokio::time::Instant`] or a
    /// [`std::time::Instant`] (tokio's converts from std's, and the same
    /// clock is behind both outside tests with a paused clock).
    ///
    /// ```
    /// use mcp_stack::CallOpts;
    /// use std::time::{Duration, Instant};
    ///
    /// let opts = CallOpts::default().with_deadline(Instant::now() + Duration::from_secs(5));
    /// assert!(opts.deadline().is_some());
    /// ```
    pub fn with_deadline(mut self, deadline: impl Into<Instant>) -> Self {
        self.deadline = Some(deadline.into());
        self
    }

    /// Options whose deadline is `timeout` after the call enters the stack.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The absolute deadline of a call that entered the stack at `entered`,
    /// where `default` is the timeout of a call that set none: the earlier
    /// of `deadline` and `entered + timeout`.
    pub fn deadline_from(&self, entered: Instant, default: Duration) -> Instant {
        let relative = entered + self.timeout.unwrap_or(default);
        match self.deadline {
            Some(deadline) if self.timeout.is_none() => deadline,
            Some(deadline) => deadline.min(relative),
            None => relative,
        }
    }
}

/// One request to a server, as it travels through the stack.
///
/// Cloning is cheap, whatever the size of the params: they are shared, and
/// copied only when a holder of a clone changes them
/// ([`params_mut`](Self::params_mut)). So a layer that keeps a request to
/// send again (tower's `Retry`) keeps a reference count, and every service
/// of the stack, from the top to the connection, takes the same
/// `McpRequest`.
///
/// Every layer of the stack is a `tower::Service<McpRequest>`. A request is a
/// method, its params, the caller's [`CallOpts`], and [`http::Extensions`]:
///
/// - the options that layers read (the deadline, the progress sink) travel
///   with the request instead of living in the layers, so one stack serves
///   callers with different needs;
/// - typed per-request data travels in the extensions, as it does in
///   tower-http and axum: a layer inserts a value of its own type, and the
///   layers below (down to the transport) read it by type. Nothing travels
///   between layers as keys inside the JSON payload, which is the server's.
///
/// A response carries extensions too, for what a layer learnt on the way
/// up: [`ResultMarks`](crate::content::ResultMarks), say, which
/// the conversion into [`Content`](crate::Content) reads.
#[derive(Debug, Clone)]
pub struct McpRequest {
    /// The JSON-RPC method.
    pub method: String,
    /// The params object (empty for a method without params), shared
    /// between clones.
    params: Arc<Map<String, Value>>,
    /// The caller's options.
    pub opts: CallOpts,
    /// Typed per-request data for the layers below (see the
    /// [type docs](McpRequest)).
    pub extensions: http::Extensions,
}

impl McpRequest {
    /// A request with default options.
    pub fn new(method: impl Into<String>, params: Map<String, Value>) -> Self {
        McpRequest {
            method: method.into(),
            params: Arc::new(params),
            opts: CallOpts::default(),
            extensions: Default::default(),
        }
    }

    /// A request for `method` with params given as a JSON value; anything but
    /// an object becomes empty params.
    pub fn with_value(method: impl Into<String>, params: Value) -> Self {
        let params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self::new(method, params)
    }

    /// The params object.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The params object, to change: copied first when a clone of this
    /// request still shares it, so that the change is this request's alone.
    pub fn params_mut(&mut self) -> &mut Map<String, Value> {
        Arc::make_mut(&mut self.params)
    }

    /// Replaces the options.
    pub fn opts(mut self, opts: CallOpts) -> Self {
        self.opts = opts;
        self
    }

    /// For `tools/call`, the raw tool name.
    pub fn tool_name(&self) -> Option<&str> {
        if self.method == crate::protocol::methods::TOOLS_CALL {
            self.params.get("name").and_then(Value::as_str)
        } else {
            None
        }
    }
}

/// A server's successful answer, with the warnings layers added on its way up.
#[derive(Debug, Clone)]
pub struct McpResponse {
    /// The JSON-RPC `result`.
    pub result: Value,
    /// Defects tolerated on the way (a truncated text, a dropped item).
    /// Bounded: at most 64.
    pub warnings: Vec<String>,
    /// Typed data the layers attached on the way up (see the
    /// [`McpRequest`] docs).
    pub extensions: http::Extensions,
}

impl McpResponse {
    /// A response without warnings.
    pub fn new(result: Value) -> Self {
        McpResponse { result, warnings: Vec::new(), extensions: Default::default() }
    }

    /// Adds a warning; a response keeps at most 64.
    pub fn warn(&mut self, text: impl Into<String>) {
        push_warning(&mut self.warnings, text.into());
    }
}

/// A boxed, cloneable service of the stack's request and response: what a
/// binding's user layers wrap (see [`Binding`](crate::Binding#user-layers)).
///
/// `Sync` as well as `Clone` (tower's `BoxCloneSyncService`), so that a
/// binding keeps one and each call clones it, without a lock.
pub type BoxMcpService = tower::util::BoxCloneSyncService<McpRequest, McpResponse, crate::Error>;

/// The most warnings one listing or result keeps.
pub(crate) const MAX_WARNINGS: usize = 64;

/// Adds `text` to `warnings` unless they hold [`MAX_WARNINGS`] already, cut
/// to 512 bytes without control characters.
pub(crate) fn push_warning(warnings: &mut Vec<String>, text: String) {
    if warnings.len() < MAX_WARNINGS {
        warnings.push(crate::error::normalize_message(&text, 512));
    }
}
