//! JSON-RPC as a test server writes and reads it: plain JSON, so that a
//! test never depends on the crate's own (private) wire model.

use serde::Deserialize;
use serde_json::{json, Value};

/// A request the client sent: `id`, `method` and `params` as they came.
#[derive(Debug, Clone, Deserialize)]
pub struct Request {
    pub id: Value,
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
}

/// `text` as a request (a message with a method and a non-null id), or
/// `None` for anything else (a notification, a reply, damage).
pub fn request(text: &str) -> Option<Request> {
    let request: Request = serde_json::from_str(text).ok()?;
    (!request.id.is_null()).then_some(request)
}

/// A result reply to `id`.
pub fn result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// An error reply to `id`.
pub fn error(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// A notification.
pub fn notification(method: &str, params: Option<Value>) -> String {
    let mut note = json!({"jsonrpc": "2.0", "method": method});
    if let Some(params) = params {
        note["params"] = params;
    }
    note.to_string()
}
