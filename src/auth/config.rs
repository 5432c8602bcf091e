//! [`OAuth`]: how a definition authorizes against its server.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{AuthorizationHandler, ClientRegistration, MemoryStore, Secret, TokenStore};

/// How many step-ups (re-authorizations on `403 insufficient_scope`) run
/// in a row before the request fails with `auth_denied`.
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;
/// How long before its expiry an access token is refreshed.
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// How long one authorization flow (discovery, registration, the human
/// step, the token request) may take in all.
pub const DEFAULT_FLOW_TIMEOUT: Duration = Duration::from_secs(600);
/// The bound on each request to an authorization server.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// Which OAuth grant obtains tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE, through the [`AuthorizationHandler`]
    /// (the default: a person approves).
    #[default]
    AuthorizationCode,
    /// `client_credentials` (RFC 6749 §4.4): a machine client with its own
    /// credentials, no person and no handler.
    ClientCredentials,
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
    /// A signed JWT assertion (RFC 7523). Not supported yet: a flow that
    /// would need it fails with `auth_failed`.
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
    /// The issuer the pre-registered client belongs to; `None`: whichever
    /// authorization server the MCP server names.
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
/// [`DEFAULT_MAX_STEP_UPS`] step-ups in a row.
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
    pub(crate) refresh_margin: Duration,
    pub(crate) flow_timeout: Duration,
    pub(crate) fetch_timeout: Duration,
    /// Dynamic registrations by issuer.
    pub(crate) registrations: Arc<Mutex<HashMap<String, Registered>>>,
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
            refresh_margin: DEFAULT_REFRESH_MARGIN,
            flow_timeout: DEFAULT_FLOW_TIMEOUT,
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            registrations: Arc::default(),
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
    /// server is refused rather than shown these credentials.
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
}
