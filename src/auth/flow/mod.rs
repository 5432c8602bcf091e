//! The authorization flow, end to end: from a challenge to stored tokens.
//!
//! A full authorization runs, in order: discovery ([`discover`]) →
//! client identity (pre-registered, Client ID Metadata Document, or dynamic
//! registration, per issuer) → the grant ([`Grant`]): the authorization code
//! with PKCE, `state` and `resource` through the
//! [`AuthorizationHandler`](super::AuthorizationHandler) and the RFC 9207
//! check, `client_credentials`, the JWT bearer grant with a workload token,
//! or the enterprise-managed exchange (ID token → ID-JAG at the IdP → JWT
//! bearer grant) → the token request with the client authentication
//! [`TokenEndpointAuth::choose_with_key`] picks (a secret, `none`, or a
//! `private_key_jwt` assertion) and, with DPoP, a proof (sent again once
//! with the server's nonce when it asks for one). A refresh uses the
//! refresh token at the issuer that issued it. Every request to an
//! authorization server goes through [`Fetch`]; every token and resource
//! request is decorated by one function (`Authorizer::decorate`, which
//! takes an [`Outgoing`]), the one place their
//! credentials are added.
//!
//! Failures are classified where they happen: no way to get a token
//! (`auth_required`), a refusal by the server or the user (`auth_denied`),
//! everything that is wrong on the server's side (`auth_failed`).

use std::sync::Arc;
use std::time::SystemTime;

use base64::Engine as _;
use http::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
use url::Url;

use super::authorize::{self, AuthorizationParams};
use super::client::{choose_identity, IdentityChoice, MAX_REGISTRATION_BYTES};
use super::config::{Grant, OAuth, Registered, TokenEndpointAuth};
use super::dpop::{is_nonce_challenge, DpopEndpoint};
use super::grant::PrivateKeyJwt;
use super::handler::AuthorizationRequest;
use super::jose::SigningKey;
use super::metadata::SignedFor;
use super::token::{FormValue, MAX_TOKEN_RESPONSE_BYTES};
use super::{
    discover, AuthError, AuthorizationServerMetadata, BearerChallenge, ClientCredentials, ClientRegistration,
    ClientSettings, Discovered, DiscoveryOptions, Fetch, Secret, TokenRequest, Tokens,
};
use crate::error::{Error, FailureClass};

mod identity;

/// What is about to be sent with credentials: the one input of the
/// function that adds them (the access token on resource requests; the
/// place for proof-of-possession headers on both kinds).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub(crate) enum Outgoing<'a> {
    /// A token endpoint request (`POST`).
    Token {
        /// The token endpoint.
        endpoint: &'a Url,
    },
    /// A request to the MCP server with an access token.
    Resource {
        /// Its method.
        method: &'a http::Method,
        /// Its URL.
        url: &'a Url,
        /// The tokens to present.
        tokens: &'a Tokens,
    },
}

/// Why a flow is run.
#[derive(Debug, Clone)]
pub(crate) enum Trigger {
    /// A `401` (no token, or one the server refused).
    Unauthorized { challenge: Option<BearerChallenge>, had_token: bool },
    /// A `403 insufficient_scope`.
    StepUp { challenge: BearerChallenge },
    /// The token expires soon.
    Expiring,
}

/// Runs flows for one MCP server.
pub(crate) struct Authorizer {
    pub(crate) server: Url,
    pub(crate) oauth: OAuth,
    fetch: Arc<dyn Fetch>,
    /// What the last discovery found and the scope last asked for.
    memory: std::sync::Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    discovered: Option<Discovered>,
    scope: Option<String>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &crate::transport::http::redacted_origin(&self.server))
            .finish_non_exhaustive()
    }
}

/// An [`AuthError`] as the crate's error, classified.
pub(crate) fn classify(e: AuthError) -> Error {
    let class = match &e {
        AuthError::NoClientIdentity { .. } => FailureClass::AuthRequired,
        AuthError::AuthorizationDenied { .. } | AuthError::TokenRefused { .. } => FailureClass::AuthDenied,
        _ => FailureClass::AuthFailed,
    };
    Error::new(class, e.to_string()).with_source(e)
}

impl Authorizer {
    pub(crate) fn new(server: Url, oauth: OAuth, fetch: Arc<dyn Fetch>) -> Self {
        Self { server, oauth, fetch, memory: Default::default() }
    }

    /// Adds the credentials of `outgoing` to `headers`: the access token on
    /// a resource request (`DPoP` with a proof for a DPoP-bound token, else
    /// `Bearer`); a DPoP proof, when DPoP is configured, on a token request
    /// (client authentication is in the form or its own header, see
    /// [`Self::token_request`]).
    pub(crate) fn decorate(&self, outgoing: Outgoing<'_>, headers: &mut HeaderMap) -> Result<(), Error> {
        let now = SystemTime::now();
        match outgoing {
            Outgoing::Token { endpoint } => match &self.oauth.dpop {
                Some(dpop) => dpop
                    .decorate(headers, &http::Method::POST, endpoint, None, now)
                    .map_err(|e| classify(e.into())),
                None => Ok(()),
            },
            Outgoing::Resource { method, url, tokens } => {
                if let (Some(dpop), true) = (&self.oauth.dpop, tokens.is_dpop()) {
                    return dpop
                        .decorate(headers, method, url, Some(&tokens.access_token), now)
                        .map_err(|e| classify(e.into()));
                }
                let mut value = HeaderValue::from_str(&format!("Bearer {}", tokens.access_token.expose()))
                    .map_err(|_| {
                        Error::new(FailureClass::AuthFailed, "the access token is not a valid header value")
                    })?;
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
                Ok(())
            }
        }
    }

    /// Runs the flow `trigger` calls for; `current` is the token in use.
    /// The tokens, and whether they are in the store already (a refresh
    /// under the store's lock saves them itself, or found another
    /// replica's).
    pub(crate) async fn run(
        &self,
        trigger: Trigger,
        current: Option<&Tokens>,
    ) -> Result<(Tokens, bool), Error> {
        let fresh = |tokens| (tokens, false);
        match trigger {
            Trigger::Expiring => self.refresh(current).await,
            Trigger::Unauthorized { challenge, had_token } => {
                if had_token && current.is_some_and(|t| t.refresh_token.is_some()) {
                    match self.refresh(current).await {
                        Ok(refreshed) => return Ok(refreshed),
                        Err(e) if !self.can_authorize() => {
                            return Err(Error::new(
                                FailureClass::AuthExpired,
                                format!("the token expired and could not be refreshed: {}", e.message()),
                            ))
                        }
                        Err(e) => {
                            tracing::debug!(target: "mcp_stack::auth", class = %e.class(), "refresh failed; authorizing again")
                        }
                    }
                }
                self.authorize(challenge.as_ref(), false).await.map(fresh)
            }
            Trigger::StepUp { challenge } => self.authorize(Some(&challenge), true).await.map(fresh),
        }
    }

    /// Whether a new authorization can run without an earlier grant.
    fn can_authorize(&self) -> bool {
        match self.oauth.grant {
            Grant::AuthorizationCode => self.oauth.handler.is_some(),
            Grant::JwtBearer => self.oauth.workload.is_some(),
            Grant::EnterpriseManaged => self.oauth.enterprise.is_some(),
            _ => true,
        }
    }

    /// A full authorization after `challenge`; `step_up` adds the
    /// challenge's scopes to those asked for before.
    pub(crate) async fn authorize(
        &self,
        challenge: Option<&BearerChallenge>,
        step_up: bool,
    ) -> Result<Tokens, Error> {
        if !self.can_authorize() {
            let missing = match self.oauth.grant {
                Grant::JwtBearer => "no workload token is configured",
                Grant::EnterpriseManaged => "no enterprise identity provider is configured",
                _ => "no authorization handler is configured",
            };
            return Err(Error::new(
                FailureClass::AuthRequired,
                format!("the server requires authorization and {missing}"),
            ));
        }
        self.load_client_issuer().await?;
        let discovered =
            discover(&*self.fetch, self.server.as_str(), challenge, &DiscoveryOptions::default())
                .await
                .map_err(classify)?;
        let meta = &discovered.authorization_server;
        let previous = self.memory.lock().unwrap_or_else(|e| e.into_inner()).scope.clone();
        let scope = if step_up {
            match challenge {
                Some(c) => authorize::step_up_scope(previous.as_deref(), c, meta),
                None => previous,
            }
        } else {
            let configured = self
                .oauth
                .client
                .scopes
                .as_ref()
                .map(|s| BearerChallenge { scope: Some(s.clone()), ..Default::default() });
            let named = challenge.filter(|c| c.scopes().next().is_some()).or(configured.as_ref());
            authorize::select_scope(named, discovered.resource_metadata.as_ref().map(|(_, p)| p), meta)
        };
        // `offline_access` asks for a refresh token on behalf of a person who
        // is away; the grants without a person get none (OAuth 2.1 §4.2.3),
        // and a server that allows the scope only to interactive clients
        // would refuse the request for it (`invalid_scope`).
        let scope = match self.oauth.grant {
            Grant::AuthorizationCode => scope,
            _ => scope.and_then(|s| {
                let kept: Vec<&str> = s.split(' ').filter(|x| *x != "offline_access").collect();
                (!kept.is_empty()).then(|| kept.join(" "))
            }),
        };
        tracing::debug!(target: "mcp_stack::auth", issuer = %meta.issuer, legacy = discovered.is_legacy(), step_up, "authorizing");
        let tokens = match self.oauth.grant {
            Grant::ClientCredentials => self.client_credentials(&discovered, scope.as_deref()).await?,
            Grant::JwtBearer => self.workload_identity(&discovered, scope.as_deref()).await?,
            Grant::EnterpriseManaged => self.enterprise_managed(&discovered, scope.as_deref()).await?,
            _ => self.authorization_code(&discovered, scope.as_deref()).await?,
        };
        let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        memory.scope = scope;
        memory.discovered = Some(discovered);
        Ok(tokens)
    }

    async fn authorization_code(
        &self,
        discovered: &Discovered,
        scope: Option<&str>,
    ) -> Result<Tokens, Error> {
        let meta = &discovered.authorization_server;
        let handler = self.oauth.handler.as_ref().ok_or_else(|| {
            Error::new(FailureClass::AuthRequired, "no authorization handler is configured")
        })?;
        let (credentials, method) =
            self.identity(meta, Grant::AuthorizationCode, handler.redirect_uri()).await?;
        let params = AuthorizationParams {
            client_id: &credentials.client_id,
            redirect_uri: handler.redirect_uri(),
            resource: &discovered.resource,
            scope,
        };
        let (url, pending) = authorize::start(meta, params).map_err(classify)?;
        let query = handler.authorize(AuthorizationRequest::new(url, handler.redirect_uri())).await?;
        let code = pending.complete(query.expose()).map_err(classify)?;
        let endpoint = token_endpoint(meta)?;
        let request = TokenRequest::authorization_code(endpoint, &pending, code);
        self.token_request(meta, request, &credentials, method, scope).await
    }

    async fn client_credentials(
        &self,
        discovered: &Discovered,
        scope: Option<&str>,
    ) -> Result<Tokens, Error> {
        let meta = &discovered.authorization_server;
        let (credentials, method) = self.identity(meta, Grant::ClientCredentials, "").await?;
        let request = TokenRequest::client_credentials(
            token_endpoint(meta)?,
            &credentials.client_id,
            &discovered.resource,
            scope,
        );
        self.token_request(meta, request, &credentials, method, scope).await
    }

    /// Workload identity federation: the workload token as a JWT bearer
    /// assertion. One token request; a refusal surfaces as it is (the
    /// layer runs no second flow for it and no other grant is tried).
    async fn workload_identity(&self, discovered: &Discovered, scope: Option<&str>) -> Result<Tokens, Error> {
        let meta = &discovered.authorization_server;
        let token = self
            .oauth
            .workload
            .as_ref()
            .ok_or_else(|| Error::new(FailureClass::AuthRequired, "no workload token is configured"))?;
        let assertion = token.read().await.map_err(classify)?;
        let (credentials, method) = self.identity(meta, Grant::JwtBearer, "").await?;
        let mut request =
            TokenRequest::jwt_bearer(token_endpoint(meta)?, assertion, &discovered.resource, scope);
        request.form.push(("client_id", FormValue::Plain(credentials.client_id.clone())));
        self.token_request(meta, request, &credentials, method, scope).await
    }

    /// Enterprise-managed authorization: the ID token for an ID-JAG at the
    /// IdP (audience: this authorization server's issuer; resource: the
    /// MCP server), then the ID-JAG in the JWT bearer grant here.
    async fn enterprise_managed(
        &self,
        discovered: &Discovered,
        scope: Option<&str>,
    ) -> Result<Tokens, Error> {
        let meta = &discovered.authorization_server;
        let idp = self.oauth.enterprise.as_ref().ok_or_else(|| {
            Error::new(FailureClass::AuthRequired, "no enterprise identity provider is configured")
        })?;
        let endpoint = match (&idp.token_endpoint, &idp.issuer) {
            (Some(endpoint), _) => Url::parse(endpoint).map_err(|_| {
                classify(AuthError::InvalidUrl {
                    what: "identity provider token endpoint",
                    reason: "not a URL",
                })
            })?,
            (None, Some(issuer)) => {
                super::discovery::token_endpoint_of(&*self.fetch, issuer).await.map_err(classify)?
            }
            (None, None) => {
                return Err(Error::new(
                    FailureClass::AuthRequired,
                    "the enterprise identity provider has neither a token endpoint nor an issuer",
                ))
            }
        };
        let id_token = idp.id_token.read().await.map_err(classify)?;
        let mut exchange = TokenRequest::id_jag_exchange(
            endpoint.as_str(),
            id_token,
            &meta.issuer,
            &discovered.resource,
            scope,
            idp.client_id.as_deref(),
        );
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
        if let (Some(id), Some(_)) = (&idp.client_id, &idp.client_secret) {
            let at_idp =
                ClientCredentials { client_id: id.clone(), client_secret: idp.client_secret.clone() };
            apply_client_auth(
                TokenEndpointAuth::ClientSecretBasic,
                &at_idp,
                None,
                "",
                &mut exchange,
                &mut headers,
            )?;
        }
        let answer = self
            .fetch
            .post(&endpoint, &headers, exchange.encode().into_bytes(), MAX_TOKEN_RESPONSE_BYTES)
            .await
            .map_err(|e| classify(AuthError::Fetch { url: endpoint.to_string(), reason: e.0 }))?;
        let id_jag = super::grant::parse_id_jag_response(answer.status, &answer.body, endpoint.as_str())
            .map_err(classify)?;
        tracing::debug!(target: "mcp_stack::auth", issuer = %meta.issuer, "obtained an ID-JAG from the identity provider");
        let (credentials, method) = self.identity(meta, Grant::EnterpriseManaged, "").await?;
        let mut request =
            TokenRequest::jwt_bearer(token_endpoint(meta)?, id_jag, &discovered.resource, scope);
        request.form.push(("client_id", FormValue::Plain(credentials.client_id.clone())));
        self.token_request(meta, request, &credentials, method, scope).await
    }

    /// Refreshes `current` (RFC 6749 §6) at the authorization server that
    /// issued it, once across the processes that share the token store:
    /// under the store's refresh lock ([`TokenStore::lock_refresh`]), after
    /// reading the stored tokens again. Tokens another replica refreshed
    /// meanwhile are taken as they are; the token endpoint is asked only
    /// with a refresh token nobody has used. `true` with the tokens: they
    /// are in the store already.
    ///
    /// [`TokenStore::lock_refresh`]: super::TokenStore::lock_refresh
    pub(crate) async fn refresh(&self, current: Option<&Tokens>) -> Result<(Tokens, bool), Error> {
        let Some((tokens, refresh)) = current.and_then(|t| t.refresh_token.as_ref().map(|r| (t, r))) else {
            return Err(Error::new(FailureClass::AuthExpired, "there is no refresh token"));
        };
        let store = &self.oauth.store;
        let lock = match store.lock_refresh(&self.server).await {
            Ok(lock) => lock,
            Err(e) => {
                tracing::warn!(target: "mcp_stack::auth", "refreshing without the store's lock: {e}");
                None
            }
        };
        let Some(lock) = lock else {
            return self.refresh_at_server(tokens, refresh).await.map(|t| (t, false));
        };
        // Another replica may have refreshed while this one waited: its
        // tokens carry another refresh token (ours may be revoked now).
        let stored = match store.load(&self.server).await {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!(target: "mcp_stack::auth", "could not read the stored tokens again: {e}");
                None
            }
        };
        if let Some(stored) =
            stored.filter(|s| s.refresh_token.as_ref() != Some(refresh) && s.issuer == tokens.issuer)
        {
            tracing::debug!(target: "mcp_stack::auth", "another process refreshed the tokens; using them");
            lock.release().await;
            return Ok((stored, true));
        }
        let outcome = self.refresh_at_server(tokens, refresh).await;
        let kept = match &outcome {
            // Saved before the lock goes, so a waiter reads them.
            Ok(fresh) => match store.save(&self.server, fresh).await {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(target: "mcp_stack::auth", "could not keep the refreshed tokens: {e}");
                    false
                }
            },
            Err(_) => false,
        };
        lock.release().await;
        outcome.map(|t| (t, kept))
    }

    /// The refresh request itself.
    async fn refresh_at_server(&self, tokens: &Tokens, refresh: &Secret) -> Result<Tokens, Error> {
        self.load_client_issuer().await?;
        let known = self.memory.lock().unwrap_or_else(|e| e.into_inner()).discovered.clone();
        let discovered = match known {
            Some(d) => d,
            None => discover(&*self.fetch, self.server.as_str(), None, &DiscoveryOptions::default())
                .await
                .map_err(classify)?,
        };
        let meta = &discovered.authorization_server;
        if tokens.issuer.as_deref().is_some_and(|i| i != meta.issuer) {
            return Err(Error::new(
                FailureClass::AuthExpired,
                "the tokens belong to another authorization server",
            ));
        }
        let redirect = self.oauth.handler.as_ref().map(|h| h.redirect_uri().to_owned()).unwrap_or_default();
        let (credentials, method) = self.known_identity(meta, &redirect)?.ok_or_else(|| {
            Error::new(FailureClass::AuthExpired, "no client registration is known to refresh with")
        })?;
        let scope = tokens.scope.clone();
        let request = TokenRequest::refresh(
            token_endpoint(meta)?,
            refresh,
            &credentials.client_id,
            &discovered.resource,
            None,
        );
        let mut fresh =
            self.token_request(meta, request, &credentials, method, scope.as_deref()).await.map_err(|e| {
                Error::new(FailureClass::AuthExpired, format!("the refresh was refused: {}", e.message()))
            })?;
        if fresh.refresh_token.is_none() {
            // RFC 6749 §6: without a new refresh token the old one stays.
            fresh.refresh_token = Some(refresh.clone());
        }
        self.memory.lock().unwrap_or_else(|e| e.into_inner()).discovered.get_or_insert(discovered);
        Ok(fresh)
    }

    /// Sends a token request with the client authentication chosen for
    /// `meta`, and reads its answer.
    async fn token_request(
        &self,
        meta: &AuthorizationServerMetadata,
        request: TokenRequest,
        credentials: &ClientCredentials,
        registered: Option<TokenEndpointAuth>,
        scope: Option<&str>,
    ) -> Result<Tokens, Error> {
        let method = TokenEndpointAuth::choose_with_key(
            meta.token_endpoint_auth_methods_supported.as_deref(),
            self.oauth.private_key.is_some(),
            credentials.client_secret.is_some(),
            registered,
        );
        let endpoint = Url::parse(&request.endpoint)
            .map_err(|_| classify(AuthError::InvalidUrl { what: "token endpoint", reason: "not a URL" }))?;
        self.check_signing_algorithms(meta, method)?;
        // With DPoP the server may ask for its nonce (RFC 9449 §8): one more
        // send, with a new proof and a new client assertion (each is for one
        // use), then its answer stands.
        let mut answer;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut form = request.clone();
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
            apply_client_auth(
                method,
                credentials,
                self.oauth.private_key.as_ref(),
                &meta.issuer,
                &mut form,
                &mut headers,
            )?;
            self.decorate(Outgoing::Token { endpoint: &endpoint }, &mut headers)?;
            answer = self
                .fetch
                .post(&endpoint, &headers, form.encode().into_bytes(), MAX_TOKEN_RESPONSE_BYTES)
                .await
                .map_err(|e| classify(AuthError::Fetch { url: endpoint.to_string(), reason: e.0 }))?;
            let Some(dpop) = &self.oauth.dpop else { break };
            dpop.observe(&endpoint, &answer.headers);
            if attempts >= 2
                || !is_nonce_challenge(DpopEndpoint::Token, answer.status, &answer.headers, &answer.body)
            {
                break;
            }
            tracing::debug!(target: "mcp_stack::auth", "the token endpoint asked for a DPoP nonce; sending again");
        }
        let tokens = super::token::parse_token_response(
            answer.status,
            &answer.body,
            SystemTime::now(),
            scope,
            &meta.issuer,
        )
        .map_err(classify)?;
        self.bind_client_issuer(credentials, &meta.issuer).await;
        Ok(tokens)
    }

    /// A key whose algorithm the server says it does not take fails the
    /// token request before it is sent, naming both: the server would only
    /// refuse the assertion or proof (`invalid_client`, `invalid_dpop_proof`)
    /// without saying why. A server that lists nothing is tried.
    fn check_signing_algorithms(
        &self,
        meta: &AuthorizationServerMetadata,
        method: TokenEndpointAuth,
    ) -> Result<(), Error> {
        let assertion_key = match method {
            TokenEndpointAuth::PrivateKeyJwt => self.oauth.private_key.as_ref(),
            _ => None,
        };
        let keys = [
            (SignedFor::ClientAssertion, assertion_key, "private_key_jwt client assertions"),
            (SignedFor::DpopProof, self.oauth.dpop.as_ref().map(|d| d.key()), "DPoP proofs"),
        ];
        for (signed, key, what) in keys {
            let Some(key) = key else { continue };
            let alg = key.algorithm().as_str();
            if let Some(accepted) = meta.refused_algorithms(signed, alg) {
                return Err(Error::new(
                    FailureClass::AuthFailed,
                    format!(
                        "the authorization server {} takes {what} signed with {}; the configured key signs with {alg}",
                        meta.issuer,
                        accepted.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn token_endpoint(meta: &AuthorizationServerMetadata) -> Result<&str, Error> {
    meta.token_endpoint
        .as_deref()
        .ok_or_else(|| classify(AuthError::InvalidUrl { what: "token endpoint", reason: "absent" }))
}

/// Client authentication at the token endpoint (RFC 6749 §2.3.1): one
/// method only, so `client_id` leaves the form when it goes in the header.
pub(crate) fn apply_client_auth(
    method: TokenEndpointAuth,
    credentials: &ClientCredentials,
    private_key: Option<&SigningKey>,
    issuer: &str,
    request: &mut TokenRequest,
    headers: &mut HeaderMap,
) -> Result<(), Error> {
    match method {
        TokenEndpointAuth::ClientSecretBasic => {
            let secret = credentials.client_secret.as_ref().map(Secret::expose).unwrap_or("");
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(&credentials.client_id), encode(secret));
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).map_err(|_| {
                Error::new(FailureClass::AuthFailed, "the client credentials are not header-safe")
            })?;
            value.set_sensitive(true);
            // Sent, not held: known to the redaction point as a recent value,
            // so an authorization server that quotes the header back has it
            // removed.
            crate::redact::remember(value.to_str().unwrap_or_default());
            crate::redact::remember(&encoded);
            headers.insert(AUTHORIZATION, value);
            request.form.retain(|(name, _)| *name != "client_id");
        }
        TokenEndpointAuth::ClientSecretPost => {
            if let Some(secret) = &credentials.client_secret {
                request.form.push(("client_secret", FormValue::Secret(secret.clone())));
            }
        }
        TokenEndpointAuth::None => {}
        TokenEndpointAuth::PrivateKeyJwt => {
            let key = private_key.ok_or_else(|| {
                Error::new(
                    FailureClass::AuthRequired,
                    "the client must authenticate with private_key_jwt and no private key is configured",
                )
            })?;
            PrivateKeyJwt::new(credentials.client_id.clone(), key.clone())
                .authenticate(request, issuer, SystemTime::now())
                .map_err(|e| classify(e.into()))?;
        }
    }
    Ok(())
}
