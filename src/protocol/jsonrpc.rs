//! The JSON-RPC 2.0 envelope MCP messages travel in.
//!
//! [`Message::parse`] classifies one decoded frame. It is strict about the
//! envelope (what kind of message this is) and lax about everything else:
//! unknown fields are ignored, and `params` / `result` stay raw
//! [`serde_json::Value`]s for the typed layers above to interpret.
//!
//! # Depth
//!
//! A message may nest at most [`MAX_MESSAGE_DEPTH`] levels: serde_json's own
//! recursion limit, which keeps parsing (and everything that walks a
//! [`Value`] afterwards: dropping, cloning, digests, schema checks) off deep
//! stacks. A deeper message is not lost whole: its envelope is read without
//! building values (which has no depth limit), and [`Message::parse`]
//! returns [`EnvelopeError::TooDeep`] with the id, the method and the raw
//! text of the `result` ([`TooDeep`]). The connection ends that request with
//! `limit_exceeded` and the [`TooDeep`] as the error's source, so that a
//! caller that can use part of the result (catalog discovery reads a list
//! entry by entry) still can.

use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::bounded_list::{BoundedResult, ListBound};
use serde_json::Value;
use std::fmt;

/// The `jsonrpc` member every message carries.
pub(crate) const JSONRPC_VERSION: &str = "2.0";

/// The deepest nesting a message (or one value of it parsed alone) may have:
/// a flat object is 1 deep. serde_json refuses the 128th level.
pub(crate) const MAX_MESSAGE_DEPTH: usize = 127;

/// A request id: a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

/// A request: a method, optional params, and an id to correlate the reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The correlation id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Request {
    /// A request with the given id, method and params.
    pub(crate) fn new(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Request { jsonrpc: JSONRPC_VERSION.into(), id, method: method.into(), params }
    }
}

/// A notification: a method and optional params, with no id and no reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The method name.
    pub method: String,
    /// The parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Notification {
    /// A notification with the given method and params.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification { jsonrpc: JSONRPC_VERSION.into(), method: method.into(), params }
    }
}

/// The error object of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short description.
    #[serde(default)]
    pub message: String,
    /// Additional information, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error object with a code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }
}

/// Standard JSON-RPC and MCP error codes.
pub(crate) mod codes {
    /// Invalid JSON was received.
    pub(crate) const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub(crate) const INTERNAL_ERROR: i64 = -32603;
    /// The requested resource does not exist (MCP).
    pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A URL-mode elicitation is required first (MCP 2025-11-25).
    pub(crate) const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// The HTTP headers do not match the body (`HeaderMismatch`, 2026-07-28).
    pub(crate) const HEADER_MISMATCH: i64 = -32020;
    /// The server needs a client capability the request did not declare
    /// (`MissingRequiredClientCapability`, 2026-07-28).
    pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The server does not speak the requested protocol version
    /// (`UnsupportedProtocolVersion`, 2026-07-28); `data.supported` lists
    /// what it speaks.
    pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

    /// Whether `code` is one of the errors only a modern-era (2026-07-28)
    /// server sends: seeing one identifies the server's era.
    pub(crate) fn is_modern(code: i64) -> bool {
        matches!(code, HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION)
    }
}

/// A response: the id of the request it answers and either a result or an
/// error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id of the request answered.
    pub id: RequestId,
    /// The outcome.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The outcome a response carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) enum Outcome {
    /// The request succeeded.
    #[serde(rename = "result")]
    Result(Value),
    /// The request failed.
    #[serde(rename = "error")]
    Error(ErrorObject),
}

impl Response {
    /// A success response.
    pub(crate) fn result(id: RequestId, result: Value) -> Self {
        Response { jsonrpc: JSONRPC_VERSION.into(), id, outcome: Outcome::Result(result) }
    }

    /// An error response.
    pub(crate) fn error(id: RequestId, error: ErrorObject) -> Self {
        Response { jsonrpc: JSONRPC_VERSION.into(), id, outcome: Outcome::Error(error) }
    }
}

/// One classified JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    /// A request that expects a reply.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A reply to one of our requests.
    Response(Response),
}

/// Why a frame is not a usable message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EnvelopeError {
    /// The frame is not JSON, or not a JSON object.
    #[error("not a JSON-RPC message: {0}")]
    NotJson(String),
    /// The frame is JSON but not a valid JSON-RPC 2.0 envelope.
    #[error("invalid JSON-RPC envelope: {0}")]
    Invalid(&'static str),
    /// A response carries both `result` and `error`: it says two
    /// contradictory things, so neither can be believed.
    #[error("response to id {0} carries both result and error")]
    ResultAndError(RequestId),
    /// The message is well-formed JSON but nests deeper than
    /// [`MAX_MESSAGE_DEPTH`]; what its envelope says is kept.
    #[error("{0}")]
    TooDeep(TooDeep),
}

/// A message that nests deeper than [`MAX_MESSAGE_DEPTH`], as far as its
/// envelope could be read without building values.
///
/// The connection ends the request it answers with `limit_exceeded` and
/// this as the error's source: [`TooDeep::result`] holds the raw text of the
/// `result`, for a caller that can read it piece by piece (each piece parsed
/// alone is bounded again by [`MAX_MESSAGE_DEPTH`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the message nests deeper than {} levels", MAX_MESSAGE_DEPTH)]
pub(crate) struct TooDeep {
    id: Option<RequestId>,
    method: Option<String>,
    result: Option<String>,
}

impl TooDeep {
    /// The message's id: the request it answers, or the server request's
    /// own id.
    pub(crate) fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The method, for a request or a notification.
    pub(crate) fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// The raw JSON text of a response's `result`.
    pub(crate) fn result(&self) -> Option<&str> {
        self.result.as_deref()
    }

    /// Reads the envelope of `frame` without building values, if it is JSON
    /// that nests deeper than [`MAX_MESSAGE_DEPTH`].
    fn of(frame: &str) -> Option<TooDeep> {
        #[derive(Deserialize)]
        struct Envelope<'a> {
            jsonrpc: Option<&'a str>,
            #[serde(default, deserialize_with = "lenient_id")]
            id: Option<RequestId>,
            #[serde(default)]
            method: Option<String>,
            #[serde(borrow, default)]
            result: Option<&'a RawValue>,
        }
        if !nests_deeper_than(frame.as_bytes(), MAX_MESSAGE_DEPTH) {
            return None;
        }
        let envelope: Envelope<'_> = serde_json::from_str(frame).ok()?;
        if envelope.jsonrpc != Some(JSONRPC_VERSION) {
            return None;
        }
        let result = envelope.result.map(|raw| raw.get().to_string());
        Some(TooDeep { id: envelope.id, method: envelope.method, result })
    }
}

/// An id that is neither a string nor an integer reads as none.
fn lenient_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RequestId>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Lenient {
        Id(RequestId),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Lenient::deserialize(d)? {
        Lenient::Id(id) => Some(id),
        Lenient::Other(_) => None,
    })
}

/// Whether the JSON text `bytes` opens more than `max` arrays or objects
/// inside one another (see [`deepest_nesting`]).
pub(crate) fn nests_deeper_than(bytes: &[u8], max: usize) -> bool {
    deepest_nesting(bytes, max) > max
}

/// The deepest nesting of arrays and objects in the JSON text `bytes` (0
/// for a scalar, 1 for a flat array or object), or a depth past `stop_past`
/// as soon as one is reached. Strings are skipped (brackets in them do not
/// count); the text is not otherwise checked. One pass, no allocation.
pub(crate) fn deepest_nesting(bytes: &[u8], stop_past: usize) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if depth > stop_past {
                    return depth;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The members of one envelope that say what it is, read straight from the
/// frame: the envelope itself is never built as a map of values, which
/// cost a B-tree node, a key and the `"2.0"` string per message (about a
/// tenth of a call's allocations, bench/vs-rmcp). A member present as
/// `null` is `Some(Value::Null)`, as a map would hold it; a repeated member
/// keeps its last value, as a map would; members of no meaning here are
/// skipped without building values.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

/// The bound a reply's result is parsed within, found by its id (see
/// [`Message::parse_with`]).
pub(crate) type BoundOf<'a> = &'a dyn Fn(&RequestId) -> Option<ListBound>;

/// Reads [`Members`], parsing a reply's `result` within the [`ListBound`]
/// `bound_of` gives for its id. A `result` met before the `id` is kept as
/// raw text (borrowed from the frame, nothing built) until the id is known.
struct MembersSeed<'a>(BoundOf<'a>);

impl<'de> DeserializeSeed<'de> for MembersSeed<'_> {
    type Value = Members;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Members, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, Visitor};

        /// A member's name, told apart without allocating it.
        enum Key {
            Jsonrpc,
            Id,
            Method,
            Params,
            Result,
            Error,
            Other,
        }

        impl<'de> Deserialize<'de> for Key {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct KeyVisitor;
                impl Visitor<'_> for KeyVisitor {
                    type Value = Key;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a member name")
                    }
                    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Key, E> {
                        Ok(match name {
                            "jsonrpc" => Key::Jsonrpc,
                            "id" => Key::Id,
                            "method" => Key::Method,
                            "params" => Key::Params,
                            "result" => Key::Result,
                            "error" => Key::Error,
                            _ => Key::Other,
                        })
                    }
                }
                d.deserialize_identifier(KeyVisitor)
            }
        }

        struct MembersVisitor<'a>(BoundOf<'a>);
        impl<'de> Visitor<'de> for MembersVisitor<'_> {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut m = Members::default();
                // A result read before its id: raw until the id says how.
                let mut early: Option<&'de RawValue> = None;
                let bound = |id: &Option<Value>| id.as_ref().and_then(bound_id).and_then(|id| (self.0)(&id));
                while let Some(key) = map.next_key::<Key>()? {
                    let slot = match key {
                        Key::Jsonrpc => &mut m.jsonrpc,
                        Key::Id => &mut m.id,
                        Key::Method => &mut m.method,
                        Key::Params => &mut m.params,
                        Key::Result if m.id.is_none() => {
                            early = Some(map.next_value::<&'de RawValue>()?);
                            m.result = None;
                            continue;
                        }
                        Key::Result => {
                            early = None;
                            m.result = Some(match bound(&m.id) {
                                Some(bound) => map.next_value_seed(BoundedResult(&bound))?,
                                None => map.next_value::<Value>()?,
                            });
                            continue;
                        }
                        Key::Error => &mut m.error,
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value::<Value>()?);
                }
                if let Some(raw) = early {
                    use serde::de::Error as _;
                    let mut de = serde_json::Deserializer::from_str(raw.get());
                    let result = match bound(&m.id) {
                        Some(bound) => BoundedResult(&bound).deserialize(&mut de),
                        None => Value::deserialize(&mut de),
                    };
                    m.result = Some(result.map_err(A::Error::custom)?);
                }
                Ok(m)
            }
        }
        d.deserialize_map(MembersVisitor(self.0))
    }
}

/// The id a bound is looked up by: a string or an integer.
fn bound_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

impl Message {
    /// Classifies one frame.
    ///
    /// A frame deeper than [`MAX_MESSAGE_DEPTH`] is
    /// [`EnvelopeError::TooDeep`] when its envelope is readable (see the
    /// [module docs](self)); the depth is looked at only once parsing failed.
    pub(crate) fn parse(frame: &str) -> Result<Message, EnvelopeError> {
        Self::parse_with(frame, &|_| None)
    }

    /// [`Message::parse`], reading a reply's `result` within the
    /// [`ListBound`] `bound_of` gives for its id, if any (see
    /// [`crate::protocol::bounded_list`]).
    pub(crate) fn parse_with(frame: &str, bound_of: BoundOf<'_>) -> Result<Message, EnvelopeError> {
        let mut de = serde_json::Deserializer::from_str(frame);
        let members = MembersSeed(bound_of).deserialize(&mut de).and_then(|m| de.end().map(|()| m));
        let members: Members = members.map_err(|e| match TooDeep::of(frame) {
            Some(deep) => EnvelopeError::TooDeep(deep),
            None => EnvelopeError::NotJson(e.to_string()),
        })?;
        Self::classify(members)
    }

    /// Classifies the members of one envelope.
    fn classify(m: Members) -> Result<Message, EnvelopeError> {
        if m.jsonrpc.as_ref().and_then(Value::as_str) != Some(JSONRPC_VERSION) {
            return Err(EnvelopeError::Invalid("missing or wrong \"jsonrpc\""));
        }
        let id = match m.id {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<RequestId>(v)
                    .map_err(|_| EnvelopeError::Invalid("id is neither string nor integer"))?,
            ),
        };
        match (m.method, id) {
            (Some(Value::String(method)), Some(id)) => {
                Ok(Message::Request(Request::new(id, method, m.params)))
            }
            (Some(Value::String(method)), None) => {
                Ok(Message::Notification(Notification::new(method, m.params)))
            }
            (Some(_), _) => Err(EnvelopeError::Invalid("method is not a string")),
            (None, Some(id)) => Self::response(id, m.result, m.error),
            (None, None) => Err(EnvelopeError::Invalid("neither a method nor an id")),
        }
    }

    fn response(
        id: RequestId,
        result: Option<Value>,
        error: Option<Value>,
    ) -> Result<Message, EnvelopeError> {
        match (result, error) {
            (Some(_), Some(_)) => Err(EnvelopeError::ResultAndError(id)),
            (Some(result), None) => Ok(Message::Response(Response::result(id, result))),
            (None, Some(error)) => {
                let error: ErrorObject = serde_json::from_value(error)
                    .map_err(|_| EnvelopeError::Invalid("malformed error object"))?;
                Ok(Message::Response(Response::error(id, error)))
            }
            (None, None) => Err(EnvelopeError::Invalid("response with neither result nor error")),
        }
    }

    /// Serializes the message as one line of JSON (no trailing newline).
    pub(crate) fn to_json(&self) -> String {
        let out = match self {
            Message::Request(r) => serde_json::to_string(r),
            Message::Notification(n) => serde_json::to_string(n),
            Message::Response(r) => serde_json::to_string(r),
        };
        out.expect("JSON-RPC envelopes always serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A reply to a bounded list request is parsed within its bound,
    /// whether its `result` comes before or after its `id`; other replies
    /// and the bound's count are left alone.
    #[test]
    fn a_bounded_reply_keeps_its_bound_while_parsed() {
        let bound = ListBound::new("tasks", 2);
        let of = |id: &RequestId| (*id == RequestId::Number(7)).then(|| bound.clone());
        for frame in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"tasks":[1,2,3,4,5],"nextCursor":"n"}}"#,
            r#"{"result":{"tasks":[1,2,3,4,5],"nextCursor":"n"},"jsonrpc":"2.0","id":7}"#,
        ] {
            let Ok(Message::Response(r)) = Message::parse_with(frame, &of) else { panic!("a response") };
            assert_eq!(r.outcome, Outcome::Result(json!({ "tasks": [1, 2], "nextCursor": "n" })), "{frame}");
            assert_eq!(bound.dropped(), 3, "{frame}");
        }
        let other = r#"{"jsonrpc":"2.0","id":8,"result":{"tasks":[1,2,3]}}"#;
        let Ok(Message::Response(r)) = Message::parse_with(other, &of) else { panic!("a response") };
        assert_eq!(r.outcome, Outcome::Result(json!({ "tasks": [1, 2, 3] })));
    }

    #[test]
    fn classifies_each_kind() {
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(m, Message::Request(ref r) if r.id == RequestId::Number(1)));
        let m = Message::parse(r#"{"jsonrpc":"2.0","method":"notifications/x","extra":1}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(m, Message::Response(ref r) if r.id == RequestId::String("a".into())));
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#).unwrap();
        assert!(
            matches!(m, Message::Response(Response { outcome: Outcome::Error(ref e), .. }) if e.code == -32601)
        );
    }

    #[test]
    fn reads_the_envelope_as_a_map_of_its_members_would() {
        // A null result is a result; a null id is no id.
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":4,"result":null}"#).unwrap();
        assert!(matches!(m, Message::Response(Response { outcome: Outcome::Result(Value::Null), .. })));
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":null,"method":"notifications/x"}"#).unwrap();
        assert!(matches!(m, Message::Notification(_)));
        // A repeated member keeps its last value.
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#).unwrap();
        assert!(matches!(m, Message::Response(ref r) if r.id == RequestId::Number(2)));
        // Member names with escapes are the names they spell; other members
        // are skipped, whatever they hold.
        let m =
            Message::parse(r#"{"jsonrpc":"2.0","\u0069d":5,"x":[{"y":[1,{}]}],"result":{"a":1}}"#).unwrap();
        assert!(
            matches!(m, Message::Response(Response { id: RequestId::Number(5), outcome: Outcome::Result(ref r), .. }) if r["a"] == 1)
        );
        let m = Message::parse(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t"}}"#)
            .unwrap();
        assert!(matches!(m, Message::Request(ref r) if r.params == Some(json!({"name": "t"}))));
        // Not an object, or a wrong version, as before.
        assert!(matches!(Message::parse("1"), Err(EnvelopeError::NotJson(_))));
        assert!(matches!(
            Message::parse(r#"{"jsonrpc":2,"id":1,"result":{}}"#),
            Err(EnvelopeError::Invalid(_))
        ));
        assert!(matches!(
            Message::parse(r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#),
            Err(EnvelopeError::NotJson(_))
        ));
    }

    #[test]
    fn refuses_result_and_error_together() {
        let err = Message::parse(r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#)
            .unwrap_err();
        assert_eq!(err, EnvelopeError::ResultAndError(RequestId::Number(3)));
    }

    #[test]
    fn refuses_bad_envelopes() {
        assert!(matches!(Message::parse("not json"), Err(EnvelopeError::NotJson(_))));
        assert!(matches!(Message::parse("[1]"), Err(EnvelopeError::NotJson(_))));
        assert!(Message::parse(r#"{"id":1,"method":"x"}"#).is_err());
        assert!(Message::parse(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).is_err());
        assert!(Message::parse(r#"{"jsonrpc":"2.0","id":1}"#).is_err());
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn the_depth_bound_is_serde_jsons() {
        // The envelope is one level; the result holds the rest.
        let at = |depth: usize| format!(r#"{{"jsonrpc":"2.0","id":4,"result":{}}}"#, nested(depth - 1));
        assert!(Message::parse(&at(MAX_MESSAGE_DEPTH)).is_ok());
        match Message::parse(&at(MAX_MESSAGE_DEPTH + 1)) {
            Err(EnvelopeError::TooDeep(deep)) => {
                assert_eq!(deep.id(), Some(&RequestId::Number(4)));
                assert_eq!(deep.method(), None);
                assert_eq!(deep.result(), Some(nested(MAX_MESSAGE_DEPTH).as_str()));
            }
            other => panic!("expected TooDeep, got {other:?}"),
        }
    }

    #[test]
    fn a_deep_request_keeps_its_id_and_method_and_broken_json_is_not_deep() {
        let text = format!(r#"{{"params":{},"jsonrpc":"2.0","id":"s","method":"m"}}"#, nested(500));
        let Err(EnvelopeError::TooDeep(deep)) = Message::parse(&text) else { panic!("TooDeep") };
        assert_eq!((deep.id(), deep.method()), (Some(&RequestId::String("s".into())), Some("m")));
        // Deep but not JSON, or without the envelope: not a message at all.
        assert!(matches!(Message::parse(&"[".repeat(500)), Err(EnvelopeError::NotJson(_))));
        assert!(matches!(Message::parse(&nested(500)), Err(EnvelopeError::NotJson(_))));
    }

    #[test]
    fn nesting_skips_strings() {
        assert!(!nests_deeper_than(br#"{"a":"[[[[[[\"[[[","b":"\\"}"#, 1));
        assert!(nests_deeper_than(br#"{"a":"\\","b":[]}"#, 1));
        assert!(nests_deeper_than(br#"{"a":[[]]}"#, 2));
        assert!(!nests_deeper_than(br#"{"a":[[]]}"#, 3));
        assert!(!nests_deeper_than(b"]]]]}}}", 0));
    }

    #[test]
    fn serializes_round_trip() {
        let r = Message::Response(Response::result(RequestId::Number(7), json!({"ok":true})));
        assert_eq!(r.to_json(), r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#);
        assert_eq!(Message::parse(&r.to_json()).unwrap(), r);
        let n = Message::Notification(Notification::new("notifications/initialized", None));
        assert_eq!(n.to_json(), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}
