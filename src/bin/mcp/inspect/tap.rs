//! The JSON-RPC traffic of every binding, for the page: a transport
//! factory that wraps the one a definition was given and copies each
//! message it carries onto the [`Hub`]'s stream.
//!
//! The copy is taken where the message is whole text (the sender's
//! argument, the receiver's frame), scrubbed of every secret the process
//! holds ([`mcp_stack::redact::scrub`]) and cut at [`MAX_SHOWN_BYTES`];
//! the messages themselves pass through untouched, and every method of
//! the wrapped sender is delegated, so the transport behaves as it would
//! unwrapped (headers, batches, cancellation, sessions, tolerances).

use async_trait::async_trait;
use mcp_stack::compat::Tolerance;
use mcp_stack::protocol::RequestId;
use mcp_stack::transport::{
    BatchError, ConnectConfig, Inbound, MessageReceiver, MessageSender, RedactedOrigin, Transport,
    TransportFactory, WireHeaders,
};
use mcp_stack::Error;
use std::sync::Arc;

use super::hub::Hub;

/// The most of one message the page is shown.
pub(crate) const MAX_SHOWN_BYTES: usize = 16 * 1024;

/// `inner`, with its traffic copied onto `hub`.
pub(crate) struct Tapped {
    pub(crate) inner: Arc<dyn TransportFactory>,
    pub(crate) hub: Hub,
}

#[async_trait]
impl TransportFactory for Tapped {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn exchange_per_request(&self) -> bool {
        self.inner.exchange_per_request()
    }
    fn carries_headers(&self) -> bool {
        self.inner.carries_headers()
    }
    fn redacted_origin(&self) -> RedactedOrigin {
        self.inner.redacted_origin()
    }
    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        self.inner.endpoint_digest()
    }
    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let transport = self.inner.connect(config).await?;
        let binding: Arc<str> = config.binding.as_str().into();
        Ok(Transport {
            sender: Arc::new(TappedSender {
                inner: transport.sender,
                hub: self.hub.clone(),
                binding: binding.clone(),
            }),
            receiver: Box::new(TappedReceiver { inner: transport.receiver, hub: self.hub.clone(), binding }),
        })
    }
    fn tolerances(&self) -> Vec<Tolerance> {
        self.inner.tolerances()
    }
    fn startup_hint(&self) -> Option<String> {
        self.inner.startup_hint()
    }
}

struct TappedSender {
    inner: Arc<dyn MessageSender>,
    hub: Hub,
    binding: Arc<str>,
}

impl TappedSender {
    fn show(&self, message: &str) {
        self.hub.traffic(&self.binding, "out", message);
    }
}

#[async_trait]
impl MessageSender for TappedSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        self.show(&message);
        self.inner.send(message).await
    }
    async fn send_batch(&self, messages: &[String]) -> Result<(), BatchError> {
        messages.iter().for_each(|m| self.show(m));
        self.inner.send_batch(messages).await
    }
    fn try_send(&self, message: String) -> Result<(), String> {
        // Shown only once it went: a refused message comes back to the
        // engine, which sends it again through `send`.
        let shown = super::hub::cut(&message, MAX_SHOWN_BYTES).to_string();
        self.inner.try_send(message)?;
        self.show(&shown);
        Ok(())
    }
    fn carries_headers(&self) -> bool {
        self.inner.carries_headers()
    }
    async fn send_request(&self, message: String, headers: WireHeaders) -> Result<(), Error> {
        self.show(&message);
        self.inner.send_request(message, headers).await
    }
    async fn cancel(&self, id: &RequestId, notice: Option<String>) -> Result<(), Error> {
        if let Some(notice) = &notice {
            self.show(notice);
        }
        self.inner.cancel(id, notice).await
    }
    async fn close(&self) -> Result<(), Error> {
        self.inner.close().await
    }
    async fn close_abandoning(&self) -> Result<(), Error> {
        self.inner.close_abandoning().await
    }
    fn negotiated(&self, protocol_version: &str) {
        self.inner.negotiated(protocol_version)
    }
    fn applied_tolerances(&self) -> Vec<Tolerance> {
        self.inner.applied_tolerances()
    }
}

struct TappedReceiver {
    inner: Box<dyn MessageReceiver>,
    hub: Hub,
    binding: Arc<str>,
}

#[async_trait]
impl MessageReceiver for TappedReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        let inbound = self.inner.recv().await?;
        if let Some(Inbound::Frame(frame)) = &inbound {
            self.hub.traffic(&self.binding, "in", frame);
        }
        Ok(inbound)
    }
}
