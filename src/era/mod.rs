//! Protocol eras: what differs between the `initialize`-handshake versions
//! (2024-11-05 to 2025-11-25, "legacy") and the stateless 2026-07-28 protocol
//! ("modern").
//!
//! An [`Era`] is a strategy object the connection consults at the few points
//! where the eras differ, so that no `if modern` spreads through the code
//! (the trait lives with the connection, which uses it; the eras here
//! implement it):
//!
//! - how a request is decorated before it is sent ([`Era::decorate`]);
//! - how an abandoned request is cancelled ([`Era::cancel_notice`]);
//! - how the server announces catalog changes ([`ChangeStyle`]).
//!
//! The handshake that picks the era lives in [`legacy`] (and, later, the
//! modern module beside it).

pub mod legacy;

pub use crate::connection::era::{cancelled_notification, ChangeStyle, Era, Unnegotiated};
