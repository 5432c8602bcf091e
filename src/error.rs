//! The crate's one error type, [`Error`], and its stable classification,
//! [`FailureClass`].

use serde::{Serialize, Serializer};
use std::fmt;

/// The largest message, in bytes, an [`Error`] keeps. Longer text is cut at a
/// UTF-8 boundary and marked with `…`.
pub(crate) const MAX_ERROR_MESSAGE_BYTES: usize = 1024;

/// A boxed error, as tower uses.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

macro_rules! failure_classes {
    ($( $(#[$doc:meta])* $variant:ident => $id:literal, )*) => {
        /// What kind of failure occurred.
        ///
        /// The snake_case identifier of each class ([`FailureClass::as_str`]) is
        /// stable: it is what logs, metrics and other programs should record.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum FailureClass {
            $( $(#[$doc])* $variant, )*
        }

        impl FailureClass {
            /// Every class, in declaration order.
            pub const ALL: &'static [FailureClass] = &[ $( FailureClass::$variant, )* ];

            /// The stable snake_case identifier of this class.
            pub const fn as_str(self) -> &'static str {
                match self { $( FailureClass::$variant => $id, )* }
            }

            /// Parses a stable identifier back into its class.
            pub fn from_id(id: &str) -> Option<Self> {
                match id { $( $id => Some(FailureClass::$variant), )* _ => None }
            }
        }
    };
}

impl FailureClass {
    /// Whether this is one of the authorization classes (`auth_required`,
    /// `auth_denied`, `auth_expired`, `auth_failed`).
    pub fn is_auth(self) -> bool {
        matches!(
            self,
            FailureClass::AuthRequired
                | FailureClass::AuthDenied
                | FailureClass::AuthExpired
                | FailureClass::AuthFailed
        )
    }
}

failure_classes! {
    /// The definition or a call's options are invalid; nothing was sent.
    InvalidConfig => "invalid_config",
    /// A call's arguments are unusable (not JSON, not an object, not what
    /// the tool or prompt takes, over a bound); nothing was sent.
    InvalidArguments => "invalid_arguments",
    /// The server speaks no protocol version this crate supports.
    UnsupportedProtocol => "unsupported_protocol",
    /// Connecting plus the handshake did not finish within `Timeouts::startup`.
    StartupTimeout => "startup_timeout",
    /// The server requires authorization that was not supplied.
    AuthRequired => "auth_required",
    /// The server refused the supplied authorization.
    AuthDenied => "auth_denied",
    /// The supplied authorization expired.
    AuthExpired => "auth_expired",
    /// An authorization flow failed.
    AuthFailed => "auth_failed",
    /// The connection to the server ended or could not be made.
    TransportClosed => "transport_closed",
    /// A frame could not be read: over its bound, or not a message at all.
    Framing => "framing",
    /// An HTTP exchange failed with a status the protocol gives no meaning to.
    RemoteHttp => "remote_http",
    /// The server broke the protocol (a malformed or contradictory message).
    ServerProtocol => "server_protocol",
    /// The call's deadline passed.
    Deadline => "deadline",
    /// The caller cancelled the call.
    Cancelled => "cancelled",
    /// The server's catalog could not be validated.
    CatalogInvalid => "catalog_invalid",
    /// The catalog the call relied on is stale.
    CatalogStale => "catalog_stale",
    /// The server's catalog exceeds a limit.
    CatalogOverLimit => "catalog_over_limit",
    /// The named tool, prompt or resource does not exist.
    NotFound => "not_found",
    /// The tool exists but this binding may not call it.
    ToolUnavailable => "tool_unavailable",
    /// The tool's schema changed since the catalog the caller used.
    ToolSchemaChanged => "tool_schema_changed",
    /// The server answered a tool call with a JSON-RPC error.
    RemoteToolError => "remote_tool_error",
    /// The server answered any other request (a prompt, a resource, a
    /// completion, a list) with a JSON-RPC error.
    RemoteError => "remote_error",
    /// A result or message exceeded a limit and was refused.
    LimitExceeded => "limit_exceeded",
    /// What the server served does not match what it declared of it (a
    /// skill file's size, digest or frontmatter, an app resource that is
    /// not `text/html;profile=mcp-app`); the content is refused.
    VerificationFailed => "verification_failed",
    /// A person declined an elicitation.
    ElicitationDeclined => "elicitation_declined",
    /// A person cancelled an elicitation.
    ElicitationCancelled => "elicitation_cancelled",
    /// An elicitation request or answer was invalid.
    ElicitationInvalid => "elicitation_invalid",
    /// Nobody answered an elicitation in time.
    ElicitationTimeout => "elicitation_timeout",
    /// The host refused a sampling request.
    SamplingDenied => "sampling_denied",
    /// A sampling request exceeded a budget (tokens, depth, concurrency).
    SamplingOverBudget => "sampling_over_budget",
    /// The request may or may not have taken effect: its connection was lost
    /// after it was sent and before its reply arrived. It is never replayed.
    Indeterminate => "indeterminate",
    /// The binding is closing or closed.
    Shutdown => "shutdown",
    /// The host's own layers refused the request because they are at
    /// capacity (tower's `load_shed` answered `Overloaded`): nothing reached
    /// the server. Trying later may pass; the binding never retries it.
    Overloaded => "overloaded",
    /// A failure this crate does not recognise: an error from a user layer
    /// or another library's middleware that is neither an [`Error`] nor one
    /// of tower's known errors anywhere in its source chain. It promises
    /// nothing: the request may or may not have reached the server, so it
    /// is never retried. A layer that knows better returns an [`Error`] of
    /// the right class (or wraps one in its error's source chain).
    Unknown => "unknown",
}

/// Serialized as its stable identifier ([`FailureClass::as_str`]).
impl Serialize for FailureClass {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A classified failure of one operation on one binding.
///
/// `Display` prints `class: [binding] op: message`. The cause, when there is
/// one, is available through [`std::error::Error::source`] for downcasting.
///
/// Every failure the crate reports carries a class. Callers decide what to do
/// from the class (retry, re-authenticate, show a person, give up), never by
/// parsing message text. Messages are bounded and stripped of control
/// characters before they are stored, because much of what they quote comes
/// from a server.
pub struct Error {
    class: FailureClass,
    binding: Option<String>,
    op: &'static str,
    message: String,
    http_status: Option<u16>,
    /// In milliseconds: at most a day ([`MAX_RETRY_AFTER_MS`]), and four
    /// bytes keep `Error` (which every `Result` of the crate carries) small.
    retry_after_ms: Option<u32>,
    source: Option<BoxError>,
}

/// The longest `Retry-After` an error keeps: a day, in milliseconds.
const MAX_RETRY_AFTER_MS: u32 = 24 * 60 * 60 * 1000;

impl Error {
    /// A new error of `class` with a message (bounded and normalized here).
    pub fn new(class: FailureClass, message: impl AsRef<str>) -> Self {
        Error {
            class,
            binding: None,
            op: "",
            message: normalize_message(message.as_ref(), MAX_ERROR_MESSAGE_BYTES),
            http_status: None,
            retry_after_ms: None,
            source: None,
        }
    }

    /// Names the binding the failure belongs to (kept if already set).
    pub fn with_binding(mut self, binding: impl Into<String>) -> Self {
        if self.binding.is_none() {
            self.binding = Some(normalize_message(&binding.into(), 128));
        }
        self
    }

    /// Names the operation that failed (kept if already set).
    pub fn with_op(mut self, op: &'static str) -> Self {
        if self.op.is_empty() {
            self.op = op;
        }
        self
    }

    /// Records the HTTP status the server answered with (kept if already
    /// set). The transports set it on every failure an HTTP answer caused,
    /// so that a host tells a 404 from a 429 or a 503 without reading the
    /// message.
    pub fn with_http_status(mut self, status: u16) -> Self {
        if self.http_status.is_none() {
            self.http_status = Some(status);
        }
        self
    }

    /// The HTTP status behind this failure, when an HTTP answer caused it
    /// (`remote_http` for most statuses, `auth_required` for 401,
    /// `auth_denied` for 403, ...); `None` for every other failure.
    ///
    /// ```
    /// use mcp_stack::{Error, FailureClass};
    ///
    /// let e = Error::new(FailureClass::RemoteHttp, "the server answered HTTP 429").with_http_status(429);
    /// assert_eq!(e.http_status(), Some(429));
    /// assert_eq!(Error::new(FailureClass::Deadline, "late").http_status(), None);
    /// ```
    pub fn http_status(&self) -> Option<u16> {
        self.http_status
    }

    /// Records how long the server asked the client to wait before trying
    /// again (its `Retry-After`, on a 429 or 503). Kept if already set.
    pub fn with_retry_after(mut self, delay: std::time::Duration) -> Self {
        let ms = delay.as_millis().min(u128::from(MAX_RETRY_AFTER_MS)) as u32;
        self.retry_after_ms.get_or_insert(ms);
        self
    }

    /// How long the server asked the client to wait before trying again,
    /// when it said (`Retry-After` on a 429 or 503, in seconds or as a
    /// date, at most a day). The binding's retries honour it within the
    /// call's deadline; a host that retries on its own should too.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.retry_after_ms.map(|ms| std::time::Duration::from_millis(u64::from(ms)))
    }

    /// Appends `note` to the message (after `; `), bounded like any
    /// message: what a layer learned about the failure (why it was not
    /// retried, say) without hiding what happened.
    pub(crate) fn add_note(&mut self, note: &str) {
        self.message = normalize_message(&format!("{}; {note}", self.message), MAX_ERROR_MESSAGE_BYTES);
    }

    /// Attaches the underlying cause.
    pub fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What kind of failure this is.
    pub fn class(&self) -> FailureClass {
        self.class
    }

    /// The binding the failure belongs to, if known.
    pub fn binding(&self) -> Option<&str> {
        self.binding.as_deref()
    }

    /// The operation that failed (for example `call_tool`), or `""`.
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// The bounded, normalized description.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Changes the class, keeping everything else. Used where a layer knows
    /// more than the layer below (a lost connection becomes `indeterminate`
    /// for a request that had already been sent).
    pub fn reclassify(mut self, class: FailureClass) -> Self {
        self.class = class;
        self
    }

    /// Recovers an [`Error`] from a boxed error, as tower's own middleware
    /// (`Buffer`, `Timeout`, `LoadShed`, a `Filter`'s predicate) and user
    /// layers return.
    ///
    /// The error's whole source chain is searched, outermost first, as
    /// tonic finds a `Status` in it: the first [`Error`] found keeps its
    /// class (a `Buffer` error wrapping one of ours is ours); tower's
    /// `Elapsed` is `deadline`; tower's `Overloaded` is `overloaded`.
    /// Anything else is `unknown`, which promises nothing about whether the
    /// request reached the server (never `transport_closed`, which promises
    /// it did not and which the retry policy acts on). The original error is
    /// kept as the [source](std::error::Error::source), for downcasting.
    ///
    /// ```
    /// use mcp_stack::{BoxError, Error, FailureClass};
    ///
    /// let shed: BoxError = Box::new(tower::load_shed::error::Overloaded::new());
    /// assert_eq!(Error::from_boxed(shed).class(), FailureClass::Overloaded);
    /// let other: BoxError = "a user layer gave up".into();
    /// assert_eq!(Error::from_boxed(other).class(), FailureClass::Unknown);
    /// ```
    pub fn from_boxed(err: BoxError) -> Self {
        let err = match err.downcast::<Error>() {
            Ok(ours) => return *ours,
            Err(other) => other,
        };
        let mut found = None;
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*err);
        // A chain is finite in practice; the bound keeps a cyclic one finite.
        for _ in 0..MAX_SOURCE_CHAIN {
            let Some(e) = cause else { break };
            if let Some(ours) = e.downcast_ref::<Error>() {
                found = Some(ours.copy_without_source());
                break;
            }
            if e.is::<tower::timeout::error::Elapsed>() {
                found = Some(Error::new(FailureClass::Deadline, "a layer's timeout elapsed"));
                break;
            }
            if e.is::<tower::load_shed::error::Overloaded>() {
                found = Some(Error::new(FailureClass::Overloaded, "a layer shed the request: at capacity"));
                break;
            }
            cause = e.source();
        }
        let found = found.unwrap_or_else(|| Error::new(FailureClass::Unknown, err.to_string()));
        found.with_source(err)
    }

    /// This error without its source (which cannot be cloned): for an
    /// [`Error`] found inside another error's source chain.
    fn copy_without_source(&self) -> Self {
        Error {
            class: self.class,
            binding: self.binding.clone(),
            op: self.op,
            message: self.message.clone(),
            http_status: self.http_status,
            retry_after_ms: self.retry_after_ms,
            source: None,
        }
    }
}

/// How deep [`Error::from_boxed`] looks into a source chain.
const MAX_SOURCE_CHAIN: usize = 32;

impl From<BoxError> for Error {
    fn from(err: BoxError) -> Self {
        Error::from_boxed(err)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("class", &self.class)
            .field("binding", &self.binding)
            .field("op", &self.op)
            .field("message", &self.message)
            .field("http_status", &self.http_status)
            .field("retry_after", &self.retry_after())
            // The source's own text is not bounded by this crate; it is
            // scrubbed and bounded here like every other quote.
            .field(
                "source",
                &self.source.as_ref().map(|s| normalize_message(&s.to_string(), MAX_ERROR_MESSAGE_BYTES)),
            )
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.class)?;
        if let Some(b) = &self.binding {
            write!(f, "[{b}] ")?;
        }
        if !self.op.is_empty() {
            write!(f, "{}: ", self.op)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// What an [`Error`] says, as data: the serializable view of an error, for
/// a host that reports failures as JSON (a gateway's response, a CLI's
/// `--json` output, a log record).
///
/// It holds what `Display` prints and nothing else: not the
/// [source](std::error::Error::source), whose text this crate does not
/// bound and which may quote what it should not. The message is already
/// bounded and stripped of control characters.
///
/// ```
/// use mcp_stack::{Error, FailureClass};
///
/// let e = Error::new(FailureClass::Deadline, "late").with_binding("files").with_op("call_tool");
/// assert_eq!(
///     serde_json::to_value(e.report()).unwrap(),
///     serde_json::json!({"class": "deadline", "message": "late", "binding": "files", "op": "call_tool"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ErrorReport {
    /// The stable class ([`Error::class`]), serialized as its snake_case id.
    pub class: FailureClass,
    /// The bounded description ([`Error::message`]).
    pub message: String,
    /// The binding, if known ([`Error::binding`]).
    pub binding: Option<String>,
    /// The operation that failed, if known ([`Error::op`]).
    pub op: Option<String>,
    /// The HTTP status behind the failure, if any ([`Error::http_status`]);
    /// serialized as `httpStatus`, and left out when there is none.
    #[serde(rename = "httpStatus", skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// How long the server asked to wait before trying again, in
    /// milliseconds ([`Error::retry_after`]); serialized as `retryAfterMs`,
    /// and left out when it said nothing.
    #[serde(rename = "retryAfterMs", skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Error {
    /// The serializable view of this error (see [`ErrorReport`]).
    pub fn report(&self) -> ErrorReport {
        ErrorReport::from(self)
    }
}

impl From<&Error> for ErrorReport {
    fn from(e: &Error) -> Self {
        ErrorReport {
            class: e.class,
            message: e.message.clone(),
            binding: e.binding.clone(),
            op: (!e.op.is_empty()).then(|| e.op.to_string()),
            http_status: e.http_status,
            retry_after_ms: e.retry_after_ms.map(u64::from),
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether `c` must not reach a terminal from server text: a control
/// character (Unicode Cc: C0, DEL and the C1 controls U+0080–U+009F, which
/// include the 8-bit escape introducers) or a bidirectional formatting
/// character (the embeddings and overrides U+202A–U+202E, the isolates
/// U+2066–U+2069, the marks U+200E, U+200F and U+061C), which can make text
/// display in an order other than the one it has ("Trojan Source").
pub(crate) fn is_display_hazard(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Bounds `text` to `max` bytes (cut at a UTF-8 boundary, marked with `…`)
/// and replaces control characters and bidirectional formatting characters
/// ([`is_display_hazard`]) with spaces, so that text quoted from a server
/// can neither flood a log, forge lines in it, nor reorder what it shows.
///
/// First of all it removes every secret the process holds or sent
/// ([`crate::redact::scrub`]): this is the function every quote from a
/// server passes before it reaches an [`Error`], an event or a log line,
/// which makes it the crate's one redaction point. Redaction runs on the
/// whole text, before the bound, so that a cut cannot split a secret.
pub(crate) fn normalize_message(text: &str, max: usize) -> String {
    let text = crate::redact::scrub(text);
    let mut out = String::with_capacity(text.len().min(max));
    for ch in text.chars() {
        let ch = if is_display_hazard(ch) { ' ' } else { ch };
        if out.len() + ch.len_utf8() > max {
            // Leave room for the ellipsis (3 bytes) within the bound.
            while out.len() + '…'.len_utf8() > max {
                out.pop();
            }
            out.push('…');
            return out;
        }
        out.push(ch);
    }
    out
}

/// A duration as a person reads it in a message: `350 ms`, `1 s`, `2.5 s`,
/// `2 min 5 s`; rounded (a deadline of 999.996924 ms is `1 s`).
pub(crate) fn for_people(d: std::time::Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if d.is_zero() {
        return "0 ms".into();
    }
    if ms < 1.0 {
        return "under 1 ms".into();
    }
    if ms < 999.5 {
        return format!("{} ms", ms.round());
    }
    let tenths = (d.as_secs_f64() * 10.0).round() as u64;
    if tenths < 600 {
        return match tenths % 10 {
            0 => format!("{} s", tenths / 10),
            t => format!("{}.{t} s", tenths / 10),
        };
    }
    let secs = d.as_secs_f64().round() as u64;
    match (secs / 60, secs % 60) {
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

/// Cuts `text` to at most `max` bytes at a UTF-8 boundary. Returns whether it
/// was cut.
pub(crate) fn truncate_utf8(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 13, item 5: bidirectional formatting characters and C1
    /// controls are display hazards (replaced by a space when quoted);
    /// ordinary text, including no-break and zero-width spaces, is not.
    #[test]
    fn the_hazard_predicate_covers_bidi_and_c1_but_not_text() {
        let hazards = [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{0080}', '\u{0085}', '\u{009B}', '\u{009F}',
        ];
        for c in hazards {
            assert!(is_display_hazard(c), "U+{:04X}", c as u32);
        }
        for c in ['a', 'é', 'ب', '\u{00A0}', '\u{200B}', '\u{2070}', '\u{2029}'] {
            assert!(!is_display_hazard(c), "U+{:04X}", c as u32);
        }
        assert_eq!(normalize_message("a\u{202E}b\u{009B}31mc", 64), "a b 31mc");
    }

    #[test]
    fn class_ids_round_trip_and_are_snake_case() {
        assert_eq!(FailureClass::ALL.len(), 34);
        for class in FailureClass::ALL {
            let id = class.as_str();
            assert!(id.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{id}");
            assert_eq!(FailureClass::from_id(id), Some(*class));
        }
        assert_eq!(FailureClass::from_id("nope"), None);
    }

    #[test]
    fn messages_are_bounded_and_stripped() {
        let e = Error::new(FailureClass::ServerProtocol, "a\nb\u{1b}[31mc");
        assert_eq!(e.message(), "a b [31mc");
        let long = "é".repeat(2000);
        let e = Error::new(FailureClass::ServerProtocol, &long);
        assert!(e.message().len() <= MAX_ERROR_MESSAGE_BYTES);
        assert!(e.message().ends_with('…'));
    }

    #[test]
    fn display_names_class_binding_and_op() {
        let e = Error::new(FailureClass::Deadline, "late").with_binding("files").with_op("call_tool");
        assert_eq!(e.to_string(), "deadline: [files] call_tool: late");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        use std::time::Duration;
        let cases = [
            (Duration::ZERO, "0 ms"),
            (Duration::from_micros(300), "under 1 ms"),
            (Duration::from_micros(349_600), "350 ms"),
            (Duration::from_nanos(999_996_924), "1 s"),
            (Duration::from_millis(2_549), "2.5 s"),
            (Duration::from_secs(60), "1 min"),
            (Duration::from_secs(125), "2 min 5 s"),
        ];
        for (d, text) in cases {
            assert_eq!(for_people(d), text, "{d:?}");
        }
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        let mut s = "aé".to_string();
        assert!(truncate_utf8(&mut s, 2));
        assert_eq!(s, "a");
        let mut s = "abc".to_string();
        assert!(!truncate_utf8(&mut s, 3));
    }

    #[test]
    fn boxed_errors_keep_their_class() {
        let boxed: BoxError = Box::new(Error::new(FailureClass::Shutdown, "closed"));
        assert_eq!(Error::from_boxed(boxed).class(), FailureClass::Shutdown);
        let other: BoxError = "plain".into();
        let e = Error::from_boxed(other);
        assert_eq!(e.class(), FailureClass::Unknown, "an unknown error promises nothing");
        assert_eq!(e.message(), "plain");
    }

    /// An error that wraps another, as a user layer's or tower's `Buffer`
    /// (`ServiceError`) does.
    #[derive(Debug)]
    struct Wrapping(BoxError);

    impl fmt::Display for Wrapping {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("wrapped")
        }
    }

    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&*self.0)
        }
    }

    /// Issue 43, item 2: the class comes from the first recognised error
    /// anywhere in the chain; the original stays the source.
    #[test]
    fn the_source_chain_is_searched() {
        let ours = Error::new(FailureClass::Indeterminate, "lost").with_http_status(502).with_op("call_tool");
        let nested: BoxError = Box::new(Wrapping(Box::new(Wrapping(Box::new(ours)))));
        let e = Error::from_boxed(nested);
        assert_eq!(e.class(), FailureClass::Indeterminate);
        assert_eq!((e.message(), e.http_status(), e.op()), ("lost", Some(502), "call_tool"));
        let source = std::error::Error::source(&e).expect("the original is kept");
        assert!(source.is::<Wrapping>());

        let elapsed: BoxError = Box::new(Wrapping(Box::new(tower::timeout::error::Elapsed::new())));
        assert_eq!(Error::from_boxed(elapsed).class(), FailureClass::Deadline);
        let shed: BoxError = Box::new(Wrapping(Box::new(tower::load_shed::error::Overloaded::new())));
        assert_eq!(Error::from_boxed(shed).class(), FailureClass::Overloaded);
        let io: BoxError = Box::new(Wrapping(Box::new(std::io::Error::other("reset"))));
        assert_eq!(Error::from_boxed(io).class(), FailureClass::Unknown);
    }
}
