//! What a connection's `reqwest::Client` is made with: the proxy choice and
//! the connect timeout. A host that needs anything else (its roots, a client
//! certificate, a pool of its own) hands in a client
//! ([`HttpBuilder::client`]), which is used as it is.
//!
//! Each connection makes its own client from these options, so a
//! connection that was lost (a partition leaves no trace on an idle pooled
//! socket) never hands its successor a dead socket. Sharing one pool per
//! origin, as the issue asks, waits for a way to drop a pool's idle
//! connections when the connection is declared lost, and for its
//! measurement.
//!
//! Proxies, by default, come from the environment as curl reads it:
//! `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY` (upper or lower case), with
//! `NO_PROXY` naming the hosts reached directly. A definition may instead
//! name a proxy (its user info is the proxy's basic credentials, kept as a
//! secret) or turn proxies off.
//!
//! [`HttpBuilder::client`]: super::HttpBuilder::client

use reqwest::Url;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, FailureClass};
use crate::redact::Registration;

/// Which proxy the requests go through.
#[derive(Clone, Default)]
pub(crate) enum ProxyChoice {
    /// The environment's (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
    /// `NO_PROXY`, either case): the default.
    #[default]
    Environment,
    /// None, whatever the environment says.
    Off,
    /// This one, for every request; its password is known to the
    /// redaction point for as long as the choice lives.
    Explicit { url: Url, _known: Arc<Vec<Registration>> },
}

impl ProxyChoice {
    /// An explicit proxy: an absolute `http` or `https` URL (`socks5` too,
    /// when reqwest supports it). The error never quotes the URL.
    pub(crate) fn explicit(url: &str) -> Result<Self, Error> {
        let parsed = Url::parse(url.trim()).map_err(|e| {
            Error::new(FailureClass::InvalidConfig, format!("the proxy URL is not valid: {e}"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                "the proxy URL must be an absolute http or https URL",
            ));
        }
        let known = parsed.password().map(crate::redact::register).into_iter().collect();
        Ok(ProxyChoice::Explicit { url: parsed, _known: Arc::new(known) })
    }
}

impl fmt::Debug for ProxyChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyChoice::Environment => f.write_str("Environment"),
            ProxyChoice::Off => f.write_str("Off"),
            // The URL may hold credentials: only its origin is shown.
            ProxyChoice::Explicit { url, .. } => {
                f.debug_tuple("Explicit").field(&super::builder::redacted_origin(url)).finish()
            }
        }
    }
}

/// What a connection's client is made with.
#[derive(Debug, Clone)]
pub(crate) struct NetworkOptions {
    pub(crate) proxy: ProxyChoice,
    pub(crate) connect_timeout: Duration,
}

impl NetworkOptions {
    /// A client for one connection.
    pub(crate) fn build(&self) -> Result<reqwest::Client, Error> {
        let mut builder = reqwest::Client::builder()
            // The transports follow redirects themselves, hop by hop, so that
            // credentials never follow one off the configured origin.
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .connect_timeout(self.connect_timeout);
        match &self.proxy {
            ProxyChoice::Environment => {}
            ProxyChoice::Off => builder = builder.no_proxy(),
            ProxyChoice::Explicit { url, .. } => {
                let proxy = reqwest::Proxy::all(url.as_str()).map_err(|e| {
                    Error::new(FailureClass::InvalidConfig, "the proxy URL is not usable")
                        .with_source(e.without_url())
                })?;
                builder = builder.proxy(proxy);
            }
        }
        builder.build().map_err(|e| {
            Error::new(FailureClass::InvalidConfig, "could not build the HTTP client")
                .with_source(e.without_url())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(proxy: ProxyChoice) -> NetworkOptions {
        NetworkOptions { proxy, connect_timeout: Duration::from_secs(30) }
    }

    #[test]
    fn a_proxy_password_never_shows() {
        let choice = ProxyChoice::explicit("http://user:hunter2-proxy-pw@proxy.example.com:3128").unwrap();
        let shown = format!("{choice:?} {:?}", options(choice.clone()));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("http://proxy.example.com:3128"), "{shown}");
        let e = Error::new(FailureClass::RemoteHttp, "the proxy said hunter2-proxy-pw");
        assert!(!e.message().contains("hunter2-proxy-pw"), "{e}");
    }

    #[test]
    fn a_bad_proxy_url_is_refused_without_quoting_it() {
        for url in ["not a url hunter2", "ftp://proxy.example.com", "http://"] {
            let e = ProxyChoice::explicit(url).unwrap_err();
            assert_eq!(e.class(), FailureClass::InvalidConfig);
            assert!(!e.message().contains("hunter2"), "{e}");
        }
    }
}
