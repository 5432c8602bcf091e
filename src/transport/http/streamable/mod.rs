//! Streamable HTTP (protocol versions 2025-03-26 to 2025-11-25).

use async_trait::async_trait;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use tokio::sync::{watch, Semaphore};

use super::builder::{HttpBuilder, Settings, StreamOptions};
use super::client::HttpClient;
use super::inbound::{inbound_channel, InboundTx};
use crate::error::Error;
use crate::transport::{ConnectConfig, RedactedOrigin, Transport, TransportFactory};
use listen::Listening;
use session::SessionState;

mod listen;
mod post;
mod refusal;
mod reply;
mod resume;
mod sender;
mod session;
mod shared;
#[cfg(test)]
mod tests;

pub(crate) use post::Started;
pub use resume::ResumePolicy;
pub(crate) use sender::StreamableSender;
pub(crate) use shared::Core;

/// Requests whose replies are read at once, per connection; more wait.
pub(crate) const MAX_IN_FLIGHT: usize = 64;

/// Streamable HTTP (protocol versions 2025-03-26 to 2025-11-25).
///
/// # Sending
///
/// Every message is one `POST` to the server URL with
/// `Accept: application/json, text/event-stream` and
/// `Content-Type: application/json`, plus the definition's headers,
/// `Mcp-Session-Id` once the server issued one, and `MCP-Protocol-Version`
/// once the handshake settled it ([`MessageSender::negotiated`]: the
/// connection calls it when it installs the era the `initialize` result
/// chose, before `notifications/initialized` is sent, so every request after
/// `initialize` carries it; `initialize` itself carries neither header).
///
/// - A **notification or a response** waits for the server's answer (202,
///   or any 2xx) before [`MessageSender::send`] returns, so that what the
///   client sends next reaches the server after it (`initialized` before the
///   first request).
/// - **`initialize`** waits for the response headers (the session id must be
///   known before anything else is sent); its reply is then read on a task.
/// - **Any other request** is sent and read on a task of its own (at most
///   64 at a time), so that a slow reply never holds up other
///   messages, including the answers to what the server asks meanwhile.
///
/// # Replies
///
/// A JSON reply is read whole within `min(max_body_bytes, max_frame_bytes)`.
/// It must be the response to its request: a body that is empty, not JSON,
/// not UTF-8, or that carries no response to that request (a response to
/// another id, which is dropped, or only notifications) ends the request at
/// once with `server_protocol`, rather than leaving it to its deadline. So
/// does a response to it that the connection cannot use (no `result` nor
/// `error`): after the messages of a JSON body, and after the event of an
/// SSE reply that answered, the transport reports the request failed, which
/// the connection ignores when the response did end it.
///
/// A `202 Accepted` to a request is not an answer. It is tolerated only
/// while the listening stream is open, which may carry the reply; without
/// one (turned off, refused by the server, or ended) the request ends at
/// once with `server_protocol`, and requests waiting on a listening stream
/// end so when it stops.
///
/// An SSE reply is read event by event: requests and notifications the
/// server sends before the response are delivered in order; the priming
/// event (an id with empty data) and other empty events only advance the
/// last event id and the `retry` advice. A response to another request is
/// dropped, as in a JSON body: a reply carries its own request's response
/// and no other (so a 2026-07-28 `subscriptions/listen` stream, a request's
/// reply like any other, can never end another call). The 1st, 2nd, 4th,
/// 8th, … such response of the connection is reported as an
/// [`Inbound::Dropped`] warning, so that a flood gives a few.
///
/// When an SSE reply ends before the response, it is resumed by a `GET`
/// with `Last-Event-ID` after exactly the server's `retry` delay (or
/// [`ResumePolicy::delay`] when it gave none), at most
/// [`ResumePolicy::max_attempts`] times in a row without a message;
/// when it cannot be resumed (no event id, the server refuses, attempts
/// exhausted), the call ends `indeterminate`. A reply over a bound ends the
/// call `limit_exceeded`; an error status ends it `remote_http`
/// (`auth_required` for 401, `auth_denied` for 403), unless the body is the
/// server's JSON-RPC error for that request, which is then delivered as the
/// reply.
///
/// # Cancellation
///
/// When the caller abandons a request, the connection sends
/// `notifications/cancelled` (a `POST` like any notification); the transport
/// also stops reading that request's reply and drops its response, which
/// closes the stream, so an abandoned call holds no connection and no
/// in-flight slot.
///
/// # Sessions
///
/// The `Mcp-Session-Id` of the `initialize` response is kept and sent on
/// everything after it. A 404 to anything that carried it means the server
/// forgot the session: the request is reported as
/// [`Inbound::SessionExpired`] (it was not processed), and from then on the
/// transport refuses every request the same way, without sending it, until
/// the next `initialize` opens a new session (which the binding sends: see
/// [`SessionExpired`]). Closing sends `DELETE` with the session id (405 and
/// every other answer are accepted; bounded by 5 s).
///
/// # The listening stream
///
/// Unless turned off ([`HttpBuilder::listen`]), once
/// `notifications/initialized` was accepted the transport opens a `GET`
/// stream for what the server sends on its own. A 405 (or any refusal) means
/// the server offers none, and that is fine. A broken stream is resumed with
/// `Last-Event-ID` after the `retry` delay; after
/// [`ResumePolicy::max_attempts`] reconnections in a row that brought no
/// message, the transport stops listening. The reply to a request answered
/// with 202 comes on it, so it is the one stream that delivers responses to
/// any request. A 2026-07-28 connection opens none: it is stateless, and its
/// server sends on its own only on a `subscriptions/listen` request's reply.
///
/// [`MessageSender::negotiated`]: crate::transport::MessageSender::negotiated
/// [`MessageSender::send`]: crate::transport::MessageSender::send
/// [`Inbound::SessionExpired`]: crate::transport::Inbound::SessionExpired
/// [`Inbound::Dropped`]: crate::transport::Inbound::Dropped
/// [`SessionExpired`]: crate::transport::SessionExpired
///
/// [`HttpBuilder`] configures it.
///
/// ```
/// # use mcp_stack::transport::http::StreamableHttpFactory;
/// let factory = StreamableHttpFactory::builder("https://example.com/mcp")
///     .header("Authorization", "Bearer …")
///     .build()
///     .unwrap();
/// assert_eq!(factory.to_string(), "streamable_http https://example.com");
/// ```
#[derive(Clone)]
pub struct StreamableHttpFactory {
    settings: Arc<Settings>,
    listen: bool,
    resume: ResumePolicy,
    fallback_refusals: bool,
}

impl fmt::Debug for StreamableHttpFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamableHttpFactory")
            .field("origin", &self.settings.origin)
            .field("headers", &self.settings.headers)
            .field("allow_redirects", &self.settings.allow_redirects)
            .field("listen", &self.listen)
            .field("resume", &self.resume)
            .finish()
    }
}

impl fmt::Display for StreamableHttpFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "streamable_http {}", self.settings.origin)
    }
}

impl StreamableHttpFactory {
    /// A factory for `url` with defaults: no custom header, redirects
    /// refused, listening stream on.
    pub fn new(url: &str) -> Result<Self, Error> {
        Self::builder(url).build()
    }

    /// A builder for `url` (an absolute `http` or `https` URL; user info in
    /// it becomes HTTP basic authentication). [`HttpBuilder::build`] makes
    /// this factory.
    pub fn builder(url: impl Into<String>) -> HttpBuilder {
        HttpBuilder::new(url)
    }

    pub(crate) fn from_parts(
        settings: Arc<Settings>,
        options: StreamOptions,
        fallback_refusals: bool,
    ) -> Self {
        StreamableHttpFactory { settings, listen: options.listen, resume: options.resume, fallback_refusals }
    }

    /// The header names configured (never their values).
    pub fn header_names(&self) -> Vec<String> {
        self.settings.headers.names().map(String::from).collect()
    }

    /// Builds the connection's core, feeding `inbound`.
    pub(crate) fn core(
        &self,
        config: &ConnectConfig,
        inbound: InboundTx,
        closed: Arc<watch::Sender<bool>>,
    ) -> Result<Arc<Core>, Error> {
        Ok(Arc::new(Core {
            client: HttpClient::new(self.settings.clone(), config)?,
            listen: self.listen,
            resume: self.resume,
            fallback_refusals: self.fallback_refusals,
            max_frame: config.max_frame_bytes,
            max_body: config.max_body_bytes,
            binding: config.binding.clone(),
            session: Mutex::new(SessionState::resuming(
                self.settings.resume_session.lock().unwrap_or_else(|e| e.into_inner()).take(),
            )),
            stateless: AtomicBool::new(false),
            version: Mutex::new(None),
            inbound,
            closed,
            closing: AtomicBool::new(false),
            listening: Mutex::new(Listening::default()),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            streams: Mutex::new(HashMap::new()),
            strays: AtomicU64::new(0),
            json_replies: AtomicBool::new(false),
        }))
    }
}

#[async_trait]
impl TransportFactory for StreamableHttpFactory {
    fn kind(&self) -> &'static str {
        "streamable_http"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.settings.origin.clone()
    }

    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        Some(self.settings.endpoint_digest())
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let (inbound, receiver, closed) = inbound_channel();
        let core = self.core(config, inbound, closed)?;
        Ok(Transport { sender: Arc::new(StreamableSender { core }), receiver: Box::new(receiver) })
    }
}
