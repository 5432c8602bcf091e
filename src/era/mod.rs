//! Protocol eras: what differs between the `initialize`-handshake versions
//! (2024-11-05 to 2025-11-25, "legacy") and the stateless 2026-07-28 protocol
//! ("modern").
//!
//! An [`Era`] is a strategy object the connection consults at the few points
//! where the eras differ, so that no `if modern` spreads through the code:
//!
//! - how a request is decorated before it is sent ([`Era::decorate`]);
//! - how an abandoned request is cancelled ([`Era::cancel_notice`]);
//! - how the server announces catalog changes ([`ChangeStyle`]);
//! - how a JSON-RPC error becomes a classified [`Error`](crate::Error)
//!   ([`Era::classify_error`]);
//! - what a result means ([`Era::reply`]: complete, or asking for input);
//! - which HTTP headers mirror a request ([`Era::wire_headers`]);
//! - whether the server may send requests of its own
//!   ([`Era::serves_server_requests`]).
//!
//! The handshakes live beside it: [`legacy`] (`initialize`) and [`modern`]
//! (`server/discover` and per-request `_meta`); [`ProtocolChoice`] says
//! which a binding may speak, and the dialer
//! ([`crate::layer::Dialer`]) runs the choice.

pub mod choice;
pub mod legacy;
pub mod modern;

pub use crate::connection::era::{
    cancelled_notification, ChangeStyle, Era, InputRequired, Reply, Unnegotiated,
};
pub use choice::{ProtocolChoice, DEFAULT_DISCOVER_TIMEOUT};
