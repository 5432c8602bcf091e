//! The gateway's routes, shared by the `axum_gateway` example and its test
//! (`tests/axum_gateway.rs` includes this file).
//!
//! `POST /tools/{name}` calls the tool `name` on the gateway's default
//! binding with the JSON body as its arguments (an empty body means none),
//! and answers `200` with the result as JSON:
//!
//! ```text
//! {"isError": false, "content": [{"type": "text", "text": "hi", "truncated": false}],
//!  "structuredContent": null, "warnings": []}
//! ```
//!
//! A failed call answers `502` with `{"class": "tool_unavailable", "message":
//! "..."}`: the class is the crate's stable failure id, for a program to act
//! on; the message is bounded text for a person. A body that is not JSON
//! answers `400` the same way, with class `invalid_config`.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use base64::Engine as _;
use mcp_stack::content::ResourceContent;
use mcp_stack::{Binding, CallOpts, Content, Error, FailureClass, ToolResult};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The app's state: its bindings by name, and the one `/tools/{name}` calls.
/// Cheap to clone (axum clones it per request); clones share the bindings.
#[derive(Clone, Debug)]
pub struct Gateway {
    bindings: Arc<HashMap<String, Binding>>,
    default: String,
}

impl Gateway {
    /// A gateway over `bindings`, calling tools on the one named `default`.
    pub fn new(bindings: impl IntoIterator<Item = Binding>, default: &str) -> Self {
        let bindings: HashMap<_, _> = bindings.into_iter().map(|b| (b.name().to_string(), b)).collect();
        assert!(bindings.contains_key(default), "no binding named {default:?}");
        Gateway { bindings: Arc::new(bindings), default: default.to_string() }
    }

    fn default_binding(&self) -> &Binding {
        &self.bindings[&self.default]
    }

    /// Closes every binding.
    pub async fn close(&self) {
        for binding in self.bindings.values() {
            binding.close().await;
        }
    }
}

/// The gateway's router.
pub fn router(gateway: Gateway) -> Router {
    Router::new().route("/tools/{name}", post(call_tool)).with_state(gateway)
}

async fn call_tool(State(gateway): State<Gateway>, Path(name): Path<String>, body: Bytes) -> Response {
    let arguments = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(arguments) => arguments,
            Err(e) => {
                let e = Error::new(FailureClass::InvalidConfig, format!("the body is not JSON: {e}"));
                return failure(StatusCode::BAD_REQUEST, &e);
            }
        }
    };
    match gateway.default_binding().call_tool(&name, arguments, CallOpts::default()).await {
        Ok(result) => Json(result_json(&result)).into_response(),
        Err(e) => failure(StatusCode::BAD_GATEWAY, &e),
    }
}

fn failure(status: StatusCode, e: &Error) -> Response {
    (status, Json(json!({ "class": e.class().as_str(), "message": e.message() }))).into_response()
}

fn result_json(result: &ToolResult) -> Value {
    json!({
        "isError": result.is_error,
        "content": result.content.iter().map(content_json).collect::<Vec<_>>(),
        "structuredContent": result.structured,
        "warnings": result.warnings,
    })
}

fn content_json(content: &Content) -> Value {
    let b64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    match content {
        Content::Text { text, truncated } => json!({ "type": "text", "text": text, "truncated": truncated }),
        Content::Image { data, mime_type } => {
            json!({ "type": "image", "data": b64(data), "mimeType": mime_type })
        }
        Content::Audio { data, mime_type } => {
            json!({ "type": "audio", "data": b64(data), "mimeType": mime_type })
        }
        Content::Resource(ResourceContent { uri, mime_type, text, data, truncated }) => json!({
            "type": "resource", "uri": uri, "mimeType": mime_type, "text": text,
            "blob": data.as_deref().map(b64), "truncated": truncated,
        }),
        Content::ResourceLink { uri, name, mime_type, description } => json!({
            "type": "resource_link", "uri": uri, "name": name, "mimeType": mime_type, "description": description,
        }),
        Content::Unsupported { kind, bytes } => {
            json!({ "type": "unsupported", "kind": kind, "bytes": bytes })
        }
    }
}
