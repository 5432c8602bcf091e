//! The HTTP transports (cargo feature `http`, on by default).
//!
//! - [`StreamableHttpFactory`]: streamable HTTP, the transport of protocol
//!   versions 2025-03-26 to 2025-11-25. Every message is a `POST`; a reply is
//!   one JSON body or an SSE stream; sessions, the optional `GET` listening
//!   stream and SSE resumption. See [`streamable`].
//! - [`SseFactory`]: the HTTP+SSE transport of 2024-11-05. One long-lived
//!   `GET` event stream carries everything the server sends; messages are
//!   `POST`ed to the endpoint the stream names. See [`legacy`].
//! - [`HttpFactory`]: streamable HTTP that can fall back to HTTP+SSE when the
//!   first `POST` fails with 400, 404 or 405, as the specification's
//!   backwards-compatibility section describes. See [`auto`].
//!
//! # What every HTTP transport here keeps
//!
//! - **Bounds while reading.** A reply body to one request (a JSON body, or
//!   the SSE stream that answers one `POST`) is bounded by
//!   [`ConnectConfig::max_body_bytes`] as it arrives: past it, the response
//!   is abandoned (the connection to the server is dropped, nothing more is
//!   read) and the request ends with `limit_exceeded`. A declared
//!   `Content-Length` over the bound is refused before reading anything.
//!   Every SSE event is bounded by [`ConnectConfig::max_frame_bytes`] while it
//!   is being read; an event over it is skipped as [`Inbound::Damaged`]
//!   without being held whole, and the stream goes on. Long-lived streams
//!   (the `GET` listening stream, the HTTP+SSE event stream) carry an
//!   open-ended sequence of messages, like a stdio pipe: they are bounded per
//!   event, not in total.
//! - **Redirects are refused** unless the factory allows them
//!   (`allow_redirects`): a 3xx answer is then an error that says so. When
//!   they are allowed, the transport follows them itself (at most
//!   [`MAX_REDIRECTS`]), and the moment a redirect leaves the configured
//!   origin (scheme, host, port), the custom headers, the credentials of the
//!   URL and the `Mcp-Session-Id` are no longer sent, for that request and
//!   every later hop of it. A `POST` is only re-sent by 307 and 308 (301, 302
//!   and 303 would turn it into a `GET`, which means nothing to an MCP
//!   endpoint, so they are refused).
//! - **No secret in diagnostics.** The [`RedactedOrigin`] is
//!   `scheme://host[:port]`; the path, the query and any user info of the URL
//!   are never part of it, of an error, of an event or of a tracing field.
//!   Header values set on a factory are marked sensitive and never printed:
//!   the `Debug` output names the headers only. Errors from the HTTP client
//!   are stripped of their URL before they are kept.
//! - `TCP_NODELAY` is set on every connection; there is no proxy (a proxy
//!   taken from the environment would be a route the definition did not
//!   name).
//!
//! [`ConnectConfig::max_body_bytes`]: crate::transport::ConnectConfig::max_body_bytes
//! [`ConnectConfig::max_frame_bytes`]: crate::transport::ConnectConfig::max_frame_bytes
//! [`Inbound::Damaged`]: crate::transport::Inbound::Damaged

use bytes::{Bytes, BytesMut};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

use super::{Inbound, RedactedOrigin, DAMAGED_PREFIX_BYTES};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::RequestId;
use service::ConnectionLayer;

pub mod auto;
pub mod legacy;
pub mod service;
pub mod sse;
pub mod streamable;

pub use auto::{HttpFactory, HttpMode};
pub use legacy::SseFactory;
pub use service::{HttpRequest, HttpResponse, HttpService, RequestTimeout};
pub use streamable::{ResumePolicy, StreamableHttpFactory};

/// The most redirects one request follows, when redirects are allowed.
pub const MAX_REDIRECTS: usize = 8;
/// How long connecting to the server may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an exchange that carries no reply may take: a notification's or
/// a response's `POST`, the `DELETE` on close.
pub const SHORT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long closing waits for the session's `DELETE`.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Messages a transport queues for the connection before its readers wait.
pub const INBOUND_QUEUE: usize = 64;
/// How much of an error body is quoted in an error message, in bytes.
pub const ERROR_BODY_QUOTE_BYTES: usize = 256;

/// `Mcp-Session-Id`.
pub(crate) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
pub(crate) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Last-Event-ID`.
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Headers the transports set themselves; a factory refuses them as custom
/// headers.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// Custom headers sent with every request of a definition (an API key, a
/// bearer token). Their values are marked sensitive and never printed:
/// `Debug` shows the names only. They are known to the crate's
/// [redaction point](crate::redact) while the headers live, so a server
/// that quotes one back has it removed from errors, events and logs.
#[derive(Clone, Default)]
pub struct SecretHeaders {
    entries: Vec<(HeaderName, HeaderValue)>,
    known: Vec<crate::redact::Registration>,
}

impl fmt::Debug for SecretHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|(name, _)| name.as_str())).finish()
    }
}

impl SecretHeaders {
    /// Adds a header. The name must be a valid header name that the
    /// transport does not set itself; the value must be visible ASCII. The
    /// error never quotes the value.
    pub fn insert(&mut self, name: &str, value: &str) -> Result<(), Error> {
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            Error::new(
                FailureClass::InvalidConfig,
                format!("{:?} is not a valid header name", normalize_message(name, 64)),
            )
        })?;
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                format!("the header {name} is set by the transport and cannot be configured"),
            ));
        }
        let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
            Error::new(FailureClass::InvalidConfig, format!("the value of header {name} is not valid"))
        })?;
        value.set_sensitive(true);
        self.known.extend(secret_parts(value.to_str().unwrap_or_default()).map(crate::redact::register));
        self.entries.retain(|(n, _)| n != name);
        self.entries.push((name, value));
        Ok(())
    }

    /// Parses `"Name: value"` (as a command line takes it) and adds it.
    pub fn insert_line(&mut self, line: &str) -> Result<(), Error> {
        let Some((name, value)) = line.split_once(':') else {
            return Err(Error::new(FailureClass::InvalidConfig, "a header must be written as 'Name: value'"));
        };
        self.insert(name, value)
    }

    /// The header names, in the order they were set.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(name, _)| name.as_str())
    }

    /// How many headers are set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no header is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The display origin of an HTTP URL: `scheme://host[:port]`, the port only
/// when it is not the scheme's default. User info, path and query are left
/// out.
pub fn redacted_origin(url: &Url) -> RedactedOrigin {
    RedactedOrigin::from_redacted(url.origin().ascii_serialization())
}

/// Parses the server URL of a factory: an absolute `http` or `https` URL.
/// The error never quotes the URL, which may hold credentials.
pub(crate) fn parse_url(url: &str) -> Result<Url, Error> {
    let parsed = Url::parse(url.trim())
        .map_err(|e| Error::new(FailureClass::InvalidConfig, format!("the server URL is not valid: {e}")))?;
    match parsed.scheme() {
        "http" | "https" if parsed.host().is_some() => Ok(parsed),
        _ => Err(Error::new(
            FailureClass::InvalidConfig,
            "the server URL must be an absolute http or https URL",
        )),
    }
}

/// A secret value as a server could quote it back: whole, and, for a value
/// of the `Scheme credential` shape (`Authorization`), the credential alone.
pub(crate) fn secret_parts(value: &str) -> impl Iterator<Item = &str> {
    let credential = value.split_once(' ').map(|(_, c)| c.trim());
    std::iter::once(value).chain(credential)
}

/// What every HTTP factory is configured with.
#[derive(Clone)]
pub(crate) struct Settings {
    /// The URL's password and query values, known to the redaction point
    /// (an API key in `?key=` is as secret as one in a header).
    _known: Arc<Vec<crate::redact::Registration>>,
    pub(crate) url: Url,
    pub(crate) headers: SecretHeaders,
    pub(crate) allow_redirects: bool,
    pub(crate) connect_timeout: Duration,
    pub(crate) origin: RedactedOrigin,
    /// The layer each connection puts on its per-hop service, if any.
    pub(crate) layer: Option<ConnectionLayer>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("origin", &self.origin)
            .field("headers", &self.headers)
            .field("allow_redirects", &self.allow_redirects)
            .field("connect_timeout", &self.connect_timeout)
            .field("layer", &self.layer)
            .finish()
    }
}

impl Settings {
    pub(crate) fn new(url: &str) -> Result<Self, Error> {
        let url = parse_url(url)?;
        let password = url.password().map(str::to_owned);
        let query = url.query_pairs().map(|(_, v)| v.into_owned());
        let known = password.into_iter().chain(query).map(|v| crate::redact::register(&v)).collect();
        Ok(Settings {
            _known: Arc::new(known),
            origin: redacted_origin(&url),
            url,
            headers: SecretHeaders::default(),
            allow_redirects: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            layer: None,
        })
    }
}

/// Configures any of the HTTP factories: the server URL, custom headers,
/// redirects, and (for streamable HTTP) the listening stream and how broken
/// streams are resumed.
///
/// ```
/// # use mcp_stack::transport::http::HttpBuilder;
/// let streamable = HttpBuilder::new("https://example.com/mcp")
///     .header("Authorization", "Bearer …")
///     .build()
///     .unwrap();
/// let legacy = HttpBuilder::new("https://example.com/sse").build_sse().unwrap();
/// let auto = HttpBuilder::new("https://example.com/mcp").build_auto(true).unwrap();
/// # let _ = (streamable, legacy, auto);
/// ```
#[must_use]
pub struct HttpBuilder {
    url: String,
    headers: SecretHeaders,
    error: Option<Error>,
    allow_redirects: bool,
    connect_timeout: Duration,
    options: StreamOptions,
    layer: Option<ConnectionLayer>,
}

/// The streamable-HTTP-only options of a builder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamOptions {
    pub(crate) listen: bool,
    pub(crate) resume: ResumePolicy,
}

impl fmt::Debug for HttpBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may hold credentials: only its origin is shown.
        let origin = parse_url(&self.url).map(|u| redacted_origin(&u)).unwrap_or_default();
        f.debug_struct("HttpBuilder")
            .field("origin", &origin)
            .field("headers", &self.headers)
            .field("allow_redirects", &self.allow_redirects)
            .field("listen", &self.options.listen)
            .field("layer", &self.layer)
            .finish_non_exhaustive()
    }
}

impl HttpBuilder {
    /// A builder for `url`: an absolute `http` or `https` URL. User info in
    /// it becomes HTTP basic authentication (and, like every credential,
    /// never leaves the URL's origin).
    pub fn new(url: impl Into<String>) -> Self {
        HttpBuilder {
            url: url.into(),
            headers: SecretHeaders::default(),
            error: None,
            allow_redirects: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            options: StreamOptions { listen: true, resume: ResumePolicy::default() },
            layer: None,
        }
    }

    /// Adds a header sent with every request while it stays on the
    /// configured origin. Its value is kept secret. An invalid header makes
    /// the build fail (without quoting the value).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Err(e) = self.headers.insert(name, value) {
            self.error.get_or_insert(e);
        }
        self
    }

    /// Adds headers already collected (later ones replace earlier ones of
    /// the same name).
    pub fn headers(mut self, headers: SecretHeaders) -> Self {
        for (name, value) in headers.entries {
            self.headers.entries.retain(|(n, _)| *n != name);
            self.headers.entries.push((name, value));
        }
        self.headers.known.extend(headers.known);
        self
    }

    /// Follows redirects (refused by default). Credentials and custom
    /// headers never follow a redirect to another origin.
    pub fn allow_redirects(mut self, allow: bool) -> Self {
        self.allow_redirects = allow;
        self
    }

    /// Streamable HTTP: opens the `GET` listening stream after the handshake
    /// (on by default).
    pub fn listen(mut self, listen: bool) -> Self {
        self.options.listen = listen;
        self
    }

    /// Streamable HTTP: how broken SSE streams are resumed.
    pub fn resume_policy(mut self, policy: ResumePolicy) -> Self {
        self.options.resume = policy;
        self
    }

    /// Bounds connecting to the server (and, for HTTP+SSE, waiting for its
    /// `endpoint` event).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Puts `layer` on the per-hop service of every connection, in place
    /// of any set before. How the modules above the transport plug in
    /// (authorization, for one, defines its `oauth` beside its layer).
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(crate) fn connection_layer(mut self, layer: ConnectionLayer) -> Self {
        self.layer = Some(layer);
        self
    }

    fn settings(self) -> Result<(Arc<Settings>, StreamOptions), Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut settings = Settings::new(&self.url)?;
        settings.headers = self.headers;
        settings.allow_redirects = self.allow_redirects;
        settings.connect_timeout = self.connect_timeout;
        settings.layer = self.layer;
        Ok((Arc::new(settings), self.options))
    }

    /// A streamable HTTP factory, or `invalid_config` for a bad URL or
    /// header.
    pub fn build(self) -> Result<StreamableHttpFactory, Error> {
        let (settings, options) = self.settings()?;
        Ok(StreamableHttpFactory::from_parts(settings, options, false))
    }

    /// A legacy HTTP+SSE factory; the URL is the SSE endpoint.
    pub fn build_sse(self) -> Result<SseFactory, Error> {
        let (settings, _) = self.settings()?;
        Ok(SseFactory::from_settings(settings))
    }

    /// An automatic factory: streamable HTTP, falling back to HTTP+SSE at the
    /// same URL when `legacy_sse_fallback` is set and the first `POST` is
    /// refused with 400, 404 or 405. The fallback is the profile tolerance
    /// `legacy_sse`: a binding refuses this factory with it set under a
    /// profile that does not allow it (see [`auto`]).
    pub fn build_auto(self, legacy_sse_fallback: bool) -> Result<HttpFactory, Error> {
        let (settings, options) = self.settings()?;
        Ok(HttpFactory::from_parts(settings, options, legacy_sse_fallback))
    }
}

/// Headers of one request that the transport sets.
#[derive(Default, Clone)]
pub(crate) struct RequestHeaders {
    /// Sent on every hop (`Accept`, `Content-Type`, `MCP-Protocol-Version`,
    /// `Last-Event-ID`).
    pub(crate) public: HeaderMap,
    /// `Mcp-Session-Id`: sent only while the request stays on the configured
    /// origin.
    pub(crate) session: Option<HeaderValue>,
}

/// The HTTP client of one connection, with the definition's settings: the
/// redirect loop over the per-hop [`HttpService`].
#[derive(Clone)]
pub(crate) struct HttpClient {
    service: HttpService,
    pub(crate) settings: Arc<Settings>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient").field("settings", &self.settings).finish()
    }
}

impl HttpClient {
    /// The client for one connection: reqwest, with the builder's
    /// connection layer on it, if it set one.
    pub(crate) fn new(settings: Arc<Settings>, config: &super::ConnectConfig) -> Result<Self, Error> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .tcp_nodelay(true)
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|e| {
                Error::new(FailureClass::InvalidConfig, "could not build the HTTP client")
                    .with_source(e.without_url())
            })?;
        let inner = HttpService::new(service::ReqwestService::new(client, settings.origin.clone()));
        let service = match &settings.layer {
            Some(layer) => layer.layer(inner, &settings.url, config)?,
            None => inner,
        };
        Ok(HttpClient { service, settings })
    }

    /// The origin for messages.
    pub(crate) fn origin(&self) -> &RedactedOrigin {
        &self.settings.origin
    }

    /// Sends one request to `url`, following redirects only when allowed and
    /// then without credentials once the request has left the configured
    /// origin. Returns the first non-redirect response, whatever its status.
    pub(crate) async fn execute(
        &self,
        method: Method,
        url: &Url,
        headers: &RequestHeaders,
        body: Option<Bytes>,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, Error> {
        let home = self.settings.url.origin();
        let mut url = url.clone();
        let mut trusted = url.origin() == home;
        for _hop in 0..=MAX_REDIRECTS {
            let mut request = http::Request::new(body.clone());
            *request.method_mut() = method.clone();
            *request.uri_mut() = http::Uri::try_from(url.as_str()).map_err(|_| {
                Error::new(FailureClass::InvalidConfig, "could not build the HTTP request: bad URL")
            })?;
            let target = request.headers_mut();
            if trusted {
                for (name, value) in &self.settings.headers.entries {
                    target.insert(name.clone(), value.clone());
                }
                if let Some(session) = &headers.session {
                    target.insert(MCP_SESSION_ID, session.clone());
                }
            }
            for (name, value) in &headers.public {
                target.insert(name.clone(), value.clone());
            }
            if let Some(timeout) = timeout {
                request.extensions_mut().insert(RequestTimeout(timeout));
            }
            let response =
                reqwest::Response::from(tower::ServiceExt::oneshot(self.service.clone(), request).await?);
            let status = response.status();
            if !is_redirect(status) {
                return Ok(response);
            }
            let target = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|location| url.join(location).ok())
                .filter(|target| matches!(target.scheme(), "http" | "https"));
            let Some(target) = target else {
                return Err(Error::new(
                    FailureClass::RemoteHttp,
                    format!(
                        "the server at {} answered HTTP {} without a usable Location",
                        self.origin(),
                        status.as_u16()
                    ),
                ));
            };
            if !self.settings.allow_redirects {
                return Err(Error::new(
                    FailureClass::RemoteHttp,
                    format!(
                        "the server at {} redirected the request (HTTP {}) to {}; redirects are refused \
                         unless the definition allows them",
                        self.origin(),
                        status.as_u16(),
                        redacted_origin(&target)
                    ),
                ));
            }
            if method != Method::GET
                && method != Method::HEAD
                && !matches!(status, StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT)
            {
                return Err(Error::new(
                    FailureClass::RemoteHttp,
                    format!(
                        "the server at {} answered a {method} with HTTP {}, which would turn it into a GET; \
                         only 307 and 308 redirect a {method}",
                        self.origin(),
                        status.as_u16()
                    ),
                ));
            }
            let mut target = target;
            if target.origin() != home {
                // Off the configured origin, for this hop and every later
                // one: no custom header, no session, no user info.
                trusted = false;
            }
            if !trusted {
                let _ = target.set_username("");
                let _ = target.set_password(None);
            }
            tracing::debug!(
                target: "mcp_stack::http",
                from = %self.origin(),
                to = %redacted_origin(&target),
                status = status.as_u16(),
                credentials = trusted,
                "following a redirect"
            );
            url = target;
        }
        Err(Error::new(
            FailureClass::RemoteHttp,
            format!("the server at {} redirected more than {MAX_REDIRECTS} times", self.origin()),
        ))
    }

    /// An error for a request that could not be made, without its URL.
    pub(crate) fn request_error(&self, e: reqwest::Error) -> Error {
        service::request_error(self.origin(), e)
    }
}

fn is_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

/// What a response's `Content-Type` says it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Json,
    EventStream,
    Other,
}

pub(crate) fn body_kind(response: &reqwest::Response) -> BodyKind {
    let Some(value) = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return BodyKind::Other;
    };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => BodyKind::Json,
        "text/event-stream" => BodyKind::EventStream,
        _ => BodyKind::Other,
    }
}

/// Why reading a body stopped early.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Over the bound: `read` bytes had arrived (or were announced) when
    /// reading stopped.
    TooLarge { read: u64 },
    /// The body broke.
    Failed(Error),
}

/// Reads a whole body, never holding more than `max` bytes: a declared
/// length over `max` is refused before reading, and reading stops (and the
/// response is dropped, closing its connection) at the first chunk past it.
pub(crate) async fn read_body_bounded(
    client: &HttpClient,
    mut response: reqwest::Response,
    max: usize,
) -> Result<Bytes, BodyError> {
    let declared = response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(declared) = declared {
        if declared > max as u64 {
            return Err(BodyError::TooLarge { read: declared });
        }
    }
    let mut body = BytesMut::new();
    // Bounded: every turn adds at least one byte or ends, and the total is
    // capped at `max`.
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let read = body.len() + chunk.len();
                if read > max {
                    return Err(BodyError::TooLarge { read: read as u64 });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body.freeze()),
            Err(e) => return Err(BodyError::Failed(client.request_error(e))),
        }
    }
}

/// A short, normalized quote of an error body for a message.
pub(crate) async fn error_body_quote(client: &HttpClient, response: reqwest::Response) -> String {
    match read_body_bounded(client, response, 4 * ERROR_BODY_QUOTE_BYTES).await {
        Ok(body) => normalize_message(&String::from_utf8_lossy(&body), ERROR_BODY_QUOTE_BYTES),
        Err(_) => String::new(),
    }
}

/// The fields of a JSON-RPC message the transports route by.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Peek {
    #[serde(default)]
    pub(crate) id: Option<RequestId>,
    #[serde(default)]
    pub(crate) method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekParams {
    #[serde(default, rename = "requestId")]
    request_id: Option<RequestId>,
}

impl Peek {
    pub(crate) fn of(text: &str) -> Peek {
        Self::parse(text).unwrap_or_default()
    }

    /// The routing fields of `text`, or `None` when it is not a JSON object
    /// they can be read from. Reading them builds no values, so a message of
    /// any depth can be peeked at.
    pub(crate) fn parse(text: &str) -> Option<Peek> {
        serde_json::from_str(text).ok()
    }

    /// The id of a request (a message with a method and an id).
    pub(crate) fn request_id(&self) -> Option<&RequestId> {
        self.method.as_ref().and(self.id.as_ref())
    }

    /// For `notifications/cancelled`, the request it cancels.
    pub(crate) fn cancels(&self) -> Option<&RequestId> {
        if self.method.as_deref() != Some(crate::protocol::methods::NOTIFICATIONS_CANCELLED) {
            return None;
        }
        self.params.as_ref().and_then(|p| p.request_id.as_ref())
    }

    /// Whether this is the response to `id`.
    pub(crate) fn answers(&self, id: &RequestId) -> bool {
        self.method.is_none() && self.id.as_ref() == Some(id)
    }

    /// The request this answers, when it is a response to another than
    /// `id`.
    pub(crate) fn answers_other(&self, id: &RequestId) -> Option<&RequestId> {
        self.id.as_ref().filter(|answered| self.method.is_none() && *answered != id)
    }
}

/// A stand-in frame start naming `id`, for a damaged reply whose own start
/// does not (the engine reads the id from a damaged frame's prefix).
pub(crate) fn id_prefix(id: &RequestId) -> String {
    let id = serde_json::to_string(id).unwrap_or_default();
    let mut prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},");
    crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
    prefix
}

/// The inbound side every HTTP transport feeds: a bounded queue to the
/// connection's reader, and the signal that the transport was closed.
#[derive(Clone)]
pub(crate) struct InboundTx {
    tx: mpsc::Sender<Result<Inbound, Error>>,
    closed: watch::Receiver<bool>,
}

impl fmt::Debug for InboundTx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboundTx").field("closed", &*self.closed.borrow()).finish()
    }
}

impl InboundTx {
    /// Queues one item; waits while the queue is full. Returns `false` when
    /// nobody reads any more (the transport was closed).
    pub(crate) async fn deliver(&self, item: Result<Inbound, Error>) -> bool {
        if self.is_closed() {
            return false;
        }
        let mut closed = self.closed.clone();
        tokio::select! {
            sent = self.tx.send(item) => sent.is_ok(),
            _ = closed.wait_for(|c| *c) => false,
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves when the transport is closed.
    pub(crate) async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }
}

/// The channel between an HTTP transport's tasks and its receiver, and the
/// switch that closes it.
pub(crate) fn inbound_channel() -> (InboundTx, HttpReceiver, Arc<watch::Sender<bool>>) {
    let (tx, rx) = mpsc::channel(INBOUND_QUEUE);
    let (closed_tx, closed) = watch::channel(false);
    (InboundTx { tx, closed: closed.clone() }, HttpReceiver { rx, closed }, Arc::new(closed_tx))
}

/// The receiving half of every HTTP transport: what the transport's tasks
/// queued, until the transport is closed.
pub(crate) struct HttpReceiver {
    rx: mpsc::Receiver<Result<Inbound, Error>>,
    closed: watch::Receiver<bool>,
}

impl fmt::Debug for HttpReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpReceiver").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl super::MessageReceiver for HttpReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        if *self.closed.borrow() {
            return Ok(None);
        }
        let mut closed = self.closed.clone();
        tokio::select! {
            item = self.rx.recv() => match item {
                Some(Ok(inbound)) => Ok(Some(inbound)),
                Some(Err(e)) => Err(e),
                None => Ok(None),
            },
            _ = closed.wait_for(|c| *c) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_drops_user_info_path_and_query() {
        let url = parse_url("https://user:pw@host:8443/mcp?key=s3cret#frag").unwrap();
        assert_eq!(redacted_origin(&url).as_str(), "https://host:8443");
        let url = parse_url("http://127.0.0.1:80/x").unwrap();
        assert_eq!(redacted_origin(&url).as_str(), "http://127.0.0.1");
        let url = parse_url("http://[::1]:9/x").unwrap();
        assert_eq!(redacted_origin(&url).as_str(), "http://[::1]:9");
    }

    #[test]
    fn bad_urls_are_refused_without_quoting_them() {
        for bad in ["ftp://user:s3cret@host/", "not a url s3cret", "file:///s3cret"] {
            let e = parse_url(bad).unwrap_err();
            assert_eq!(e.class(), FailureClass::InvalidConfig);
            assert!(!e.to_string().contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn header_values_are_never_printed() {
        let mut h = SecretHeaders::default();
        h.insert("Authorization", "Bearer s3cret").unwrap();
        h.insert_line("X-Api-Key: s3cret2").unwrap();
        let shown = format!("{h:?}");
        assert_eq!(shown, r#"["authorization", "x-api-key"]"#);
        let e = h.insert("X-Bad", "s3cret\nInjected: x").unwrap_err();
        assert!(!e.to_string().contains("s3cret"));
        assert!(h.insert("Mcp-Session-Id", "x").is_err());
        assert!(h.insert_line("no colon s3cret").is_err());
        assert!(!h.insert_line("no colon s3cret").unwrap_err().to_string().contains("s3cret"));
    }

    #[test]
    fn peek_routes_messages() {
        let p = Peek::of(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#);
        assert_eq!(p.request_id(), Some(&RequestId::Number(3)));
        let p = Peek::of(r#"{"result":{},"jsonrpc":"2.0","id":3}"#);
        assert!(p.answers(&RequestId::Number(3)));
        assert!(!p.answers(&RequestId::Number(4)));
        let p =
            Peek::of(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}"#);
        assert_eq!(p.cancels(), Some(&RequestId::String("r".into())));
        assert!(p.request_id().is_none());
        let p = Peek::of("not json");
        assert!(p.id.is_none() && p.method.is_none());
        assert!(id_prefix(&RequestId::String("a".into())).contains(r#""id":"a""#));
    }
}
