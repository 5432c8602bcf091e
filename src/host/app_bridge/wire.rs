//! The bridge's messages on the wire: refusals, the checks of the app's
//! `ui/open-link` and `ui/message` parameters, and tool results as the
//! Apps protocol has them.

use serde_json::{json, Value};

use super::MAX_LINK_BYTES;
use crate::error::{normalize_message, Error, FailureClass};
use crate::ToolResult;

/// A refusal to send back: JSON-RPC code, class, message.
pub(super) struct Refusal(pub(super) i64, pub(super) FailureClass, pub(super) String);

impl Refusal {
    pub(super) fn policy(class: FailureClass, message: impl Into<String>) -> Self {
        Refusal(-32000, class, message.into())
    }
    pub(super) fn params(message: impl Into<String>) -> Self {
        Refusal(-32602, FailureClass::InvalidArguments, message.into())
    }
    /// A failure of the server or a handler: told by its class; the
    /// message only when the bridge or the host's handler made it.
    pub(super) fn failed(e: Error, own: bool) -> Self {
        let message = if own {
            normalize_message(e.message(), 256)
        } else {
            format!("the request failed ({})", e.class().as_str())
        };
        Refusal(-32000, e.class(), message)
    }
}

pub(super) fn check_link(params: &Value) -> Result<(), Refusal> {
    let url = params.get("url").and_then(Value::as_str).unwrap_or("");
    let scheme_ok =
        ["https://", "http://"].iter().any(|s| url.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s)));
    if !scheme_ok || url.len() > MAX_LINK_BYTES || url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Refusal::params(format!(
            "ui/open-link needs an http(s) url of at most {MAX_LINK_BYTES} bytes"
        )));
    }
    Ok(())
}

pub(super) fn check_message(params: &Value) -> Result<(), Refusal> {
    let role_ok = params.get("role").and_then(Value::as_str) == Some("user");
    let content_ok =
        params.get("content").and_then(Value::as_array).is_some_and(|c| c.iter().all(Value::is_object));
    if !role_ok || !content_ok {
        return Err(Refusal::params("ui/message needs role \"user\" and a list of content blocks"));
    }
    Ok(())
}

/// A tool result as the wire has it.
pub(super) fn tool_result_json(result: &ToolResult) -> Value {
    let mut out = json!({
        "content": serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new())),
        "isError": result.is_error,
    });
    if let Some(structured) = &result.structured {
        out["structuredContent"] = structured.clone();
    }
    out
}

pub(super) fn error(id: Value, Refusal(code, class, message): Refusal) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id,
        "error": { "code": code, "message": message, "data": { "class": class.as_str() } },
    })
}

/// `s` cut to at most `max` bytes at a character boundary.
pub(super) fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
