//! What a connection's `reqwest::Client` is made with: the proxy choice,
//! the extra roots and client certificate, and the connect timeout. A host
//! that needs anything else (a pool of its own, another TLS setting) hands
//! in a client ([`HttpBuilder::client`]), which is used as it is.
//!
//! # One pool per origin
//!
//! Connections to the same origin made with the same options share one
//! client, and so its pool of sockets and TLS sessions: a host with many
//! bindings to one server, or a binding that reconnects, does not open and
//! handshake afresh each time ([`NetworkOptions::shared_client`]). A pool
//! that failed is retired: when an exchange over it fails for the
//! transport (it could not connect, the connection broke, reqwest timed
//! out) or is abandoned before its answer came (the call's deadline, a
//! cancellation), later connections get a new pool, because a partition
//! leaves no trace on an idle pooled socket and a successor must not
//! inherit a dead one. Connections already holding the old pool keep it
//! until they end. The registry holds pools weakly: a pool lives as long
//! as a connection uses it.
//!
//! Measured by `benches/connect.rs` (HTTPS on loopback, six bindings to one
//! origin): a binding after the first is ready in 1.1 ms with the shared
//! pool against 43 ms with a client of its own; making a client (loading
//! the platform's roots) and the TLS handshake were nearly all of it.
//!
//! A pool keeps at most [`MAX_IDLE_PER_ORIGIN`] idle connections; one
//! returned to a full pool is closed. reqwest keeps every idle connection
//! by default (for 90 s), and a host dialing hundreds of bindings to one
//! origin at once opened about 1.4 connections a binding for their
//! handshakes and then held them all: 1,000 idle bindings each kept
//! 10-20 KB of hyper's connection state beside their own. The bound is
//! the most one streamable HTTP connection has in flight (64), so a
//! binding busy to that depth reuses every socket it opened;
//! more idle than that only holds memory (Go's HTTP client keeps 2 idle
//! per host). A bound below a binding's depth is not a saving but churn:
//! with 32 calls in flight (`bench/vs-rmcp`, HTTP/1.1 on loopback,
//! pinned, 2026-12-05), a bound of 16 opened 4,700 connections in a run
//! that opens 32 with the bound of 64, and made 10,500 calls/s against
//! 22,400 (a bound of 8: 7,600 connections, 8,400 calls/s), as calls
//! ending together leave more sockets idle at once than the bound keeps.
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
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, Weak};
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
    /// SHA-256 of each PEM input, in order: what makes two sets of options
    /// the same pool (the parsed types cannot be compared).
    digests: Vec<[u8; 32]>,
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
        self.digests.push(Sha256::digest(pem).into());
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
        let mut digest = Sha256::new();
        digest.update(b"identity");
        digest.update(Sha256::digest(chain));
        digest.update(Sha256::digest(key));
        self.digests.push(digest.finalize().into());
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

/// The most idle connections a pool keeps to its origin (see
/// [the module docs](self#one-pool-per-origin)).
pub(crate) const MAX_IDLE_PER_ORIGIN: usize = super::streamable::MAX_IN_FLIGHT;

/// What a connection's client is made with.
#[derive(Debug, Clone)]
pub(crate) struct NetworkOptions {
    pub(crate) proxy: ProxyChoice,
    pub(crate) tls: TlsOptions,
    pub(crate) connect_timeout: Duration,
}

/// A client shared by the connections to one origin with the same options
/// (see [the module docs](self#one-pool-per-origin)).
pub(crate) struct SharedClient {
    key: [u8; 32],
    pub(crate) client: reqwest::Client,
}

impl fmt::Debug for SharedClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedClient").finish_non_exhaustive()
    }
}

/// The pools in use, by origin and options; held weakly.
static POOLS: LazyLock<Mutex<HashMap<[u8; 32], Weak<SharedClient>>>> = LazyLock::new(Default::default);

impl SharedClient {
    /// Later connections get a new pool; this one serves those that hold
    /// it until they end.
    pub(crate) fn retire(self: &Arc<Self>) {
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if pools.get(&self.key).is_some_and(|held| std::ptr::eq(held.as_ptr(), Arc::as_ptr(self))) {
            pools.remove(&self.key);
        }
    }
}

impl NetworkOptions {
    /// The client for a connection to `origin`: the pool that connections
    /// with the same origin and options share, made on first use.
    pub(crate) fn shared_client(&self, origin: &Url) -> Result<Arc<SharedClient>, Error> {
        let key = self.pool_key(origin);
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(shared) = pools.get(&key).and_then(Weak::upgrade) {
            return Ok(shared);
        }
        // Building under the lock keeps two first connections from making
        // two pools; it takes well under a millisecond once the platform's
        // roots are loaded.
        let shared = Arc::new(SharedClient { key, client: self.build()? });
        // Pools no connection holds any more go as new ones come, so the
        // registry is as large as the pools in use, plus those since the
        // last insertion.
        pools.retain(|_, held| held.strong_count() > 0);
        pools.insert(key, Arc::downgrade(&shared));
        Ok(shared)
    }

    /// What makes two connections share a pool: the origin, the proxy
    /// choice (an explicit URL's credentials included, hashed), the PEM
    /// inputs and the connect timeout.
    fn pool_key(&self, origin: &Url) -> [u8; 32] {
        let mut key = Sha256::new();
        key.update(origin.origin().ascii_serialization());
        key.update([0]);
        match &self.proxy {
            ProxyChoice::Environment => key.update(b"environment"),
            ProxyChoice::Off => key.update(b"off"),
            ProxyChoice::Explicit { url, .. } => {
                key.update(b"explicit ");
                key.update(url.as_str());
            }
        }
        key.update([0]);
        for digest in &self.tls.digests {
            key.update(digest);
        }
        key.update(self.connect_timeout.as_nanos().to_be_bytes());
        key.finalize().into()
    }

    /// A new client made from these options.
    pub(crate) fn build(&self) -> Result<reqwest::Client, Error> {
        super::install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            // The transports follow redirects themselves, hop by hop, so that
            // credentials never follow one off the configured origin.
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .pool_max_idle_per_host(MAX_IDLE_PER_ORIGIN)
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

    fn origin(url: &str) -> Url {
        Url::parse(url).unwrap()
    }

    #[test]
    fn connections_to_one_origin_with_the_same_options_share_a_pool_until_it_is_retired() {
        let env = options(ProxyChoice::Environment);
        let here = origin("http://127.0.0.1:9/mcp");
        let a = env.shared_client(&here).unwrap();
        let b = env.shared_client(&origin("http://127.0.0.1:9/other")).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "same origin, same options: one pool");

        for (why, other) in [
            ("another port", env.shared_client(&origin("http://127.0.0.1:10/mcp")).unwrap()),
            ("another scheme", env.shared_client(&origin("https://127.0.0.1:9/mcp")).unwrap()),
            ("no proxy", options(ProxyChoice::Off).shared_client(&here).unwrap()),
            (
                "another proxy",
                options(ProxyChoice::explicit("http://proxy.example:3128").unwrap())
                    .shared_client(&here)
                    .unwrap(),
            ),
            (
                "another connect timeout",
                NetworkOptions { connect_timeout: Duration::from_secs(1), ..env.clone() }
                    .shared_client(&here)
                    .unwrap(),
            ),
        ] {
            assert!(!Arc::ptr_eq(&a, &other), "{why}: a pool of its own");
        }

        // Retired: later connections get a new pool; those holding the old
        // one keep it. Retiring a pool no longer registered changes nothing.
        a.retire();
        let c = env.shared_client(&here).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        a.retire();
        assert!(Arc::ptr_eq(&c, &env.shared_client(&here).unwrap()));

        // A pool no connection holds is gone: the next one is new (the
        // registry holds pools weakly).
        let weak = Arc::downgrade(&c);
        drop((a, b, c));
        assert!(weak.upgrade().is_none());
    }

    #[tokio::test]
    async fn an_exchange_abandoned_before_its_answer_retires_its_pool_and_an_answered_one_does_not() {
        use super::super::service::ReqwestService;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        use tower_service::Service;

        // A server that answers the first request and never the second.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (got_second, second) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let _ = socket.read(&mut buf).await;
            socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await.unwrap();
            let _ = socket.read(&mut buf).await;
            let _ = got_second.send(());
            std::future::pending::<()>().await;
        });

        let env = options(ProxyChoice::Off);
        let here = origin(&url);
        let pool = env.shared_client(&here).unwrap();
        let mut service = ReqwestService::new(pool.client.clone(), Some(pool.clone()), Default::default());
        let request = || http::Request::post(url.as_str()).body(None).unwrap();
        let answered = service.call(request()).await.unwrap();
        assert_eq!(answered.status(), 200);
        assert!(Arc::ptr_eq(&pool, &env.shared_client(&here).unwrap()), "an answer keeps the pool");

        let abandoned = service.call(request());
        tokio::select! {
            _ = abandoned => panic!("the server never answers the second request"),
            _ = second => {}
        }
        assert!(!Arc::ptr_eq(&pool, &env.shared_client(&here).unwrap()), "abandoned: the pool is retired");
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
