//! Signing keys and signed JWTs (RFC 7515, RFC 7519) for the flows that
//! need them: `private_key_jwt` client assertions (RFC 7523) and DPoP
//! proofs (RFC 9449).
//!
//! The JWS work is `jsonwebtoken`'s; this module decides which keys are
//! accepted, keeps them out of `Debug`, and builds the headers each use
//! needs. A [`SigningKey`] comes from a PKCS#8 (or, for RSA, PKCS#1) PEM, or
//! is generated (a fresh P-256 key, what DPoP needs). Only asymmetric
//! algorithms exist here: an HMAC "key" would be a shared secret, which
//! neither use allows (RFC 9449 §4.2, RFC 7523 §3 with a private key).

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::{SecureRandom as _, SystemRandom};

use super::Secret;

/// A JWS algorithm for a private key.
///
/// Which one a key uses is the caller's (the authorization server lists
/// what it accepts in `token_endpoint_auth_signing_alg_values_supported`
/// and `dpop_signing_alg_values_supported`); when a PEM is loaded without
/// one, [`SigningKey::from_pem`] picks `ES256` for a P-256 key, `ES384` for
/// P-384 and `RS256` for RSA, the usual defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    Es256,
    /// ECDSA with P-384 and SHA-384.
    Es384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    Rs384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    Rs512,
    /// RSASSA-PSS with SHA-256.
    Ps256,
    /// RSASSA-PSS with SHA-384.
    Ps384,
    /// RSASSA-PSS with SHA-512.
    Ps512,
}

impl SigningAlgorithm {
    /// The JWS `alg` name (RFC 7518 §3.1).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::Es384 => "ES384",
            Self::Rs256 => "RS256",
            Self::Rs384 => "RS384",
            Self::Rs512 => "RS512",
            Self::Ps256 => "PS256",
            Self::Ps384 => "PS384",
            Self::Ps512 => "PS512",
        }
    }

    fn jws(self) -> Algorithm {
        match self {
            Self::Es256 => Algorithm::ES256,
            Self::Es384 => Algorithm::ES384,
            Self::Rs256 => Algorithm::RS256,
            Self::Rs384 => Algorithm::RS384,
            Self::Rs512 => Algorithm::RS512,
            Self::Ps256 => Algorithm::PS256,
            Self::Ps384 => Algorithm::PS384,
            Self::Ps512 => Algorithm::PS512,
        }
    }

    fn is_ec(self) -> bool {
        matches!(self, Self::Es256 | Self::Es384)
    }
}

impl fmt::Display for SigningAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SigningAlgorithm {
    type Err = JoseError;

    /// Parses a JWS `alg` name; `none` and the HMAC names are refused.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "ES256" => Self::Es256,
            "ES384" => Self::Es384,
            "RS256" => Self::Rs256,
            "RS384" => Self::Rs384,
            "RS512" => Self::Rs512,
            "PS256" => Self::Ps256,
            "PS384" => Self::Ps384,
            "PS512" => Self::Ps512,
            _ => return Err(JoseError("unsupported signing algorithm (asymmetric JWS algorithms only)")),
        })
    }
}

/// Why a key could not be loaded or a JWT signed.
///
/// It carries a fixed reason only: never key material, never a claim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JoseError(&'static str);

impl JoseError {
    pub(crate) fn new(reason: &'static str) -> Self {
        Self(reason)
    }
}

/// A private key and the algorithm it signs with.
///
/// Its `Debug` shows the algorithm only; the key leaves this type only as
/// a signature.
#[derive(Clone)]
pub struct SigningKey {
    algorithm: SigningAlgorithm,
    key: EncodingKey,
    public: Jwk,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm.as_str())
            .field("key", &format_args!("[redacted]"))
            .finish()
    }
}

impl SigningKey {
    /// Loads a private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) for EC and
    /// RSA keys, or PKCS#1 (`BEGIN RSA PRIVATE KEY`) for RSA.
    ///
    /// With `algorithm` `None` the key's type decides (see
    /// [`SigningAlgorithm`]); with one, the key must fit it (an EC key for
    /// `ES256` must be on P-256).
    pub fn from_pem(pem: &Secret, algorithm: Option<SigningAlgorithm>) -> Result<Self, JoseError> {
        let pem = pem.expose().as_bytes();
        let bad = JoseError("not a PKCS#8 or PKCS#1 private key PEM for this algorithm");
        let candidates = match algorithm {
            Some(alg) => vec![alg],
            None => vec![SigningAlgorithm::Es256, SigningAlgorithm::Es384, SigningAlgorithm::Rs256],
        };
        for alg in candidates {
            let key =
                if alg.is_ec() { EncodingKey::from_ec_pem(pem) } else { EncodingKey::from_rsa_pem(pem) };
            let Ok(key) = key else { continue };
            if let Ok(signing) = Self::new(alg, key) {
                return Ok(signing);
            }
        }
        Err(bad)
    }

    /// A fresh P-256 key (`ES256`) from the operating system's random
    /// source: the key a DPoP client holds for as long as its tokens live.
    pub fn generate_es256() -> Result<Self, JoseError> {
        use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
        // ring's PKCS#8 v1 document, which jsonwebtoken's RustCrypto backend
        // (p256) reads as it reads a PEM key's.
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| JoseError("generating a P-256 key failed"))?;
        Self::new(SigningAlgorithm::Es256, EncodingKey::from_ec_der(der.as_ref()))
    }

    /// Checks that `key` works for `algorithm` (its public JWK can be
    /// derived, which parses it) and keeps that JWK.
    fn new(algorithm: SigningAlgorithm, key: EncodingKey) -> Result<Self, JoseError> {
        // jsonwebtoken picks its backend from its features, and panics at the
        // first signature when a program turns on both of them (another
        // crate asking for `aws_lc_rs`): name ours, unless the program
        // installed one first (then the error is that, and its is used).
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let mut public = Jwk::from_encoding_key(&key, algorithm.jws())
            .map_err(|_| JoseError("the key does not fit its algorithm"))?;
        // RFC 7517 §4.4 `alg` is optional; the members RFC 7638 hashes are what
        // identify the key, and servers read the algorithm from the JWS header.
        public.common.key_algorithm = None;
        // Sign once: a key that parses but cannot sign (wrong curve for the
        // algorithm) is refused here, not at the first token request.
        jsonwebtoken::crypto::sign(b"probe", &key, algorithm.jws())
            .map_err(|_| JoseError("the key does not fit its algorithm"))?;
        Ok(Self { algorithm, key, public })
    }

    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
    }

    /// The public key as a JWK (RFC 7517), with no private member.
    pub fn public_jwk(&self) -> serde_json::Value {
        serde_json::to_value(&self.public).unwrap_or(serde_json::Value::Null)
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (base64url), the
    /// value a DPoP-bound token carries as `cnf.jkt`.
    pub fn thumbprint(&self) -> String {
        self.public.thumbprint(ThumbprintHash::SHA256)
    }

    /// Signs `claims` as a compact JWS with header `typ` and, when
    /// `embed_jwk`, the public key as the `jwk` header (DPoP).
    pub(crate) fn sign(
        &self,
        typ: &str,
        embed_jwk: bool,
        claims: &serde_json::Value,
    ) -> Result<Secret, JoseError> {
        let mut header = Header::new(self.algorithm.jws());
        header.typ = Some(typ.to_owned());
        if embed_jwk {
            header.jwk = Some(self.public.clone());
        }
        jsonwebtoken::encode(&header, claims, &self.key)
            .map(Secret::new)
            .map_err(|_| JoseError("signing the JWT failed"))
    }
}

/// A random identifier (128 bits, base64url) for `jti` claims.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // The OS random source does not fail on the platforms ring supports;
    // if it ever did, a time-derived value still keeps jti values distinct.
    if SystemRandom::new().fill(&mut bytes).is_err() {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        bytes = nanos.to_le_bytes();
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Seconds since the Unix epoch (0 before it).
pub(crate) fn unix_seconds(now: SystemTime) -> u64 {
    now.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};

    use super::*;

    /// The P-256 key of RFC 7515 appendix A.3 in PKCS#8 PEM, as
    /// `jose.exportPKCS8` writes keys.
    pub(crate) const EC_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjpsQnnGQmL+YBIff
H1136cspYG6+0iY7X1fCE9+E9LKhRANCAAR/zc4ncPbEXUGDy+5v20t7WAczNXvp
7xO6z248e9FURcfxRM0bvZt+hyzf7bnuufSzaV1uqQskrYpGIyiFiOWt
-----END PRIVATE KEY-----
";

    /// The RFC 7638 thumbprint of [`EC_PEM`]'s public key, computed apart
    /// (SHA-256 of `{"crv":"P-256","kty":"EC","x":..,"y":..}`).
    pub(crate) const EC_THUMBPRINT: &str = "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U";

    pub(crate) fn verify(jwt: &str, key: &SigningKey, aud: Option<&str>) -> serde_json::Value {
        let jwk: Jwk = serde_json::from_value(key.public_jwk()).unwrap();
        let mut validation = Validation::new(key.algorithm().jws());
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        match aud {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        decode::<serde_json::Value>(jwt, &DecodingKey::from_jwk(&jwk).unwrap(), &validation).unwrap().claims
    }

    #[test]
    fn loads_an_ec_pem_and_signs_what_its_public_key_verifies() {
        let key = SigningKey::from_pem(&Secret::new(EC_PEM), None).unwrap();
        assert_eq!(key.algorithm(), SigningAlgorithm::Es256);
        let jwk = key.public_jwk();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(jwk["x"], "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU");
        assert_eq!(jwk["y"], "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0");
        assert!(jwk.get("d").is_none(), "{jwk}");
        assert_eq!(key.thumbprint(), EC_THUMBPRINT);
        let jwt = key.sign("JWT", false, &serde_json::json!({"sub": "me"})).unwrap();
        assert_eq!(verify(jwt.expose(), &key, None)["sub"], "me");
        let header = decode_header(jwt.expose()).unwrap();
        assert_eq!((header.typ.as_deref(), header.alg, header.jwk), (Some("JWT"), Algorithm::ES256, None));
    }

    #[test]
    fn an_rsa_pem_signs_rs256() {
        let key = SigningKey::from_pem(&Secret::new(RSA_PEM), None).unwrap();
        assert_eq!(key.algorithm(), SigningAlgorithm::Rs256);
        assert_eq!(key.public_jwk()["kty"], "RSA");
        let jwt = key.sign("JWT", false, &serde_json::json!({"aud": "x"})).unwrap();
        assert_eq!(verify(jwt.expose(), &key, Some("x"))["aud"], "x");
        let ps = SigningKey::from_pem(&Secret::new(RSA_PEM), Some(SigningAlgorithm::Ps256)).unwrap();
        let jwt = ps.sign("JWT", false, &serde_json::json!({})).unwrap();
        verify(jwt.expose(), &ps, None);
    }

    #[test]
    fn a_key_that_does_not_fit_is_refused_without_quoting_it() {
        let pem = Secret::new(EC_PEM);
        let err = SigningKey::from_pem(&pem, Some(SigningAlgorithm::Rs256)).unwrap_err();
        let err384 = SigningKey::from_pem(&pem, Some(SigningAlgorithm::Es384)).unwrap_err();
        let p384 = SigningKey::from_pem(&Secret::new(P384_PEM), None).unwrap();
        assert_eq!(p384.algorithm(), SigningAlgorithm::Es384);
        assert_eq!(p384.public_jwk()["crv"], "P-384");
        assert!(SigningKey::from_pem(&Secret::new(P384_PEM), Some(SigningAlgorithm::Es256)).is_err());
        let garbage = SigningKey::from_pem(
            &Secret::new("-----BEGIN PRIVATE KEY-----\nSENTINEL\n-----END PRIVATE KEY-----\n"),
            None,
        )
        .unwrap_err();
        for e in [err, err384, garbage] {
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains("MIGHAgEA") && !shown.contains("SENTINEL"), "{shown}");
        }
        assert!("HS256".parse::<SigningAlgorithm>().is_err());
        assert!("none".parse::<SigningAlgorithm>().is_err());
        assert_eq!("PS512".parse::<SigningAlgorithm>().unwrap().to_string(), "PS512");
    }

    #[test]
    fn generated_keys_differ_and_never_print() {
        let a = SigningKey::generate_es256().unwrap();
        let b = SigningKey::generate_es256().unwrap();
        assert_ne!(a.thumbprint(), b.thumbprint());
        let jwt = a.sign("dpop+jwt", true, &serde_json::json!({"jti": random_id()})).unwrap();
        verify(jwt.expose(), &a, None);
        let header = decode_header(jwt.expose()).unwrap();
        assert_eq!(header.jwk.unwrap().thumbprint(ThumbprintHash::SHA256), a.thumbprint());
        let shown = format!("{a:?} {a:#?}");
        assert!(shown.contains("ES256") && shown.contains("[redacted]"), "{shown}");
        let pem_key = SigningKey::from_pem(&Secret::new(EC_PEM), None).unwrap();
        assert!(!format!("{pem_key:?}").contains("MIGHAgEA"));
    }

    #[test]
    fn random_ids_are_distinct_and_url_safe() {
        let ids: std::collections::HashSet<String> = (0..100).map(|_| random_id()).collect();
        assert_eq!(ids.len(), 100);
        assert!(ids
            .iter()
            .all(|id| id.len() == 22
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')));
    }

    /// A 2048-bit RSA key in PKCS#8 PEM (generated for these tests only).
    const RSA_PEM: &str = include_str!("testdata/rsa-2048.pem");
    /// A P-384 key in PKCS#8 PEM (generated for these tests only).
    const P384_PEM: &str = include_str!("testdata/ec-p384.pem");
}
