//! The one place an HTTP request leaves the client: a tower service per hop. Documented in the [per-hop HTTP services section of the parent module](crate::transport::http#per-hop-http-services).

use super::network::SharedClient;
use bytes::Bytes;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::util::{BoxCloneSyncService, BoxCloneSyncServiceLayer};
use tower_layer::Layer;
use tower_service::Service;

use crate::error::{Error, FailureClass};
use crate::transport::{ConnectConfig, RedactedOrigin};

/// One hop of an HTTP exchange: `None` is a request without a body.
pub type HttpRequest = http::Request<Option<Bytes>>;

/// The answer to one hop, its body unread.
pub type HttpResponse = http::Response<reqwest::Body>;

/// The per-hop service the transports send through (reqwest, with any
/// layers on it), boxed so that it can be cloned and shared.
pub type HttpService = BoxCloneSyncService<HttpRequest, HttpResponse, Error>;

/// A bound on one exchange, headers and body, as a request extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Duration);

/// The hop's URL as reqwest takes it, beside the URI it was made from: the
/// transport sets it, so that the innermost service need not parse the
/// URI's text again (a full URL parse, IDNA included, per request). Used
/// only while the request's URI is still that one: a layer that changes
/// the URI gets its new URI parsed.
#[derive(Debug, Clone)]
pub(crate) struct HopUrl {
    pub(crate) uri: http::Uri,
    pub(crate) url: reqwest::Url,
}

/// A layer on the per-hop [`HttpService`], boxed.
pub(crate) type BoxHttpLayer = BoxCloneSyncServiceLayer<HttpService, HttpRequest, HttpResponse, Error>;

/// What makes one connection's layer.
type MakeLayer =
    dyn Fn(&reqwest::Url, &ConnectConfig, &reqwest::Client) -> Result<BoxHttpLayer, Error> + Send + Sync;

/// A layer every connection of a factory puts on its per-hop service, made
/// afresh per connection from the server URL the builder was given and the
/// connection's settings (the layer may keep state for one connection, and
/// report through the connection's hooks).
///
/// Set by the modules above the transport (authorization), which is why it
/// is a recipe the transport runs rather than a type it knows.
#[derive(Clone)]
// Only authorization sets one today; a build without it never makes one.
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) struct ConnectionLayer {
    /// What the layer is, for `Debug` output.
    name: &'static str,
    make: Arc<MakeLayer>,
}

impl fmt::Debug for ConnectionLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ConnectionLayer").field(&self.name).finish()
    }
}

impl ConnectionLayer {
    /// A layer named `name` (for `Debug`), made per connection by `make`,
    /// which gets the server's URL, the connection's settings and its
    /// reqwest client (so that what the layer sends elsewhere, say to an
    /// authorization server, goes through the same proxy and trusts the
    /// same roots).
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(crate) fn new(
        name: &'static str,
        make: impl Fn(&reqwest::Url, &ConnectConfig, &reqwest::Client) -> Result<BoxHttpLayer, Error>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        ConnectionLayer { name, make: Arc::new(make) }
    }

    /// `inner` with this layer on it, for one connection to `server`.
    pub(crate) fn layer(
        &self,
        inner: HttpService,
        server: &reqwest::Url,
        config: &ConnectConfig,
        client: &reqwest::Client,
    ) -> Result<HttpService, Error> {
        Ok((self.make)(server, config, client)?.layer(inner))
    }
}

/// The innermost [`HttpService`]: sends the request with reqwest.
#[derive(Clone)]
pub(crate) struct ReqwestService {
    client: reqwest::Client,
    /// The shared pool `client` belongs to, if it is one: retired when an
    /// exchange fails for the transport or is abandoned before its answer
    /// (see [`super::network`]).
    pool: Option<Arc<SharedClient>>,
    origin: RedactedOrigin,
}

/// Retires a pool unless disarmed: an exchange dropped before its answer
/// (a deadline, a cancellation) may have left a socket no one can trust.
struct RetireUnlessAnswered(Option<Arc<SharedClient>>);

impl RetireUnlessAnswered {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for RetireUnlessAnswered {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            pool.retire();
        }
    }
}

impl fmt::Debug for ReqwestService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReqwestService").field("origin", &self.origin).finish()
    }
}

impl ReqwestService {
    pub(crate) fn new(
        client: reqwest::Client,
        pool: Option<Arc<SharedClient>>,
        origin: RedactedOrigin,
    ) -> Self {
        ReqwestService { client, pool, origin }
    }
}

impl Service<HttpRequest> for ReqwestService {
    type Response = HttpResponse;
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        // reqwest's client has no readiness of its own: its pool waits
        // inside the call.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequest) -> Self::Future {
        let client = self.client.clone();
        let origin = self.origin.clone();
        let pool = self.pool.clone();
        Box::pin(async move {
            // Armed from the first poll: a request never polled never sent.
            let guard = RetireUnlessAnswered(pool);
            let (mut parts, body) = request.into_parts();
            let url = match parts.extensions.remove::<HopUrl>() {
                Some(hop) if hop.uri == parts.uri => hop.url,
                _ => reqwest::Url::parse(&parts.uri.to_string()).map_err(|_| {
                    Error::new(FailureClass::InvalidConfig, "could not build the HTTP request: bad URL")
                })?,
            };
            // Built, then completed with `insert`, so that a header the
            // transport set replaces (never joins) one the client derived,
            // such as the basic authentication of the URL's user info.
            let mut outgoing = client.request(parts.method, url).build().map_err(|e| {
                Error::new(FailureClass::InvalidConfig, "could not build the HTTP request")
                    .with_source(e.without_url())
            })?;
            let target = outgoing.headers_mut();
            for name in parts.headers.keys() {
                target.remove(name);
            }
            for (name, value) in &parts.headers {
                target.append(name.clone(), value.clone());
            }
            *outgoing.body_mut() = body.map(reqwest::Body::from);
            *outgoing.timeout_mut() = parts.extensions.get::<RequestTimeout>().map(|t| t.0);
            let response = client.execute(outgoing).await.map_err(|e| request_error(&origin, e))?;
            // Answered (whatever the status): the pool is sound.
            guard.disarm();
            Ok(HttpResponse::from(response))
        })
    }
}

/// An error for a request that could not be made, without its URL.
pub(crate) fn request_error(origin: &RedactedOrigin, e: reqwest::Error) -> Error {
    let what = if e.is_connect() {
        "could not connect to"
    } else if e.is_timeout() {
        "timed out talking to"
    } else {
        "the HTTP exchange failed with"
    };
    let message = match tls_cause(&e) {
        Some(cause) => format!("{what} {origin}: TLS: {cause}"),
        None => format!("{what} {origin}"),
    };
    Error::new(FailureClass::TransportClosed, message).with_source(e.without_url())
}

/// What TLS said, when a certificate is why an exchange failed (a server
/// certificate the roots do not vouch for, a client certificate the server
/// wanted or refused): the one cause a user can act on (add the CA's root,
/// present a certificate), so the message names it rather than leaving it
/// in the source chain. rustls's own words, which hold no URL and no key.
fn tls_cause(e: &reqwest::Error) -> Option<String> {
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if text.to_ascii_lowercase().contains("certificate") {
            return Some(text.chars().take(200).collect());
        }
        source = cause.source();
    }
    None
}
