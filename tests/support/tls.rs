//! TLS for the tests' servers: a throw-away certificate authority made by
//! the test (rcgen), a server certificate it signs for `127.0.0.1` and
//! `localhost`, client certificates, and an axum listener that speaks TLS
//! (tokio-rustls), asking for a client certificate when told to.

use axum::serve::Listener;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// A certificate authority made for one test.
pub struct TestCa {
    cert: rcgen::Certificate,
    key: KeyPair,
}

/// A certificate the CA signed, with its key, in PEM.
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
    der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).expect("a self-signed CA");
        TestCa { cert, key }
    }

    /// The CA's certificate in PEM: what a client adds to its roots.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }

    /// A server certificate for `127.0.0.1` and `localhost`.
    pub fn server(&self) -> Issued {
        self.issue(vec!["127.0.0.1".into(), "localhost".into()], "test server")
    }

    /// A client certificate.
    pub fn client(&self, name: &str) -> Issued {
        self.issue(Vec::new(), name)
    }

    fn issue(&self, names: Vec<String>, common_name: &str) -> Issued {
        let key = KeyPair::generate().expect("a key");
        let mut params = CertificateParams::new(names).expect("certificate parameters");
        params.distinguished_name.push(DnType::CommonName, common_name);
        let cert = params.signed_by(&key, &self.cert, &self.key).expect("a signed certificate");
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }
}

/// An axum listener that does the TLS handshake before handing a
/// connection on. A failed handshake (a client that does not trust the
/// server, or brings no certificate where one is required) is dropped, and
/// the listener waits for the next one.
pub struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, addr)) = self.tcp.accept().await else { continue };
            let handshake = tokio::time::timeout(Duration::from_secs(10), self.acceptor.accept(tcp));
            if let Ok(Ok(stream)) = handshake.await {
                return (stream, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// Serves `router` over TLS on `127.0.0.1` at a free port, with a server
/// certificate from `ca`; when `client_ca` is given, a client certificate
/// signed by it is required. The MCP endpoint's URL (`https://…/mcp`).
pub async fn serve_mcp_tls(router: axum::Router, ca: &TestCa, client_ca: Option<&TestCa>) -> String {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = ca.server();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("TLS versions");
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(client_ca) => {
            let mut roots = RootCertStore::empty();
            roots.add(client_ca.der()).expect("the client CA");
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .expect("a client certificate verifier");
            builder.with_client_cert_verifier(verifier)
        }
    };
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server.key_der.clone()));
    let config =
        builder.with_single_cert(vec![server.der.clone(), ca.der()], key).expect("the server certificate");
    let tcp = TcpListener::bind("127.0.0.1:0").await.expect("a free loopback port");
    let addr = tcp.local_addr().expect("the listener's address");
    let listener = TlsListener { tcp, acceptor: TlsAcceptor::from(Arc::new(config)) };
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("https://{addr}/mcp")
}
