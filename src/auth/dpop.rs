//! DPoP: sender-constrained tokens (RFC 9449).
//!
//! A DPoP client holds one key pair ([`Dpop`]) and sends, with every token
//! request and every request that carries its access token, a fresh proof:
//! a JWT of type `dpop+jwt` signed by that key, with the public key in its
//! `jwk` header and claims `jti` (unique), `htm` (the method), `htu` (the
//! URL without query and fragment), `iat`, and on resource requests `ath`
//! (the token's SHA-256, base64url). The authorization server binds the
//! token to the key (`token_type` `DPoP`); the resource server then wants
//! `Authorization: DPoP <token>` with such a proof.
//!
//! Servers may demand a nonce of their own (§8 for the token endpoint, §9
//! for the resource): they answer `400` with `{"error":"use_dpop_nonce"}`
//! (token endpoint) or `401` with `WWW-Authenticate: DPoP
//! error="use_dpop_nonce"` (resource), and a `DPoP-Nonce` header. [`Dpop`]
//! keeps the last nonce per origin (from every response, challenge or not),
//! puts it in the next proof for that origin, and [`is_nonce_challenge`]
//! tells the caller to send the request again, once, with a new proof.
//! Decided where the RFC is silent: one retry only (a server that keeps
//! challenging is failing, not negotiating), and nonces are kept for at
//! most [`MAX_ORIGINS`] origins, the oldest forgotten first.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::SystemTime;

use base64::Engine as _;
use sha2::Digest as _;
use url::Url;

use super::jose::{random_id, unix_seconds, JoseError, SigningKey};
use super::Secret;

/// The `DPoP` request header (RFC 9449 §4.1).
pub(crate) const DPOP_HEADER: &str = "dpop";
/// The `DPoP-Nonce` response header (RFC 9449 §8).
pub(crate) const DPOP_NONCE_HEADER: &str = "dpop-nonce";
/// The longest nonce kept; a longer one is ignored.
pub(crate) const MAX_NONCE_BYTES: usize = 1024;
/// How many origins' nonces are kept.
pub(crate) const MAX_ORIGINS: usize = 32;

/// A DPoP key and the nonces servers handed out.
///
/// Shared by the token requests and the resource requests of one
/// connection (the token is bound to this key, so both must use it). Its
/// `Debug` shows the algorithm and thumbprint, never the key.
pub struct Dpop {
    key: SigningKey,
    nonces: Mutex<VecDeque<(String, String)>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("algorithm", &self.key.algorithm().as_str())
            .field("thumbprint", &self.key.thumbprint())
            .finish_non_exhaustive()
    }
}

impl Dpop {
    /// DPoP with `key` (an asymmetric key; `ES256` is what servers most
    /// often accept).
    pub fn new(key: SigningKey) -> Self {
        Self { key, nonces: Mutex::new(VecDeque::new()) }
    }

    /// DPoP with a freshly generated P-256 key.
    pub fn generate() -> Result<Self, JoseError> {
        SigningKey::generate_es256().map(Self::new)
    }

    /// The key proofs are signed with.
    pub fn key(&self) -> &SigningKey {
        &self.key
    }

    /// A proof for `method` on `url`, bound to `access_token` when one is
    /// sent with the request, carrying the nonce last seen from `url`'s
    /// origin.
    pub fn proof(
        &self,
        method: &http::Method,
        url: &Url,
        access_token: Option<&Secret>,
        now: SystemTime,
    ) -> Result<Secret, JoseError> {
        let nonce = self.nonce_for(url);
        let mut claims = serde_json::json!({
            "jti": random_id(),
            "htm": method.as_str(),
            "htu": htu(url),
            "iat": unix_seconds(now),
        });
        if let Some(token) = access_token {
            claims["ath"] = ath(token).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        self.key.sign("dpop+jwt", true, &claims)
    }

    /// Adds the `DPoP` proof header to a request for `method` on `url` and,
    /// with an access token, `Authorization: DPoP <token>`.
    pub fn decorate(
        &self,
        headers: &mut http::HeaderMap,
        method: &http::Method,
        url: &Url,
        access_token: Option<&Secret>,
        now: SystemTime,
    ) -> Result<(), JoseError> {
        let bad = || JoseError::new("a DPoP header value is not valid in HTTP");
        let proof = self.proof(method, url, access_token, now)?;
        let mut value = http::HeaderValue::from_str(proof.expose()).map_err(|_| bad())?;
        value.set_sensitive(true);
        headers.insert(DPOP_HEADER, value);
        if let Some(token) = access_token {
            let mut value =
                http::HeaderValue::from_str(&format!("DPoP {}", token.expose())).map_err(|_| bad())?;
            value.set_sensitive(true);
            headers.insert(http::header::AUTHORIZATION, value);
        }
        Ok(())
    }

    /// Records the `DPoP-Nonce` of a response from `url`, if it has a valid
    /// one (RFC 9449 §8: `1*NQCHAR`). Returns whether it did.
    pub fn observe(&self, url: &Url, headers: &http::HeaderMap) -> bool {
        let Some(nonce) = headers.get(DPOP_NONCE_HEADER).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let nqchar = |b: u8| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b);
        if nonce.is_empty() || nonce.len() > MAX_NONCE_BYTES || !nonce.bytes().all(nqchar) {
            return false;
        }
        let origin = url.origin().ascii_serialization();
        let mut nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces.retain(|(o, _)| *o != origin);
        if nonces.len() >= MAX_ORIGINS {
            nonces.pop_front();
        }
        nonces.push_back((origin, nonce.to_owned()));
        true
    }

    /// The nonce last seen from `url`'s origin.
    pub fn nonce_for(&self, url: &Url) -> Option<String> {
        let origin = url.origin().ascii_serialization();
        let nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces.iter().find(|(o, _)| *o == origin).map(|(_, n)| n.clone())
    }
}

/// Where a response came from, for [`is_nonce_challenge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DpopEndpoint {
    /// A token endpoint (RFC 9449 §8): `400`, `error` `use_dpop_nonce` in
    /// the JSON body.
    Token,
    /// A protected resource (RFC 9449 §9): `401`, a `DPoP` challenge with
    /// `error="use_dpop_nonce"`.
    Resource,
}

/// Whether a response asks for the request again with a server nonce.
///
/// Either way the response must carry a `DPoP-Nonce` header too (without
/// one a retry would send the same proof again); record it with
/// [`Dpop::observe`] before building the retry's proof.
pub(crate) fn is_nonce_challenge(
    endpoint: DpopEndpoint,
    status: u16,
    headers: &http::HeaderMap,
    body: &[u8],
) -> bool {
    if !headers.contains_key(DPOP_NONCE_HEADER) {
        return false;
    }
    match endpoint {
        DpopEndpoint::Token => {
            #[derive(serde::Deserialize)]
            struct Error {
                error: String,
            }
            status == 400 && serde_json::from_slice::<Error>(body).is_ok_and(|e| e.error == "use_dpop_nonce")
        }
        DpopEndpoint::Resource => {
            status == 401
                && super::challenge::parse_headers(headers.get_all(http::header::WWW_AUTHENTICATE)).is_ok_and(
                    |cs| cs.iter().any(|c| c.is_scheme("DPoP") && c.param("error") == Some("use_dpop_nonce")),
                )
        }
    }
}

/// The `htu` of a request to `url`: the URL without query and fragment
/// (RFC 9449 §4.2).
pub(super) fn htu(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.into()
}

/// The `ath` of an access token: base64url(SHA-256(token)) (RFC 9449 §4.2).
pub(super) fn ath(access_token: &Secret) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(access_token.expose().as_bytes()))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use jsonwebtoken::decode_header;
    use jsonwebtoken::jwk::ThumbprintHash;

    use super::super::jose::tests::{verify, EC_PEM, EC_THUMBPRINT};
    use super::*;

    fn dpop() -> Dpop {
        Dpop::new(SigningKey::from_pem(&Secret::new(EC_PEM), None).unwrap())
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// RFC 9449 §7.1's example: the token `Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU`
    /// has `ath` `fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo`.
    #[test]
    fn ath_matches_the_rfc_example() {
        assert_eq!(
            ath(&Secret::new("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")),
            "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
        );
    }

    #[test]
    fn htu_drops_query_and_fragment() {
        assert_eq!(htu(&url("https://Server.Example.com:443/mcp?x=1#f")), "https://server.example.com/mcp");
        assert_eq!(htu(&url("http://127.0.0.1:8080/token")), "http://127.0.0.1:8080/token");
    }

    #[test]
    fn a_proof_has_every_claim_and_verifies_with_its_embedded_key() {
        let d = dpop();
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let token = Secret::new("token-sentinel");
        let proof =
            d.proof(&http::Method::POST, &url("https://mcp.example.com/mcp?q=1"), Some(&token), now).unwrap();
        let header = decode_header(proof.expose()).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.expect("jwk header");
        assert_eq!(jwk.thumbprint(ThumbprintHash::SHA256), EC_THUMBPRINT);
        let raw_header: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(proof.expose().split('.').next().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert!(raw_header["jwk"].get("d").is_none(), "{raw_header}");
        let claims = verify(proof.expose(), d.key(), None);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(claims["iat"], 1_700_000_000);
        assert_eq!(claims["ath"], ath(&token));
        assert!(claims.get("nonce").is_none());
        assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
        // Token requests carry no ath; every proof has its own jti.
        let other = d.proof(&http::Method::POST, &url("https://as.example.com/token"), None, now).unwrap();
        let other = verify(other.expose(), d.key(), None);
        assert!(other.get("ath").is_none());
        assert_ne!(other["jti"], claims["jti"]);
    }

    #[test]
    fn nonces_are_kept_per_origin_and_used_in_the_next_proof() {
        let d = dpop();
        let as_url = url("https://as.example.com/token");
        let mut headers = http::HeaderMap::new();
        headers.insert(DPOP_NONCE_HEADER, "eyJ7S_zG.eyJH0-Z.HX4w-7v".parse().unwrap());
        assert!(d.observe(&as_url, &headers));
        let proof =
            d.proof(&http::Method::POST, &url("https://as.example.com/other"), None, UNIX_EPOCH).unwrap();
        assert_eq!(verify(proof.expose(), d.key(), None)["nonce"], "eyJ7S_zG.eyJH0-Z.HX4w-7v");
        let rs = d.proof(&http::Method::POST, &url("https://mcp.example.com/mcp"), None, UNIX_EPOCH).unwrap();
        assert!(verify(rs.expose(), d.key(), None).get("nonce").is_none());
        // A new nonce replaces the old one; bad ones are ignored.
        headers.insert(DPOP_NONCE_HEADER, "second".parse().unwrap());
        assert!(d.observe(&as_url, &headers));
        for bad in ["", "has space", "quote\"d", &"x".repeat(MAX_NONCE_BYTES + 1)] {
            headers.insert(DPOP_NONCE_HEADER, bad.parse().unwrap());
            assert!(!d.observe(&as_url, &headers), "{bad:?}");
        }
        assert_eq!(d.nonce_for(&as_url).as_deref(), Some("second"));
        assert!(!d.observe(&as_url, &http::HeaderMap::new()));
    }

    #[test]
    fn the_nonce_cache_is_bounded() {
        let d = dpop();
        let mut headers = http::HeaderMap::new();
        headers.insert(DPOP_NONCE_HEADER, "n".parse().unwrap());
        for i in 0..(MAX_ORIGINS + 10) {
            d.observe(&url(&format!("https://h{i}.example.com/")), &headers);
        }
        assert_eq!(d.nonces.lock().unwrap().len(), MAX_ORIGINS);
        assert!(d.nonce_for(&url("https://h0.example.com/")).is_none());
        assert!(d.nonce_for(&url(&format!("https://h{}.example.com/", MAX_ORIGINS + 9))).is_some());
    }

    #[test]
    fn recognises_nonce_challenges() {
        let mut headers = http::HeaderMap::new();
        let token_body = br#"{"error":"use_dpop_nonce","error_description":"x"}"#;
        // Without a DPoP-Nonce header there is nothing to retry with.
        assert!(!is_nonce_challenge(DpopEndpoint::Token, 400, &headers, token_body));
        headers.insert(DPOP_NONCE_HEADER, "n".parse().unwrap());
        assert!(is_nonce_challenge(DpopEndpoint::Token, 400, &headers, token_body));
        assert!(!is_nonce_challenge(DpopEndpoint::Token, 400, &headers, br#"{"error":"invalid_grant"}"#));
        assert!(!is_nonce_challenge(DpopEndpoint::Token, 401, &headers, token_body));
        assert!(!is_nonce_challenge(DpopEndpoint::Resource, 401, &headers, b""));
        headers.insert(
            http::header::WWW_AUTHENTICATE,
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://mcp/prm""#.parse().unwrap(),
        );
        assert!(is_nonce_challenge(DpopEndpoint::Resource, 401, &headers, b""));
        assert!(!is_nonce_challenge(DpopEndpoint::Resource, 403, &headers, b""));
        headers.insert(http::header::WWW_AUTHENTICATE, r#"Bearer error="use_dpop_nonce""#.parse().unwrap());
        assert!(!is_nonce_challenge(DpopEndpoint::Resource, 401, &headers, b""));
        headers.insert(http::header::WWW_AUTHENTICATE, r#"DPoP error="invalid_token""#.parse().unwrap());
        assert!(!is_nonce_challenge(DpopEndpoint::Resource, 401, &headers, b""));
    }

    #[test]
    fn decorate_sets_the_proof_and_the_dpop_scheme_and_hides_both() {
        let d = dpop();
        let mut headers = http::HeaderMap::new();
        let token = Secret::new("at-sentinel");
        d.decorate(
            &mut headers,
            &http::Method::GET,
            &url("https://mcp.example.com/mcp"),
            Some(&token),
            SystemTime::now(),
        )
        .unwrap();
        assert_eq!(headers[http::header::AUTHORIZATION], "DPoP at-sentinel");
        assert!(headers[http::header::AUTHORIZATION].is_sensitive() && headers[DPOP_HEADER].is_sensitive());
        let proof = headers[DPOP_HEADER].to_str().unwrap();
        assert_eq!(verify(proof, d.key(), None)["htm"], "GET");
        let shown = format!("{headers:?} {d:?}");
        assert!(!shown.contains("sentinel") && !shown.contains(proof), "{shown}");
        let mut bare = http::HeaderMap::new();
        d.decorate(&mut bare, &http::Method::POST, &url("https://as/token"), None, SystemTime::now())
            .unwrap();
        assert!(bare.contains_key(DPOP_HEADER) && !bare.contains_key(http::header::AUTHORIZATION));
    }
}
