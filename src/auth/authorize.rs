//! The authorization request and the check of its response.
//!
//! [`start`] builds the authorization URL (authorization code with PKCE
//! `S256`, a random `state`, the RFC 8707 `resource`, the chosen scopes) and
//! a [`PendingAuthorization`] that remembers, for that one request, the
//! verifier, the `state` and the issuer the metadata named. The host shows
//! the URL to the user; the redirect's query comes back to
//! [`PendingAuthorization::complete`], which applies RFC 9207 before
//! anything else, then the `state`, and only then reads `error` or `code`.
//! PKCE and `state` come from the `oauth2` crate (OS randomness, 32 bytes
//! each).

use oauth2::{CsrfToken, PkceCodeChallenge};
use url::Url;

use super::wellknown::http_url;
use super::{AuthError, AuthorizationServerMetadata, BearerChallenge, ProtectedResourceMetadata, Secret};

/// The longest redirect query read.
pub(crate) const MAX_REDIRECT_QUERY_BYTES: usize = 8 * 1024;

const OFFLINE_ACCESS: &str = "offline_access";

/// The `scope` of the first authorization, by the MCP specification's
/// order: the challenge's `scope`, else the PRM's `scopes_supported`, else
/// none (`None`: omit the parameter). `offline_access` is added when the
/// authorization server lists it (and there are scopes to add it to), and
/// removed when it does not.
pub(super) fn select_scope(
    challenge: Option<&BearerChallenge>,
    prm: Option<&ProtectedResourceMetadata>,
    server: &AuthorizationServerMetadata,
) -> Option<String> {
    let mut scopes: Vec<&str> = match challenge.filter(|c| c.scopes().next().is_some()) {
        Some(c) => c.scopes().collect(),
        None => {
            prm?.scopes_supported.as_deref()?.iter().map(String::as_str).filter(|s| !s.is_empty()).collect()
        }
    };
    finish_scopes(&mut scopes, server)
}

/// The `scope` of a step-up: the scopes asked for before, together with
/// those of the `insufficient_scope` challenge, in that order, each once.
pub(super) fn step_up_scope(
    previous: Option<&str>,
    challenge: &BearerChallenge,
    server: &AuthorizationServerMetadata,
) -> Option<String> {
    let mut scopes: Vec<&str> = previous.unwrap_or("").split(' ').filter(|s| !s.is_empty()).collect();
    for s in challenge.scopes() {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    finish_scopes(&mut scopes, server)
}

fn finish_scopes(scopes: &mut Vec<&str>, server: &AuthorizationServerMetadata) -> Option<String> {
    scopes.retain(|s| *s != OFFLINE_ACCESS);
    let mut seen = Vec::with_capacity(scopes.len());
    scopes.retain(|s| {
        let new = !seen.contains(s);
        seen.push(*s);
        new
    });
    if scopes.is_empty() {
        return None;
    }
    if server.supports_scope(OFFLINE_ACCESS) {
        scopes.push(OFFLINE_ACCESS);
    }
    Some(scopes.join(" "))
}

/// What one authorization request needs besides the server's metadata.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AuthorizationParams<'a> {
    /// The `client_id` (a registered id or a metadata document URL).
    pub client_id: &'a str,
    /// Where the authorization server sends the user back.
    pub redirect_uri: &'a str,
    /// The RFC 8707 `resource` ([`Discovered::resource`](super::Discovered::resource)).
    pub resource: &'a str,
    /// The `scope`, or `None` to omit it ([`select_scope`]).
    pub scope: Option<&'a str>,
}

/// Builds the authorization URL and the record that checks its response.
///
/// `server` must have passed [`AuthorizationServerMetadata::check`]: its
/// `issuer` is what the response's `iss` is compared with.
pub(crate) fn start(
    server: &AuthorizationServerMetadata,
    params: AuthorizationParams<'_>,
) -> Result<(Url, PendingAuthorization), AuthError> {
    let endpoint = server
        .authorization_endpoint
        .as_deref()
        .ok_or(AuthError::InvalidUrl { what: "authorization endpoint", reason: "absent" })?;
    let mut url = http_url(endpoint, "authorization endpoint")?;
    http_url(params.redirect_uri, "redirect")?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let state = CsrfToken::new_random();
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", params.client_id)
            .append_pair("redirect_uri", params.redirect_uri)
            .append_pair("code_challenge", challenge.as_str())
            .append_pair("code_challenge_method", challenge.method().as_str())
            .append_pair("state", state.secret())
            .append_pair("resource", params.resource);
        if let Some(scope) = params.scope {
            query.append_pair("scope", scope);
        }
    }
    let pending = PendingAuthorization {
        verifier: Secret::new(verifier.secret().as_str()),
        state: Secret::new(state.secret().as_str()),
        issuer: server.issuer.clone(),
        iss_required: server.authorization_response_iss_parameter_supported,
        client_id: params.client_id.to_owned(),
        redirect_uri: params.redirect_uri.to_owned(),
        resource: params.resource.to_owned(),
        scope: params.scope.map(str::to_owned),
    };
    Ok((url, pending))
}

/// One authorization request in flight: what its response is checked
/// against and what the token request will need.
#[derive(Debug, Clone)]
pub(crate) struct PendingAuthorization {
    verifier: Secret,
    state: Secret,
    issuer: String,
    iss_required: bool,
    client_id: String,
    redirect_uri: String,
    resource: String,
    #[cfg_attr(not(test), allow(dead_code))] // read by the tests
    scope: Option<String>,
}

impl PendingAuthorization {
    /// The PKCE `code_verifier` for the token request.
    pub(crate) fn verifier(&self) -> &Secret {
        &self.verifier
    }

    #[cfg(test)]
    /// The issuer recorded from the validated metadata.
    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The `client_id` sent.
    pub(crate) fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The `redirect_uri` sent (the token request repeats it).
    pub(crate) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The `resource` sent (the token request repeats it).
    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    #[cfg(test)]
    /// The `scope` sent, if any.
    pub(crate) fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// Checks the redirect's query (with or without its leading `?`) and
    /// returns the authorization code.
    ///
    /// In order: the query is bounded and has no parameter twice; `iss`
    /// (RFC 9207 §2.4) is compared with the recorded issuer by exact string
    /// comparison whenever present, and required when the server advertises
    /// `authorization_response_iss_parameter_supported` (before this, not
    /// even `error` is read); `state` must be the one sent; then `error`
    /// ends the flow, else `code` is the result.
    pub(crate) fn complete(&self, query: &str) -> Result<Secret, AuthError> {
        let query = query.strip_prefix('?').unwrap_or(query);
        if query.len() > MAX_REDIRECT_QUERY_BYTES {
            return Err(AuthError::TooLarge {
                what: "authorization response",
                limit: MAX_REDIRECT_QUERY_BYTES,
            });
        }
        let (mut code, mut state, mut iss, mut error) = (None, None, None, None);
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match &*name {
                "code" => &mut code,
                "state" => &mut state,
                "iss" => &mut iss,
                "error" => &mut error,
                _ => continue,
            };
            if slot.replace(value.into_owned()).is_some() {
                return Err(AuthError::InvalidRedirect("a parameter appears twice"));
            }
        }
        match iss {
            Some(iss) if iss != self.issuer => {
                return Err(AuthError::AuthorizationIssuerMismatch {
                    expected: self.issuer.clone(),
                    found: iss,
                });
            }
            None if self.iss_required => {
                return Err(AuthError::IssuerMissing { expected: self.issuer.clone() })
            }
            _ => {}
        }
        match state {
            None => return Err(AuthError::InvalidRedirect("no state")),
            Some(s) if s != self.state.expose() => return Err(AuthError::StateMismatch),
            Some(_) => {}
        }
        if let Some(error) = error {
            return Err(AuthError::AuthorizationDenied { error: error_code(&error) });
        }
        code.filter(|c| !c.is_empty()).map(Secret::new).ok_or(AuthError::InvalidRedirect("no code"))
    }
}

/// The OAuth error codes the registries define, which are all an error of
/// this crate quotes from an authorization server: RFC 6749 (§4.1.2.1 and
/// §5.2), RFC 6750 §3.1, RFC 9449 (§7.1, §8), RFC 8707 §2 and RFC 7591
/// §3.2.2. A server's `error` is text it chose, and one that reflects what
/// the client sent (its secret, its assertion) would otherwise put it in
/// front of the user: anything else is reported as [`UNREGISTERED_ERROR`].
const REGISTERED_ERRORS: &[&str] = &[
    "invalid_request",
    "unauthorized_client",
    "access_denied",
    "unsupported_response_type",
    "invalid_scope",
    "server_error",
    "temporarily_unavailable",
    "invalid_client",
    "invalid_grant",
    "unsupported_grant_type",
    "invalid_token",
    "insufficient_scope",
    "invalid_dpop_proof",
    "use_dpop_nonce",
    "invalid_target",
    "invalid_redirect_uri",
    "invalid_client_metadata",
    "invalid_software_statement",
    "unapproved_software_statement",
];

/// What an unregistered OAuth `error` is reported as.
pub(crate) const UNREGISTERED_ERROR: &str = "unregistered_error_code";

/// An OAuth error code as it may be quoted: a registered one as it is,
/// anything else as [`UNREGISTERED_ERROR`].
pub(crate) fn error_code(error: &str) -> String {
    match REGISTERED_ERRORS.iter().find(|code| **code == error) {
        Some(code) => (*code).to_owned(),
        None => UNREGISTERED_ERROR.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const ISSUER: &str = "https://as.example.com";

    fn server(iss_supported: bool, scopes: &[&str]) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: ISSUER.into(),
            authorization_endpoint: Some(format!("{ISSUER}/authorize?tenant=a")),
            token_endpoint: Some(format!("{ISSUER}/token")),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            authorization_response_iss_parameter_supported: iss_supported,
            scopes_supported: Some(scopes.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }

    fn params(scope: Option<&str>) -> AuthorizationParams<'_> {
        AuthorizationParams {
            client_id: "https://app.example.com/client.json",
            redirect_uri: "http://127.0.0.1:8976/callback",
            resource: "https://mcp.example.com/mcp",
            scope,
        }
    }

    fn query_of(url: &Url) -> HashMap<String, String> {
        url.query_pairs().into_owned().collect()
    }

    fn prm(scopes: Option<&[&str]>) -> ProtectedResourceMetadata {
        ProtectedResourceMetadata {
            resource: "https://mcp.example.com".into(),
            authorization_servers: vec![ISSUER.into()],
            scopes_supported: scopes.map(|s| s.iter().map(|s| s.to_string()).collect()),
            bearer_methods_supported: None,
            resource_name: None,
        }
    }

    #[test]
    fn scope_selection_order() {
        let challenge =
            BearerChallenge { scope: Some("files:read  files:read".into()), ..Default::default() };
        let plain = server(false, &[]);
        assert_eq!(
            select_scope(Some(&challenge), Some(&prm(Some(&["x"]))), &plain).as_deref(),
            Some("files:read")
        );
        assert_eq!(select_scope(None, Some(&prm(Some(&["x", "y"]))), &plain).as_deref(), Some("x y"));
        let empty = BearerChallenge { scope: Some(" ".into()), ..Default::default() };
        assert_eq!(select_scope(Some(&empty), Some(&prm(Some(&["x"]))), &plain).as_deref(), Some("x"));
        assert_eq!(select_scope(None, Some(&prm(None)), &plain), None);
        assert_eq!(select_scope(None, None, &plain), None);
    }

    #[test]
    fn offline_access_only_when_the_server_lists_it() {
        let challenge = BearerChallenge { scope: Some("a offline_access".into()), ..Default::default() };
        assert_eq!(select_scope(Some(&challenge), None, &server(false, &["a"])).as_deref(), Some("a"));
        let offline = server(false, &["a", "offline_access"]);
        assert_eq!(select_scope(Some(&challenge), None, &offline).as_deref(), Some("a offline_access"));
        assert_eq!(
            select_scope(None, Some(&prm(Some(&["b"]))), &offline).as_deref(),
            Some("b offline_access")
        );
        assert_eq!(select_scope(None, Some(&prm(None)), &offline), None);
    }

    #[test]
    fn step_up_keeps_earlier_scopes() {
        let challenge = BearerChallenge { scope: Some("write read".into()), ..Default::default() };
        let s = server(false, &[]);
        assert_eq!(step_up_scope(Some("read"), &challenge, &s).as_deref(), Some("read write"));
        assert_eq!(step_up_scope(None, &challenge, &s).as_deref(), Some("write read"));
    }

    #[test]
    fn the_authorization_url() {
        let (url, pending) = start(&server(false, &[]), params(Some("a b"))).unwrap();
        assert!(url.as_str().starts_with("https://as.example.com/authorize?tenant=a&response_type=code&"));
        let q = query_of(&url);
        assert_eq!(q["client_id"], "https://app.example.com/client.json");
        assert_eq!(q["redirect_uri"], "http://127.0.0.1:8976/callback");
        assert_eq!(q["resource"], "https://mcp.example.com/mcp");
        assert_eq!(q["scope"], "a b");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["state"], pending.state.expose());
        // The challenge is the S256 of the verifier (RFC 7636 §4.2), never the verifier itself.
        use base64::Engine as _;
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(pending.verifier().expose().as_bytes());
        assert_eq!(q["code_challenge"], base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest));
        assert!(pending.verifier().expose().len() >= 43);
        assert!(!url.as_str().contains(pending.verifier().expose()));
        assert_eq!((pending.issuer(), pending.scope()), (ISSUER, Some("a b")));
        let (url, other) = start(&server(false, &[]), params(None)).unwrap();
        assert!(!query_of(&url).contains_key("scope"));
        assert_ne!(other.state, pending.state);
        assert_ne!(other.verifier, pending.verifier);
    }

    #[test]
    fn pending_debug_hides_verifier_and_state() {
        let (_, pending) = start(&server(false, &[]), params(None)).unwrap();
        let shown = format!("{pending:?}");
        assert!(!shown.contains(pending.verifier().expose()));
        assert!(!shown.contains(pending.state.expose()));
    }

    fn redirect(pending: &PendingAuthorization, extra: &str) -> String {
        let state: String = url::form_urlencoded::byte_serialize(pending.state.expose().as_bytes()).collect();
        format!("?state={state}{extra}")
    }

    #[test]
    fn iss_is_checked_by_exact_comparison() {
        for supported in [false, true] {
            let (_, p) = start(&server(supported, &[]), params(None)).unwrap();
            let ok = p.complete(&redirect(&p, "&code=c0de&iss=https%3A%2F%2Fas.example.com")).unwrap();
            assert_eq!(ok.expose(), "c0de");
            for wrong in ["https://as.example.com/", "https://AS.example.com", "https://evil.example.com", ""]
            {
                let enc: String = url::form_urlencoded::byte_serialize(wrong.as_bytes()).collect();
                let err = p.complete(&redirect(&p, &format!("&code=c&iss={enc}"))).unwrap_err();
                assert!(matches!(err, AuthError::AuthorizationIssuerMismatch { .. }), "{wrong}: {err}");
            }
        }
        let (_, optional) = start(&server(false, &[]), params(None)).unwrap();
        assert!(optional.complete(&redirect(&optional, "&code=c")).is_ok());
        let (_, required) = start(&server(true, &[]), params(None)).unwrap();
        assert!(matches!(
            required.complete(&redirect(&required, "&code=c")),
            Err(AuthError::IssuerMissing { .. })
        ));
    }

    #[test]
    fn iss_is_checked_before_the_error_is_read() {
        let (_, p) = start(&server(true, &[]), params(None)).unwrap();
        let err = p.complete(&redirect(&p, "&error=access_denied&iss=https%3A%2F%2Fevil")).unwrap_err();
        assert!(matches!(err, AuthError::AuthorizationIssuerMismatch { .. }));
        let err =
            p.complete(&redirect(&p, "&error=access_denied&iss=https%3A%2F%2Fas.example.com")).unwrap_err();
        assert!(matches!(err, AuthError::AuthorizationDenied { ref error } if error == "access_denied"));
        let err = p.complete(&redirect(&p, "&error=%22%0A&iss=https%3A%2F%2Fas.example.com")).unwrap_err();
        assert!(matches!(err, AuthError::AuthorizationDenied { ref error } if error == UNREGISTERED_ERROR));
    }

    #[test]
    fn state_and_shape_refusals() {
        let (_, p) = start(&server(false, &[]), params(None)).unwrap();
        assert!(matches!(p.complete("code=c&state=forged"), Err(AuthError::StateMismatch)));
        assert!(matches!(p.complete("code=c"), Err(AuthError::InvalidRedirect("no state"))));
        assert!(matches!(p.complete(&redirect(&p, "")), Err(AuthError::InvalidRedirect("no code"))));
        assert!(matches!(p.complete(&redirect(&p, "&code=")), Err(AuthError::InvalidRedirect("no code"))));
        assert!(matches!(p.complete(&redirect(&p, "&code=a&code=b")), Err(AuthError::InvalidRedirect(_))));
        let long = redirect(&p, &format!("&code={}", "c".repeat(MAX_REDIRECT_QUERY_BYTES)));
        assert!(matches!(p.complete(&long), Err(AuthError::TooLarge { .. })));
        // Errors never carry the code.
        let err = p.complete("code=c0de-sentinel&state=forged").unwrap_err();
        assert!(!format!("{err} {err:?}").contains("sentinel"));
    }

    proptest::proptest! {
        /// Any query is answered with a code or an error, never a panic, and
        /// only a query with the right `state` yields a code.
        #[test]
        fn any_redirect_query_is_safe(query in "[a-z=&%0-9A-F?+.:/_-]{0,200}") {
            let (_, p) = start(&server(false, &[]), params(None)).unwrap();
            if p.complete(&query).is_ok() {
                proptest::prop_assert!(query.contains(p.state.expose()));
            }
        }
    }
}
