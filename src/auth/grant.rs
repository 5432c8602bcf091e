//! The grants without a browser, and `private_key_jwt`, as data.
//!
//! - [`TokenRequest::client_credentials`]: a machine client's own token
//!   (RFC 6749 §4.4, OAuth 2.1 §4.2).
//! - [`TokenRequest::jwt_bearer`]: a JWT assertion exchanged for a token
//!   (RFC 7523 §2.1). Workload identity federation sends the platform's
//!   workload token this way; enterprise-managed authorization sends the
//!   ID-JAG it got from the enterprise IdP.
//! - [`TokenRequest::id_jag_exchange`]: the RFC 8693 token exchange at the
//!   enterprise IdP of the user's identity token for an Identity Assertion
//!   JWT Authorization Grant (ID-JAG) for one authorization server and one
//!   resource; [`parse_id_jag_response`] reads the answer.
//! - [`PrivateKeyJwt`]: client authentication with a signed assertion
//!   (RFC 7523 §2.2, OpenID Connect Core §9) instead of a secret.
//!
//! Like [`TokenRequest`]'s other forms, secrets (assertions, subject
//! tokens) are [`FormValue::Secret`]s, shown `[redacted]`.

use std::time::{Duration, SystemTime};

use super::jose::{random_id, unix_seconds, JoseError, SigningKey};
use super::token::{FormValue, TokenRequest, MAX_TOKEN_RESPONSE_BYTES};
use super::{AuthError, Secret};

/// `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub(crate) const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of token exchange (RFC 8693 §2.1).
pub(crate) const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub(crate) const JWT_CLIENT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub(crate) const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an Identity Assertion JWT Authorization Grant.
pub(crate) const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// How long a client assertion is valid by default: short, since it is
/// made for one request (RFC 7523 §3 leaves the bound to the client).
pub(crate) const DEFAULT_ASSERTION_LIFETIME: Duration = Duration::from_secs(60);

fn plain(s: &str) -> FormValue {
    FormValue::Plain(s.to_owned())
}

impl TokenRequest {
    /// The client credentials grant of `client_id` for `resource` (RFC
    /// 8707), with `scope` when one is wanted. Client authentication is
    /// added by the caller (a secret, or [`PrivateKeyJwt::authenticate`]).
    pub(crate) fn client_credentials(
        endpoint: &str,
        client_id: &str,
        resource: &str,
        scope: Option<&str>,
    ) -> Self {
        let mut form = vec![
            ("grant_type", plain("client_credentials")),
            ("client_id", plain(client_id)),
            ("resource", plain(resource)),
        ];
        if let Some(scope) = scope {
            form.push(("scope", plain(scope)));
        }
        Self { endpoint: endpoint.to_owned(), form }
    }

    /// The JWT bearer grant: `assertion` (a workload token, an ID-JAG)
    /// exchanged for an access token for `resource`.
    pub(crate) fn jwt_bearer(endpoint: &str, assertion: Secret, resource: &str, scope: Option<&str>) -> Self {
        let mut form = vec![
            ("grant_type", plain(JWT_BEARER_GRANT)),
            ("assertion", FormValue::Secret(assertion)),
            ("resource", plain(resource)),
        ];
        if let Some(scope) = scope {
            form.push(("scope", plain(scope)));
        }
        Self { endpoint: endpoint.to_owned(), form }
    }

    /// The token exchange at an enterprise IdP's token endpoint of the
    /// user's ID token for an ID-JAG naming `audience` (the MCP server's
    /// authorization server issuer) and `resource` (the MCP server).
    /// `client_id` is the client's identity at the IdP (a client secret, if
    /// it has one, is added by the caller).
    pub(crate) fn id_jag_exchange(
        idp_token_endpoint: &str,
        id_token: Secret,
        audience: &str,
        resource: &str,
        scope: Option<&str>,
        client_id: Option<&str>,
    ) -> Self {
        let mut form = vec![
            ("grant_type", plain(TOKEN_EXCHANGE_GRANT)),
            ("requested_token_type", plain(ID_JAG_TOKEN_TYPE)),
            ("audience", plain(audience)),
            ("resource", plain(resource)),
            ("subject_token", FormValue::Secret(id_token)),
            ("subject_token_type", plain(ID_TOKEN_TYPE)),
        ];
        if let Some(scope) = scope {
            form.push(("scope", plain(scope)));
        }
        if let Some(client_id) = client_id {
            form.push(("client_id", plain(client_id)));
        }
        Self { endpoint: idp_token_endpoint.to_owned(), form }
    }
}

/// Reads the IdP's answer to [`TokenRequest::id_jag_exchange`]: the ID-JAG.
///
/// A 2xx must name `issued_token_type` ID-JAG and carry it in
/// `access_token` (RFC 8693 §2.2.1); anything else is refused. Errors are
/// [`AuthError::TokenRefused`] with the RFC 6749 §5.2 code, as at any
/// token endpoint; nothing of the body but that code is kept.
pub(crate) fn parse_id_jag_response(
    status: u16,
    body: &[u8],
    idp_token_endpoint: &str,
) -> Result<Secret, AuthError> {
    #[derive(serde::Deserialize)]
    struct Success {
        access_token: String,
        issued_token_type: String,
    }
    #[derive(serde::Deserialize)]
    struct Failure {
        error: String,
    }
    let what = "token exchange response";
    if body.len() > MAX_TOKEN_RESPONSE_BYTES {
        return Err(AuthError::TooLarge { what, limit: MAX_TOKEN_RESPONSE_BYTES });
    }
    if !(200..300).contains(&status) {
        let error = serde_json::from_slice::<Failure>(body)
            .map(|f| super::authorize::error_code(&f.error))
            .unwrap_or_else(|_| format!("http_{status}"));
        return Err(AuthError::TokenRefused { status, error });
    }
    let invalid =
        |reason: String| AuthError::InvalidDocument { what, url: idp_token_endpoint.to_owned(), reason };
    let ok: Success = serde_json::from_slice(body).map_err(|e| invalid(super::error::json_reason(&e)))?;
    if ok.issued_token_type != ID_JAG_TOKEN_TYPE {
        return Err(invalid("issued_token_type is not an ID-JAG".into()));
    }
    if ok.access_token.is_empty() {
        return Err(invalid("empty access_token".into()));
    }
    Ok(Secret::new(ok.access_token))
}

/// `private_key_jwt` client authentication: a client id and the private
/// key registered for it.
///
/// Each token request gets a new assertion: `iss` and `sub` the client id,
/// `aud` the authorization server's issuer identifier (what
/// draft-ietf-oauth-rfc7523bis requires, since a token endpoint URL as
/// audience can be replayed across servers sharing it), `iat`, `exp`
/// [`lifetime`](Self::lifetime) later, and a random `jti`.
#[derive(Debug, Clone)]
pub struct PrivateKeyJwt {
    /// The client id at the authorization server.
    pub client_id: String,
    /// The registered key (its `Debug` is redacted).
    pub key: SigningKey,
    /// How long each assertion is valid.
    pub lifetime: Duration,
}

impl PrivateKeyJwt {
    /// Authentication as `client_id` with `key`, assertions valid for
    /// 60 s.
    pub fn new(client_id: impl Into<String>, key: SigningKey) -> Self {
        Self { client_id: client_id.into(), key, lifetime: DEFAULT_ASSERTION_LIFETIME }
    }

    /// A signed client assertion for the authorization server `issuer`.
    pub fn assertion(&self, issuer: &str, now: SystemTime) -> Result<Secret, JoseError> {
        let iat = unix_seconds(now);
        let claims = serde_json::json!({
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": issuer,
            "iat": iat,
            "exp": iat + self.lifetime.as_secs().max(1),
            "jti": random_id(),
        });
        self.key.sign("JWT", false, &claims)
    }

    /// Adds `client_assertion_type` and a fresh `client_assertion` to
    /// `request`, and `client_id` (RFC 7521 §4.2 allows it; some servers
    /// want it to find the key).
    pub(crate) fn authenticate(
        &self,
        request: &mut TokenRequest,
        issuer: &str,
        now: SystemTime,
    ) -> Result<(), JoseError> {
        let assertion = self.assertion(issuer, now)?;
        request.form.retain(|(name, _)| *name != "client_id");
        request.form.push(("client_id", plain(&self.client_id)));
        request.form.push(("client_assertion_type", plain(JWT_CLIENT_ASSERTION)));
        request.form.push(("client_assertion", FormValue::Secret(assertion)));
        Ok(())
    }
}

/// The largest token read from a [`TokenSource::File`].
pub(crate) const MAX_TOKEN_SOURCE_BYTES: u64 = 64 * 1024;

/// Where a token the client presents, but does not issue, comes from: the
/// workload token of workload identity federation (the platform, not a
/// person, vouches for the client; sent as the JWT bearer grant's
/// `assertion`), or the user's ID token that enterprise-managed
/// authorization exchanges at the IdP.
///
/// Both expire and are replaced by someone else (a Kubernetes projected
/// service account token, a CI system's OIDC token file, a sign-in agent's
/// ID token file), so a [`File`](Self::File) is read again for every use
/// rather than once.
#[derive(Clone)]
#[non_exhaustive]
pub enum TokenSource {
    /// A token given once (a short-lived process, a test).
    Static(Secret),
    /// A file holding the current token, read (at most
    /// 64 KiB, surrounding whitespace trimmed) for
    /// each use.
    File(std::path::PathBuf),
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Static(_) => f.write_str("TokenSource::Static([redacted])"),
            Self::File(path) => f.debug_tuple("TokenSource::File").field(path).finish(),
        }
    }
}

impl TokenSource {
    /// The current token.
    ///
    /// An unreadable, empty or oversized file is an error naming the path
    /// and the I/O error kind, never its content.
    pub async fn read(&self) -> Result<Secret, AuthError> {
        let path = match self {
            Self::Static(token) => return Ok(token.clone()),
            Self::File(path) => path,
        };
        let failed = |reason: String| AuthError::TokenSource { path: path.display().to_string(), reason };
        let file = tokio::fs::File::open(path).await.map_err(|e| failed(e.kind().to_string()))?;
        let mut bytes = Vec::new();
        use tokio::io::AsyncReadExt as _;
        file.take(MAX_TOKEN_SOURCE_BYTES + 1)
            .read_to_end(&mut bytes)
            .await
            .map_err(|e| failed(e.kind().to_string()))?;
        if bytes.len() as u64 > MAX_TOKEN_SOURCE_BYTES {
            return Err(failed(format!("larger than {MAX_TOKEN_SOURCE_BYTES} bytes")));
        }
        let text = String::from_utf8(bytes).map_err(|_| failed("not UTF-8".into()))?;
        let token = text.trim();
        if token.is_empty() {
            return Err(failed("empty".into()));
        }
        Ok(Secret::new(token))
    }
}

/// Enterprise-managed authorization: the enterprise identity provider
/// that turns the user's single sign-on identity into grants for MCP
/// servers (an ID-JAG per authorization server and resource), so the user
/// sees no consent screen per server and the enterprise decides which
/// servers its people may use.
#[derive(Clone)]
#[non_exhaustive]
pub struct EnterpriseIdp {
    /// The IdP's token endpoint, where the token exchange is sent; `None`:
    /// the one the metadata of [`issuer`](Self::issuer) names.
    pub token_endpoint: Option<String>,
    /// The IdP's issuer. When no token endpoint is given, its metadata
    /// (RFC 8414, then OpenID Connect discovery, the `issuer` checked) is
    /// fetched before each exchange and names the token endpoint.
    pub issuer: Option<String>,
    /// This client's id at the IdP (sent in the form; with a secret, by
    /// HTTP Basic instead).
    pub client_id: Option<String>,
    /// This client's secret at the IdP, for a confidential client.
    pub client_secret: Option<Secret>,
    /// The user's OpenID Connect ID token from the enterprise sign-in.
    pub id_token: TokenSource,
}

impl EnterpriseIdp {
    /// An IdP at `token_endpoint` exchanging `id_token`.
    pub fn new(token_endpoint: impl Into<String>, id_token: TokenSource) -> Self {
        Self {
            token_endpoint: Some(token_endpoint.into()),
            issuer: None,
            client_id: None,
            client_secret: None,
            id_token,
        }
    }

    /// The IdP known by its `issuer` (what an enterprise's administrators
    /// usually know, `https://login.example.com`), exchanging `id_token`:
    /// its token endpoint is discovered from its metadata.
    ///
    /// ```
    /// use mcp_stack::auth::{EnterpriseIdp, TokenSource};
    /// let idp = EnterpriseIdp::from_issuer("https://login.example.com", TokenSource::File("/run/id-token".into()));
    /// assert_eq!(idp.token_endpoint, None);
    /// ```
    pub fn from_issuer(issuer: impl Into<String>, id_token: TokenSource) -> Self {
        Self {
            token_endpoint: None,
            issuer: Some(issuer.into()),
            client_id: None,
            client_secret: None,
            id_token,
        }
    }

    /// This client's id at the IdP.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// This client's secret at the IdP.
    pub fn client_secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }
}

impl std::fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("id_token", &self.id_token)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::time::UNIX_EPOCH;

    use super::super::jose::tests::{verify, EC_PEM};
    use super::*;

    const SENTINEL: &str = "SENTINEL-5a1e";

    fn decoded(request: &TokenRequest) -> HashMap<String, String> {
        url::form_urlencoded::parse(request.encode().as_bytes()).into_owned().collect()
    }

    #[tokio::test]
    async fn token_sources_read_a_file_each_time_and_never_show_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, format!("  {SENTINEL}-1\n")).unwrap();
        let token = TokenSource::File(path.clone());
        assert_eq!(token.read().await.unwrap().expose(), format!("{SENTINEL}-1"));
        std::fs::write(&path, format!("{SENTINEL}-2")).unwrap();
        assert_eq!(token.read().await.unwrap().expose(), format!("{SENTINEL}-2"));
        std::fs::write(&path, " \n").unwrap();
        let empty = token.read().await.unwrap_err();
        std::fs::write(&path, vec![b'a'; MAX_TOKEN_SOURCE_BYTES as usize + 1]).unwrap();
        let big = token.read().await.unwrap_err();
        let missing = TokenSource::File(dir.path().join("absent")).read().await.unwrap_err();
        for e in [&empty, &big, &missing] {
            assert!(matches!(e, AuthError::TokenSource { .. }), "{e:?}");
        }
        let fixed = TokenSource::Static(Secret::new(SENTINEL));
        assert_eq!(fixed.read().await.unwrap().expose(), SENTINEL);
        let idp = EnterpriseIdp::new("https://idp/token", TokenSource::Static(Secret::new(SENTINEL)))
            .client_id("c")
            .client_secret(Secret::new(SENTINEL));
        let shown = format!("{fixed:?} {token:?} {idp:?} {idp:#?} {empty} {missing:?}");
        assert!(!shown.contains(SENTINEL), "{shown}");
        assert!(shown.contains("https://idp/token"));
    }

    #[test]
    fn client_credentials_form() {
        let r =
            TokenRequest::client_credentials("https://as/token", "client-1", "https://mcp/mcp", Some("a b"));
        let form = decoded(&r);
        assert_eq!(form["grant_type"], "client_credentials");
        assert_eq!(form["client_id"], "client-1");
        assert_eq!(form["resource"], "https://mcp/mcp");
        assert_eq!(form["scope"], "a b");
        let bare =
            decoded(&TokenRequest::client_credentials("https://as/token", "c", "https://mcp/mcp", None));
        assert!(!bare.contains_key("scope"));
    }

    #[test]
    fn jwt_bearer_form_hides_the_assertion() {
        let r = TokenRequest::jwt_bearer("https://as/token", Secret::new(SENTINEL), "https://mcp/mcp", None);
        let form = decoded(&r);
        assert_eq!(form["grant_type"], JWT_BEARER_GRANT);
        assert_eq!(form["assertion"], SENTINEL);
        assert_eq!(form["resource"], "https://mcp/mcp");
        assert!(!form.contains_key("scope"));
        assert!(!format!("{r:?}").contains(SENTINEL));
    }

    #[test]
    fn id_jag_exchange_form() {
        let r = TokenRequest::id_jag_exchange(
            "https://idp/token",
            Secret::new(SENTINEL),
            "https://as.example.com",
            "https://mcp/mcp",
            Some("read"),
            Some("idp-client"),
        );
        assert_eq!(r.endpoint, "https://idp/token");
        let form = decoded(&r);
        assert_eq!(form["grant_type"], TOKEN_EXCHANGE_GRANT);
        assert_eq!(form["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
        assert_eq!(form["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
        assert_eq!(form["subject_token"], SENTINEL);
        assert_eq!(form["audience"], "https://as.example.com");
        assert_eq!(form["resource"], "https://mcp/mcp");
        assert_eq!(form["scope"], "read");
        assert_eq!(form["client_id"], "idp-client");
        assert!(!format!("{r:?}").contains(SENTINEL));
    }

    #[test]
    fn id_jag_responses() {
        let ok = format!(
            r#"{{"access_token":"{SENTINEL}","issued_token_type":"{ID_JAG_TOKEN_TYPE}","token_type":"N_A"}}"#
        );
        assert_eq!(
            parse_id_jag_response(200, ok.as_bytes(), "https://idp/token").unwrap().expose(),
            SENTINEL
        );
        let wrong = format!(
            r#"{{"access_token":"{SENTINEL}","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}}"#
        );
        let refused = [
            parse_id_jag_response(200, wrong.as_bytes(), "https://idp/token").unwrap_err(),
            parse_id_jag_response(
                400,
                format!(r#"{{"error":"invalid_grant","error_description":"{SENTINEL}"}}"#).as_bytes(),
                "u",
            )
            .unwrap_err(),
            parse_id_jag_response(200, format!(r#"{{"access_token":["{SENTINEL}"]}}"#).as_bytes(), "u")
                .unwrap_err(),
        ];
        assert!(
            matches!(&refused[1], AuthError::TokenRefused { status: 400, error } if error == "invalid_grant")
        );
        for e in refused {
            assert!(!format!("{e} {e:?}").contains(SENTINEL), "{e:?}");
        }
    }

    #[test]
    fn private_key_jwt_assertion_claims_verify() {
        let key = SigningKey::from_pem(&Secret::new(EC_PEM), None).unwrap();
        let auth = PrivateKeyJwt::new("client-1", key.clone());
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut r = TokenRequest::client_credentials(
            "https://as.example.com/token",
            "stale",
            "https://mcp/mcp",
            None,
        );
        auth.authenticate(&mut r, "https://as.example.com", now).unwrap();
        let form = decoded(&r);
        assert_eq!(form["client_assertion_type"], JWT_CLIENT_ASSERTION);
        assert_eq!(form["client_id"], "client-1");
        assert_eq!(r.form.iter().filter(|(n, _)| *n == "client_id").count(), 1);
        let claims = verify(&form["client_assertion"], &key, Some("https://as.example.com"));
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["iat"], 1_700_000_000);
        assert_eq!(claims["exp"], 1_700_000_060);
        assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
        let again = auth.assertion("https://as.example.com", now).unwrap();
        assert_ne!(verify(again.expose(), &key, None)["jti"], claims["jti"]);
        assert!(!format!("{r:?} {auth:?}").contains(&form["client_assertion"]));
    }
}
