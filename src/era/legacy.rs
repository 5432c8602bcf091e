//! The legacy era (2024-11-05 to 2025-11-25): the `initialize` handshake.
//!
//! The client proposes [`LATEST_LEGACY_VERSION`]; the server answers with the
//! version it will speak. Any version in [`SUPPORTED_VERSIONS`] is accepted
//! (the era's rules are the same for all of them at this layer); anything
//! else is refused with `unsupported_protocol`. Then
//! `notifications/initialized` is sent and the connection's era is set.
//!
//! Notifications a server sends before its initialize reply (server-everything
//! announces `tools/list_changed` there) reach the connection's inbound
//! handler like any other; they do not disturb the handshake.
//!
//! [`LATEST_LEGACY_VERSION`]: crate::protocol::LATEST_LEGACY_VERSION
//! [`SUPPORTED_VERSIONS`]: crate::protocol::SUPPORTED_VERSIONS

use serde_json::Value;
use std::sync::Arc;

use super::{normalize_instructions, Era};
use crate::connection::Connection;
use crate::error::{Error, FailureClass};
use crate::protocol::jsonrpc::codes;
use crate::protocol::lifecycle::{ClientCapabilities, Implementation, InitializeParams, InitializeResult};
use crate::protocol::{is_supported_version, methods, LATEST_LEGACY_VERSION};
use crate::session::{ServerIdentity, SessionInfo};

/// The legacy era at one negotiated version.
#[derive(Debug, Clone)]
pub(crate) struct Legacy {
    version: String,
}

impl Legacy {
    /// The era at `version`.
    pub(crate) fn new(version: impl Into<String>) -> Self {
        Legacy { version: version.into() }
    }
}

impl Era for Legacy {
    fn protocol_version(&self) -> &str {
        &self.version
    }
}

/// Runs the `initialize` handshake over `connection`, proposing `version`,
/// and installs the negotiated era on it; the caller bounds it in time (the
/// startup timeout). When `version` is not
/// [`LATEST_LEGACY_VERSION`] (a pinned version), the server must answer
/// with exactly it. A server that refuses every version (-32022, as a
/// modern-only server answers `initialize`) fails `unsupported_protocol`
/// naming the versions it offered.
pub(crate) async fn initialize_version(
    connection: &Connection,
    version: &str,
    capabilities: ClientCapabilities,
    client: Implementation,
) -> Result<SessionInfo, Error> {
    let params = InitializeParams {
        protocol_version: version.to_string(),
        capabilities,
        client_info: client,
        meta: None,
    };
    let Value::Object(params) = serde_json::to_value(&params).expect("initialize params serialize") else {
        unreachable!("a struct serializes to an object")
    };
    let result = connection.request(methods::INITIALIZE, params).await.map_err(|e| {
        // A handshake has no effect to be unsure about: a connection lost
        // during it simply failed.
        let e = match e.class() {
            FailureClass::Indeterminate => e.reclassify(FailureClass::TransportClosed),
            _ => e,
        };
        let refused = super::rpc_error(&e)
            .filter(|rpc| rpc.code == crate::protocol::jsonrpc::codes::UNSUPPORTED_PROTOCOL_VERSION)
            .cloned();
        match refused {
            // The JSON-RPC error stays the source: the dialer reads what
            // was offered (a slow dual-era server may have chosen 2026-07-28).
            Some(rpc) => {
                let offered = super::supported_versions(&rpc);
                // A 2026-07-28 version this crate speaks, refused because
                // this handshake is the initialize era's: say so.
                let message = if offered.iter().any(|v| crate::protocol::is_modern_version(v)) {
                    format!(
                        "the server refused initialize: it speaks only the 2026-07-28 era ({offered:?}); \
                         with the protocol choice auto or modern this client speaks it too"
                    )
                } else {
                    format!("the server refused initialize: it speaks none of this client's versions; it offered {offered:?}")
                };
                Error::new(FailureClass::UnsupportedProtocol, message).with_source(rpc).with_op("initialize")
            }
            // A peer that answers the handshake itself with "method not
            // found" is no MCP server at all (a program that echoes its
            // input, another protocol's server): said in plain words.
            None if super::rpc_error(&e).is_some_and(|rpc| rpc.code == codes::METHOD_NOT_FOUND) => Error::new(
                FailureClass::UnsupportedProtocol,
                "the server does not speak MCP: it answered the handshake (initialize) with \"method not found\"",
            )
            .with_source(e)
            .with_op("initialize"),
            None => e.with_op("initialize"),
        }
    })?;
    let result: InitializeResult = serde_json::from_value(result).map_err(|e| {
        Error::new(FailureClass::ServerProtocol, format!("malformed initialize result: {e}"))
            .with_op("initialize")
    })?;
    let pinned = version != LATEST_LEGACY_VERSION;
    if !is_supported_version(&result.protocol_version) || (pinned && result.protocol_version != version) {
        return Err(Error::new(
            FailureClass::UnsupportedProtocol,
            format!(
                "the server chose protocol version {:?}, which this client does not speak",
                result.protocol_version
            ),
        )
        .with_op("initialize"));
    }
    connection.set_era(Arc::new(Legacy::new(result.protocol_version.clone())));
    connection.notify(methods::NOTIFICATIONS_INITIALIZED, None).await.map_err(|e| e.with_op("initialize"))?;
    Ok(SessionInfo {
        protocol_version: result.protocol_version,
        server: ServerIdentity::from_implementation(&result.server_info),
        instructions: result.instructions.map(|text| normalize_instructions(&text)),
        capabilities: result.capabilities,
        transport_tolerances: connection.applied_tolerances(),
    })
}
