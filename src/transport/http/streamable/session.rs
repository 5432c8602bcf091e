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
use crate::transport::{Inbound, SessionChange, SessionId};

/// The session this connection uses.
#[derive(Default)]
pub(super) struct SessionState {
    /// The id the server issued (or the one being resumed), if any.
    pub(super) id: Option<HeaderValue>,
    /// The same id, known to the redaction point while it is in use, and
    /// what events carry.
    pub(super) known: Option<SessionId>,
    /// The server forgot it: requests are refused until the next
    /// `initialize`.
    pub(super) expired: bool,
    /// The id is one the host asked to resume and the first `initialize`
    /// has not been sent yet: that `initialize` carries it.
    pub(super) resuming: bool,
}

impl SessionState {
    /// The state of a connection that resumes `session`, if any.
    pub(super) fn resuming(session: Option<SessionId>) -> Self {
        match session.and_then(|s| HeaderValue::from_str(s.expose()).ok().map(|v| (v, s))) {
            Some((id, known)) => {
                SessionState { id: Some(id), known: Some(known), expired: false, resuming: true }
            }
            None => SessionState::default(),
        }
    }
}

impl Core {
    pub(super) fn session_expired(&self) -> bool {
        self.session.lock().expect("session lock").expired
    }

    /// The server answered with the session `id` (the `initialize`
    /// response): it is used from now on, and reported when it is new.
    pub(super) async fn adopt_session(&self, id: HeaderValue) {
        let assigned = {
            let mut state = self.session.lock().expect("session lock");
            state.expired = false;
            if state.id.as_ref() == Some(&id) {
                None
            } else {
                let known = id.to_str().ok().map(SessionId::new);
                state.id = Some(id);
                state.known = known.clone();
                known
            }
        };
        if let Some(session) = assigned {
            self.deliver(Inbound::Session(SessionChange::Assigned(session))).await;
        }
    }

    /// The server answered 404 to something that carried `sent`: that
    /// session is gone (unless a new one has replaced it meanwhile), and
    /// that is reported. Returns whether that was the session in use (and
    /// not already known to be gone).
    pub(super) async fn expire(&self, sent: &HeaderValue) -> bool {
        let known = {
            let mut session = self.session.lock().expect("session lock");
            if session.id.as_ref() != Some(sent) || session.expired {
                return false;
            }
            session.expired = true;
            session.known.clone()
        };
        tracing::info!(target: "mcp_stack::http", binding = %self.binding, origin = %self.origin(), "the server no longer knows the session");
        if let Some(session) = known {
            self.deliver(Inbound::Session(SessionChange::Expired(session))).await;
        }
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
            state.id.clone().filter(|_| !state.expired && self.client.settings.terminate_session_on_close)
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
