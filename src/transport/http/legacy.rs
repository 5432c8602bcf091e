//! The HTTP+SSE transport of protocol version 2024-11-05.

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Method, Url};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::body::{body_kind, error_body_quote, BodyKind};
use super::builder::{redacted_origin, Settings};
use super::client::HttpClient;
use super::headers::{RequestHeaders, MCP_PROTOCOL_VERSION};
use super::inbound::{inbound_channel, InboundTx};
use super::peek::Peek;
use super::sse::{End, EventReader, Item};
use super::SHORT_EXCHANGE_TIMEOUT;
use crate::error::{Error, FailureClass};
use crate::transport::{ConnectConfig, Inbound, MessageSender, RedactedOrigin, Transport, TransportFactory};

/// Events read while waiting for `endpoint` before giving up.
pub(crate) const MAX_EVENTS_BEFORE_ENDPOINT: u64 = 64;

/// The HTTP+SSE transport of protocol version 2024-11-05.
///
/// Connecting `GET`s the SSE URL (`Accept: text/event-stream`) and waits,
/// within the connect timeout and at most 64
/// events, for the `endpoint` event. Its data is a URI, resolved against the
/// SSE URL; it must be on the same origin (scheme, host, port), or the
/// connection is refused: a server must not be able to send the client's
/// messages, and the definition's headers with them, somewhere else.
///
/// Every message is then `POST`ed to that URI and must be accepted with a
/// 2xx status; replies and everything else the server sends arrive as
/// `message` events on the SSE stream, each bounded by `max_frame_bytes`.
/// The stream is the connection: when it ends, the connection is over (the
/// receiver reports `transport_closed`). A request refused with an error
/// status ends that call alone (`remote_http`, or `auth_required` /
/// `auth_denied`).
///
/// The negotiated version is sent as `MCP-Protocol-Version`, as later
/// revisions ask of every HTTP client.
#[derive(Clone)]
pub struct SseFactory {
    settings: Arc<Settings>,
}

impl fmt::Debug for SseFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseFactory")
            .field("origin", &self.settings.origin)
            .field("headers", &self.settings.headers)
            .field("allow_redirects", &self.settings.allow_redirects)
            .finish()
    }
}

impl fmt::Display for SseFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sse {}", self.settings.origin)
    }
}

impl SseFactory {
    /// A factory for the SSE endpoint `url`, with defaults.
    pub fn new(url: &str) -> Result<Self, Error> {
        super::HttpBuilder::new(url).build_sse()
    }

    /// A builder for the SSE endpoint `url`; finish with
    /// [`HttpBuilder::build_sse`](super::HttpBuilder::build_sse).
    pub fn builder(url: impl Into<String>) -> super::HttpBuilder {
        super::HttpBuilder::new(url)
    }

    pub(crate) fn from_settings(settings: Arc<Settings>) -> Self {
        SseFactory { settings }
    }

    /// Opens the event stream and waits for the endpoint; messages go to
    /// `inbound`.
    pub(crate) async fn core(
        &self,
        config: &ConnectConfig,
        inbound: InboundTx,
        closed: Arc<watch::Sender<bool>>,
    ) -> Result<Arc<LegacyCore>, Error> {
        let client = HttpClient::new(self.settings.clone(), config)?;
        let wait = self.settings.connect_timeout;
        let (endpoint, reader) =
            tokio::time::timeout(wait, open(&client, config)).await.map_err(|_| {
                Error::new(
                    FailureClass::TransportClosed,
                    format!("the server at {} sent no endpoint event within {wait:?}", self.settings.origin),
                )
            })??;
        let core = Arc::new(LegacyCore {
            client,
            endpoint,
            binding: config.binding.clone(),
            version: Mutex::new(None),
            inbound,
            closed,
            closing: AtomicBool::new(false),
            reader: Mutex::new(None),
        });
        let task = tokio::spawn(core.clone().read_stream(reader));
        *core.reader.lock().expect("reader lock") = Some(task);
        Ok(core)
    }
}

/// `GET`s the stream and reads up to the endpoint event.
async fn open(client: &HttpClient, config: &ConnectConfig) -> Result<(Url, EventReader), Error> {
    let origin = client.origin().clone();
    let mut headers = RequestHeaders::default();
    headers.public.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    let url = client.settings.url.clone();
    let response = client.execute(Method::GET, &url, &headers, None, None).await?;
    let status = response.status();
    if !status.is_success() || body_kind(&response) != BodyKind::EventStream {
        let class = super::status_class(status);
        let quote = error_body_quote(client, response).await;
        return Err(Error::new(
            class,
            format!(
                "the server at {origin} did not open an event stream (HTTP {}): {quote}",
                status.as_u16()
            ),
        )
        .with_http_status(status.as_u16()));
    }
    let mut reader =
        EventReader::new(response, config.max_frame_bytes, None).accepting(&["message", "endpoint"]);
    // Bounded by the event count (and by the caller's timeout).
    while reader.events < MAX_EVENTS_BEFORE_ENDPOINT {
        match reader.next().await {
            Ok(Item::Message(data)) if reader.last_type == "endpoint" => {
                let endpoint = url.join(data.trim()).map_err(|_| {
                    Error::new(
                        FailureClass::ServerProtocol,
                        format!("the server at {origin} sent an invalid endpoint"),
                    )
                })?;
                if endpoint.origin() != url.origin() {
                    return Err(Error::new(
                        FailureClass::ServerProtocol,
                        format!(
                            "the server at {origin} named an endpoint on another origin ({}); refused",
                            redacted_origin(&endpoint)
                        ),
                    ));
                }
                return Ok((endpoint, reader));
            }
            Ok(_) => {}
            Err(End::Eof) | Err(End::BodyLimit { .. }) => break,
            Err(End::Failed(error)) => return Err(error),
        }
    }
    Err(Error::new(FailureClass::ServerProtocol, format!("the server at {origin} sent no endpoint event")))
}

/// One HTTP+SSE connection.
pub(crate) struct LegacyCore {
    client: HttpClient,
    endpoint: Url,
    binding: String,
    version: Mutex<Option<HeaderValue>>,
    inbound: InboundTx,
    closed: Arc<watch::Sender<bool>>,
    closing: AtomicBool,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl fmt::Debug for LegacyCore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LegacyCore")
            .field("origin", self.client.origin())
            .field("binding", &self.binding)
            .field("closing", &self.closing.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl LegacyCore {
    async fn read_stream(self: Arc<Self>, mut reader: EventReader) {
        // Bounded by the stream: it ends when the server ends it or the
        // transport is closed.
        let end = loop {
            let next = tokio::select! {
                next = reader.next() => next,
                _ = self.inbound.closed() => return,
            };
            match next {
                Ok(Item::Message(text)) => {
                    if reader.last_type == "endpoint" {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "ignored a second endpoint event");
                        continue;
                    }
                    if !self.inbound.deliver(Ok(Inbound::Frame(text))).await {
                        return;
                    }
                }
                Ok(Item::Damaged { reason, prefix, bytes }) => {
                    if !self.inbound.deliver(Ok(Inbound::Damaged { reason, prefix, bytes })).await {
                        return;
                    }
                }
                Err(end) => break end,
            }
        };
        if self.closing.load(Ordering::Acquire) {
            return;
        }
        let error = match end {
            End::Failed(error) => error,
            _ => Error::new(
                FailureClass::TransportClosed,
                format!("the server at {} closed the event stream", self.client.origin()),
            ),
        };
        self.inbound.deliver(Err(error)).await;
    }

    pub(crate) async fn send(&self, message: String) -> Result<(), Error> {
        if self.closing.load(Ordering::Acquire) {
            return Err(Error::new(FailureClass::TransportClosed, "the HTTP+SSE transport is closed"));
        }
        let peek = Peek::of(&message);
        let mut headers = RequestHeaders::default();
        headers.public.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(version) = self.version.lock().expect("version lock").clone() {
            headers.public.insert(MCP_PROTOCOL_VERSION, version);
        }
        let response = self
            .client
            .execute(
                Method::POST,
                &self.endpoint,
                &headers,
                Some(Bytes::from(message)),
                Some(SHORT_EXCHANGE_TIMEOUT),
            )
            .await?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let retry_after = super::retry_after(status, response.headers());
        let quote = error_body_quote(&self.client, response).await;
        let text =
            format!("the server at {} answered HTTP {}: {quote}", self.client.origin(), status.as_u16());
        match peek.request_id() {
            Some(id) => {
                let class = super::status_class(status);
                let message = crate::error::normalize_message(&text, crate::error::MAX_ERROR_MESSAGE_BYTES);
                let http_status = Some(status.as_u16());
                self.inbound
                    .deliver(Ok(Inbound::RequestFailed {
                        id: id.clone(),
                        class,
                        message,
                        http_status,
                        retry_after,
                    }))
                    .await;
            }
            None => {
                tracing::warn!(target: "mcp_stack::http", binding = %self.binding, "the server refused a notification or response: {text}");
            }
        }
        Ok(())
    }

    pub(crate) fn negotiated(&self, protocol_version: &str) {
        if let Ok(value) = HeaderValue::from_str(protocol_version) {
            *self.version.lock().expect("version lock") = Some(value);
        }
    }

    pub(crate) fn close(&self) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        let _ = self.closed.send(true);
        if let Some(task) = self.reader.lock().expect("reader lock").take() {
            task.abort();
        }
    }
}

#[derive(Debug)]
struct LegacySender {
    core: Arc<LegacyCore>,
}

#[async_trait]
impl MessageSender for LegacySender {
    async fn send(&self, message: String) -> Result<(), Error> {
        self.core.send(message).await
    }

    async fn close(&self) -> Result<(), Error> {
        self.core.close();
        Ok(())
    }

    fn negotiated(&self, protocol_version: &str) {
        self.core.negotiated(protocol_version);
    }
}

#[async_trait]
impl TransportFactory for SseFactory {
    fn kind(&self) -> &'static str {
        "sse"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.settings.origin.clone()
    }

    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        Some(self.settings.endpoint_digest())
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let (inbound, receiver, closed) = inbound_channel();
        let core = self.core(config, inbound, closed).await?;
        Ok(Transport { sender: Arc::new(LegacySender { core }), receiver: Box::new(receiver) })
    }
}
