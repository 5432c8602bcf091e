//! The JSON-RPC helpers the binding's server-request handlers share: a leaf
//! module, so that elicitation, sampling, roots and the inbound dispatch
//! depend on it and not on each other.

use serde_json::json;

use crate::error::{normalize_message, FailureClass};
use crate::protocol::ErrorObject;

/// A JSON-RPC error for the server, carrying the failure class in `data`.
pub(crate) fn rpc_error(code: i64, class: FailureClass, message: &str) -> ErrorObject {
    let mut error = ErrorObject::new(code, normalize_message(&format!("{class}: {message}"), 512));
    error.data = Some(json!({ "class": class.as_str() }));
    error
}
