//! The wire model: the JSON-RPC envelope and serde types for every MCP
//! message this crate sends or reads.
//!
//! Types tolerate unknown fields (servers add them freely) and keep the
//! `_meta` bags they carry. Documents that are schemas, such as a tool's
//! input schema, stay raw [`serde_json::Value`]s: they are data to pass on,
//! not domain types.

pub mod jsonrpc;

pub use jsonrpc::{ErrorObject, Message, Notification, Outcome, Request, RequestId, Response};

/// The protocol versions this crate speaks, newest first.
///
/// This list is the one place the supported versions live; the handshake,
/// the HTTP header logic and the tests all read it.
pub const SUPPORTED_VERSIONS: &[&str] = &[LATEST_LEGACY_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"];

/// The newest version of the legacy era (the `initialize` handshake), which
/// the client proposes in `initialize`.
pub const LATEST_LEGACY_VERSION: &str = "2025-11-25";

/// Whether `version` is one this crate speaks.
pub fn is_supported_version(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}
