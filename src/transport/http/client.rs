//! The HTTP client of one connection: the redirect loop over the per-hop
//! [`HttpService`], which decides, hop by hop, which headers and
//! credentials a request still carries.
//!
//! Apart from the transports because every request of every HTTP transport
//! goes through it, and the rules on redirects (see the
//! [module docs](super)) are kept here alone.

use bytes::Bytes;
use reqwest::header::LOCATION;
use reqwest::{Method, StatusCode, Url};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::builder::{redacted_origin, Settings};
use super::headers::{RequestHeaders, MCP_SESSION_ID};
use super::service::{self, HopUrl, HttpResponse, HttpService, RequestTimeout};
use super::MAX_REDIRECTS;
use crate::error::{Error, FailureClass};
use crate::transport::{ConnectConfig, RedactedOrigin};

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
    /// The client for one connection: the host's own service, or reqwest
    /// (the host's own client, or the pool made from the network options;
    /// see [`super::network`]), with the builder's connection layer on it,
    /// if it set one.
    pub(crate) fn new(settings: Arc<Settings>, config: &ConnectConfig) -> Result<Self, Error> {
        let (inner, client) = match &settings.own_service {
            Some(own) => (own.clone(), None),
            None => {
                let (client, shared) = settings.reqwest_client()?;
                let reqwest = service::ReqwestService::new(client.clone(), shared, settings.origin.clone());
                (HttpService::new(reqwest), Some(client))
            }
        };
        let service = match &settings.layer {
            Some(layer) => {
                // A layer that reaches other servers (authorization) does
                // so with reqwest, even under a service of the host's own.
                let client = match client {
                    Some(client) => client,
                    None => settings.reqwest_client()?.0,
                };
                layer.layer(inner, &settings.url, config, &client)?
            }
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
    ) -> Result<HttpResponse, Error> {
        // The server's own URL (every request but a redirect's) is on the
        // configured origin, and its URI was made once.
        let home = || self.settings.url.origin();
        let mut url = url.clone();
        let mut trusted = url == self.settings.url || url.origin() == home();
        for _hop in 0..=MAX_REDIRECTS {
            let mut request = http::Request::new(body.clone());
            *request.method_mut() = method.clone();
            let uri = if url == self.settings.url {
                self.settings.uri.clone()
            } else {
                http::Uri::try_from(url.as_str()).map_err(|_| {
                    Error::new(FailureClass::InvalidConfig, "could not build the HTTP request: bad URL")
                })?
            };
            request.extensions_mut().insert(HopUrl { uri: uri.clone(), url: url.clone() });
            *request.uri_mut() = uri;
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
            let response = tower::ServiceExt::oneshot(self.service.clone(), request).await?;
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
                )
                .with_http_status(status.as_u16()));
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
                )
                .with_http_status(status.as_u16()));
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
                )
                .with_http_status(status.as_u16()));
            }
            let mut target = target;
            if target.origin() != home() {
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
