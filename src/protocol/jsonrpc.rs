//! The JSON-RPC 2.0 envelope MCP messages travel in.
//!
//! [`Message::parse`] classifies one decoded frame. It is strict about the
//! envelope (what kind of message this is) and lax about everything else:
//! unknown fields are ignored, and `params` / `result` stay raw
//! [`serde_json::Value`]s for the typed layers above to interpret.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The `jsonrpc` member every message carries.
pub const JSONRPC_VERSION: &str = "2.0";

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
pub struct Request {
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
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
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
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The requested resource does not exist (MCP).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A URL-mode elicitation is required first (MCP 2025-11-25).
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
}

/// A response: the id of the request it answers and either a result or an
/// error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
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
pub enum Outcome {
    /// The request succeeded.
    #[serde(rename = "result")]
    Result(Value),
    /// The request failed.
    #[serde(rename = "error")]
    Error(ErrorObject),
}

impl Response {
    /// A success response.
    pub fn result(id: RequestId, result: Value) -> Self {
        Response { jsonrpc: JSONRPC_VERSION.into(), id, outcome: Outcome::Result(result) }
    }

    /// An error response.
    pub fn error(id: RequestId, error: ErrorObject) -> Self {
        Response { jsonrpc: JSONRPC_VERSION.into(), id, outcome: Outcome::Error(error) }
    }
}

/// One classified JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request that expects a reply.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A reply to one of our requests.
    Response(Response),
}

/// Why a frame is not a usable message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
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
}

impl Message {
    /// Classifies one frame.
    pub fn parse(frame: &str) -> Result<Message, EnvelopeError> {
        let value: Value = serde_json::from_str(frame).map_err(|e| EnvelopeError::NotJson(e.to_string()))?;
        Self::from_value(value)
    }

    /// Classifies one decoded JSON value.
    pub fn from_value(value: Value) -> Result<Message, EnvelopeError> {
        let Value::Object(mut obj) = value else {
            return Err(EnvelopeError::NotJson("not an object".into()));
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
            return Err(EnvelopeError::Invalid("missing or wrong \"jsonrpc\""));
        }
        let id = match obj.remove("id") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<RequestId>(v)
                    .map_err(|_| EnvelopeError::Invalid("id is neither string nor integer"))?,
            ),
        };
        let params = obj.remove("params");
        match (obj.remove("method"), id) {
            (Some(Value::String(method)), Some(id)) => Ok(Message::Request(Request::new(id, method, params))),
            (Some(Value::String(method)), None) => {
                Ok(Message::Notification(Notification::new(method, params)))
            }
            (Some(_), _) => Err(EnvelopeError::Invalid("method is not a string")),
            (None, Some(id)) => Self::response(id, obj),
            (None, None) => Err(EnvelopeError::Invalid("neither a method nor an id")),
        }
    }

    fn response(id: RequestId, mut obj: Map<String, Value>) -> Result<Message, EnvelopeError> {
        match (obj.remove("result"), obj.remove("error")) {
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
    pub fn to_json(&self) -> String {
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

    #[test]
    fn serializes_round_trip() {
        let r = Message::Response(Response::result(RequestId::Number(7), json!({"ok":true})));
        assert_eq!(r.to_json(), r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#);
        assert_eq!(Message::parse(&r.to_json()).unwrap(), r);
        let n = Message::Notification(Notification::new("notifications/initialized", None));
        assert_eq!(n.to_json(), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}
