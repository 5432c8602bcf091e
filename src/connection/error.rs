//! How a call ends without a result: the server's JSON-RPC error
//! ([`RpcError`], kept as the error's source), or no reply at all because
//! the connection ended ([`unanswered`], the one place that decides the
//! class a caller acts on).

use serde_json::Value;

use crate::error::{Error, FailureClass};
use crate::protocol::jsonrpc::codes;

/// A JSON-RPC error the server answered with, kept as an error's source so
/// that callers can read its code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("server error {code}: {message}")]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The server's message, bounded and normalized.
    pub message: String,
    /// The error's `data`, if any.
    pub data: Option<Value>,
}

impl RpcError {
    /// The classified error of the legacy era: `not_found` for an unknown
    /// method or resource, `remote_tool_error` otherwise, with `self` as its
    /// source.
    pub fn into_error(self) -> Error {
        let class = match self.code {
            codes::METHOD_NOT_FOUND | codes::RESOURCE_NOT_FOUND => FailureClass::NotFound,
            _ => FailureClass::RemoteToolError,
        };
        Error::new(class, &self.message).with_source(self)
    }
}

/// How a request that got no reply ends when the connection ended with
/// `class` (`why`); `left` says whether the request may have reached the
/// server. The one place that decides what a caller may do next:
///
/// - a close on purpose (`shutdown`) and an authorization failure keep their
///   class: the server was not asked to act, and the caller needs to know;
/// - a request that may have left ends `indeterminate` (it may have acted);
/// - one that never left ends `transport_closed`, the class that promises
///   it is safe to send again.
pub(super) fn unanswered(class: FailureClass, why: &str, left: bool) -> Error {
    match class {
        FailureClass::Shutdown => Error::new(class, with_reply_context("connection closed", why, left)),
        auth if auth.is_auth() => Error::new(auth, with_reply_context("connection ended", why, left)),
        _ if left => Error::new(
            FailureClass::Indeterminate,
            format!("connection ended before the reply ({class}: {why})"),
        ),
        _ => Error::new(
            FailureClass::TransportClosed,
            format!("not sent: the connection ended first ({class}: {why})"),
        ),
    }
}

/// `why` as it is for a request that never left; for one that did, what
/// happened to it before the reply.
pub(super) fn with_reply_context(what: &str, why: &str, left: bool) -> String {
    match left {
        true => format!("{what} before the reply ({why})"),
        false => why.to_string(),
    }
}
