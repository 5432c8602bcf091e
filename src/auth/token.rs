//! Token requests and responses (RFC 6749 §4.1.3, §5, §6), as data.
//!
//! [`TokenRequest`] is the form to POST to the token endpoint: the
//! authorization code grant with its PKCE verifier, `redirect_uri` and RFC
//! 8707 `resource`, or a refresh with the same `resource`. Its `Debug` shows
//! the secret fields as `[redacted]`; only [`TokenRequest::encode`] writes
//! them, into the body. [`parse_token_response`] reads the answer (bounded)
//! into [`Tokens`]. Sending, and client authentication other than `none`,
//! are the flow's.

use std::time::{Duration, SystemTime};

use serde::Deserialize;

use super::authorize::PendingAuthorization;
use super::error::json_reason;
use super::{AuthError, Secret, Tokens};

/// The largest token response read.
pub(crate) const MAX_TOKEN_RESPONSE_BYTES: usize = 64 * 1024;

/// One value of a token request form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FormValue {
    /// A value that may be shown.
    Plain(String),
    /// A code, verifier, refresh token or client secret.
    Secret(Secret),
}

/// A token endpoint request: where, and the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenRequest {
    /// The token endpoint.
    pub endpoint: String,
    /// The form fields in order.
    pub form: Vec<(&'static str, FormValue)>,
}

impl TokenRequest {
    /// The authorization code grant for the code `pending` received
    /// (client authentication `none`: the `client_id` is in the form).
    pub(crate) fn authorization_code(endpoint: &str, pending: &PendingAuthorization, code: Secret) -> Self {
        let plain = |s: &str| FormValue::Plain(s.to_owned());
        Self {
            endpoint: endpoint.to_owned(),
            form: vec![
                ("grant_type", plain("authorization_code")),
                ("code", FormValue::Secret(code)),
                ("redirect_uri", plain(pending.redirect_uri())),
                ("code_verifier", FormValue::Secret(pending.verifier().clone())),
                ("client_id", plain(pending.client_id())),
                ("resource", plain(pending.resource())),
            ],
        }
    }

    /// A refresh (RFC 6749 §6) for `resource`, optionally narrowing `scope`.
    pub(crate) fn refresh(
        endpoint: &str,
        refresh_token: &Secret,
        client_id: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Self {
        let plain = |s: &str| FormValue::Plain(s.to_owned());
        let mut form = vec![
            ("grant_type", plain("refresh_token")),
            ("refresh_token", FormValue::Secret(refresh_token.clone())),
            ("client_id", plain(client_id)),
            ("resource", plain(resource)),
        ];
        if let Some(scope) = scope {
            form.push(("scope", plain(scope)));
        }
        Self { endpoint: endpoint.to_owned(), form }
    }

    /// The `application/x-www-form-urlencoded` body, secrets included.
    pub(crate) fn encode(&self) -> String {
        let mut body = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in &self.form {
            let value = match value {
                FormValue::Plain(v) => v.as_str(),
                FormValue::Secret(s) => s.expose(),
            };
            body.append_pair(name, value);
        }
        body.finish()
    }
}

/// Reads a token endpoint answer.
///
/// A 2xx body must have `access_token` and `token_type`; `expires_in` sets
/// [`Tokens::expires_at`] from `now`; without `scope` the scope requested is
/// assumed (RFC 6749 §5.1). Any other status is read as an RFC 6749 §5.2
/// error and returned as [`AuthError::TokenRefused`] with its `error` code.
/// `issuer` is recorded on the tokens.
pub(crate) fn parse_token_response(
    status: u16,
    body: &[u8],
    now: SystemTime,
    requested_scope: Option<&str>,
    issuer: &str,
) -> Result<Tokens, AuthError> {
    #[derive(Deserialize)]
    struct Success {
        access_token: String,
        token_type: String,
        #[serde(default)]
        expires_in: Option<u64>,
        #[serde(default)]
        refresh_token: Option<String>,
        #[serde(default)]
        scope: Option<String>,
    }
    #[derive(Deserialize)]
    struct Failure {
        error: String,
    }
    let what = "token response";
    if body.len() > MAX_TOKEN_RESPONSE_BYTES {
        return Err(AuthError::TooLarge { what, limit: MAX_TOKEN_RESPONSE_BYTES });
    }
    let invalid = |reason: String| AuthError::InvalidDocument { what, url: issuer.to_owned(), reason };
    if !(200..300).contains(&status) {
        let error = serde_json::from_slice::<Failure>(body)
            .map(|f| super::authorize::error_code(&f.error))
            .unwrap_or_else(|_| format!("http_{status}"));
        return Err(AuthError::TokenRefused { status, error });
    }
    let ok: Success = serde_json::from_slice(body).map_err(|e| invalid(json_reason(&e)))?;
    if ok.access_token.is_empty() {
        return Err(invalid("empty access_token".into()));
    }
    Ok(Tokens {
        access_token: Secret::new(ok.access_token),
        token_type: ok.token_type,
        refresh_token: ok.refresh_token.filter(|r| !r.is_empty()).map(Secret::new),
        expires_at: ok.expires_in.and_then(|s| now.checked_add(Duration::from_secs(s))),
        scope: ok.scope.or_else(|| requested_scope.map(str::to_owned)),
        issuer: Some(issuer.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::time::UNIX_EPOCH;

    use super::super::authorize::{start, AuthorizationParams};
    use super::super::AuthorizationServerMetadata;
    use super::*;

    const ISSUER: &str = "https://as.example.com";

    fn pending() -> PendingAuthorization {
        let server = AuthorizationServerMetadata {
            issuer: ISSUER.into(),
            authorization_endpoint: Some(format!("{ISSUER}/authorize")),
            ..Default::default()
        };
        let params = AuthorizationParams {
            client_id: "client-1",
            redirect_uri: "http://127.0.0.1:8976/callback",
            resource: "https://mcp.example.com/mcp",
            scope: None,
        };
        start(&server, params).unwrap().1
    }

    fn decoded(body: &str) -> HashMap<String, String> {
        url::form_urlencoded::parse(body.as_bytes()).into_owned().collect()
    }

    #[test]
    fn the_code_grant_form() {
        let p = pending();
        let request =
            TokenRequest::authorization_code(&format!("{ISSUER}/token"), &p, Secret::new("code-sentinel"));
        let form = decoded(&request.encode());
        assert_eq!(form["grant_type"], "authorization_code");
        assert_eq!(form["code"], "code-sentinel");
        assert_eq!(form["code_verifier"], p.verifier().expose());
        assert_eq!(form["redirect_uri"], "http://127.0.0.1:8976/callback");
        assert_eq!(form["resource"], "https://mcp.example.com/mcp");
        assert_eq!(form["client_id"], "client-1");
        let shown = format!("{request:?}");
        assert!(!shown.contains("code-sentinel") && !shown.contains(p.verifier().expose()), "{shown}");
    }

    #[test]
    fn the_refresh_form() {
        let r = TokenRequest::refresh(
            "https://as/token",
            &Secret::new("refresh-sentinel"),
            "c",
            "https://mcp",
            Some("a b"),
        );
        let form = decoded(&r.encode());
        assert_eq!(form["grant_type"], "refresh_token");
        assert_eq!(form["refresh_token"], "refresh-sentinel");
        assert_eq!(form["resource"], "https://mcp");
        assert_eq!(form["scope"], "a b");
        assert!(!format!("{r:?}").contains("refresh-sentinel"));
    }

    #[test]
    fn token_responses() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let body = br#"{"access_token":"at-sentinel","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","extra":1}"#;
        let t = parse_token_response(200, body, now, Some("read"), ISSUER).unwrap();
        assert_eq!(t.access_token.expose(), "at-sentinel");
        assert_eq!(t.refresh_token.as_ref().map(Secret::expose), Some("rt"));
        assert_eq!(t.expires_at, Some(now + Duration::from_secs(3600)));
        assert_eq!(t.scope.as_deref(), Some("read"));
        assert!(t.is_for(ISSUER));
        let granted = parse_token_response(
            200,
            br#"{"access_token":"a","token_type":"Bearer","scope":"x"}"#,
            now,
            Some("read"),
            ISSUER,
        )
        .unwrap();
        assert_eq!((granted.scope.as_deref(), granted.expires_at), (Some("x"), None));
        let huge = parse_token_response(
            200,
            br#"{"access_token":"a","token_type":"b","expires_in":18446744073709551615}"#,
            now,
            None,
            ISSUER,
        );
        assert_eq!(huge.unwrap().expires_at, None);
    }

    #[test]
    fn token_refusals_never_quote_secrets() {
        let now = UNIX_EPOCH;
        let err = parse_token_response(
            400,
            br#"{"error":"invalid_grant","error_description":"code-sentinel"}"#,
            now,
            None,
            ISSUER,
        )
        .unwrap_err();
        assert!(
            matches!(err, AuthError::TokenRefused { status: 400, ref error } if error == "invalid_grant")
        );
        assert!(!format!("{err} {err:?}").contains("sentinel"));
        let err = parse_token_response(500, b"<html>", now, None, ISSUER).unwrap_err();
        assert!(matches!(err, AuthError::TokenRefused { ref error, .. } if error == "http_500"));
        let err = parse_token_response(
            200,
            br#"{"access_token":["at-sentinel"],"token_type":"Bearer"}"#,
            now,
            None,
            ISSUER,
        )
        .unwrap_err();
        assert!(!format!("{err} {err:?}").contains("sentinel"));
        assert!(parse_token_response(
            200,
            br#"{"access_token":"","token_type":"Bearer"}"#,
            now,
            None,
            ISSUER
        )
        .is_err());
        assert!(parse_token_response(200, br#"{"access_token":"a"}"#, now, None, ISSUER).is_err());
        let big = vec![b' '; MAX_TOKEN_RESPONSE_BYTES + 1];
        assert!(matches!(
            parse_token_response(200, &big, now, None, ISSUER),
            Err(AuthError::TooLarge { .. })
        ));
    }
}
