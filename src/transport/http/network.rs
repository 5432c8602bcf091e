//! What a connection's `reqwest::Client` is made with: the proxy choice,
//! the extra roots and client certificate, and the connect timeout. A host
//! that needs anything else (a pool of its own, another TLS setting) hands
//! in a client ([`HttpBuilder::client`]), which is used as it is.
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
//! Trust: the platform's roots, plus any the definition adds (a private
//! CA's, in PEM); the server's certificate must chain to one of them and
//! name the host, as always: there is no switch that turns verification
//! off. A client certificate (PEM chain and its private key) answers a
//! server that asks for one (mutual TLS). The key never appears in `Debug`,
//! errors or events; the PEM is parsed when the builder takes it, so a bad
//! file fails the build at once rather than the first connection.
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

/// Extra trust and a client identity, parsed from PEM.
#[derive(Clone, Default)]
pub(crate) struct TlsOptions {
    /// Roots trusted besides the platform's.
    roots: Vec<reqwest::Certificate>,
    /// The client certificate chain and key for mutual TLS.
    identity: Option<reqwest::Identity>,
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Counts only: a key is never shown, and certificates say nothing
        // a log needs.
        f.debug_struct("TlsOptions")
            .field("extra_roots", &self.roots.len())
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

/// The most certificates one PEM bundle of roots may add: a bundle of
/// thousands is a mistake (or a hostile file), not a private CA.
pub(crate) const MAX_EXTRA_ROOTS: usize = 256;

impl TlsOptions {
    /// Adds every certificate of a PEM bundle to the roots. A bundle with
    /// none, one that does not parse, or more than [`MAX_EXTRA_ROOTS`] in
    /// all is `invalid_config`.
    pub(crate) fn add_roots_pem(&mut self, pem: &[u8]) -> Result<(), Error> {
        let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
            Error::new(FailureClass::InvalidConfig, "the root certificates are not valid PEM")
                .with_source(e.without_url())
        })?;
        if certs.is_empty() {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                "the root certificates hold no PEM certificate",
            ));
        }
        if self.roots.len() + certs.len() > MAX_EXTRA_ROOTS {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                format!("at most {MAX_EXTRA_ROOTS} extra root certificates are taken"),
            ));
        }
        self.roots.extend(certs);
        Ok(())
    }

    /// The client certificate: `chain` holds the certificate (and any
    /// intermediates) in PEM, `key` its private key (PKCS#8, PKCS#1 or SEC1
    /// PEM). The error never quotes either.
    pub(crate) fn set_identity_pem(&mut self, chain: &[u8], key: &[u8]) -> Result<(), Error> {
        let refused = |what: &'static str| Error::new(FailureClass::InvalidConfig, what);
        if !contains(chain, b"-----BEGIN CERTIFICATE-----") {
            return Err(refused("the client certificate holds no PEM certificate"));
        }
        if !contains(key, b"PRIVATE KEY-----") {
            return Err(refused("the client key holds no PEM private key"));
        }
        // reqwest reads both from one buffer; the copy lives only until
        // it has parsed them.
        let mut both = Vec::with_capacity(key.len() + chain.len() + 1);
        both.extend_from_slice(key);
        both.push(b'\n');
        both.extend_from_slice(chain);
        let parsed = reqwest::Identity::from_pem(&both);
        both.fill(0);
        let identity = parsed.map_err(|_| refused("the client certificate or key is not valid PEM"))?;
        self.identity = Some(identity);
        Ok(())
    }

    /// Whether anything was set (a host's own client takes none of it).
    pub(crate) fn is_set(&self) -> bool {
        !self.roots.is_empty() || self.identity.is_some()
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// What a connection's client is made with.
#[derive(Debug, Clone)]
pub(crate) struct NetworkOptions {
    pub(crate) proxy: ProxyChoice,
    pub(crate) tls: TlsOptions,
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
        if !self.tls.roots.is_empty() {
            builder = builder.tls_certs_merge(self.tls.roots.iter().cloned());
        }
        if let Some(identity) = &self.tls.identity {
            builder = builder.identity(identity.clone());
        }
        builder.build().map_err(|e| {
            // The source is reqwest's (a key that does not match its
            // certificate, say); it never holds the key.
            Error::new(FailureClass::InvalidConfig, "could not build the HTTP client")
                .with_source(e.without_url())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(proxy: ProxyChoice) -> NetworkOptions {
        NetworkOptions { proxy, tls: TlsOptions::default(), connect_timeout: Duration::from_secs(30) }
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
