//! OAuth 2.1 authorization for MCP servers over HTTP (feature `oauth`).
//!
//! An MCP server that needs a token answers `401` with a `WWW-Authenticate`
//! challenge. What follows is a fixed sequence, and this module holds its
//! pure, testable pieces, each in its own file:
//!
//! - `challenge`: parse `WWW-Authenticate` (RFC 6750, RFC 9728 §5.1).
//! - `wellknown`: the metadata URLs to try, in the specification's order,
//!   and the canonical resource URI (RFC 8707).
//! - `metadata`: Protected Resource Metadata (RFC 9728) and authorization
//!   server metadata (RFC 8414, OpenID Connect), with their checks.
//! - `discovery`: the driver from a challenge to checked metadata, over
//!   [`Fetch`].
//! - `client`: which client identity to present (pre-registered, Client ID
//!   Metadata Document, dynamic registration).
//! - `authorize`: scopes, the authorization URL with PKCE and `state`, and
//!   the RFC 9207 check of the redirect.
//! - `token`: the token request forms (code grant, refresh) and the
//!   token response.
//! - `store`: tokens per server origin, in memory or in private files.
//! - `grant`: the grants without a browser (client credentials, the JWT
//!   bearer grant of workload identity, the enterprise ID token → ID-JAG
//!   exchange) and `private_key_jwt` client assertions.
//! - `jose`: signing keys from PEM or generated, and signed JWTs.
//! - `dpop`: DPoP proofs and server nonces (RFC 9449).
//!
//! And the pieces that run them, wired into the HTTP transports when a
//! definition sets [`OAuth`] ([`HttpBuilder::oauth`]):
//!
//! - [`OAuth`]: the settings (client identity, scopes, the [`Grant`], the
//!   handler, the token store, the step-up bound). The redirect URI is the
//!   handler's ([`AuthorizationHandler::redirect_uri`]).
//! - `handler`: the human step as a tower service, with the headless and
//!   the loopback handlers built in.
//! - `flow`: the flow end to end, from a challenge to tokens, with the
//!   token endpoint authentication [`TokenEndpointAuth`] chooses.
//! - `layer`: [`AuthLayer`], the `tower::Layer` on the transport's
//!   per-hop [`HttpService`] that attaches the token, runs the flow on
//!   `401`, refreshes, and steps up on `403 insufficient_scope`.
//!
//! [`HttpBuilder::oauth`]: crate::transport::http::HttpBuilder::oauth
//! [`HttpService`]: crate::transport::http::HttpService
//!
//!
//! Nothing here sends a request by itself: documents are read through the
//! [`Fetch`] trait, so each step is tested with a fake. Tokens, client
//! secrets, authorization codes, PKCE verifiers and `state` are held as
//! [`Secret`]s, whose `Debug` prints `[redacted]`; no error carries one.

pub(crate) mod authorize;
pub(crate) mod challenge;
mod client;
mod config;
mod discovery;
pub(crate) mod dpop;
mod error;
mod fetch;
mod flow;
pub(crate) mod grant;
mod handler;
mod jose;
mod layer;
pub(crate) mod metadata;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(test, feature = "redis"))]
mod sealed;
mod secret;
mod store;
pub(crate) mod token;
mod wellknown;

pub use challenge::ChallengeError;
pub use client::{ClientCredentials, ClientRegistration, ClientSettings};
pub use config::{Grant, OAuth, OAuthClient, TokenEndpointAuth};
pub use dpop::Dpop;
pub use error::AuthError;
pub use fetch::{Fetch, FetchError, Fetched, HttpFetch};
pub use grant::{EnterpriseIdp, PrivateKeyJwt, TokenSource};
pub use handler::{AuthorizationHandler, AuthorizationRequest, LoopbackOptions};
pub use jose::{JoseError, SigningAlgorithm, SigningKey};
pub use layer::{AuthLayer, AuthService, AuthenticatingHook};
#[cfg(feature = "redis")]
pub use redis::{RedisTokenStore, DEFAULT_REFRESH_LIFETIME, DEFAULT_REFRESH_LOCK};
pub use secret::Secret;
pub use store::{FileStore, MemoryStore, RefreshLock, TokenStore, Tokens};

pub(crate) use challenge::BearerChallenge;
pub(crate) use discovery::{discover, Discovered, DiscoveryOptions};
pub(crate) use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub(crate) use token::TokenRequest;

#[cfg(test)]
mod tests {
    use super::client::IdentityChoice;
    use super::*;

    /// The authorization code flow's steps, from a 401's challenge to the
    /// code: the scope the challenge names, checked metadata, an
    /// authorization URL with PKCE, and a redirect from another issuer
    /// refused.
    #[test]
    fn the_code_flow_step_by_step() -> Result<(), Box<dyn std::error::Error>> {
        use super::authorize::{self, AuthorizationParams};
        use super::challenge::BearerChallenge;
        use super::metadata::AuthorizationServerMetadata;
        use crate::auth;

        // The 401's challenge names the scope the request needs.
        let value = http::HeaderValue::from_static(
            r#"Bearer scope="files:read", resource_metadata="https://mcp.example.com/prm""#,
        );
        let challenge = BearerChallenge::from_headers([&value])?.expect("a Bearer challenge");

        // Metadata as discovery returns it (here parsed by hand), then checked.
        let url = url::Url::parse("https://as.example.com/.well-known/oauth-authorization-server")?;
        let server = AuthorizationServerMetadata::from_json(
            br#"{
            "issuer": "https://as.example.com",
            "authorization_endpoint": "https://as.example.com/authorize",
            "token_endpoint": "https://as.example.com/token",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true
        }"#,
            &url,
        )?;
        server.check("https://as.example.com")?;

        let scope = authorize::select_scope(Some(&challenge), None, &server);
        let (url, pending) = authorize::start(
            &server,
            AuthorizationParams {
                client_id: "https://app.example.com/client.json",
                redirect_uri: "http://127.0.0.1:8976/callback",
                resource: "https://mcp.example.com/mcp",
                scope: scope.as_deref(),
            },
        )?;
        assert!(url.as_str().contains("code_challenge_method=S256"));

        // The host shows `url` to the user; a redirect from another issuer is refused.
        let state = url.query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
        let forged = format!("code=abc&state={state}&iss=https%3A%2F%2Fevil.example.com");
        assert!(matches!(
            pending.complete(&forged),
            Err(auth::AuthError::AuthorizationIssuerMismatch { .. })
        ));
        let code = pending.complete(&format!("code=abc&state={state}&iss=https%3A%2F%2Fas.example.com"))?;
        assert_eq!(format!("{code:?}"), "[redacted]");
        Ok(())
    }

    /// The issue's rule in one place: a sentinel put in a client secret, an
    /// access token, a refresh token, a code and a verifier never shows in
    /// the `Debug` of what holds it.
    #[test]
    fn no_secret_reaches_debug() {
        const SENTINEL: &str = "SENTINEL-d41d8cd9";
        let credentials = ClientCredentials {
            client_id: "id".into(),
            client_secret: Some(Secret::new(format!("{SENTINEL}-secret"))),
        };
        let settings = ClientSettings {
            pre_registered: Some(ClientRegistration { issuer: None, credentials: credentials.clone() }),
            ..Default::default()
        };
        let tokens = Tokens {
            access_token: Secret::new(format!("{SENTINEL}-access")),
            token_type: "Bearer".into(),
            refresh_token: Some(Secret::new(format!("{SENTINEL}-refresh"))),
            expires_at: None,
            scope: None,
            issuer: None,
        };
        let code = Secret::new(format!("{SENTINEL}-code"));
        let verifier = Secret::new(format!("{SENTINEL}-verifier"));
        let shown = format!(
            "{credentials:?} {credentials:#?} {settings:?} {tokens:?} {tokens:#?} {code:?} {verifier:?} {:?}",
            IdentityChoice::Known(credentials.clone())
        );
        assert!(!shown.contains(SENTINEL), "{shown}");
    }
}
