//! Issue 22, item 1: a server behind a private CA is reached with that CA
//! among the roots and refused without it; a server that requires a client
//! certificate is reached with one its CA signed and refused without one
//! or with another CA's; PEM that does not parse, or a key that is not the
//! certificate's, fails the build at once without quoting either.
//!
//! A config file entry names the same by path (`x-mcp-stack.caCert`,
//! `.clientCert`, `.clientKey`).
//!
//! Every certificate is made by the test (`support::tls`), for
//! `127.0.0.1`.

use crate::proxy::{call_through, mcp};
use crate::support::tls::{serve_mcp_tls, TestCa};
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use mcp_stack::handlers::Handlers;
use mcp_stack::host::config_file;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{Binding, CallOpts, FailureClass};
use serde_json::json;

fn router() -> Router {
    Router::new().route("/mcp", post(mcp).get(|| async { StatusCode::METHOD_NOT_ALLOWED }))
}

#[tokio::test]
async fn a_server_behind_a_private_ca_is_reached_with_its_root_and_refused_without() {
    let ca = TestCa::new("private CA");
    let url = serve_mcp_tls(router(), &ca, None).await;

    let refused = call_through(HttpBuilder::new(&url).no_proxy()).await.unwrap_err();
    assert_eq!(refused.class(), FailureClass::TransportClosed, "{refused:?}");
    // The one cause a user can act on is in the message, not only in the
    // source chain.
    assert!(refused.message().contains("TLS: invalid peer certificate: UnknownIssuer"), "{refused}");

    let other = TestCa::new("another CA");
    let refused =
        call_through(HttpBuilder::new(&url).no_proxy().root_certificates_pem(other.pem())).await.unwrap_err();
    assert_eq!(refused.class(), FailureClass::TransportClosed, "{refused:?}");

    // A bundle: another CA's root, then the right one.
    let bundle = format!("{}{}", other.pem(), ca.pem());
    let reached = call_through(HttpBuilder::new(&url).no_proxy().root_certificates_pem(bundle)).await;
    assert_eq!(reached.unwrap(), "through");
}

#[tokio::test]
async fn a_server_that_requires_a_client_certificate_is_reached_only_with_one_its_ca_signed() {
    let ca = TestCa::new("server CA");
    let clients = TestCa::new("client CA");
    let url = serve_mcp_tls(router(), &ca, Some(&clients)).await;
    let trusted = || HttpBuilder::new(&url).no_proxy().root_certificates_pem(ca.pem());

    let refused = call_through(trusted()).await.unwrap_err();
    assert!(refused.message().contains("TLS: received fatal alert: CertificateRequired"), "{refused}");
    assert!(
        matches!(refused.class(), FailureClass::TransportClosed | FailureClass::RemoteHttp),
        "{refused:?}"
    );

    let stranger = TestCa::new("another client CA").client("mallory");
    let refused = call_through(trusted().client_certificate_pem(&stranger.cert_pem, &stranger.key_pem))
        .await
        .unwrap_err();
    assert!(
        matches!(refused.class(), FailureClass::TransportClosed | FailureClass::RemoteHttp),
        "{refused:?}"
    );

    let alice = clients.client("alice");
    let builder = trusted().client_certificate_pem(&alice.cert_pem, &alice.key_pem);
    let shown = format!("{builder:?}");
    assert!(!shown.contains("PRIVATE KEY") && !shown.contains(&alice.key_pem[40..80]), "{shown}");
    assert_eq!(call_through(builder).await.unwrap(), "through");
}

#[test]
fn bad_pem_fails_the_build_at_once_without_quoting_it() {
    let ca = TestCa::new("CA");
    let alice = ca.client("alice");
    let bob = ca.client("bob");
    let key_body = &alice.key_pem[40..80];
    let cases: Vec<(&str, HttpBuilder)> = vec![
        (
            "no certificate in the roots",
            HttpBuilder::new("https://127.0.0.1:1/mcp").root_certificates_pem("hello"),
        ),
        (
            "a key where the roots should be",
            HttpBuilder::new("https://127.0.0.1:1/mcp").root_certificates_pem(&alice.key_pem),
        ),
        (
            "a truncated root",
            HttpBuilder::new("https://127.0.0.1:1/mcp").root_certificates_pem(&ca.pem()[..200]),
        ),
        (
            "no key",
            HttpBuilder::new("https://127.0.0.1:1/mcp").client_certificate_pem(&alice.cert_pem, "not a key"),
        ),
        (
            "a key for a certificate",
            HttpBuilder::new("https://127.0.0.1:1/mcp")
                .client_certificate_pem(&alice.key_pem, &alice.key_pem),
        ),
        (
            "another certificate's key",
            HttpBuilder::new("https://127.0.0.1:1/mcp").client_certificate_pem(&alice.cert_pem, &bob.key_pem),
        ),
    ];
    for (case, builder) in cases {
        let e = builder.build().expect_err(case);
        assert_eq!(e.class(), FailureClass::InvalidConfig, "{case}: {e:?}");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(key_body), "{case} quoted the key: {shown}");
    }
}

#[test]
fn a_client_handed_in_takes_no_certificates_from_the_builder() {
    let ca = TestCa::new("CA");
    mcp_stack::transport::http::install_crypto_provider();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let e = HttpBuilder::new("https://127.0.0.1:1/mcp")
        .client(client)
        .root_certificates_pem(ca.pem())
        .build()
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig, "{e:?}");
}

#[tokio::test]
async fn a_config_entry_names_its_roots_and_client_certificate_by_path() {
    let ca = TestCa::new("server CA");
    let clients = TestCa::new("client CA");
    let url = serve_mcp_tls(router(), &ca, Some(&clients)).await;
    let dir = tempfile::tempdir().unwrap();
    let alice = clients.client("alice");
    for (file, pem) in
        [("ca.pem", ca.pem()), ("alice.pem", alice.cert_pem.clone()), ("alice.key", alice.key_pem.clone())]
    {
        std::fs::write(dir.path().join(file), pem).unwrap();
    }
    let home = dir.path().display().to_string();
    let text = format!(
        r#"{{"mcpServers": {{"mtls": {{"type": "streamable-http", "url": "{url}", "x-mcp-stack": {{
            "noProxy": true,
            "caCert": "${{env:CERTS}}/ca.pem",
            "clientCert": "${{env:CERTS}}/alice.pem",
            "clientKey": "${{env:CERTS}}/alice.key"
        }}}}}}}}"#
    );
    let loaded = config_file::parse(&text, &|name| (name == "CERTS").then(|| home.clone())).unwrap();
    assert!(
        loaded.errors.is_empty() && loaded.warnings.is_empty(),
        "{:?} {:?}",
        loaded.errors,
        loaded.warnings
    );
    let definition = loaded.definitions.into_iter().next().unwrap();
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let result = binding.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("through"));
    binding.close().await;
}
