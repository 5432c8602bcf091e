//! Protocol eras: what differs between the `initialize`-handshake versions
//! (2024-11-05 to 2025-11-25, "legacy") and the stateless 2026-07-28 protocol
//! ("modern").
//!
//! An `Era` is a strategy object the connection consults at the few points
//! where the eras differ, so that no `if modern` spreads through the code:
//!
//! - what every request carries in its `_meta` (`Era::request_meta`);
//! - how an abandoned request is cancelled (`Era::cancel_notice`);
//! - how the server announces catalog changes (`ChangeStyle`);
//! - how a JSON-RPC error becomes a classified [`Error`](crate::Error)
//!   (`Era::classify_error`);
//! - what a result means (`Era::reply`: complete, or asking for input);
//! - which HTTP headers mirror a request (`Era::wire_headers`);
//! - whether the server may send requests of its own
//!   (`Era::serves_server_requests`).
//!
//! The handshakes live beside it: `legacy` (`initialize`) and `modern`
//! (`server/discover` and per-request `_meta`); [`ProtocolChoice`] says
//! which a binding may speak, and the [`Dialer`] runs the choice: it dials
//! the transport, starts the connection, and runs the handshake the choice
//! asks for (the reconnect layer, [`crate::layer::reconnect`], calls it
//! again after a loss).

mod dial;
pub(crate) mod legacy;
pub(crate) mod modern;
mod turns;

pub use dial::Dialer;
pub(crate) use turns::{ConnectTurns, Turn};

use crate::config::ProtocolChoice;
pub(crate) use crate::connection::era::{cancelled_notification, ChangeStyle, Era, InputRequired, Reply};

use serde_json::Value;

use crate::config::limits::MAX_INSTRUCTIONS_BYTES;
use crate::connection::RpcError;
use crate::error::normalize_message;

/// The versions a -32022 error's `data.supported` lists (bounded): both
/// eras read it, the legacy handshake to fall back, the modern one to say
/// what the server offered.
pub(crate) fn supported_versions(error: &RpcError) -> Vec<String> {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter().filter_map(Value::as_str).take(16).map(|v| normalize_message(v, 64)).collect()
        })
        .unwrap_or_default()
}

/// The JSON-RPC error behind `error`, if it was one.
pub(crate) fn rpc_error(error: &crate::Error) -> Option<&RpcError> {
    std::error::Error::source(error).and_then(|s| s.downcast_ref::<RpcError>())
}

/// Bounds the server's instructions, whichever handshake brought them. Line
/// breaks are kept (they are prose a person may read); other control
/// characters are dropped.
pub(crate) fn normalize_instructions(text: &str) -> String {
    let kept: String = text.chars().filter(|c| !c.is_control() || *c == '\n' || *c == '\t').collect();
    if kept.len() <= MAX_INSTRUCTIONS_BYTES {
        return kept;
    }
    let mut cut = kept;
    crate::error::truncate_utf8(&mut cut, MAX_INSTRUCTIONS_BYTES);
    cut
}
