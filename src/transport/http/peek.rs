//! [`Peek`]: the few fields of a JSON-RPC message the HTTP transports route
//! by (id, method, the request a cancellation names), read without parsing
//! the message.
//!
//! Apart from the transports because all three route by it, and apart from
//! the protocol types because it builds no values, so a message of any
//! depth can be peeked at.

use serde::Deserialize;

use crate::protocol::RequestId;
use crate::transport::DAMAGED_PREFIX_BYTES;

/// The fields of a JSON-RPC message the transports route by.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Peek {
    #[serde(default)]
    pub(crate) id: Option<RequestId>,
    #[serde(default)]
    pub(crate) method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
    #[serde(default)]
    jsonrpc: Option<serde_json::Value>,
    /// Whether a `result` member is there (its value is skipped, not built).
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekParams {
    #[serde(default, rename = "requestId")]
    request_id: Option<RequestId>,
}

impl Peek {
    pub(crate) fn of(text: &str) -> Peek {
        Self::parse(text).unwrap_or_default()
    }

    /// The routing fields of `text`, or `None` when it is not a JSON object
    /// they can be read from. Reading them builds no values, so a message of
    /// any depth can be peeked at.
    pub(crate) fn parse(text: &str) -> Option<Peek> {
        serde_json::from_str(text).ok()
    }

    /// The id of a request (a message with a method and an id).
    pub(crate) fn request_id(&self) -> Option<&RequestId> {
        self.method.as_ref().and(self.id.as_ref())
    }

    /// For `notifications/cancelled`, the request it cancels.
    pub(crate) fn cancels(&self) -> Option<&RequestId> {
        if self.method.as_deref() != Some(crate::protocol::methods::NOTIFICATIONS_CANCELLED) {
            return None;
        }
        self.params.as_ref().and_then(|p| p.request_id.as_ref())
    }

    /// Whether this is a JSON-RPC 2.0 success response (a non-null
    /// `result`, no `error`): one the connection takes as the end of its
    /// request whatever the result holds.
    pub(crate) fn is_result(&self) -> bool {
        self.method.is_none()
            && self.result.is_some()
            && self.error.is_none()
            && self.jsonrpc.as_ref().and_then(serde_json::Value::as_str) == Some("2.0")
    }

    /// Whether this is the response to `id`.
    pub(crate) fn answers(&self, id: &RequestId) -> bool {
        self.method.is_none() && self.id.as_ref() == Some(id)
    }

    /// The request this answers, when it is a response to another than
    /// `id`.
    pub(crate) fn answers_other(&self, id: &RequestId) -> Option<&RequestId> {
        self.id.as_ref().filter(|answered| self.method.is_none() && *answered != id)
    }
}

/// A stand-in frame start naming `id`, for a damaged reply whose own start
/// does not (the engine reads the id from a damaged frame's prefix).
pub(crate) fn id_prefix(id: &RequestId) -> String {
    let id = serde_json::to_string(id).unwrap_or_default();
    let mut prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},");
    crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_routes_messages() {
        let p = Peek::of(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#);
        assert_eq!(p.request_id(), Some(&RequestId::Number(3)));
        let p = Peek::of(r#"{"result":{},"jsonrpc":"2.0","id":3}"#);
        assert!(p.answers(&RequestId::Number(3)));
        assert!(!p.answers(&RequestId::Number(4)));
        let p =
            Peek::of(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}"#);
        assert_eq!(p.cancels(), Some(&RequestId::String("r".into())));
        assert!(p.request_id().is_none());
        let p = Peek::of("not json");
        assert!(p.id.is_none() && p.method.is_none());
        assert!(id_prefix(&RequestId::String("a".into())).contains(r#""id":"a""#));
    }
}
