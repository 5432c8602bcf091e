//! Protected Resource Metadata (RFC 9728) and authorization server metadata
//! (RFC 8414, OpenID Connect Discovery), with the checks MCP adds.
//!
//! Unknown fields are ignored (both RFCs let servers add their own), bodies
//! are bounded by [`MAX_METADATA_BYTES`], and a document is used only after
//! its check: a PRM must name this server as its `resource`
//! ([`ProtectedResourceMetadata::check_resource`]), AS metadata must name the
//! issuer it was discovered from and offer what the flow needs
//! ([`AuthorizationServerMetadata::check`]).

use serde::{Deserialize, Serialize};
use url::Url;

use super::error::json_reason;
use super::wellknown::{http_url, resource_matches};
use super::AuthError;

/// The largest metadata document read.
pub(crate) const MAX_METADATA_BYTES: usize = 64 * 1024;

/// RFC 9728 §2: what a protected resource says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProtectedResourceMetadata {
    /// The resource identifier; must identify the MCP server.
    pub resource: String,
    /// Issuer identifiers of the authorization servers it accepts tokens from.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes for basic use, requested when the challenge names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How the token may be sent (`header`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

impl ProtectedResourceMetadata {
    /// Parses a document fetched from `url`.
    pub(crate) fn from_json(body: &[u8], url: &Url) -> Result<Self, AuthError> {
        let doc: Self = parse("protected resource metadata", body, url)?;
        if doc.resource.is_empty() {
            return Err(invalid("protected resource metadata", url, "empty resource"));
        }
        Ok(doc)
    }

    /// Refuses metadata whose `resource` does not identify `server`.
    ///
    /// RFC 9728 §3.3 wants the `resource` to be the URL the metadata is
    /// about; MCP servers at a path commonly publish their origin (the root
    /// well-known document), so the rule here is: the same scheme, host and
    /// port (compared as RFC 3986 says, case-insensitively), no fragment, and
    /// a path that is the server's path or a parent of it on a segment
    /// boundary. A foreign origin, or a sibling path, is refused.
    pub(crate) fn check_resource(&self, server: &Url) -> Result<(), AuthError> {
        if resource_matches(server, &self.resource) {
            Ok(())
        } else {
            Err(AuthError::ResourceMismatch { expected: server.to_string(), found: self.resource.clone() })
        }
    }
}

/// RFC 8414 §2 (and OpenID Connect Discovery §3): what an authorization
/// server offers. Only the fields the MCP flow reads are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct AuthorizationServerMetadata {
    /// The issuer identifier; must be the one discovered from.
    pub issuer: String,
    /// Where the user authorizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes become tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// RFC 7591 dynamic client registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows (`offline_access` is requested only if here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `code`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// `authorization_code`, `refresh_token`, `client_credentials`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// `none`, `client_secret_basic`, `client_secret_post`, `private_key_jwt`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods; the MCP client refuses a server without `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents: a URL may be the `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: authorization responses carry `iss`, so it is required.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// JWS algorithms the token endpoint takes for `private_key_jwt`
    /// assertions (RFC 8414 §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// JWS algorithms the server takes for DPoP proofs (RFC 9449 §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// Parses a document fetched from `url`.
    pub(crate) fn from_json(body: &[u8], url: &Url) -> Result<Self, AuthError> {
        parse("authorization server metadata", body, url)
    }

    /// The 2025-03-26 defaults for a server without metadata: `/authorize`,
    /// `/token` and `/register` at the MCP server's origin, which is also
    /// the issuer; PKCE S256 is assumed, as that revision requires it.
    pub(crate) fn legacy_defaults(server: &Url) -> Self {
        let origin = server.origin().ascii_serialization();
        Self {
            issuer: origin.clone(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: Some(format!("{origin}/token")),
            registration_endpoint: Some(format!("{origin}/register")),
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            ..Self::default()
        }
    }

    /// Checks discovered metadata: `issuer` identical to `expected_issuer`
    /// (RFC 8414 §3.3; a lone trailing `/` after the host is the one
    /// difference allowed, since `https://as.example` and
    /// `https://as.example/` are the same URL), the authorization and token
    /// endpoints present and `http`/`https`, any registration endpoint too,
    /// and PKCE `S256` advertised.
    pub(crate) fn check(&self, expected_issuer: &str) -> Result<(), AuthError> {
        if !same_issuer(&self.issuer, expected_issuer) {
            return Err(AuthError::IssuerMismatch {
                expected: expected_issuer.to_owned(),
                found: self.issuer.clone(),
            });
        }
        let bad = |reason| AuthError::InvalidDocument {
            what: "authorization server metadata",
            url: self.issuer.clone(),
            reason,
        };
        for (name, endpoint, required) in [
            ("authorization_endpoint", &self.authorization_endpoint, true),
            ("token_endpoint", &self.token_endpoint, true),
            ("registration_endpoint", &self.registration_endpoint, false),
        ] {
            match endpoint {
                Some(e) if http_url(e, "endpoint").is_err() => {
                    return Err(bad(format!("{name} is not an http(s) URL")))
                }
                None if required => return Err(bad(format!("no {name}"))),
                _ => {}
            }
        }
        let s256 = self.code_challenge_methods_supported.iter().flatten().any(|m| m == "S256");
        if !s256 {
            return Err(AuthError::PkceUnsupported { issuer: self.issuer.clone() });
        }
        Ok(())
    }

    /// When the server lists the JWS algorithms it takes for `use`
    /// (`private_key_jwt` assertions or DPoP proofs) and `alg` is not
    /// among them, the list: a request signed with `alg` would only be
    /// refused. `None` when the server lists nothing (any algorithm may
    /// work) or lists `alg`.
    pub(crate) fn refused_algorithms(&self, signed: SignedFor, alg: &str) -> Option<&[String]> {
        let listed = match signed {
            SignedFor::ClientAssertion => &self.token_endpoint_auth_signing_alg_values_supported,
            SignedFor::DpopProof => &self.dpop_signing_alg_values_supported,
        };
        listed.as_deref().filter(|list| !list.is_empty() && !list.iter().any(|a| a == alg))
    }

    /// Whether `scopes_supported` lists `scope`.
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported.iter().flatten().any(|s| s == scope)
    }
}

/// What a JWS the client signs is for, as the metadata names its algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignedFor {
    /// A `private_key_jwt` client assertion (RFC 7523 §2.2).
    ClientAssertion,
    /// A DPoP proof (RFC 9449 §4).
    DpopProof,
}

pub(crate) fn same_issuer(found: &str, expected: &str) -> bool {
    found == expected
        || root_without_slash(found) == Some(expected)
        || root_without_slash(expected) == Some(found)
}

/// `https://host/` without its `/`; `None` for anything else.
fn root_without_slash(s: &str) -> Option<&str> {
    let rest = s.strip_suffix('/')?;
    let (_, host) = rest.split_once("://")?;
    (!host.contains('/')).then_some(rest)
}

fn parse<T: serde::de::DeserializeOwned>(what: &'static str, body: &[u8], url: &Url) -> Result<T, AuthError> {
    if body.len() > MAX_METADATA_BYTES {
        return Err(AuthError::TooLarge { what, limit: MAX_METADATA_BYTES });
    }
    serde_json::from_slice(body).map_err(|e| invalid(what, url, &json_reason(&e)))
}

fn invalid(what: &'static str, url: &Url, reason: &str) -> AuthError {
    AuthError::InvalidDocument { what, url: url.to_string(), reason: reason.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn as_meta(issuer: &str) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: issuer.to_owned(),
            authorization_endpoint: Some(format!("{issuer}/authorize")),
            token_endpoint: Some(format!("{issuer}/token")),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            ..Default::default()
        }
    }

    #[test]
    fn prm_parses_and_ignores_unknown_fields() {
        let body =
            br#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example"],
            "scopes_supported":["a","b"],"extra":{"nested":[1,2]},"jwks_uri":"https://x"}"#;
        let prm = ProtectedResourceMetadata::from_json(body, &url("https://mcp.example.com/.well-known/x"))
            .unwrap();
        assert_eq!(prm.authorization_servers, ["https://as.example"]);
        assert_eq!(prm.scopes_supported.as_deref(), Some(&["a".to_owned(), "b".to_owned()][..]));
    }

    #[test]
    fn prm_refuses_bad_bodies() {
        let at = url("https://mcp.example.com/prm");
        for body in [
            &b"not json"[..],
            br#"{"authorization_servers":[]}"#,
            br#"{"resource":""}"#,
            br#"{"resource":7}"#,
        ] {
            assert!(matches!(
                ProtectedResourceMetadata::from_json(body, &at),
                Err(AuthError::InvalidDocument { .. })
            ));
        }
        let big = vec![b' '; MAX_METADATA_BYTES + 1];
        assert!(matches!(ProtectedResourceMetadata::from_json(&big, &at), Err(AuthError::TooLarge { .. })));
    }

    #[test]
    fn json_errors_do_not_quote_the_input() {
        let err = AuthorizationServerMetadata::from_json(br#"{"issuer": 12345678}"#, &url("https://a/x"))
            .unwrap_err();
        assert!(!err.to_string().contains("12345678"), "{err}");
    }

    #[test]
    fn prm_resource_must_identify_the_server() {
        let server = url("https://mcp.example.com/tenant/mcp");
        let prm = |r: &str| ProtectedResourceMetadata {
            resource: r.into(),
            authorization_servers: vec![],
            scopes_supported: None,
            bearer_methods_supported: None,
            resource_name: None,
        };
        for ok in [
            "https://mcp.example.com/tenant/mcp",
            "https://mcp.example.com/tenant/mcp/",
            "HTTPS://MCP.example.com/tenant/mcp",
            "https://mcp.example.com:443/tenant",
            "https://mcp.example.com",
            "https://mcp.example.com/",
        ] {
            assert!(prm(ok).check_resource(&server).is_ok(), "{ok}");
        }
        for bad in [
            "https://evil.example.com/tenant/mcp",
            "http://mcp.example.com/tenant/mcp",
            "https://mcp.example.com:8443/tenant/mcp",
            "https://mcp.example.com/other",
            "https://mcp.example.com/ten",
            "https://mcp.example.com/tenant/mcp/deeper",
            "https://mcp.example.com/tenant/mcp#frag",
            "mcp.example.com",
            "",
        ] {
            assert!(
                matches!(prm(bad).check_resource(&server), Err(AuthError::ResourceMismatch { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn as_metadata_checks() {
        assert!(as_meta("https://as.example").check("https://as.example").is_ok());
        assert!(as_meta("https://as.example/").check("https://as.example").is_ok());
        assert!(as_meta("https://as.example").check("https://as.example/").is_ok());
        for wrong in ["https://as.example/tenant", "https://AS.example", "https://evil.example"] {
            assert!(matches!(
                as_meta(wrong).check("https://as.example"),
                Err(AuthError::IssuerMismatch { .. })
            ));
        }
        assert!(matches!(
            as_meta("https://as.example/t/").check("https://as.example/t"),
            Err(AuthError::IssuerMismatch { .. })
        ));
        let mut no_pkce = as_meta("https://as.example");
        no_pkce.code_challenge_methods_supported = Some(vec!["plain".into()]);
        assert!(matches!(no_pkce.check("https://as.example"), Err(AuthError::PkceUnsupported { .. })));
        no_pkce.code_challenge_methods_supported = None;
        assert!(matches!(no_pkce.check("https://as.example"), Err(AuthError::PkceUnsupported { .. })));
        let mut no_token = as_meta("https://as.example");
        no_token.token_endpoint = None;
        assert!(matches!(no_token.check("https://as.example"), Err(AuthError::InvalidDocument { .. })));
        let mut script = as_meta("https://as.example");
        script.authorization_endpoint = Some("javascript:alert(1)".into());
        assert!(matches!(script.check("https://as.example"), Err(AuthError::InvalidDocument { .. })));
    }

    #[test]
    fn as_metadata_flags_default_to_false() {
        let m = AuthorizationServerMetadata::from_json(
            br#"{"issuer":"https://as.example","unknown":true}"#,
            &url("https://as.example/x"),
        )
        .unwrap();
        assert!(!m.client_id_metadata_document_supported);
        assert!(!m.authorization_response_iss_parameter_supported);
    }

    #[test]
    fn legacy_defaults_sit_at_the_server_root() {
        let m =
            AuthorizationServerMetadata::legacy_defaults(&url("https://mcp.example.com:8443/deep/mcp?x=1"));
        assert_eq!(m.issuer, "https://mcp.example.com:8443");
        assert_eq!(m.authorization_endpoint.as_deref(), Some("https://mcp.example.com:8443/authorize"));
        assert_eq!(m.token_endpoint.as_deref(), Some("https://mcp.example.com:8443/token"));
        assert_eq!(m.registration_endpoint.as_deref(), Some("https://mcp.example.com:8443/register"));
        assert!(m.check(&m.issuer.clone()).is_ok());
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_parse_or_fail_cleanly(body in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let at = url("https://as.example/x");
            let _ = ProtectedResourceMetadata::from_json(&body, &at);
            if let Ok(meta) = AuthorizationServerMetadata::from_json(&body, &at) {
                let _ = meta.check("https://as.example");
            }
        }
    }
}
