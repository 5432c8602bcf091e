//! [`OAuth`]: how a definition authorizes against its server.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::dpop::Dpop;
use super::grant::{EnterpriseIdp, TokenSource};
use super::jose::SigningKey;
use super::{AuthorizationHandler, ClientRegistration, MemoryStore, Secret, TokenStore};

/// How many step-ups (re-authorizations on `403 insufficient_scope`) run
/// in a row before the request fails with `auth_denied`.
pub(crate) const DEFAULT_MAX_STEP_UPS: u32 = 2;
/// How long before its expiry an access token is refreshed.
pub(crate) const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// How long one authorization flow (discovery, registration, the human
/// step, the token request) may take in all.
pub(crate) const DEFAULT_FLOW_TIMEOUT: Duration = Duration::from_secs(600);
/// The bound on each request to an authorization server.
pub(crate) const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// Which OAuth grant obtains tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE, through the [`AuthorizationHandler`]
    /// (the default: a person approves).
    #[default]
    AuthorizationCode,
    /// `client_credentials` (RFC 6749 §4.4): a machine client with its own
    /// credentials (a secret, or a private key for `private_key_jwt`), no
    /// person and no handler.
    ClientCredentials,
    /// Workload identity federation: the JWT bearer grant (RFC 7523 §2.1)
    /// with the platform's workload token ([`OAuth::workload_identity`]).
    /// A refusal is final: it surfaces as `auth_denied`, with no retry and
    /// no other grant tried, since the same token would be refused again
    /// and falling back to a person would defeat the point (a later call
    /// of the host's runs the grant again, with the token file read anew).
    /// The client still needs an identity at the server: a pre-registered
    /// [`client_id`](OAuth::client_id), or dynamic registration.
    JwtBearer,
    /// Enterprise-managed authorization ([`OAuth::enterprise`]): the user's
    /// ID token is exchanged at the enterprise IdP for an ID-JAG (RFC 8693),
    /// which the MCP server's authorization server takes in the JWT bearer
    /// grant (RFC 7523). No person, no handler.
    EnterpriseManaged,
}

/// How the client authenticates at the token endpoint.
///
/// Chosen per authorization server from its
/// `token_endpoint_auth_methods_supported` and what the client has (see
/// [`TokenEndpointAuth::choose`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// HTTP Basic with the client id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form.
    ClientSecretPost,
    /// A public client: `client_id` in the form, PKCE as its proof.
    None,
    /// A JWT assertion signed with the client's private key (RFC 7523 §2.2,
    /// [`OAuth::private_key`]).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The method's registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::None => "none",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method named `name`, if known.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "client_secret_basic" => Self::ClientSecretBasic,
            "client_secret_post" => Self::ClientSecretPost,
            "none" => Self::None,
            "private_key_jwt" => Self::PrivateKeyJwt,
            _ => return None,
        })
    }

    /// The method to use with a server that lists `supported` (`None`: it
    /// does not say, which RFC 8414 reads as `client_secret_basic`), for a
    /// client that has a secret or not, and that registration may have
    /// bound to `registered`.
    ///
    /// A method the registration named wins when the server lists it (or
    /// lists nothing). Otherwise, with a secret: `client_secret_basic`, then
    /// `client_secret_post`; without one, or when the server takes neither:
    /// `none`.
    pub fn choose(supported: Option<&[String]>, has_secret: bool, registered: Option<Self>) -> Self {
        Self::choose_with_key(supported, false, has_secret, registered)
    }

    /// [`Self::choose`] for a client that may also hold a private key
    /// ([`OAuth::private_key`]): `private_key_jwt` first when the server
    /// lists it, or lists nothing and there is no secret to send instead
    /// (a key was configured for a reason; a secret is the RFC 8414
    /// default).
    pub fn choose_with_key(
        supported: Option<&[String]>,
        has_key: bool,
        has_secret: bool,
        registered: Option<Self>,
    ) -> Self {
        if has_key {
            let listed = supported.map(|s| s.iter().any(|x| x == Self::PrivateKeyJwt.as_str()));
            if listed.unwrap_or(!has_secret) {
                return Self::PrivateKeyJwt;
            }
        }
        let listed = |m: Self| supported.is_none_or(|s| s.iter().any(|x| x == m.as_str()));
        if let Some(method) = registered.filter(|m| listed(*m)) {
            if has_secret || matches!(method, Self::None) {
                return method;
            }
        }
        if has_secret {
            let basic_ok = supported.is_none_or(|s| s.iter().any(|x| x == "client_secret_basic"));
            if basic_ok {
                return Self::ClientSecretBasic;
            }
            if supported.is_some_and(|s| s.iter().any(|x| x == "client_secret_post")) {
                return Self::ClientSecretPost;
            }
        }
        Self::None
    }
}

/// What the definition says about its OAuth client.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct OAuthClient {
    /// A pre-registered `client_id` (used first, when set).
    pub client_id: Option<String>,
    /// The secret of the pre-registered client, for a confidential client.
    pub client_secret: Option<Secret>,
    /// The issuer the pre-registered client belongs to. `None`: it is bound
    /// to the first authorization server that issues it a token, and that
    /// binding is kept in the token store
    /// ([`TokenStore::save_client_issuer`]);
    /// from then on another authorization server is refused, as with a
    /// configured issuer.
    pub issuer: Option<String>,
    /// The `https` URL of this client's Client ID Metadata Document, used
    /// as the `client_id` where the server supports it.
    pub metadata_document: Option<String>,
    /// The scopes to ask for when the server's challenge names none (before
    /// the resource's `scopes_supported`).
    pub scopes: Option<String>,
    /// `client_name` for dynamic registration.
    pub client_name: String,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("issuer", &self.issuer)
            .field("metadata_document", &self.metadata_document)
            .field("scopes", &self.scopes)
            .field("client_name", &self.client_name)
            .finish()
    }
}

/// OAuth 2.1 authorization for an HTTP definition
/// ([`HttpBuilder::oauth`](crate::transport::http::HttpBuilder::oauth)).
///
/// The defaults: the authorization code grant, tokens in a
/// [`MemoryStore`], no handler (so a server that needs a person fails with
/// `auth_required` until the host sets one), at most
/// 2 step-ups in a row.
///
/// ```
/// use mcp_stack::auth::{AuthorizationHandler, OAuth};
/// use mcp_stack::transport::http::HttpBuilder;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_stack::Error> {
/// let handler = AuthorizationHandler::loopback(Default::default()).await?;
/// let oauth = OAuth::new().client_name("my host").handler(handler);
/// let factory = HttpBuilder::new("https://mcp.example.com/mcp").oauth(oauth).build()?;
/// # let _ = factory;
/// # Ok(())
/// # }
/// ```
///
/// Clones share the token store and the dynamic registrations, so every
/// connection of one definition (reconnects included) reuses them.
#[derive(Clone)]
pub struct OAuth {
    pub(crate) client: OAuthClient,
    pub(crate) handler: Option<AuthorizationHandler>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) grant: Grant,
    pub(crate) max_step_ups: u32,
    /// The key for `private_key_jwt`.
    pub(crate) private_key: Option<SigningKey>,
    /// DPoP proofs with this key, on token and resource requests.
    pub(crate) dpop: Option<Arc<Dpop>>,
    /// The workload token of [`Grant::JwtBearer`].
    pub(crate) workload: Option<TokenSource>,
    /// The IdP of [`Grant::EnterpriseManaged`].
    pub(crate) enterprise: Option<EnterpriseIdp>,
    pub(crate) refresh_margin: Duration,
    pub(crate) flow_timeout: Duration,
    pub(crate) fetch_timeout: Duration,
    /// Dynamic registrations by issuer.
    pub(crate) registrations: Arc<Mutex<HashMap<String, Registered>>>,
    /// The issuer the pre-registered client was bound to on first use
    /// (when none is configured): `None` until the store was read.
    pub(crate) bound_issuer: Arc<Mutex<Option<Option<String>>>>,
}

/// A dynamic registration and the token endpoint method it was bound to.
#[derive(Debug, Clone)]
pub(crate) struct Registered {
    pub(crate) registration: ClientRegistration,
    pub(crate) method: Option<TokenEndpointAuth>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("client", &self.client)
            .field("handler", &self.handler)
            .field("store", &self.store)
            .field("grant", &self.grant)
            .field("max_step_ups", &self.max_step_ups)
            .field("private_key", &self.private_key)
            .field("dpop", &self.dpop)
            .field("workload", &self.workload)
            .field("enterprise", &self.enterprise)
            .finish_non_exhaustive()
    }
}

impl Default for OAuth {
    fn default() -> Self {
        Self::new()
    }
}

impl OAuth {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        Self {
            client: OAuthClient { client_name: "mcp-stack".into(), ..Default::default() },
            handler: None,
            store: Arc::new(MemoryStore::new()),
            grant: Grant::default(),
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            private_key: None,
            dpop: None,
            workload: None,
            enterprise: None,
            refresh_margin: DEFAULT_REFRESH_MARGIN,
            flow_timeout: DEFAULT_FLOW_TIMEOUT,
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            registrations: Arc::default(),
            bound_issuer: Arc::default(),
        }
    }

    /// Uses a pre-registered client id.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client.client_id = Some(id.into());
        self
    }

    /// The secret of the pre-registered client.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client.client_secret = Some(Secret::new(secret.into()));
        self
    }

    /// Binds the pre-registered client to one issuer: another authorization
    /// server is refused (`auth_failed`, naming both issuers) before it is
    /// sent anything. Without it, the client is bound to the first issuer
    /// that grants it a token (see [`OAuthClient::issuer`]).
    pub fn client_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.client.issuer = Some(issuer.into());
        self
    }

    /// This client's Client ID Metadata Document URL (`https`, with a path).
    pub fn metadata_document(mut self, url: impl Into<String>) -> Self {
        self.client.metadata_document = Some(url.into());
        self
    }

    /// Scopes (space-separated) to ask for when the challenge names none.
    pub fn scopes(mut self, scopes: impl Into<String>) -> Self {
        self.client.scopes = Some(scopes.into());
        self
    }

    /// `client_name` for dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client.client_name = name.into();
        self
    }

    /// The human step (needed by the authorization code grant).
    pub fn handler(mut self, handler: AuthorizationHandler) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Where tokens are kept (default: a [`MemoryStore`]).
    pub fn store(mut self, store: impl TokenStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The grant (default: [`Grant::AuthorizationCode`]).
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Authenticates the client at the token endpoint with `private_key_jwt`
    /// (RFC 7523 §2.2) where the server takes it: each token request
    /// carries a fresh assertion signed with `key`, `iss` and `sub` the
    /// client id, `aud` the authorization server's issuer. With a
    /// pre-registered [`client_id`](Self::client_id), the key is the one
    /// registered with it; without one, dynamic client registration asks
    /// for `private_key_jwt` and sends the key's public half as `jwks`
    /// (when the server lists the method, or lists no methods).
    ///
    /// A machine client with its own key, no person involved:
    ///
    /// ```
    /// use mcp_stack::auth::{Grant, OAuth, Secret, SigningKey, SigningAlgorithm};
    /// # let pem = include_str!("testdata/ec-p384.pem");
    /// let key = SigningKey::from_pem(&Secret::new(pem), Some(SigningAlgorithm::Es384))?;
    /// let oauth = OAuth::new().client_id("reporting-bot").private_key(key).grant(Grant::ClientCredentials);
    /// # let _ = oauth;
    /// # Ok::<(), mcp_stack::auth::JoseError>(())
    /// ```
    pub fn private_key(mut self, key: SigningKey) -> Self {
        self.private_key = Some(key);
        self
    }

    /// Sender-constrained tokens with DPoP (RFC 9449): every token request
    /// and every request that carries a `DPoP` token gets a proof signed
    /// with `key` (for example [`SigningKey::generate_es256`]), with the
    /// servers' nonces handled. Only tokens the authorization server
    /// issued as `token_type` `DPoP` are sent with the `DPoP` scheme; a
    /// `Bearer` answer stays a bearer token.
    ///
    /// Proofs go to every token endpoint, whether or not its metadata
    /// lists `dpop_signing_alg_values_supported`: a server without DPoP
    /// answers with a `Bearer` token (RFC 9449 §5), used as such. A server
    /// that lists algorithms without the key's is not asked: the token
    /// request fails `auth_failed` naming both (the same for a
    /// [`private_key`](Self::private_key) the server's
    /// `token_endpoint_auth_signing_alg_values_supported` leaves out).
    ///
    /// ```
    /// use mcp_stack::auth::{OAuth, SigningKey};
    /// let oauth = OAuth::new().dpop(SigningKey::generate_es256()?);
    /// # let _ = oauth;
    /// # Ok::<(), mcp_stack::auth::JoseError>(())
    /// ```
    ///
    /// Tokens are bound to the key: a token kept in a [`FileStore`] is
    /// useless to a process with another key (the server refuses it and a
    /// new authorization runs), so keep the key as long as the tokens.
    ///
    /// [`FileStore`]: crate::auth::FileStore
    pub fn dpop(mut self, key: SigningKey) -> Self {
        self.dpop = Some(Arc::new(Dpop::new(key)));
        self
    }

    /// Workload identity federation: [`Grant::JwtBearer`] with `token` as
    /// the assertion (re-read for every token request when it is a file).
    ///
    /// ```
    /// use mcp_stack::auth::{OAuth, TokenSource};
    /// let token = TokenSource::File("/var/run/secrets/tokens/mcp-token".into());
    /// let oauth = OAuth::new().client_id("billing-job").workload_identity(token);
    /// # let _ = oauth;
    /// ```
    pub fn workload_identity(mut self, token: TokenSource) -> Self {
        self.workload = Some(token);
        self.grant = Grant::JwtBearer;
        self
    }

    /// Enterprise-managed authorization: [`Grant::EnterpriseManaged`] with
    /// `idp` exchanging the user's ID token. The MCP server's
    /// authorization server authenticates this client as usual (a
    /// pre-registered [`client_id`](Self::client_id) with its secret or
    /// key).
    ///
    /// ```
    /// use mcp_stack::auth::{EnterpriseIdp, OAuth, TokenSource};
    /// // The sign-in agent keeps the user's current ID token in a file.
    /// let id_token = TokenSource::File("/run/user/1000/sso/id_token".into());
    /// let idp = EnterpriseIdp::new("https://idp.example.com/oauth2/token", id_token).client_id("mcp-host-at-idp");
    /// let oauth = OAuth::new().client_id("mcp-host").client_secret("s3cret").enterprise(idp);
    /// # let _ = oauth;
    /// ```
    pub fn enterprise(mut self, idp: EnterpriseIdp) -> Self {
        self.enterprise = Some(idp);
        self.grant = Grant::EnterpriseManaged;
        self
    }

    /// At most `n` step-ups in a row before `auth_denied`.
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.max_step_ups = n;
        self
    }

    /// Bounds one whole flow.
    pub fn flow_timeout(mut self, timeout: Duration) -> Self {
        self.flow_timeout = timeout;
        self
    }

    /// The client settings.
    pub fn client(&self) -> &OAuthClient {
        &self.client
    }
}

#[cfg(test)]
mod tests {
    use super::TokenEndpointAuth as M;

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_method_follows_the_server_and_the_secret() {
        assert_eq!(M::choose(Some(&list(&["none"])), true, None), M::None);
        assert_eq!(M::choose(Some(&list(&["client_secret_post"])), true, None), M::ClientSecretPost);
        assert_eq!(M::choose(Some(&list(&["client_secret_basic"])), true, None), M::ClientSecretBasic);
        assert_eq!(M::choose(None, true, None), M::ClientSecretBasic);
        assert_eq!(M::choose(None, false, None), M::None);
        let both = list(&["client_secret_basic", "client_secret_post"]);
        assert_eq!(M::choose(Some(&both), true, Some(M::ClientSecretPost)), M::ClientSecretPost);
        // A registration that names a method the server does not take is not followed.
        assert_eq!(M::choose(Some(&list(&["none"])), true, Some(M::ClientSecretBasic)), M::None);
    }

    #[test]
    fn a_private_key_is_used_where_the_server_takes_it() {
        let jwt = list(&["private_key_jwt"]);
        assert_eq!(M::choose_with_key(Some(&jwt), true, false, None), M::PrivateKeyJwt);
        assert_eq!(M::choose_with_key(Some(&jwt), true, true, Some(M::ClientSecretBasic)), M::PrivateKeyJwt);
        assert_eq!(M::choose_with_key(None, true, false, None), M::PrivateKeyJwt);
        // Unlisted, with a secret to send instead: the RFC 8414 default.
        assert_eq!(M::choose_with_key(None, true, true, None), M::ClientSecretBasic);
        assert_eq!(
            M::choose_with_key(Some(&list(&["client_secret_post"])), true, true, None),
            M::ClientSecretPost
        );
        assert_eq!(M::choose_with_key(Some(&jwt), false, false, None), M::None);
    }
}
