//! [`StreamableSender`]: the sending half of a streamable HTTP connection,
//! which routes each message (a request, a cancellation, a notification or
//! a response) to the path that sends it.
//!
//! Apart from [`Core`] because the automatic factory sends through the same
//! core with its own sender.

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;

use super::post::Started;
use super::shared::Core;
use crate::error::{Error, FailureClass};
use crate::protocol::RequestId;
use crate::transport::http::peek::Peek;
use crate::transport::{Exchange, MessageSender, WireHeaders};

/// The sending half of a streamable HTTP connection.
pub(crate) struct StreamableSender {
    pub(crate) core: Arc<Core>,
}

impl fmt::Debug for StreamableSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamableSender").field("core", &self.core).finish()
    }
}

impl StreamableSender {
    /// Sends one message through `core`; `Refused` only in automatic mode.
    pub(crate) async fn send_with(
        core: &Arc<Core>,
        message: String,
        mirror: WireHeaders,
    ) -> Result<Started, Error> {
        if core.is_closing() {
            return Err(Error::new(FailureClass::TransportClosed, "the HTTP transport is closed"));
        }
        let peek = Peek::of(&message);
        if let Some(id) = peek.cancels() {
            core.abandon(id);
        }
        match (peek.method.as_deref(), peek.request_id()) {
            (Some(method), Some(id)) => core.request(message, id.clone(), method, mirror).await,
            (method, _) => core.post_quiet(message, method).await.map(|()| Started::Sent),
        }
    }

    /// Starts a request through `core` without waiting, when it can (see
    /// [`Core::try_request`]); anything else is handed back.
    pub(crate) fn try_with(
        core: &Arc<Core>,
        message: String,
        mirror: WireHeaders,
    ) -> Result<Option<Exchange>, (String, WireHeaders)> {
        let Peek { id, method, .. } = Peek::of(&message);
        match (method, id) {
            (Some(method), Some(id)) => core.try_request(message, id, &method, mirror),
            _ => Err((message, mirror)),
        }
    }
}

#[async_trait]
impl MessageSender for StreamableSender {
    /// A request's exchange is started from the caller's task, without
    /// waking the connection's writer task, and left to the caller when
    /// the server answers with JSON bodies (see `Core::try_request`).
    fn try_send_request(
        &self,
        message: String,
        headers: WireHeaders,
    ) -> Result<Option<Exchange>, (String, WireHeaders)> {
        Self::try_with(&self.core, message, headers)
    }

    fn carries_headers(&self) -> bool {
        true
    }

    async fn send(&self, message: String) -> Result<(), Error> {
        self.send_request(message, WireHeaders::default()).await
    }

    async fn send_request(&self, message: String, headers: WireHeaders) -> Result<(), Error> {
        match Self::send_with(&self.core, message, headers).await? {
            Started::Sent => Ok(()),
            Started::Refused(status) => Err(Error::new(
                FailureClass::RemoteHttp,
                format!("the server at {} refused initialize (HTTP {})", self.core.origin(), status.as_u16()),
            )
            .with_http_status(status.as_u16())),
        }
    }

    async fn cancel(&self, id: &RequestId, notice: Option<String>) -> Result<(), Error> {
        self.core.abandon(id);
        match notice {
            Some(notice) => self.send(notice).await,
            None => Ok(()),
        }
    }

    async fn close(&self) -> Result<(), Error> {
        self.core.close().await
    }

    fn negotiated(&self, protocol_version: &str) {
        self.core.negotiated(protocol_version);
    }
}
