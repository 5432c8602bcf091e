//! The gateway's routes, shared by the `axum_gateway` example and its test
//! (`tests/host/axum_gateway.rs` includes this file).
//!
//! `POST /tools/{name}` calls the tool `name` on the gateway's default
//! binding with the JSON body as its arguments (an empty body means none),
//! and answers `200` with the result as JSON, the `serde` form of
//! [`ToolResult`] (see `mcp_stack::Content` for each kind of
//! content; bytes are base64):
//!
//! ```text
//! {"isError": false, "content": [{"type": "text", "text": "hi", "truncated": false}],
//!  "structuredContent": null, "warnings": []}
//! ```
//!
//! A failed call answers `502` with the error's [`ErrorReport`]:
//! `{"class": "tool_unavailable", "message": "...", "binding": "demo", "op":
//! "call_tool"}`. The class is the crate's stable failure id, for a program
//! to act on; the message is bounded text for a person. A body that is not
//! JSON answers `400` the same way, with class `invalid_config` (and
//! `binding` and `op` null: no binding was asked).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use mcp_stack::{Binding, CallOpts, Error, ErrorReport, FailureClass, ToolResult};
use serde_json::Value;
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
        Ok(result) => Json::<ToolResult>(result).into_response(),
        Err(e) => failure(StatusCode::BAD_GATEWAY, &e),
    }
}

fn failure(status: StatusCode, e: &Error) -> Response {
    (status, Json::<ErrorReport>(e.report())).into_response()
}
