//! The session of a streamable HTTP connection: the `Mcp-Session-Id` the
//! server issued, its expiry (a 404 to a request that carried it), and the
//! `DELETE` that ends it on close.
//!
//! Apart from the call path because a session outlives every request, and
//! expiry is noticed by every path that talks to the server.

use reqwest::header::HeaderValue;
use reqwest::Method;
use std::sync::atomic::Ordering;

use super::shared::Core;
use crate::error::Error;
use crate::transport::http::headers::{RequestHeaders, MCP_PROTOCOL_VERSION};
use crate::transport::http::CLOSE_TIMEOUT;

/// The session this connection uses.
#[derive(Default)]
pub(super) struct SessionState {
    /// The id the server issued, if it issued one.
    pub(super) id: Option<HeaderValue>,
    /// The server forgot it: requests are refused until the next
    /// `initialize`.
    pub(super) expired: bool,
}

impl Core {
    pub(super) fn session_expired(&self) -> bool {
        self.session.lock().expect("session lock").expired
    }

    /// The `initialize` response opened the session `id`: it is used from
    /// now on.
    pub(super) fn adopt_session(&self, id: HeaderValue) {
        let mut state = self.session.lock().expect("session lock");
        state.id = Some(id);
        state.expired = false;
    }

    /// The server answered 404 to something that carried `sent`: that
    /// session is gone (unless a new one has replaced it meanwhile).
    /// Returns whether that was the session in use (and not already known
    /// to be gone).
    pub(super) fn expire(&self, sent: &HeaderValue) -> bool {
        let mut session = self.session.lock().expect("session lock");
        if session.id.as_ref() != Some(sent) || session.expired {
            return false;
        }
        session.expired = true;
        tracing::info!(target: "mcp_stack::http", binding = %self.binding, origin = %self.origin(), "the server no longer knows the session");
        true
    }

    /// Ends the connection: stops the listening stream and deletes the
    /// session, if the server still knows it. Idempotent.
    pub(crate) async fn close(&self) -> Result<(), Error> {
        if self.closing.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let _ = self.closed.send(true);
        if let Some(task) = self.listening.lock().expect("listening lock").task.take() {
            task.abort();
        }
        let session = {
            let state = self.session.lock().expect("session lock");
            state.id.clone().filter(|_| !state.expired)
        };
        if let Some(session) = session {
            let mut headers = RequestHeaders::default();
            if let Some(version) = self.version.lock().expect("version lock").clone() {
                headers.public.insert(MCP_PROTOCOL_VERSION, version);
            }
            headers.session = Some(session);
            let url = self.client.settings.url.clone();
            match self.client.execute(Method::DELETE, &url, &headers, None, Some(CLOSE_TIMEOUT)).await {
                Ok(response) => {
                    tracing::debug!(target: "mcp_stack::http", binding = %self.binding, status = response.status().as_u16(), "session deleted")
                }
                Err(error) => {
                    tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "deleting the session: {}", error.message())
                }
            }
        }
        Ok(())
    }
}
