//! The demo server's 2026-07-28 side ([`DemoEra::Modern`](super::DemoEra)):
//! `server/discover` instead of `initialize`, every other request checked
//! for the era's `_meta` (its protocol version, and the client's
//! capabilities, read from each request and never from an earlier one),
//! and every result marked `resultType: "complete"`.
//!
//! It serves what needs nothing but a request and its reply (and progress
//! on the request's own stream): the tools `echo`, `add`, `count`,
//! `tiny_image`, `big_text`, `sleep`, `crash` (and `env` over stdio), the
//! app tools for a client that declares Apps, the prompt, the resources,
//! the skill and completion. What the demo serves on 2025-11-25 through
//! what this era replaced is not offered here: the tools that ask the
//! client (`elicit`, `sample`, `roots`: multi round-trip requests), that
//! announce changes (`touch`, `announce`: a `subscriptions/listen`
//! stream), that log (`log`: request-scoped log levels), and tasks. Asked
//! for anyway, they answer as a server without them would.

use serde_json::{json, Value};
use std::sync::Arc;

use super::Peer;
use crate::era::modern::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, ErrorObject, Request, LATEST_MODERN_VERSION};

/// The demo's tools that rest on what 2026-07-28 replaced: not listed, and
/// not served, on that era.
pub(super) const LEGACY_ONLY_TOOLS: &[&str] = &["log", "touch", "announce", "elicit", "sample", "roots"];

/// Methods of 2025-11-25 that 2026-07-28 has no more, or that this era's
/// demo does not serve (tasks).
const NOT_IN_THIS_ERA: &[&str] = &[
    methods::INITIALIZE,
    methods::PING,
    methods::LOGGING_SET_LEVEL,
    methods::RESOURCES_SUBSCRIBE,
    methods::RESOURCES_UNSUBSCRIBE,
    methods::TASKS_GET,
    methods::TASKS_RESULT,
    methods::TASKS_LIST,
    methods::TASKS_CANCEL,
];

fn discover_result() -> Value {
    json!({
        "supportedVersions": [LATEST_MODERN_VERSION],
        "capabilities": {
            "tools": {},
            "prompts": {},
            "resources": {},
            "completions": {},
            "extensions": { crate::protocol::SKILLS_EXTENSION: {} },
        },
        "serverInfo": { "name": "mcp-stack-demo", "version": env!("CARGO_PKG_VERSION"), "title": "mcp-stack demo server" },
        "instructions": "A demo server. Its tools echo, add, count with progress and draw a tiny image.",
    })
}

/// Serves one request of the 2026-07-28 era.
pub(super) async fn handle(request: &Request, peer: &Arc<Peer>) -> Result<Value, ErrorObject> {
    let method = request.method.as_str();
    let mut result = if method == methods::SERVER_DISCOVER {
        discover_result()
    } else {
        if NOT_IN_THIS_ERA.contains(&method) {
            return Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("method not found: {method}")));
        }
        let meta = request.params.as_ref().and_then(|p| p.get("_meta"));
        let version = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)).and_then(Value::as_str);
        if version != Some(LATEST_MODERN_VERSION) {
            let mut error = ErrorObject::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                "unsupported protocol version: every request names 2026-07-28 in its _meta",
            );
            error.data = Some(json!({ "supported": [LATEST_MODERN_VERSION], "requested": version }));
            return Err(error);
        }
        let capabilities = meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).cloned().unwrap_or(Value::Null);
        *peer.client_capabilities.lock().expect("caps lock") = capabilities;
        let params = request.params.as_ref();
        if method == methods::TOOLS_CALL {
            if params.is_some_and(|p| p.get("task").is_some()) {
                return Err(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    "this server runs no tasks on 2026-07-28",
                ));
            }
            let name = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or_default();
            if LEGACY_ONLY_TOOLS.contains(&name) {
                return Err(ErrorObject::new(codes::INVALID_PARAMS, format!("unknown tool: {name}")));
            }
        }
        super::handle(request, peer).await?
    };
    if let Some(object) = result.as_object_mut() {
        object.insert("resultType".into(), json!("complete"));
    }
    Ok(result)
}
