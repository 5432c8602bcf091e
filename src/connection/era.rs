//! The per-era strategy a connection consults where the protocol eras
//! differ ([`Era`]), defined here, below the handshakes that choose one
//! ([`crate::era`]), so that the connection depends on no era.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

use crate::protocol::{methods, Notification, RequestId};

/// How a server tells the client its lists changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeStyle {
    /// Free-floating `notifications/*/list_changed` and
    /// `resources/subscribe` (legacy).
    Notifications,
    /// One `subscriptions/listen` stream (modern).
    ListenStream,
}

/// The per-era strategy a connection uses once the handshake has chosen it.
pub trait Era: Send + Sync + fmt::Debug + 'static {
    /// The negotiated protocol version.
    fn protocol_version(&self) -> &str;

    /// Adds what this era requires to every outgoing request's params.
    ///
    /// The params are clone-on-write: the connection serializes a request
    /// from its caller's params when it can (a request the retry layer may
    /// send again is shared, not copied), so an era that adds something
    /// takes its own copy with [`Cow::to_mut`], and one that adds nothing
    /// costs nothing.
    fn decorate(&self, method: &str, params: &mut Cow<'_, Map<String, Value>>) {
        let _ = (method, params);
    }

    /// The message that cancels request `id`, or `None` when this era cancels
    /// by closing the request's stream.
    fn cancel_notice(&self, id: &RequestId) -> Option<Notification> {
        Some(cancelled_notification(id, "abandoned by the client"))
    }

    /// How this era announces catalog changes.
    fn change_style(&self) -> ChangeStyle {
        ChangeStyle::Notifications
    }
}

/// A `notifications/cancelled` for `id`.
pub fn cancelled_notification(id: &RequestId, reason: &str) -> Notification {
    Notification::new(
        methods::NOTIFICATIONS_CANCELLED,
        Some(serde_json::json!({ "requestId": id, "reason": reason })),
    )
}

/// The era a connection speaks before any handshake has chosen one: plain
/// JSON-RPC with legacy cancellation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unnegotiated;

impl Era for Unnegotiated {
    fn protocol_version(&self) -> &str {
        ""
    }
}
