//! How a refused exchange is described: the message that names it (or
//! says the URL serves a web page), and the 2026-07-28 error that
//! identifies a modern server refusing `initialize`. (The class of a status
//! is `super::super::status_class`, shared with HTTP+SSE.)
//!
//! Apart from the paths that refuse because these are pure functions of a
//! response, and the era detection is easy to find here.

use reqwest::StatusCode;

use crate::error::normalize_message;
use crate::protocol::jsonrpc::codes;
use crate::transport::RedactedOrigin;

/// A modern-era JSON-RPC error in `text` (see [`codes::is_modern`]), as a
/// message naming the versions the server speaks, if it is one.
pub(super) fn modern_refusal(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let error = value.get("error")?;
    let code = error.get("code")?.as_i64()?;
    if !codes::is_modern(code) {
        return None;
    }
    let supported: Vec<String> = error
        .pointer("/data/supported")
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter().filter_map(|v| v.as_str()).take(16).map(|v| normalize_message(v, 64)).collect()
        })
        .unwrap_or_default();
    let said = normalize_message(error.get("message").and_then(|m| m.as_str()).unwrap_or(""), 256);
    Some(format!(
        "the server refused initialize with a 2026-07-28 error ({code}: {said}); it speaks {supported:?}: \
         let the protocol choice be auto or modern"
    ))
}

/// Whether a response is an HTML page (`text/html`, or `application/xhtml+xml`).
pub(super) fn is_html(response: &crate::transport::http::HttpResponse) -> bool {
    response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let v = v.trim_start().to_ascii_lowercase();
        v.starts_with("text/html") || v.starts_with("application/xhtml+xml")
    })
}

pub(super) fn status_message(origin: &RedactedOrigin, status: StatusCode, quote: &str) -> String {
    let mut text = format!("the server at {origin} answered HTTP {}", status.as_u16());
    if !quote.is_empty() {
        text.push_str(": ");
        text.push_str(quote);
    }
    text
}
