//! Which client identity to present to an authorization server.
//!
//! The MCP specification's order: pre-registered credentials; a Client ID
//! Metadata Document URL as the `client_id` when the server advertises
//! `client_id_metadata_document_supported`; dynamic client registration
//! (RFC 7591) at its `registration_endpoint` otherwise. A registration
//! belongs to the issuer that issued it: for a new issuer the old one is
//! never presented ([`ClientRegistration::issuer`]): a dynamic registration
//! is made again, and pre-registered credentials bound to another issuer
//! are refused with [`AuthError::ClientIssuerMismatch`]. A Client ID
//! Metadata Document URL is portable across servers.

use serde::{Deserialize, Serialize};

use super::error::json_reason;
use super::wellknown::http_url;
use super::{AuthError, AuthorizationServerMetadata, Secret};

/// The largest registration response read.
pub(crate) const MAX_REGISTRATION_BYTES: usize = 64 * 1024;

/// A client id and, for a confidential client, its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret`, if any.
    pub client_secret: Option<Secret>,
}

/// Credentials and the issuer they belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRegistration {
    /// The authorization server that issued (or was configured with, or
    /// first used) them; `None` for pre-registered credentials not yet
    /// bound, which the first authorization server that grants them a
    /// token binds.
    pub issuer: Option<String>,
    /// The credentials.
    pub credentials: ClientCredentials,
}

impl ClientRegistration {
    /// Whether these credentials may be presented to `issuer` (exact match,
    /// or no issuer recorded).
    pub fn is_for(&self, issuer: &str) -> bool {
        self.issuer.as_deref().is_none_or(|i| i == issuer)
    }

    /// Parses an RFC 7591 §3.2.1 registration response from `issuer`.
    pub fn from_response(body: &[u8], issuer: &str) -> Result<Self, AuthError> {
        #[derive(Deserialize)]
        struct Wire {
            client_id: String,
            #[serde(default)]
            client_secret: Option<String>,
        }
        let what = "registration response";
        if body.len() > MAX_REGISTRATION_BYTES {
            return Err(AuthError::TooLarge { what, limit: MAX_REGISTRATION_BYTES });
        }
        let wire: Wire = serde_json::from_slice(body).map_err(|e| AuthError::InvalidDocument {
            what,
            url: issuer.to_owned(),
            reason: json_reason(&e),
        })?;
        if wire.client_id.is_empty() {
            return Err(AuthError::InvalidDocument {
                what,
                url: issuer.to_owned(),
                reason: "empty client_id".into(),
            });
        }
        Ok(Self {
            issuer: Some(issuer.to_owned()),
            credentials: ClientCredentials {
                client_id: wire.client_id,
                client_secret: wire.client_secret.map(Secret::new),
            },
        })
    }
}

/// What the host knows about its client.
#[derive(Debug, Clone, Default)]
pub struct ClientSettings {
    /// Pre-registered credentials (from the definition).
    pub pre_registered: Option<ClientRegistration>,
    /// The HTTPS URL of this client's Client ID Metadata Document.
    pub metadata_document: Option<String>,
    /// A registration obtained earlier by dynamic registration.
    pub registered: Option<ClientRegistration>,
    /// `client_name` for registration.
    pub client_name: String,
    /// The redirect URIs this client listens on.
    pub redirect_uris: Vec<String>,
}

/// The identity chosen for one authorization server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IdentityChoice {
    /// Credentials the server already knows (pre-registered, or registered
    /// earlier with this same issuer).
    Known(ClientCredentials),
    /// The Client ID Metadata Document URL, used as the `client_id`.
    MetadataDocument(String),
    /// Register first: POST `request` as JSON to `endpoint`.
    Register {
        /// The registration endpoint.
        endpoint: String,
        /// The request body.
        request: RegistrationRequest,
    },
}

impl IdentityChoice {
    #[cfg(test)]
    /// The `client_id`, when known without registering.
    pub(crate) fn client_id(&self) -> Option<&str> {
        match self {
            Self::Known(c) => Some(&c.client_id),
            Self::MetadataDocument(url) => Some(url),
            Self::Register { .. } => None,
        }
    }
}

/// Chooses the client identity for the server `meta` describes.
pub(super) fn choose_identity(
    settings: &ClientSettings,
    meta: &AuthorizationServerMetadata,
) -> Result<IdentityChoice, AuthError> {
    if let Some(pre) = &settings.pre_registered {
        // Pre-registered credentials bound to another issuer are an error to
        // surface, not something to route around (the MCP specification's
        // authorization server binding).
        if !pre.is_for(&meta.issuer) {
            return Err(AuthError::ClientIssuerMismatch {
                expected: meta.issuer.clone(),
                found: pre.issuer.clone().unwrap_or_default(),
            });
        }
        return Ok(IdentityChoice::Known(pre.credentials.clone()));
    }
    if meta.client_id_metadata_document_supported {
        if let Some(doc) = &settings.metadata_document {
            check_metadata_document_url(doc)?;
            return Ok(IdentityChoice::MetadataDocument(doc.clone()));
        }
    }
    // Only a registration with this exact issuer: a new issuer registers anew.
    if let Some(registered) =
        settings.registered.as_ref().filter(|r| r.issuer.as_deref() == Some(&meta.issuer))
    {
        return Ok(IdentityChoice::Known(registered.credentials.clone()));
    }
    if let Some(endpoint) = &meta.registration_endpoint {
        return Ok(IdentityChoice::Register {
            endpoint: endpoint.clone(),
            request: RegistrationRequest::new(&settings.client_name, settings.redirect_uris.clone()),
        });
    }
    Err(AuthError::NoClientIdentity { issuer: meta.issuer.clone() })
}

/// A Client ID Metadata Document URL must be `https` with a path.
fn check_metadata_document_url(url: &str) -> Result<(), AuthError> {
    let what = "client metadata document";
    let parsed = http_url(url, what)?;
    if parsed.scheme() != "https" {
        return Err(AuthError::InvalidUrl { what, reason: "not https" });
    }
    if parsed.path() == "/" {
        return Err(AuthError::InvalidUrl { what, reason: "no path" });
    }
    Ok(())
}

/// OpenID Connect Registration's `application_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ApplicationType {
    /// Redirects to the loopback interface or a private scheme.
    Native,
    /// Redirects to an `https` web address.
    Web,
}

impl ApplicationType {
    /// `native` when every redirect URI is loopback `http` or a non-web
    /// scheme, else `web`.
    pub(crate) fn for_redirects(uris: &[String]) -> Self {
        let native = |u: &String| match url::Url::parse(u) {
            Ok(u) if u.scheme() == "http" => {
                matches!(u.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"))
            }
            Ok(u) => u.scheme() != "https",
            Err(_) => false,
        };
        if !uris.is_empty() && uris.iter().all(native) {
            Self::Native
        } else {
            Self::Web
        }
    }
}

/// An RFC 7591 §2 client registration request for a public client of the
/// authorization code flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RegistrationRequest {
    /// Where the authorization server may redirect.
    pub redirect_uris: Vec<String>,
    /// A human-readable name.
    pub client_name: String,
    /// `native` or `web`, from the redirect URIs.
    pub application_type: ApplicationType,
    /// `authorization_code` and `refresh_token`.
    pub grant_types: Vec<String>,
    /// `code`.
    pub response_types: Vec<String>,
    /// `none`: a public client that proves itself with PKCE.
    pub token_endpoint_auth_method: String,
    /// The client's public keys (`{"keys": [...]}`, RFC 7591 §2), for
    /// `private_key_jwt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks: Option<serde_json::Value>,
}

impl RegistrationRequest {
    /// The request for a public client with these redirect URIs.
    pub(crate) fn new(client_name: &str, redirect_uris: Vec<String>) -> Self {
        Self {
            application_type: ApplicationType::for_redirects(&redirect_uris),
            redirect_uris,
            client_name: client_name.to_owned(),
            grant_types: vec!["authorization_code".into(), "refresh_token".into()],
            response_types: vec!["code".into()],
            token_endpoint_auth_method: "none".into(),
            jwks: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ISSUER: &str = "https://as.example.com";

    fn meta() -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: ISSUER.into(),
            registration_endpoint: Some(format!("{ISSUER}/register")),
            ..Default::default()
        }
    }

    fn creds(id: &str, issuer: Option<&str>) -> ClientRegistration {
        ClientRegistration {
            issuer: issuer.map(Into::into),
            credentials: ClientCredentials {
                client_id: id.into(),
                client_secret: Some(Secret::new("s3cret-sentinel")),
            },
        }
    }

    fn settings() -> ClientSettings {
        ClientSettings {
            client_name: "mcp-stack".into(),
            redirect_uris: vec!["http://127.0.0.1:8976/callback".into()],
            metadata_document: Some("https://app.example.com/client.json".into()),
            ..Default::default()
        }
    }

    #[test]
    fn pre_registered_comes_first() {
        let mut s = settings();
        s.pre_registered = Some(creds("pre", None));
        let mut m = meta();
        m.client_id_metadata_document_supported = true;
        assert_eq!(choose_identity(&s, &m).unwrap().client_id(), Some("pre"));
        s.pre_registered = Some(creds("pre", Some(ISSUER)));
        assert_eq!(choose_identity(&s, &m).unwrap().client_id(), Some("pre"));
        // Pre-registered for another issuer is refused, never presented.
        s.pre_registered = Some(creds("pre", Some("https://other.example.com")));
        assert!(matches!(choose_identity(&s, &m), Err(AuthError::ClientIssuerMismatch { .. })));
    }

    #[test]
    fn metadata_document_only_when_supported_and_https_with_a_path() {
        let s = settings();
        assert!(matches!(choose_identity(&s, &meta()).unwrap(), IdentityChoice::Register { .. }));
        let mut m = meta();
        m.client_id_metadata_document_supported = true;
        for bad in ["http://app.example.com/client.json", "https://app.example.com/", "client.json"] {
            let mut s = settings();
            s.metadata_document = Some(bad.into());
            assert!(matches!(choose_identity(&s, &m), Err(AuthError::InvalidUrl { .. })), "{bad}");
        }
    }

    #[test]
    fn a_registration_is_reused_only_with_its_issuer() {
        let mut s = settings();
        s.registered = Some(creds("dyn-1", Some(ISSUER)));
        assert_eq!(choose_identity(&s, &meta()).unwrap().client_id(), Some("dyn-1"));
        s.registered = Some(creds("dyn-1", Some("https://old-as.example.com")));
        assert!(matches!(choose_identity(&s, &meta()).unwrap(), IdentityChoice::Register { .. }));
        s.registered = Some(creds("dyn-1", None));
        assert!(matches!(choose_identity(&s, &meta()).unwrap(), IdentityChoice::Register { .. }));
    }

    #[test]
    fn no_way_to_identify() {
        let mut m = meta();
        m.registration_endpoint = None;
        assert!(matches!(choose_identity(&settings(), &m), Err(AuthError::NoClientIdentity { .. })));
    }

    #[test]
    fn registration_request_body() {
        let IdentityChoice::Register { endpoint, request } = choose_identity(&settings(), &meta()).unwrap()
        else {
            panic!("expected registration");
        };
        assert_eq!(endpoint, "https://as.example.com/register");
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({
                "redirect_uris": ["http://127.0.0.1:8976/callback"],
                "client_name": "mcp-stack",
                "application_type": "native",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            })
        );
        assert_eq!(
            ApplicationType::for_redirects(&["https://app.example.com/cb".into()]),
            ApplicationType::Web
        );
        assert_eq!(
            ApplicationType::for_redirects(&["http://evil.example.com/cb".into()]),
            ApplicationType::Web
        );
        assert_eq!(ApplicationType::for_redirects(&["com.example.app:/cb".into()]), ApplicationType::Native);
    }

    #[test]
    fn registration_response_keeps_the_secret_secret() {
        let body =
            br#"{"client_id":"abc","client_secret":"s3cret-sentinel","client_id_issued_at":1,"extra":[]}"#;
        let reg = ClientRegistration::from_response(body, ISSUER).unwrap();
        assert_eq!(reg.credentials.client_id, "abc");
        assert_eq!(reg.credentials.client_secret.as_ref().unwrap().expose(), "s3cret-sentinel");
        assert!(reg.is_for(ISSUER) && !reg.is_for("https://other"));
        assert!(!format!("{reg:?}").contains("sentinel"));
        let identity = IdentityChoice::Known(reg.credentials);
        assert!(!format!("{identity:?}").contains("sentinel"));
        // A malformed response does not echo the secret in its error.
        let err = ClientRegistration::from_response(
            br#"{"client_id":"a","client_secret":["s3cret-sentinel"]}"#,
            ISSUER,
        )
        .unwrap_err();
        assert!(!err.to_string().contains("sentinel") && !format!("{err:?}").contains("sentinel"));
        assert!(ClientRegistration::from_response(br#"{"client_id":""}"#, ISSUER).is_err());
        let big = vec![b' '; MAX_REGISTRATION_BYTES + 1];
        assert!(matches!(ClientRegistration::from_response(&big, ISSUER), Err(AuthError::TooLarge { .. })));
    }
}
