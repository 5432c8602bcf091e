//! Streamable HTTP (protocol versions 2025-03-26 to 2025-11-25).
//!
//! # Sending
//!
//! Every message is one `POST` to the server URL with
//! `Accept: application/json, text/event-stream` and
//! `Content-Type: application/json`, plus the definition's headers,
//! `Mcp-Session-Id` once the server issued one, and `MCP-Protocol-Version`
//! once the handshake settled it ([`MessageSender::negotiated`]: the
//! connection calls it when it installs the era the `initialize` result
//! chose, before `notifications/initialized` is sent, so every request after
//! `initialize` carries it; `initialize` itself carries neither header).
//!
//! - A **notification or a response** waits for the server's answer (202,
//!   or any 2xx) before [`MessageSender::send`] returns, so that what the
//!   client sends next reaches the server after it (`initialized` before the
//!   first request).
//! - **`initialize`** waits for the response headers (the session id must be
//!   known before anything else is sent); its reply is then read on a task.
//! - **Any other request** is sent and read on a task of its own (at most
//!   [`MAX_IN_FLIGHT`] at a time), so that a slow reply never holds up other
//!   messages, including the answers to what the server asks meanwhile.
//!
//! # Replies
//!
//! A JSON reply is read whole within `min(max_body_bytes, max_frame_bytes)`.
//! It must be the response to its request: a body that is empty, not JSON,
//! not UTF-8, or that carries no response to that request (a response to
//! another id, which is dropped, or only notifications) ends the request at
//! once with `server_protocol`, rather than leaving it to its deadline. So
//! does a response to it that the connection cannot use (no `result` nor
//! `error`): after the messages of a JSON body, and after the event of an
//! SSE reply that answered, the transport reports the request failed, which
//! the connection ignores when the response did end it.
//!
//! A `202 Accepted` to a request is not an answer. It is tolerated only
//! while the listening stream is open, which may carry the reply; without
//! one (turned off, refused by the server, or ended) the request ends at
//! once with `server_protocol`, and requests waiting on a listening stream
//! end so when it stops.
//!
//! An SSE reply is read event by event: requests and notifications the
//! server sends before the response are delivered in order; the priming
//! event (an id with empty data) and other empty events only advance the
//! last event id and the `retry` advice. A response to another request is
//! dropped, as in a JSON body: a reply carries its own request's response
//! and no other (so a 2026-07-28 `subscriptions/listen` stream, a request's
//! reply like any other, can never end another call). The 1st, 2nd, 4th,
//! 8th, … such response of the connection is reported as an
//! [`Inbound::Dropped`] warning, so that a flood gives a few.
//!
//! When an SSE reply ends before the response, it is resumed by a `GET`
//! with `Last-Event-ID` after exactly the server's `retry` delay (or
//! [`ResumePolicy::delay`] when it gave none), at most
//! [`ResumePolicy::max_attempts`] times in a row without a message;
//! when it cannot be resumed (no event id, the server refuses, attempts
//! exhausted), the call ends `indeterminate`. A reply over a bound ends the
//! call `limit_exceeded`; an error status ends it `remote_http`
//! (`auth_required` for 401, `auth_denied` for 403), unless the body is the
//! server's JSON-RPC error for that request, which is then delivered as the
//! reply.
//!
//! # Cancellation
//!
//! When the caller abandons a request, the connection sends
//! `notifications/cancelled` (a `POST` like any notification); the transport
//! also stops reading that request's reply and drops its response, which
//! closes the stream, so an abandoned call holds no connection and no
//! in-flight slot.
//!
//! # Sessions
//!
//! The `Mcp-Session-Id` of the `initialize` response is kept and sent on
//! everything after it. A 404 to anything that carried it means the server
//! forgot the session: the request is reported as
//! [`Inbound::SessionExpired`] (it was not processed), and from then on the
//! transport refuses every request the same way, without sending it, until
//! the next `initialize` opens a new session (which the binding sends: see
//! [`SessionExpired`]). Closing sends `DELETE` with the session id (405 and
//! every other answer are accepted; bounded by [`CLOSE_TIMEOUT`]).
//!
//! # The listening stream
//!
//! Unless turned off ([`HttpBuilder::listen`]), once
//! `notifications/initialized` was accepted the transport opens a `GET`
//! stream for what the server sends on its own. A 405 (or any refusal) means
//! the server offers none, and that is fine. A broken stream is resumed with
//! `Last-Event-ID` after the `retry` delay; after
//! [`ResumePolicy::max_attempts`] reconnections in a row that brought no
//! message, the transport stops listening. The reply to a request answered
//! with 202 comes on it, so it is the one stream that delivers responses to
//! any request. A 2026-07-28 connection opens none: it is stateless, and its
//! server sends on its own only on a `subscriptions/listen` request's reply.
//!
//! [`MessageSender::negotiated`]: crate::transport::MessageSender::negotiated
//! [`MessageSender::send`]: crate::transport::MessageSender::send
//! [`Inbound::SessionExpired`]: crate::transport::Inbound::SessionExpired
//! [`Inbound::Dropped`]: crate::transport::Inbound::Dropped
//! [`SessionExpired`]: crate::transport::SessionExpired
//! [`CLOSE_TIMEOUT`]: super::CLOSE_TIMEOUT

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::body::{body_kind, error_body_quote, read_body_bounded, BodyError, BodyKind};
use super::builder::{HttpBuilder, Settings, StreamOptions};
use super::client::HttpClient;
use super::headers::{RequestHeaders, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use super::inbound::{inbound_channel, InboundTx};
use super::peek::{id_prefix, Peek};
use super::sse::{End, EventReader, Item};
use super::{CLOSE_TIMEOUT, SHORT_EXCHANGE_TIMEOUT};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, RequestId};
use crate::transport::{
    ConnectConfig, Inbound, MessageSender, RedactedOrigin, Transport, TransportFactory, WireHeaders,
};

/// Headers a request's mirror may not set: the transport's own.
const RESERVED_MIRROR: &[&str] =
    &["accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"];

/// Requests whose replies are read at once, per connection; more wait.
pub const MAX_IN_FLIGHT: usize = 64;

const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// How broken SSE streams are resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Reconnections in a row that bring no message before giving up.
    pub max_attempts: u32,
    /// The delay before a reconnection when the server gave no `retry`
    /// advice; it doubles with each attempt in a row, up to `max_delay`.
    /// A server's `retry` is honoured exactly, every time.
    pub delay: Duration,
    /// The longest delay without server advice.
    pub max_delay: Duration,
}

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy { max_attempts: 5, delay: Duration::from_secs(1), max_delay: Duration::from_secs(30) }
    }
}

impl ResumePolicy {
    /// The wait before reconnection attempt `attempt` (from 1).
    pub fn wait(&self, retry: Option<Duration>, attempt: u32) -> Duration {
        if let Some(retry) = retry {
            return retry;
        }
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// Makes streamable HTTP connections to one server URL. See the
/// [module docs](self); [`HttpBuilder`] configures it.
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
            session: Mutex::new(SessionState::default()),
            stateless: AtomicBool::new(false),
            version: Mutex::new(None),
            inbound,
            closed,
            closing: AtomicBool::new(false),
            listening: Mutex::new(Listening::default()),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            streams: Mutex::new(HashMap::new()),
            strays: AtomicU64::new(0),
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

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let (inbound, receiver, closed) = inbound_channel();
        let core = self.core(config, inbound, closed)?;
        Ok(Transport { sender: Arc::new(StreamableSender { core }), receiver: Box::new(receiver) })
    }
}

/// The session this connection uses.
#[derive(Default)]
struct SessionState {
    /// The id the server issued, if it issued one.
    id: Option<HeaderValue>,
    /// The server forgot it: requests are refused until the next
    /// `initialize`.
    expired: bool,
}

/// The listening stream, and the requests the server answered with 202
/// whose replies only it can carry.
#[derive(Default)]
struct Listening {
    task: Option<JoinHandle<()>>,
    /// The listening task runs (it clears this as its last act).
    live: bool,
    /// Requests answered with 202 while the stream was live, oldest first.
    /// An entry leaves when the stream carries its reply, when its caller
    /// abandons it, or when the stream ends; at most [`MAX_IN_FLIGHT`] are
    /// kept (a reply the stream carried before its 202 arrived leaves one
    /// behind), and past that the oldest is failed, which the connection
    /// ignores when it was answered.
    parked: VecDeque<RequestId>,
}

/// What one streamable HTTP connection shares between its sender and its
/// tasks.
pub(crate) struct Core {
    client: HttpClient,
    listen: bool,
    resume: ResumePolicy,
    /// Automatic mode: a refused `initialize` is returned to the caller
    /// instead of being reported.
    fallback_refusals: bool,
    max_frame: usize,
    max_body: usize,
    binding: String,
    session: Mutex<SessionState>,
    version: Mutex<Option<HeaderValue>>,
    /// The negotiated version is a modern one (2026-07-28): no session, no
    /// `GET` stream, no resumption; every request is one `POST`.
    stateless: AtomicBool,
    inbound: InboundTx,
    closed: Arc<watch::Sender<bool>>,
    closing: AtomicBool,
    listening: Mutex<Listening>,
    in_flight: Arc<Semaphore>,
    /// The reply streams being read, by request: dropping an entry's sender
    /// ends its task (and closes its HTTP response).
    streams: Mutex<HashMap<RequestId, oneshot::Sender<()>>>,
    /// Responses dropped because they came on another request's stream.
    strays: AtomicU64,
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = self.session.lock().expect("session lock");
        f.debug_struct("Core")
            .field("origin", self.client.origin())
            .field("binding", &self.binding)
            .field("session", &session.id.is_some())
            .field("session_expired", &session.expired)
            .field("closing", &self.closing.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// How an `initialize` `POST` went, for the automatic mode.
#[derive(Debug)]
pub(crate) enum Started {
    /// Sent; the reply is being read.
    Sent,
    /// Refused with this status before anything was delivered (only in
    /// automatic mode, for 400, 404 and 405).
    Refused(StatusCode),
}

impl Core {
    fn origin(&self) -> &RedactedOrigin {
        self.client.origin()
    }

    fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    async fn deliver(&self, item: Inbound) -> bool {
        self.inbound.deliver(Ok(item)).await
    }

    async fn fail(&self, id: &RequestId, class: FailureClass, message: impl AsRef<str>) {
        let message = normalize_message(message.as_ref(), crate::error::MAX_ERROR_MESSAGE_BYTES);
        self.deliver(Inbound::RequestFailed { id: id.clone(), class, message }).await;
    }

    /// The headers of a request now, the one place they are built.
    /// `initialize` opens a new session and carries neither the session id
    /// nor the protocol version. A stateless (modern) connection sends no
    /// session id. `mirror` are the headers that mirror the request
    /// (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); one that is not a valid
    /// header is left out with a warning (the server then refuses the
    /// request as a header mismatch, which names it).
    fn headers(&self, accept: HeaderValue, initialize: bool, mirror: &WireHeaders) -> RequestHeaders {
        let mut headers = RequestHeaders::default();
        headers.public.insert(ACCEPT, accept);
        if initialize {
            let mut session = self.session.lock().expect("session lock");
            *session = SessionState::default();
            return headers;
        }
        if let Some(version) = self.version.lock().expect("version lock").clone() {
            headers.public.insert(MCP_PROTOCOL_VERSION, version);
        }
        for (name, value) in &mirror.0 {
            match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
                (Ok(name), Ok(value)) if !RESERVED_MIRROR.contains(&name.as_str()) => {
                    headers.public.append(name, value);
                }
                _ => {
                    tracing::warn!(target: "mcp_stack::http", binding = %self.binding, header = %crate::error::normalize_message(name, 64), "left out a request header that is not valid")
                }
            }
        }
        if !self.is_stateless() {
            headers.session = self.session.lock().expect("session lock").id.clone();
        }
        headers
    }

    fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::Acquire)
    }

    fn session_expired(&self) -> bool {
        self.session.lock().expect("session lock").expired
    }

    /// The server answered 404 to something that carried `sent`: that
    /// session is gone (unless a new one has replaced it meanwhile).
    /// Returns whether that was the session in use (and not already known
    /// to be gone).
    fn expire(&self, sent: &HeaderValue) -> bool {
        let mut session = self.session.lock().expect("session lock");
        if session.id.as_ref() != Some(sent) || session.expired {
            return false;
        }
        session.expired = true;
        tracing::info!(target: "mcp_stack::http", binding = %self.binding, origin = %self.origin(), "the server no longer knows the session");
        true
    }

    async fn post(
        &self,
        body: String,
        initialize: bool,
        timeout: Option<Duration>,
        mirror: &WireHeaders,
    ) -> Result<(reqwest::Response, Option<HeaderValue>), Error> {
        let mut headers = self.headers(ACCEPT_BOTH, initialize, mirror);
        headers.public.insert(CONTENT_TYPE, JSON);
        let url = self.client.settings.url.clone();
        let response =
            self.client.execute(Method::POST, &url, &headers, Some(Bytes::from(body)), timeout).await?;
        Ok((response, headers.session))
    }

    async fn get(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<(reqwest::Response, Option<HeaderValue>), Error> {
        let mut headers = self.headers(ACCEPT_SSE, false, &WireHeaders::default());
        if let Some(last) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.public.insert(LAST_EVENT_ID, last);
        }
        let url = self.client.settings.url.clone();
        let response = self.client.execute(Method::GET, &url, &headers, None, None).await?;
        Ok((response, headers.session))
    }

    /// Sends a request. `initialize` waits for the response headers; every
    /// other request is sent and read on a task.
    pub(crate) async fn request(
        self: &Arc<Self>,
        message: String,
        id: RequestId,
        method: &str,
        mirror: WireHeaders,
    ) -> Result<Started, Error> {
        if method == methods::INITIALIZE {
            let (response, _) = self.post(message, true, None, &mirror).await?;
            let status = response.status();
            if self.fallback_refusals
                && matches!(
                    status,
                    StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                )
            {
                // A 2026-07-28 server refusing `initialize` says so with a
                // modern error naming the versions it speaks: that, not the
                // HTTP+SSE fallback's failure, is what the person needs (the
                // specification's rule: a recognized modern error identifies
                // a modern server, never a legacy one).
                if status == StatusCode::BAD_REQUEST && body_kind(&response) == BodyKind::Json {
                    let limit = self.max_frame.min(64 << 10);
                    if let Ok(body) = read_body_bounded(&self.client, response, limit).await {
                        let text = String::from_utf8_lossy(&body).into_owned();
                        if let Some(refusal) = modern_refusal(&text) {
                            if Peek::of(&text).answers(&id) {
                                self.deliver(Inbound::Frame(text)).await;
                            } else {
                                self.fail(&id, FailureClass::UnsupportedProtocol, refusal).await;
                            }
                            return Ok(Started::Sent);
                        }
                    }
                }
                return Ok(Started::Refused(status));
            }
            if status.is_success() {
                if let Some(session) = response.headers().get(MCP_SESSION_ID) {
                    let mut state = self.session.lock().expect("session lock");
                    state.id = Some(session.clone());
                    state.expired = false;
                }
            }
            let core = self.clone();
            self.spawn_stream(id.clone(), async move { core.reply(id, response, None).await });
            return Ok(Started::Sent);
        }
        if self.session_expired() {
            // The server would refuse it: report it so without sending.
            self.deliver(Inbound::SessionExpired { id: Some(id) }).await;
            return Ok(Started::Sent);
        }
        let permit = self
            .in_flight
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::new(FailureClass::TransportClosed, "the transport is closed"))?;
        let core = self.clone();
        self.spawn_stream(id.clone(), async move { core.exchange(message, id, permit, mirror).await });
        Ok(Started::Sent)
    }

    /// Reads the reply to `id` on a task that ends with the transport, or
    /// when the request is cancelled ([`Core::abandon`]).
    fn spawn_stream(
        self: &Arc<Self>,
        id: RequestId,
        work: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let (cancel, cancelled) = oneshot::channel::<()>();
        self.streams.lock().expect("streams lock").insert(id.clone(), cancel);
        let core = self.clone();
        tokio::spawn(async move {
            let inbound = core.inbound.clone();
            tokio::select! {
                _ = work => {}
                _ = inbound.closed() => {}
                _ = cancelled => {}
            }
            core.streams.lock().expect("streams lock").remove(&id);
        });
    }

    /// Stops reading the reply to `id` (the caller abandoned it): its HTTP
    /// response is dropped, which closes that stream.
    pub(crate) fn abandon(&self, id: &RequestId) {
        self.streams.lock().expect("streams lock").remove(id);
        self.listening.lock().expect("listening lock").parked.retain(|p| p != id);
    }

    /// A 202 to the request `id`: its reply can only come on the listening
    /// stream. Without one it never comes, and the request ends now.
    async fn park(&self, id: RequestId) {
        let (parked, evicted) = {
            let mut listening = self.listening.lock().expect("listening lock");
            if listening.live {
                let evicted =
                    (listening.parked.len() >= MAX_IN_FLIGHT).then(|| listening.parked.pop_front()).flatten();
                listening.parked.push_back(id.clone());
                (true, evicted)
            } else {
                (false, None)
            }
        };
        if let Some(evicted) = evicted {
            let text = "the server answered the request with 202 Accepted, and too many others wait for \
                        their replies on the listening stream";
            self.fail(&evicted, FailureClass::ServerProtocol, text).await;
        }
        if !parked {
            let text = format!(
                "the server at {} answered the request with 202 Accepted, and no stream can carry its \
                 reply (there is no listening stream)",
                self.origin()
            );
            self.fail(&id, FailureClass::ServerProtocol, text).await;
        }
    }

    /// A message the listening stream carried: a reply to a parked request
    /// unparks it.
    fn unpark(&self, text: &str) {
        let mut listening = self.listening.lock().expect("listening lock");
        if listening.parked.is_empty() {
            return;
        }
        let peek = Peek::of(text);
        if let (None, Some(id)) = (&peek.method, &peek.id) {
            listening.parked.retain(|p| p != id);
        }
    }

    /// The listening stream stopped: the requests parked on it have nothing
    /// left to carry their replies.
    async fn listener_ended(&self) {
        let parked = {
            let mut listening = self.listening.lock().expect("listening lock");
            listening.live = false;
            std::mem::take(&mut listening.parked)
        };
        for id in parked {
            let text = "the server answered the request with 202 Accepted, and the listening stream \
                        that could carry its reply has ended";
            self.fail(&id, FailureClass::ServerProtocol, text).await;
        }
    }

    async fn exchange(
        self: Arc<Self>,
        message: String,
        id: RequestId,
        _permit: OwnedSemaphorePermit,
        mirror: WireHeaders,
    ) {
        match self.post(message, false, None, &mirror).await {
            Ok((response, sent)) => self.reply(id, response, sent).await,
            Err(error) if error.class().is_auth() => {
                // Authorization failed before the request was sent with a
                // token the server took: its class says what to do.
                self.fail(&id, error.class(), error.message()).await;
            }
            Err(error) => {
                let connect = std::error::Error::source(&error)
                    .and_then(|s| s.downcast_ref::<reqwest::Error>())
                    .is_some_and(|e| e.is_connect());
                if connect {
                    // Never reached the server: that call alone fails
                    // cleanly, and the connection is over.
                    self.fail(&id, FailureClass::TransportClosed, error.message()).await;
                    self.inbound.deliver(Err(error)).await;
                } else {
                    let text = format!("{} (the server may have received the request)", error.message());
                    self.fail(&id, FailureClass::Indeterminate, text).await;
                }
            }
        }
    }

    /// Handles the response to the request `id`.
    async fn reply(&self, id: RequestId, response: reqwest::Response, sent: Option<HeaderValue>) {
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            if let Some(sent) = &sent {
                self.expire(sent);
                self.deliver(Inbound::SessionExpired { id: Some(id) }).await;
                return;
            }
        }
        if status == StatusCode::ACCEPTED {
            return self.park(id).await;
        }
        if !status.is_success() {
            return self.refused(id, response).await;
        }
        match body_kind(&response) {
            BodyKind::Json => self.json_reply(id, response).await,
            BodyKind::EventStream => self.stream_reply(id, response).await,
            BodyKind::Other => {
                self.fail(
                    &id,
                    FailureClass::ServerProtocol,
                    format!(
                        "the server at {} answered with a body that is neither JSON nor SSE",
                        self.origin()
                    ),
                )
                .await
            }
        }
    }

    /// An error status: the server's JSON-RPC error for `id` if the body is
    /// one, else a failure of the call.
    async fn refused(&self, id: RequestId, response: reqwest::Response) {
        let status = response.status();
        if body_kind(&response) == BodyKind::Json {
            if let Ok(body) = read_body_bounded(&self.client, response, self.max_frame.min(64 << 10)).await {
                let text = String::from_utf8_lossy(&body).into_owned();
                if Peek::of(&text).answers(&id) {
                    self.deliver(Inbound::Frame(text)).await;
                    return;
                }
                let quote = normalize_message(&text, super::ERROR_BODY_QUOTE_BYTES);
                return self
                    .fail(&id, status_class(status), status_message(self.origin(), status, &quote))
                    .await;
            }
            return self.fail(&id, status_class(status), status_message(self.origin(), status, "")).await;
        }
        if is_html(&response) {
            // A web page, not an MCP endpoint: its markup says nothing to the
            // person, the URL does.
            let text = format!(
                "the server at {} answered HTTP {} with a web page: this URL is not an MCP endpoint \
                 (check its path; servers often serve MCP at /mcp)",
                self.origin(),
                status.as_u16()
            );
            return self.fail(&id, status_class(status), text).await;
        }
        let quote = error_body_quote(&self.client, response).await;
        self.fail(&id, status_class(status), status_message(self.origin(), status, &quote)).await;
    }

    async fn json_reply(&self, id: RequestId, response: reqwest::Response) {
        let max = self.max_body.min(self.max_frame);
        match read_body_bounded(&self.client, response, max).await {
            Ok(body) => match String::from_utf8(body.to_vec()) {
                Ok(text) => self.deliver_json(id, text).await,
                Err(_) => {
                    let text = format!(
                        "the server at {} answered with a JSON body that is not UTF-8",
                        self.origin()
                    );
                    self.fail(&id, FailureClass::ServerProtocol, text).await
                }
            },
            Err(BodyError::TooLarge { read }) => {
                let reason = format!(
                    "the reply body exceeds the bound of {max} bytes (max_body_bytes / max_frame_bytes)"
                );
                self.deliver(Inbound::Damaged { reason, prefix: id_prefix(&id), bytes: read }).await;
            }
            Err(BodyError::Failed(error)) => {
                self.fail(
                    &id,
                    FailureClass::Indeterminate,
                    format!("the reply body broke: {}", error.message()),
                )
                .await
            }
        }
    }

    /// The JSON body answering `id`: one message, or a batch of them
    /// (2025-03-26). Its messages are delivered, but for responses to other
    /// ids, which are dropped; then the request is reported failed, which
    /// the connection ignores when a delivered response ended it (see the
    /// [module docs](self)).
    async fn deliver_json(&self, id: RequestId, text: String) {
        let why = if text.trim().is_empty() {
            "the JSON body is empty".to_string()
        } else if text.trim_start().starts_with('[') {
            match serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&text) {
                Ok(batch) => {
                    let mut why = JsonBody::default();
                    for message in batch {
                        if !self.deliver_one(&id, message.get().to_string(), &mut why).await {
                            return;
                        }
                    }
                    why.describe()
                }
                Err(_) => "the JSON body is not a JSON-RPC message".to_string(),
            }
        } else {
            let mut why = JsonBody::default();
            if !self.deliver_one(&id, text, &mut why).await {
                return;
            }
            why.describe()
        };
        let text = format!("the server at {} did not answer the request: {why}", self.origin());
        self.fail(&id, FailureClass::ServerProtocol, text).await;
    }

    /// One message of a JSON body answering `id`. Returns `false` when
    /// nobody reads any more.
    async fn deliver_one(&self, id: &RequestId, text: String, why: &mut JsonBody) -> bool {
        let Some(peek) = Peek::parse(&text) else {
            why.unreadable = true;
            return true;
        };
        if peek.method.is_none() {
            match &peek.id {
                Some(answered) if answered == id => why.answered = true,
                Some(other) => {
                    why.other = Some(other.clone());
                    return self.stray(id, other).await;
                }
                None => {}
            }
        }
        self.deliver(Inbound::Frame(text)).await
    }

    /// A response to `other` read from the reply to `id`: dropped, since a
    /// response belongs to its own request's reply (delivered, it would end
    /// call `other` with whatever another stream said). Reported as
    /// [`Inbound::Dropped`] for the 1st, 2nd, 4th, 8th, … one of the
    /// connection, so that a flood gives a few warnings. Returns `false`
    /// when nobody reads any more.
    async fn stray(&self, id: &RequestId, other: &RequestId) -> bool {
        let dropped = self.strays.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "dropped a response to {other} on the reply to {id}");
        if !dropped.is_power_of_two() {
            return true;
        }
        let reason = format!(
            "dropped a response to request {} that came with the reply to request {id}: a response \
             belongs to its own request's stream ({dropped} such responses dropped so far)",
            normalize_message(&other.to_string(), 64)
        );
        self.deliver(Inbound::Dropped { reason }).await
    }

    /// An SSE reply to `id`, resumed as the specification says when it ends
    /// before the response. It carries requests and notifications, and its
    /// own response; a response to another request is dropped
    /// ([`Core::stray`]).
    async fn stream_reply(&self, id: RequestId, response: reqwest::Response) {
        let mut reader = EventReader::new(response, self.max_frame, Some(self.max_body));
        let mut attempts = 0u32;
        let mut damaged = false;
        // Bounded: every turn either returns or is a resumption attempt, and
        // attempts in a row without a message are capped.
        loop {
            let mut delivered = false;
            let end = loop {
                match reader.next().await {
                    Ok(Item::Message(text)) => {
                        let peek = Peek::of(&text);
                        if let Some(other) = peek.answers_other(&id) {
                            // Not a sign of life: a stream of these alone is
                            // not resumed without end.
                            if !self.stray(&id, other).await {
                                return;
                            }
                            continue;
                        }
                        let answered = peek.answers(&id);
                        if !self.deliver(Inbound::Frame(text)).await {
                            return;
                        }
                        if answered {
                            // Ignored by the connection unless that response
                            // could not end the request.
                            let text =
                                "the server's response to the request is not a usable JSON-RPC response";
                            return self.fail(&id, FailureClass::ServerProtocol, text).await;
                        }
                        delivered = true;
                    }
                    Ok(Item::Damaged { reason, prefix, bytes }) => {
                        damaged = true;
                        if !self.deliver(Inbound::Damaged { reason, prefix, bytes }).await {
                            return;
                        }
                    }
                    Err(end) => break end,
                }
            };
            if let End::BodyLimit { read } = end {
                let text = format!(
                    "the reply stream exceeded max_body_bytes ({}) after {read} bytes; it was abandoned",
                    self.max_body
                );
                return self.fail(&id, FailureClass::LimitExceeded, text).await;
            }
            if damaged {
                let text =
                    "the reply was dropped: an event of its stream exceeded max_frame_bytes or was not UTF-8";
                return self.fail(&id, FailureClass::LimitExceeded, text).await;
            }
            if let End::Failed(error) = &end {
                tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "reply stream broke: {}", error.message());
            }
            if delivered {
                attempts = 0;
            }
            if self.is_stateless() {
                // 2026-07-28 streams are not resumable: the request is lost.
                let text = "the reply stream ended before the reply (streams of this protocol version are not resumable)";
                return self.fail(&id, FailureClass::Indeterminate, text).await;
            }
            let Some(last) = reader.last_event_id.clone() else {
                let text = "the reply stream ended before the reply, without an event id to resume it from";
                return self.fail(&id, FailureClass::Indeterminate, text).await;
            };
            let retry = reader.retry;
            let next = loop {
                if attempts >= self.resume.max_attempts {
                    let text = format!("could not resume the reply stream after {attempts} attempts");
                    return self.fail(&id, FailureClass::Indeterminate, text).await;
                }
                attempts += 1;
                tokio::time::sleep(self.resume.wait(retry, attempts)).await;
                match self.get(Some(&last)).await {
                    Ok((response, sent)) => {
                        let status = response.status();
                        if status.is_success() && body_kind(&response) == BodyKind::EventStream {
                            break response;
                        }
                        if status == StatusCode::NOT_FOUND {
                            if let Some(sent) = &sent {
                                self.expire(sent);
                            }
                        }
                        let text = format!(
                            "the server cannot resume the reply stream (HTTP {}); the outcome is unknown",
                            status.as_u16()
                        );
                        return self.fail(&id, FailureClass::Indeterminate, text).await;
                    }
                    Err(error) => {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, attempt = attempts, "resuming the reply stream: {}", error.message());
                    }
                }
            };
            let mut resumed = EventReader::new(next, self.max_frame, Some(self.max_body));
            resumed.last_event_id = Some(last);
            resumed.retry = retry;
            reader = resumed;
        }
    }

    /// A notification or a response: waits for the server to accept it.
    pub(crate) async fn post_quiet(
        self: &Arc<Self>,
        message: String,
        method: Option<&str>,
    ) -> Result<(), Error> {
        let (response, sent) =
            self.post(message, false, Some(SHORT_EXCHANGE_TIMEOUT), &WireHeaders::default()).await?;
        let status = response.status();
        if status.is_success() {
            if method == Some(methods::NOTIFICATIONS_INITIALIZED) {
                self.start_listener();
            }
            return Ok(());
        }
        if status == StatusCode::NOT_FOUND {
            if let Some(sent) = &sent {
                if self.expire(sent) {
                    self.deliver(Inbound::SessionExpired { id: None }).await;
                }
                return Ok(());
            }
        }
        let quote = error_body_quote(&self.client, response).await;
        tracing::warn!(
            target: "mcp_stack::http",
            binding = %self.binding,
            origin = %self.origin(),
            status = status.as_u16(),
            "the server refused a notification or response: {quote}"
        );
        Ok(())
    }

    fn start_listener(self: &Arc<Self>) {
        if !self.listen || self.is_closing() || self.is_stateless() {
            return;
        }
        let mut listening = self.listening.lock().expect("listening lock");
        if listening.live {
            return;
        }
        listening.live = true;
        let core = self.clone();
        listening.task = Some(tokio::spawn(async move {
            let inbound = core.inbound.clone();
            tokio::select! {
                _ = core.listen_loop() => {}
                _ = inbound.closed() => {}
            }
            core.listener_ended().await;
        }));
    }

    /// The `GET` listening stream, resumed while it brings messages.
    async fn listen_loop(&self) {
        let mut last: Option<String> = None;
        let mut retry: Option<Duration> = None;
        let mut failures = 0u32;
        // Bounded: every turn that brings no message counts, and they are
        // capped; the loop also ends with the connection.
        loop {
            match self.get(last.as_deref()).await {
                Err(error) => {
                    failures += 1;
                    tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "listening stream: {}", error.message());
                }
                Ok((response, sent)) => {
                    let status = response.status();
                    if status == StatusCode::NOT_FOUND {
                        if let Some(sent) = &sent {
                            if self.expire(sent) {
                                self.deliver(Inbound::SessionExpired { id: None }).await;
                            }
                            return;
                        }
                    }
                    if !status.is_success() || body_kind(&response) != BodyKind::EventStream {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, status = status.as_u16(), "the server offers no listening stream");
                        return;
                    }
                    let mut reader = EventReader::new(response, self.max_frame, None);
                    reader.last_event_id = last.take();
                    reader.retry = retry;
                    let mut delivered = false;
                    let end = loop {
                        match reader.next().await {
                            Ok(Item::Message(text)) => {
                                delivered = true;
                                self.unpark(&text);
                                if !self.deliver(Inbound::Frame(text)).await {
                                    return;
                                }
                            }
                            Ok(Item::Damaged { reason, prefix, bytes }) => {
                                if !self.deliver(Inbound::Damaged { reason, prefix, bytes }).await {
                                    return;
                                }
                            }
                            Err(end) => break end,
                        }
                    };
                    if let End::Failed(error) = end {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "listening stream broke: {}", error.message());
                    }
                    last = reader.last_event_id;
                    retry = reader.retry;
                    failures = if delivered { 0 } else { failures + 1 };
                }
            }
            if self.is_closing() {
                return;
            }
            if failures >= self.resume.max_attempts {
                tracing::warn!(target: "mcp_stack::http", binding = %self.binding, origin = %self.origin(), "stopped listening after {failures} reconnections without a message");
                return;
            }
            tokio::time::sleep(self.resume.wait(retry, failures.max(1))).await;
        }
    }

    pub(crate) fn negotiated(&self, protocol_version: &str) {
        self.stateless.store(crate::protocol::is_modern_version(protocol_version), Ordering::Release);
        if protocol_version.is_empty() {
            *self.version.lock().expect("version lock") = None;
            return;
        }
        if let Ok(value) = HeaderValue::from_str(protocol_version) {
            *self.version.lock().expect("version lock") = Some(value);
        }
    }

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

/// What the messages of a JSON body said about the request they answer.
#[derive(Debug, Default)]
struct JsonBody {
    answered: bool,
    unreadable: bool,
    other: Option<RequestId>,
}

impl JsonBody {
    fn describe(&self) -> String {
        if self.answered {
            "its response is not a usable JSON-RPC response".into()
        } else if let Some(other) = &self.other {
            format!("the JSON body answers another request (id {other})")
        } else if self.unreadable {
            "the JSON body is not a JSON-RPC message".into()
        } else {
            "the JSON body carries no response to it".into()
        }
    }
}

fn status_class(status: StatusCode) -> FailureClass {
    match status {
        StatusCode::UNAUTHORIZED => FailureClass::AuthRequired,
        StatusCode::FORBIDDEN => FailureClass::AuthDenied,
        _ => FailureClass::RemoteHttp,
    }
}

/// A modern-era JSON-RPC error in `text` (see [`codes::is_modern`]), as a
/// message naming the versions the server speaks, if it is one.
fn modern_refusal(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let error = value.get("error")?;
    let code = error.get("code")?.as_i64()?;
    if !codes::is_modern(code) {
        return None;
    }
    let supported: Vec<String> = error
        .pointer("/data/supported")
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter().filter_map(|v| v.as_str()).take(16).map(|v| normalize_message(v, 64)).collect()
        })
        .unwrap_or_default();
    let said = normalize_message(error.get("message").and_then(|m| m.as_str()).unwrap_or(""), 256);
    Some(format!(
        "the server refused initialize with a 2026-07-28 error ({code}: {said}); it speaks {supported:?}: \
         let the protocol choice be auto or modern"
    ))
}

/// Whether a response is an HTML page (`text/html`, or `application/xhtml+xml`).
fn is_html(response: &reqwest::Response) -> bool {
    response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let v = v.trim_start().to_ascii_lowercase();
        v.starts_with("text/html") || v.starts_with("application/xhtml+xml")
    })
}

fn status_message(origin: &RedactedOrigin, status: StatusCode, quote: &str) -> String {
    let mut text = format!("the server at {origin} answered HTTP {}", status.as_u16());
    if !quote.is_empty() {
        text.push_str(": ");
        text.push_str(quote);
    }
    text
}

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
}

#[async_trait]
impl MessageSender for StreamableSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        self.send_request(message, WireHeaders::default()).await
    }

    async fn send_request(&self, message: String, headers: WireHeaders) -> Result<(), Error> {
        match Self::send_with(&self.core, message, headers).await? {
            Started::Sent => Ok(()),
            Started::Refused(status) => Err(Error::new(
                FailureClass::RemoteHttp,
                format!("the server at {} refused initialize (HTTP {})", self.core.origin(), status.as_u16()),
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_retry_is_exact_and_the_default_backs_off() {
        let p = ResumePolicy::default();
        assert_eq!(p.wait(Some(Duration::from_millis(500)), 1), Duration::from_millis(500));
        assert_eq!(p.wait(Some(Duration::from_millis(500)), 4), Duration::from_millis(500));
        assert_eq!(p.wait(None, 1), Duration::from_secs(1));
        assert_eq!(p.wait(None, 3), Duration::from_secs(4));
        assert_eq!(p.wait(None, 30), Duration::from_secs(30));
    }

    #[test]
    fn debug_never_shows_header_values_or_the_url() {
        let f = StreamableHttpFactory::builder("https://user:pw@host:8443/mcp?key=s3cret")
            .header("Authorization", "Bearer s3cret-token")
            .build()
            .unwrap();
        let shown = format!("{f:?} {f}");
        for secret in ["s3cret", "pw", "user", "/mcp"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert_eq!(f.redacted_origin().as_str(), "https://host:8443");
        let b = StreamableHttpFactory::builder("https://user:pw@host/mcp?key=s3cret").header("X", "s3cret");
        assert!(!format!("{b:?}").contains("s3cret"));
        let e = StreamableHttpFactory::builder("https://host/")
            .header("X", "s3cret\r\nInjected: x")
            .build()
            .unwrap_err();
        assert!(!format!("{e:?} {e}").contains("s3cret"));
    }
}
