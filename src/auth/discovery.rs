//! The discovery driver: from a 401 to checked authorization server
//! metadata, through [`Fetch`].
//!
//! 1. Protected Resource Metadata from each of
//!    [`protected_resource_metadata_urls`] in turn; any non-2xx answer moves
//!    on to the next URL, a 2xx body that does not parse or names another
//!    resource is refused at once (a server that answers is not second
//!    guessed).
//! 2. For each of its `authorization_servers` in order, the metadata from
//!    each of [`authorization_server_metadata_urls`] in turn, the same way;
//!    the first found must pass [`AuthorizationServerMetadata::check`]
//!    against the issuer it was discovered from.
//! 3. When no PRM exists anywhere and [`DiscoveryOptions::legacy_fallback`]
//!    is on (the default), the 2025-03-26 rules: the MCP server's origin is
//!    the authorization server, with RFC 8414 metadata at its root, else the
//!    default `/authorize`, `/token` and `/register`.
//!
//! A fetch that fails outright (no response) ends discovery with
//! [`AuthError::Fetch`]: guessing past a network failure would hide it.

use url::Url;

use super::fetch::{Fetch, Fetched};
use super::metadata::MAX_METADATA_BYTES;
use super::wellknown::{
    authorization_server_metadata_urls, canonical_resource, http_url, legacy_metadata_url,
    protected_resource_metadata_urls,
};
use super::{AuthError, AuthorizationServerMetadata, BearerChallenge, ProtectedResourceMetadata};

/// Choices for [`discover`].
#[derive(Debug, Clone)]
pub(crate) struct DiscoveryOptions {
    /// Apply the 2025-03-26 fallback when no PRM is found (default: true).
    pub legacy_fallback: bool,
}

impl Default for DiscoveryOptions {
    fn default() -> Self {
        Self { legacy_fallback: true }
    }
}

/// What discovery found, every document checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Discovered {
    /// The RFC 8707 `resource` to send: the PRM's `resource`, or (without a
    /// PRM) the server's canonical URI.
    pub resource: String,
    /// The Protected Resource Metadata and where it came from; `None` on the
    /// 2025-03-26 fallback.
    pub resource_metadata: Option<(Url, ProtectedResourceMetadata)>,
    /// The authorization server's metadata.
    pub authorization_server: AuthorizationServerMetadata,
    /// Where that metadata came from; `None` when it is the 2025-03-26
    /// defaults.
    pub authorization_server_url: Option<Url>,
}

impl Discovered {
    /// Whether this is the 2025-03-26 fallback (no PRM).
    pub(crate) fn is_legacy(&self) -> bool {
        self.resource_metadata.is_none()
    }
}

/// Runs discovery for the MCP server at `server`, after a 401 whose
/// `Bearer` challenge (if any) is `challenge`.
pub(crate) async fn discover(
    fetch: &(impl Fetch + ?Sized),
    server: &str,
    challenge: Option<&BearerChallenge>,
    options: &DiscoveryOptions,
) -> Result<Discovered, AuthError> {
    let server = http_url(server, "server")?;
    let hint = challenge.and_then(|c| c.resource_metadata.as_deref());
    let mut prm = None;
    for url in protected_resource_metadata_urls(&server, hint) {
        if let Some(body) = get_ok(fetch, &url).await? {
            let doc = ProtectedResourceMetadata::from_json(&body, &url)?;
            doc.check_resource(&server)?;
            prm = Some((url, doc));
            break;
        }
    }
    let Some((prm_url, prm)) = prm else {
        if !options.legacy_fallback {
            return Err(AuthError::NoResourceMetadata { server: server.to_string() });
        }
        return legacy(fetch, &server).await;
    };
    if prm.authorization_servers.is_empty() {
        return Err(AuthError::NoAuthorizationServer { url: prm_url.to_string() });
    }
    for issuer in &prm.authorization_servers {
        let issuer_url = http_url(issuer, "issuer")?;
        if let Some((url, meta)) = authorization_server(fetch, issuer, &issuer_url).await? {
            return Ok(Discovered {
                resource: prm.resource.clone(),
                authorization_server: meta,
                authorization_server_url: Some(url),
                resource_metadata: Some((prm_url, prm)),
            });
        }
    }
    Err(AuthError::NoServerMetadata { issuer: prm.authorization_servers.join(" ") })
}

async fn authorization_server(
    fetch: &(impl Fetch + ?Sized),
    issuer: &str,
    issuer_url: &Url,
) -> Result<Option<(Url, AuthorizationServerMetadata)>, AuthError> {
    for url in authorization_server_metadata_urls(issuer_url) {
        if let Some(body) = get_ok(fetch, &url).await? {
            let meta = AuthorizationServerMetadata::from_json(&body, &url)?;
            meta.check(issuer)?;
            return Ok(Some((url, meta)));
        }
    }
    Ok(None)
}

async fn legacy(fetch: &(impl Fetch + ?Sized), server: &Url) -> Result<Discovered, AuthError> {
    let url = legacy_metadata_url(server);
    let origin = server.origin().ascii_serialization();
    let (meta, meta_url) = match get_ok(fetch, &url).await? {
        Some(body) => {
            let meta = AuthorizationServerMetadata::from_json(&body, &url)?;
            meta.check(&origin)?;
            (meta, Some(url))
        }
        None => (AuthorizationServerMetadata::legacy_defaults(server), None),
    };
    Ok(Discovered {
        resource: canonical_resource(server),
        resource_metadata: None,
        authorization_server: meta,
        authorization_server_url: meta_url,
    })
}

/// The token endpoint of the authorization server (or enterprise identity
/// provider) `issuer`, from its metadata: RFC 8414 with path insertion,
/// then both OpenID Connect discovery forms; the document's `issuer` must be
/// the one asked for. Only the token endpoint is needed, so nothing else is
/// required of the document (an IdP need not offer PKCE to its exchange).
pub(crate) async fn token_endpoint_of(fetch: &(impl Fetch + ?Sized), issuer: &str) -> Result<Url, AuthError> {
    let issuer_url = http_url(issuer, "issuer")?;
    for url in authorization_server_metadata_urls(&issuer_url) {
        let Some(body) = get_ok(fetch, &url).await? else { continue };
        let meta = AuthorizationServerMetadata::from_json(&body, &url)?;
        if !super::metadata::same_issuer(&meta.issuer, issuer) {
            return Err(AuthError::IssuerMismatch { expected: issuer.to_owned(), found: meta.issuer });
        }
        let endpoint = meta.token_endpoint.as_deref().ok_or_else(|| AuthError::InvalidDocument {
            what: "authorization server metadata",
            url: url.to_string(),
            reason: "no token_endpoint".to_owned(),
        })?;
        return http_url(endpoint, "token endpoint");
    }
    Err(AuthError::NoServerMetadata { issuer: issuer.to_owned() })
}

/// The body of a 2xx answer, `None` for any other status.
async fn get_ok(fetch: &(impl Fetch + ?Sized), url: &Url) -> Result<Option<Vec<u8>>, AuthError> {
    let Fetched { status, body, .. } = fetch
        .get(url, MAX_METADATA_BYTES)
        .await
        .map_err(|e| AuthError::Fetch { url: url.to_string(), reason: e.0 })?;
    if !(200..300).contains(&status) {
        return Ok(None);
    }
    if body.len() > MAX_METADATA_BYTES {
        return Err(AuthError::TooLarge { what: "metadata document", limit: MAX_METADATA_BYTES });
    }
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use async_trait::async_trait;
    use serde_json::json;

    use super::super::fetch::FetchError;
    use super::*;

    /// Answers from a table (absent: 404) and records every URL asked for.
    #[derive(Default)]
    struct FakeFetch {
        routes: HashMap<String, Result<Fetched, FetchError>>,
        asked: Mutex<Vec<String>>,
    }

    impl FakeFetch {
        fn json(mut self, url: &str, body: serde_json::Value) -> Self {
            self.routes.insert(url.into(), Ok(Fetched::new(200, body.to_string().into_bytes())));
            self
        }
        fn status(mut self, url: &str, status: u16) -> Self {
            self.routes.insert(url.into(), Ok(Fetched::new(status, b"{}".to_vec())));
            self
        }
        fn raw(mut self, url: &str, body: Vec<u8>) -> Self {
            self.routes.insert(url.into(), Ok(Fetched::new(200, body)));
            self
        }
        fn fail(mut self, url: &str) -> Self {
            self.routes.insert(url.into(), Err(FetchError("connection refused".into())));
            self
        }
        fn asked(&self) -> Vec<String> {
            self.asked.lock().unwrap().clone()
        }
    }

    #[async_trait]
    impl Fetch for FakeFetch {
        async fn get(&self, url: &Url, _limit: usize) -> Result<Fetched, FetchError> {
            self.asked.lock().unwrap().push(url.to_string());
            self.routes.get(url.as_str()).cloned().unwrap_or(Ok(Fetched::new(404, vec![])))
        }

        async fn post(
            &self,
            url: &Url,
            _headers: &http::HeaderMap,
            _body: Vec<u8>,
            _limit: usize,
        ) -> Result<Fetched, FetchError> {
            // Discovery never POSTs: a POST here is a defect of the driver.
            panic!("discovery POSTed to {url}");
        }
    }

    const SERVER: &str = "https://mcp.example.com/mcp";
    const PRM_PATH: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    const PRM_ROOT: &str = "https://mcp.example.com/.well-known/oauth-protected-resource";

    fn prm(resource: &str, servers: &[&str]) -> serde_json::Value {
        json!({ "resource": resource, "authorization_servers": servers, "scopes_supported": ["read"] })
    }

    fn as_meta(issuer: &str) -> serde_json::Value {
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "code_challenge_methods_supported": ["S256"],
        })
    }

    fn challenge(hint: &str) -> BearerChallenge {
        BearerChallenge { resource_metadata: Some(hint.into()), ..Default::default() }
    }

    async fn run(fetch: &FakeFetch, challenge: Option<&BearerChallenge>) -> Result<Discovered, AuthError> {
        discover(fetch, SERVER, challenge, &DiscoveryOptions::default()).await
    }

    #[tokio::test]
    async fn hint_then_as_metadata_by_rfc8414() {
        let fetch = FakeFetch::default()
            .json("https://meta.example.com/prm", prm(SERVER, &["https://as.example.com"]))
            .json(
                "https://as.example.com/.well-known/oauth-authorization-server",
                as_meta("https://as.example.com"),
            );
        let found = run(&fetch, Some(&challenge("https://meta.example.com/prm"))).await.unwrap();
        assert_eq!(found.resource, SERVER);
        assert_eq!(found.authorization_server.issuer, "https://as.example.com");
        assert!(!found.is_legacy());
        assert_eq!(
            fetch.asked(),
            ["https://meta.example.com/prm", "https://as.example.com/.well-known/oauth-authorization-server"]
        );
    }

    #[tokio::test]
    async fn a_missing_hint_falls_back_to_path_then_root() {
        let fetch = FakeFetch::default()
            .status("https://meta.example.com/prm", 500)
            .json(PRM_ROOT, prm("https://mcp.example.com", &["https://as.example.com"]))
            .json(
                "https://as.example.com/.well-known/openid-configuration",
                as_meta("https://as.example.com"),
            );
        let found = run(&fetch, Some(&challenge("https://meta.example.com/prm"))).await.unwrap();
        assert_eq!(found.resource, "https://mcp.example.com");
        assert_eq!(found.resource_metadata.unwrap().0.as_str(), PRM_ROOT);
        assert_eq!(
            fetch.asked(),
            [
                "https://meta.example.com/prm",
                PRM_PATH,
                PRM_ROOT,
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[tokio::test]
    async fn issuer_with_a_path_tries_all_three_in_order() {
        let issuer = "https://as.example.com/tenant1";
        let fetch = FakeFetch::default()
            .json(PRM_PATH, prm(SERVER, &[issuer]))
            .json("https://as.example.com/tenant1/.well-known/openid-configuration", as_meta(issuer));
        let found = run(&fetch, None).await.unwrap();
        assert_eq!(
            found.authorization_server_url.unwrap().as_str(),
            "https://as.example.com/tenant1/.well-known/openid-configuration"
        );
        assert_eq!(
            &fetch.asked()[1..],
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://as.example.com/.well-known/openid-configuration/tenant1",
                "https://as.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    #[tokio::test]
    async fn a_second_authorization_server_when_the_first_has_no_metadata() {
        let fetch = FakeFetch::default()
            .json(PRM_PATH, prm(SERVER, &["https://gone.example.com", "https://as.example.com"]))
            .json(
                "https://as.example.com/.well-known/oauth-authorization-server",
                as_meta("https://as.example.com"),
            );
        assert_eq!(run(&fetch, None).await.unwrap().authorization_server.issuer, "https://as.example.com");
    }

    #[tokio::test]
    async fn refusals() {
        let foreign = FakeFetch::default()
            .json(PRM_PATH, prm("https://evil.example.com/mcp", &["https://as.example.com"]));
        assert!(matches!(run(&foreign, None).await, Err(AuthError::ResourceMismatch { .. })));
        // A refused PRM is not retried at the root.
        assert_eq!(foreign.asked(), [PRM_PATH]);

        let wrong_issuer =
            FakeFetch::default().json(PRM_PATH, prm(SERVER, &["https://as.example.com"])).json(
                "https://as.example.com/.well-known/oauth-authorization-server",
                as_meta("https://evil.example.com"),
            );
        assert!(matches!(run(&wrong_issuer, None).await, Err(AuthError::IssuerMismatch { .. })));

        let no_servers = FakeFetch::default().json(PRM_PATH, prm(SERVER, &[]));
        assert!(matches!(run(&no_servers, None).await, Err(AuthError::NoAuthorizationServer { .. })));

        let no_as = FakeFetch::default().json(PRM_PATH, prm(SERVER, &["https://as.example.com"]));
        assert!(matches!(run(&no_as, None).await, Err(AuthError::NoServerMetadata { .. })));

        let bad_issuer = FakeFetch::default().json(PRM_PATH, prm(SERVER, &["not a url"]));
        assert!(matches!(run(&bad_issuer, None).await, Err(AuthError::InvalidUrl { what: "issuer", .. })));

        let garbage = FakeFetch::default().raw(PRM_PATH, b"<html>".to_vec());
        assert!(matches!(run(&garbage, None).await, Err(AuthError::InvalidDocument { .. })));

        let huge = FakeFetch::default().raw(PRM_PATH, vec![b' '; MAX_METADATA_BYTES + 1]);
        assert!(matches!(run(&huge, None).await, Err(AuthError::TooLarge { .. })));

        let down = FakeFetch::default().fail(PRM_PATH);
        assert!(matches!(run(&down, None).await, Err(AuthError::Fetch { .. })));

        let fetch = FakeFetch::default();
        assert!(matches!(
            discover(&fetch, "ftp://x/", None, &DiscoveryOptions::default()).await,
            Err(AuthError::InvalidUrl { what: "server", .. })
        ));
    }

    #[tokio::test]
    async fn legacy_fallback_with_root_metadata() {
        let fetch = FakeFetch::default().json(
            "https://mcp.example.com/.well-known/oauth-authorization-server",
            as_meta("https://mcp.example.com"),
        );
        let found = run(&fetch, None).await.unwrap();
        assert!(found.is_legacy());
        assert_eq!(found.resource, SERVER);
        assert_eq!(found.authorization_server.issuer, "https://mcp.example.com");
        assert!(found.authorization_server_url.is_some());
    }

    #[tokio::test]
    async fn legacy_fallback_to_default_endpoints() {
        let fetch = FakeFetch::default();
        let found = run(&fetch, None).await.unwrap();
        assert!(found.is_legacy() && found.authorization_server_url.is_none());
        assert_eq!(
            found.authorization_server.token_endpoint.as_deref(),
            Some("https://mcp.example.com/token")
        );
        assert_eq!(
            fetch.asked(),
            [PRM_PATH, PRM_ROOT, "https://mcp.example.com/.well-known/oauth-authorization-server"]
        );
    }

    #[tokio::test]
    async fn legacy_fallback_checks_the_issuer_and_can_be_refused() {
        let fetch = FakeFetch::default().json(
            "https://mcp.example.com/.well-known/oauth-authorization-server",
            as_meta("https://other.example.com"),
        );
        assert!(matches!(run(&fetch, None).await, Err(AuthError::IssuerMismatch { .. })));
        let off = DiscoveryOptions { legacy_fallback: false };
        let fetch = FakeFetch::default();
        assert!(matches!(
            discover(&fetch, SERVER, None, &off).await,
            Err(AuthError::NoResourceMetadata { .. })
        ));
    }
}
