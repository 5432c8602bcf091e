//! What an HTTP factory is configured with: [`HttpBuilder`], which every
//! factory is built from, and the [`Settings`] it hands them.
//!
//! Apart from the factories because all three (streamable, HTTP+SSE,
//! automatic) share it, and apart from the client because the settings are
//! fixed before any connection exists.

use reqwest::Url;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::headers::SecretHeaders;
use super::network::{NetworkOptions, ProxyChoice, SharedClient, TlsOptions};
use super::service::{ConnectionLayer, HttpService};
use super::{HttpFactory, ResumePolicy, SseFactory, StreamableHttpFactory, DEFAULT_CONNECT_TIMEOUT};
use crate::error::{Error, FailureClass};
use crate::transport::RedactedOrigin;

/// The display origin of an HTTP URL: `scheme://host[:port]`, the port only
/// when it is not the scheme's default. User info, path and query are left
/// out.
pub(crate) fn redacted_origin(url: &Url) -> RedactedOrigin {
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

/// What every HTTP factory is configured with.
#[derive(Clone)]
pub(crate) struct Settings {
    /// The URL's password and query values, known to the redaction point
    /// (an API key in `?key=` is as secret as one in a header).
    _known: Arc<Vec<crate::redact::Registration>>,
    pub(crate) url: Url,
    /// `url` as the [`http::Uri`] a request carries, made once: building
    /// it from the text per request was a tenth of the transport's own
    /// instructions per call.
    pub(crate) uri: http::Uri,
    pub(crate) headers: SecretHeaders,
    pub(crate) allow_redirects: bool,
    pub(crate) connect_timeout: Duration,
    pub(crate) origin: RedactedOrigin,
    /// The layer each connection puts on its per-hop service, if any.
    pub(crate) layer: Option<ConnectionLayer>,
    /// What each connection's client is made with (see [`super::network`]).
    pub(crate) network: NetworkOptions,
    /// The host's own client, used as it is instead. Not in `Debug`:
    /// reqwest's would show its proxy's URL.
    pub(crate) own_client: Option<reqwest::Client>,
    /// The host's own innermost service, in place of reqwest.
    pub(crate) own_service: Option<HttpService>,
    /// Streamable HTTP: the session to resume, taken by the first
    /// connection only.
    pub(crate) resume_session: Arc<std::sync::Mutex<Option<crate::transport::SessionId>>>,
    /// Streamable HTTP: whether closing sends `DELETE` for the session.
    pub(crate) terminate_session_on_close: bool,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("origin", &self.origin)
            .field("headers", &self.headers)
            .field("allow_redirects", &self.allow_redirects)
            .field("connect_timeout", &self.connect_timeout)
            .field("layer", &self.layer)
            .field("network", &self.network)
            .field("own_client", &self.own_client.is_some())
            .field("own_service", &self.own_service.is_some())
            .field("terminate_session_on_close", &self.terminate_session_on_close)
            .finish()
    }
}

impl Settings {
    /// A SHA-256 of the whole URL: the server, for sharing cached public
    /// results ([`TransportFactory::endpoint_digest`](crate::transport::TransportFactory::endpoint_digest)).
    /// Headers are not part of it: a result the server marks public is
    /// the same for every caller, whoever they say they are.
    pub(crate) fn endpoint_digest(&self) -> [u8; 32] {
        use sha2::Digest as _;
        sha2::Sha256::digest(self.url.as_str().as_bytes()).into()
    }

    pub(crate) fn new(url: &str) -> Result<Self, Error> {
        let url = parse_url(url)?;
        let password = url.password().map(str::to_owned);
        let query = url.query_pairs().map(|(_, v)| v.into_owned());
        let known = password.into_iter().chain(query).map(|v| crate::redact::register(&v)).collect();
        let uri = http::Uri::try_from(url.as_str())
            .map_err(|_| Error::new(FailureClass::InvalidConfig, "the server URL is not a valid HTTP URI"))?;
        Ok(Settings {
            _known: Arc::new(known),
            origin: redacted_origin(&url),
            uri,
            url,
            headers: SecretHeaders::default(),
            allow_redirects: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            layer: None,
            network: NetworkOptions {
                proxy: ProxyChoice::Environment,
                tls: TlsOptions::default(),
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            },
            own_client: None,
            own_service: None,
            resume_session: Default::default(),
            terminate_session_on_close: true,
        })
    }

    /// The reqwest client for one connection: the host's own, or the pool
    /// shared by connections to this origin with these network options
    /// (which the connection retires when an exchange over it fails).
    pub(crate) fn reqwest_client(&self) -> Result<(reqwest::Client, Option<Arc<SharedClient>>), Error> {
        match &self.own_client {
            Some(client) => Ok((client.clone(), None)),
            None => {
                let shared = self.network.shared_client(&self.url)?;
                Ok((shared.client.clone(), Some(shared)))
            }
        }
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
    proxy: ProxyChoice,
    tls: TlsOptions,
    client: Option<reqwest::Client>,
    service: Option<HttpService>,
    session: Option<crate::transport::SessionId>,
    terminate_session_on_close: bool,
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
            .field("proxy", &self.proxy)
            .field("tls", &self.tls)
            .field("own_client", &self.client.is_some())
            .field("own_service", &self.service.is_some())
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
            proxy: ProxyChoice::Environment,
            tls: TlsOptions::default(),
            client: None,
            service: None,
            session: None,
            terminate_session_on_close: true,
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

    /// Streamable HTTP: resumes the session `id` (one the server assigned
    /// earlier, kept from [`Event::HttpSessionAssigned`]): the first
    /// connection sends it as `Mcp-Session-Id` from its first request,
    /// `initialize` included, and keeps it until the server assigns
    /// another. A server that no longer knows it answers 404: that is
    /// reported ([`Event::HttpSessionExpired`]) and the handshake runs
    /// again without it, in a new session. Reconnections start new
    /// sessions. The id is kept secret like a header value. An id that is
    /// not visible ASCII (the specification's rule) makes the build fail.
    ///
    /// [`Event::HttpSessionAssigned`]: crate::Event::HttpSessionAssigned
    /// [`Event::HttpSessionExpired`]: crate::Event::HttpSessionExpired
    pub fn session_id(mut self, id: &str) -> Self {
        if id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)) || id.len() > 1024 {
            self.error.get_or_insert(Error::new(
                FailureClass::InvalidConfig,
                "a session id is 1 to 1024 visible ASCII characters",
            ));
        } else {
            self.session = Some(crate::transport::SessionId::new(id));
        }
        self
    }

    /// Streamable HTTP: whether closing the connection ends the session
    /// with a `DELETE` (on by default). Off keeps the session for whoever
    /// resumes it ([`session_id`](Self::session_id)).
    pub fn terminate_session_on_close(mut self, terminate: bool) -> Self {
        self.terminate_session_on_close = terminate;
        self
    }

    /// Bounds connecting to the server (and, for HTTP+SSE, waiting for its
    /// `endpoint` event).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sends every request through the proxy at `url` (an `http` or
    /// `https` URL; user info in it is the proxy's basic credentials, kept
    /// as a secret), whatever the environment says. Without this, the
    /// environment's proxy settings apply, as curl reads them: `HTTPS_PROXY`,
    /// `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`, upper or lower case. A bad
    /// URL makes the build fail (without quoting it).
    pub fn proxy(mut self, url: &str) -> Self {
        match ProxyChoice::explicit(url) {
            Ok(proxy) => self.proxy = proxy,
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// Reaches the server directly, whatever proxy the environment names.
    pub fn no_proxy(mut self) -> Self {
        self.proxy = ProxyChoice::Off;
        self
    }

    /// Trusts the certificates of a PEM bundle as roots, besides the
    /// platform's: how a server behind a private CA is reached. The
    /// server's certificate is still verified (chain and host name); there
    /// is no way to turn that off. May be called more than once (at most
    /// 256 certificates in all). A bundle that holds no certificate or
    /// does not parse makes the build fail.
    pub fn root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        if let Err(e) = self.tls.add_roots_pem(pem.as_ref()) {
            self.error.get_or_insert(e);
        }
        self
    }

    /// Presents a client certificate to a server that asks for one
    /// (mutual TLS): `chain` is the certificate (and any intermediates) in
    /// PEM, `key` its private key in PEM (PKCS#8, PKCS#1 or SEC1). The key
    /// is never shown in `Debug`, errors or events. A certificate or key
    /// that does not parse, or that do not belong together, makes the build
    /// fail (without quoting either).
    pub fn client_certificate_pem(mut self, chain: impl AsRef<[u8]>, key: impl AsRef<[u8]>) -> Self {
        if let Err(e) = self.tls.set_identity_pem(chain.as_ref(), key.as_ref()) {
            self.error.get_or_insert(e);
        }
        self
    }

    /// Sends every request with `client`, a host's own (its proxy, its
    /// roots and client certificate, its pool), used as it is. It must not
    /// follow redirects (`reqwest::redirect::Policy::none()`): the
    /// transports follow them themselves, and only where allowed, so that
    /// credentials never follow one to another origin. With a client of its
    /// own a builder takes no [`proxy`](Self::proxy),
    /// [`no_proxy`](Self::no_proxy), [`root_certificates_pem`](Self::root_certificates_pem)
    /// or [`client_certificate_pem`](Self::client_certificate_pem) (the
    /// build fails with `invalid_config`), and the connect timeout is the
    /// client's. Build the client after
    /// [`install_crypto_provider`](super::install_crypto_provider) (or
    /// after installing a rustls provider of your own): reqwest, as this
    /// crate builds it, has no provider of its own.
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Sends every request with `service`, a host's own tower service of
    /// HTTP requests, in place of reqwest: the seam every request already
    /// goes through ([the per-hop services](super#per-hop-http-services)),
    /// for a transport this crate does not know (another client, a
    /// connector of its own, a recording double). It gets each hop as the
    /// transport built it: absolute URL, complete headers, the
    /// [`RequestTimeout`](super::RequestTimeout) to apply; it must not
    /// follow redirects. Authorization, when set, wraps it. It takes no
    /// proxy, certificates or [`client`](Self::client) beside it (the
    /// build fails with `invalid_config`); the connect timeout is its own.
    pub fn service(mut self, service: HttpService) -> Self {
        self.service = Some(service);
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
        if self.client.is_some() && !matches!(self.proxy, ProxyChoice::Environment) {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                "a client handed in keeps its own proxy settings: set the proxy on it, not on the builder",
            ));
        }
        if self.service.is_some()
            && (self.client.is_some() || self.tls.is_set() || !matches!(self.proxy, ProxyChoice::Environment))
        {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                "a service handed in sends the requests itself: it takes no client, proxy or certificates beside it",
            ));
        }
        if self.client.is_some() && self.tls.is_set() {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                "a client handed in keeps its own TLS settings: add roots and client certificates to it, not to the builder",
            ));
        }
        let mut settings = Settings::new(&self.url)?;
        let tls_set = self.tls.is_set();
        settings.network =
            NetworkOptions { proxy: self.proxy, tls: self.tls, connect_timeout: self.connect_timeout };
        if tls_set {
            // A key that does not match its certificate shows only when a
            // client is made: make one now, so the build fails, not the
            // first connection.
            settings.network.build()?;
        }
        settings.own_client = self.client;
        settings.own_service = self.service;
        settings.resume_session = Arc::new(std::sync::Mutex::new(self.session));
        settings.terminate_session_on_close = self.terminate_session_on_close;
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
    /// profile that does not allow it (see [`HttpFactory`]).
    pub fn build_auto(self, legacy_sse_fallback: bool) -> Result<HttpFactory, Error> {
        let (settings, options) = self.settings()?;
        Ok(HttpFactory::from_parts(settings, options, legacy_sse_fallback))
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
}
