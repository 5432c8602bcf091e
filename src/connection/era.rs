//! The per-era strategy a connection consults where the protocol eras
//! differ ([`Era`]) and what it reads a result as ([`Reply`]), defined here,
//! below the handshakes that choose an era ([`crate::era`]), so that the
//! connection depends on no era.

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

use super::RpcError;
use crate::error::Error;
use crate::protocol::{methods, Notification, RequestId};
use crate::request::McpRequest;
use crate::transport::WireHeaders;

/// What a result means, as the era reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// The request is done; this is its result.
    Complete(Value),
    /// The server needs input from the client before it can answer (a
    /// modern `input_required` result): fulfil the requests and send the
    /// request again.
    InputRequired(InputRequired),
}

/// A modern `input_required` result: what the server asks, and the state it
/// wants back verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct InputRequired {
    /// The input requests by key: each `{ "method": .., "params": .. }`.
    pub input_requests: Map<String, Value>,
    /// The opaque state to echo unchanged, if the server sent one.
    pub request_state: Option<Value>,
}

/// Entries an era puts into every request's `_meta`, encoded once when the
/// era is made: each value, for a caller's `_meta` to be merged with, and
/// the whole object, written as it is into a request without one (most
/// requests). An entry here replaces the caller's entry of the same name;
/// the caller's other entries are kept.
#[derive(Debug, Clone)]
pub(crate) struct RequestMeta {
    entries: Vec<(String, Box<RawValue>)>,
    whole: Box<RawValue>,
}

impl Default for RequestMeta {
    fn default() -> Self {
        RequestMeta { entries: Vec::new(), whole: RawValue::from_string("{}".into()).expect("valid JSON") }
    }
}

impl RequestMeta {
    /// Sets `key` to `value`, replacing an entry of that name.
    pub(crate) fn insert(&mut self, key: &str, value: &Value) {
        let encoded = serde_json::value::to_raw_value(value).expect("a JSON value encodes");
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = encoded,
            None => self.entries.push((key.to_string(), encoded)),
        }
        let whole: std::collections::BTreeMap<&str, &RawValue> = self.entries().collect();
        self.whole = serde_json::value::to_raw_value(&whole).expect("encoded values encode");
    }

    /// Whether the era sets `key`.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// The entries, in the order they were first set.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), &**v))
    }

    /// Every entry as one encoded object.
    pub(crate) fn whole(&self) -> &RawValue {
        &self.whole
    }
}

/// How a server tells the client its lists changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeStyle {
    /// Free-floating `notifications/*/list_changed` and
    /// `resources/subscribe` (legacy).
    Notifications,
    /// One `subscriptions/listen` stream (modern).
    ListenStream,
}

/// The per-era strategy a connection uses once the handshake has chosen it.
pub(crate) trait Era: Send + Sync + fmt::Debug + 'static {
    /// The negotiated protocol version.
    fn protocol_version(&self) -> &str;

    /// What this era adds to every request's `_meta`, already encoded
    /// (the default: nothing).
    ///
    /// The entries are merged into the request's text as it is written
    /// ([`request_json`](super::call::request_json)), never into the
    /// request: its params stay shared with whoever keeps a clone (the
    /// retry layer, to send it again), and the same entries are not copied
    /// and encoded again for every request.
    fn request_meta(&self) -> Option<&RequestMeta> {
        None
    }

    /// The message that cancels request `id`, or `None` when this era cancels
    /// by closing the request's stream.
    fn cancel_notice(&self, id: &RequestId) -> Option<Notification> {
        Some(cancelled_notification(id, "abandoned by the client"))
    }

    /// How this era announces catalog changes and carries resource
    /// subscriptions: free-floating notifications and `resources/subscribe`
    /// (the default), or one `subscriptions/listen` stream.
    fn change_style(&self) -> ChangeStyle {
        ChangeStyle::Notifications
    }

    /// Whether the server's log level is set once with `logging/setLevel`
    /// (the default), rather than asked for on every request (2026-07-28,
    /// whose requests carry the level in `_meta`).
    fn sets_log_level(&self) -> bool {
        true
    }

    /// Whether the client tells the server its roots changed
    /// (`notifications/roots/list_changed`, the default). An era whose
    /// server asks for the roots with each request that needs them has no
    /// such notification.
    fn announces_roots_changes(&self) -> bool {
        true
    }

    /// Whether a tool's `x-mcp-header` arguments travel as typed
    /// `Mcp-Param-*` headers (on a transport that carries headers), so that
    /// a tool whose annotations are invalid cannot be called. The default:
    /// no.
    fn mirrors_tool_params(&self) -> bool {
        false
    }

    /// Whether a request of `method` whose reply was lost while the
    /// connection stayed up (an HTTP response stream that broke: the
    /// transport reports it `indeterminate`) is sent again with a new id.
    /// The default: never (the legacy era resumes streams instead).
    fn reissue_on_loss(&self, method: &str) -> bool {
        let _ = method;
        false
    }

    /// Whether a request the server sends on its own (`elicitation/create`,
    /// `roots/list`, `ping`, ...) is served. The default: yes. An era whose
    /// server asks only through results (2026-07-28's `input_required`)
    /// says no, and the connection then drops such a request unanswered,
    /// with a warning: it never reaches a handler, and no response (not
    /// even an error) is sent, since that era forbids the client any.
    fn serves_server_requests(&self) -> bool {
        true
    }

    /// The classified error for a JSON-RPC error the server answered with.
    fn classify_error(&self, error: RpcError) -> Error {
        error.into_error()
    }

    /// What the result of `method` means. The default: every result is
    /// complete.
    fn reply(&self, method: &str, result: Value) -> Result<Reply, Error> {
        let _ = method;
        Ok(Reply::Complete(result))
    }

    /// The HTTP headers that mirror a request's method and params (sent by
    /// transports that carry headers; others ignore them), plus the
    /// per-request ones a layer put in the request's `extensions`. The
    /// default: none.
    fn wire_headers(&self, req: &McpRequest) -> WireHeaders {
        let _ = req;
        WireHeaders::default()
    }
}

/// A `notifications/cancelled` for `id`.
pub(crate) fn cancelled_notification(id: &RequestId, reason: &str) -> Notification {
    Notification::new(
        methods::NOTIFICATIONS_CANCELLED,
        Some(serde_json::json!({ "requestId": id, "reason": reason })),
    )
}

/// The era a connection speaks before any handshake has chosen one: plain
/// JSON-RPC with legacy cancellation.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Unnegotiated;

impl Era for Unnegotiated {
    fn protocol_version(&self) -> &str {
        ""
    }
}
