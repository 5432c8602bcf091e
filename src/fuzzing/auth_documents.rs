//! What an MCP server and its authorization server send the OAuth client:
//! `WWW-Authenticate` challenges, Protected Resource Metadata,
//! authorization server metadata, token responses, the redirect's query,
//! `DPoP-Nonce` headers and nonce challenges, and an enterprise IdP's
//! token exchange answer (the ID-JAG).
//! Whatever the bytes, parsing ends with a value or a classified error, never
//! a panic; a token or code the input carries never shows in `Debug` or in
//! an error; a parsed challenge's scope list is never longer than its input.

use std::time::{Duration, SystemTime};

use crate::auth::authorize::{self, AuthorizationParams};
use crate::auth::challenge::{self, BearerChallenge};
use crate::auth::dpop::{is_nonce_challenge, DpopEndpoint};
use crate::auth::grant::parse_id_jag_response;
use crate::auth::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
use crate::auth::token::parse_token_response;
use crate::auth::{AuthError, Dpop};

/// Around every secret the input plants, so a check cannot mistake other text for it.
const OPEN: &str = "ZqZ";
const CLOSE: &str = "QzQ";

fn assert_hidden(shown: &str, secret: &str, what: &str) {
    assert!(!shown.contains(secret), "{what} shows a secret: {shown}");
}

/// Splits `data` at NUL into a challenge, a document, a token and a
/// redirect query, and feeds each to the parsers and checks.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(4, '\u{0}');
    let (header, document, token, query) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );

    // 1. Challenges, through the parser and the Bearer view.
    if let Ok(value) = http::HeaderValue::from_str(header) {
        match challenge::parse_headers([&value]) {
            Ok(all) => {
                for c in &all {
                    let _ = (c.scheme(), c.token68(), c.params().count());
                }
                if let Some(bearer) = BearerChallenge::find(&all) {
                    assert!(bearer.scopes().count() <= header.len());
                    // Every parameter value is made of the header's bytes.
                    for value in
                        [&bearer.scope, &bearer.error, &bearer.resource_metadata].into_iter().flatten()
                    {
                        assert!(value.len() <= header.len());
                    }
                }
            }
            Err(e) => {
                let _ = (e.reason(), format!("{e} {e:?}"));
            }
        }
    }

    // 2. Metadata documents, with their checks.
    let server = url::Url::parse("https://mcp.example.com/mcp").expect("a valid URL");
    let prm_url = url::Url::parse("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        .expect("a valid URL");
    if let Ok(prm) = ProtectedResourceMetadata::from_json(document.as_bytes(), &prm_url) {
        let _ = prm.check_resource(&server);
    }
    let as_url = url::Url::parse("https://as.example.com/.well-known/oauth-authorization-server")
        .expect("a valid URL");
    if let Ok(metadata) = AuthorizationServerMetadata::from_json(document.as_bytes(), &as_url) {
        if metadata.check("https://as.example.com").is_ok() {
            // An authorization URL from checked metadata, then the redirect.
            if let Ok((url, pending)) = authorize::start(
                &metadata,
                AuthorizationParams {
                    client_id: "client",
                    redirect_uri: "http://127.0.0.1:1/callback",
                    resource: "https://mcp.example.com/mcp",
                    scope: None,
                },
            ) {
                let _ = url.as_str().len();
                match pending.complete(query) {
                    Ok(code) => assert_eq!(format!("{code:?}"), "[redacted]"),
                    Err(e) => {
                        let shown = format!("{e} {e:?}");
                        let pairs: Vec<_> = url::form_urlencoded::parse(query.as_bytes()).collect();
                        for (name, value) in &pairs {
                            // A code that another parameter repeats (an `iss`
                            // or `error` the error may quote) can show as that.
                            let repeated = pairs.iter().any(|(n, v)| {
                                n != "code" && (n.contains(value.as_ref()) || v.contains(value.as_ref()))
                            });
                            if name == "code" && value.len() >= 8 && value.starts_with(OPEN) && !repeated {
                                assert_hidden(&shown, value, "an authorization response error");
                            }
                        }
                    }
                }
            }
        }
    }

    // 3. A token response carrying a planted token.
    let secret = format!("{OPEN}{token}{CLOSE}");
    // A secret the other fields repeat may show as them (a token type is
    // not secret).
    let token_type = document.get(..8).unwrap_or("Bearer");
    let checkable = !token_type.contains(&secret);
    let body = serde_json::json!({
        "access_token": secret,
        "token_type": token_type,
        "refresh_token": secret,
        "expires_in": data.len() as u64 * 1000,
    })
    .to_string();
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for status in [200u16, 400, 401] {
        let shown = match parse_token_response(status, body.as_bytes(), now, None, "https://as.example.com") {
            Ok(tokens) => format!("{tokens:?} {tokens:#?}"),
            Err(e) => format!("{e} {e:?}"),
        };
        if checkable {
            assert_hidden(&shown, &secret, "a token response");
        }
    }
    // The raw document as a token response: never a panic.
    let _ = parse_token_response(200, document.as_bytes(), now, None, "https://as.example.com")
        .map_err(|e: AuthError| e.to_string());

    // 4. DPoP: a nonce is kept only when it is 1*NQCHAR (RFC 9449 §8), and
    //    a nonce challenge is recognised without a panic whatever the body.
    let resource = url::Url::parse("https://mcp.example.com/mcp").expect("a valid URL");
    if let Ok(value) = http::HeaderValue::from_str(token) {
        let mut headers = http::HeaderMap::new();
        headers.insert("dpop-nonce", value);
        if let Ok(challenge) = http::HeaderValue::from_str(header) {
            headers.insert(http::header::WWW_AUTHENTICATE, challenge);
        }
        let dpop = dpop();
        if dpop.observe(&resource, &headers) {
            let kept = dpop.nonce_for(&resource).expect("an observed nonce is kept");
            assert_eq!(kept, token);
            assert!(kept
                .bytes()
                .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b)));
        }
        for endpoint in [DpopEndpoint::Token, DpopEndpoint::Resource] {
            for status in [400u16, 401] {
                let _ = is_nonce_challenge(endpoint, status, &headers, document.as_bytes());
            }
        }
    }

    // 5. The IdP's token exchange answer: a planted ID-JAG never shows in
    //    an error, and a wrong document is refused, not taken.
    let issued_type = document.get(..40).unwrap_or("urn:ietf:params:oauth:token-type:id-jag");
    let checkable = !issued_type.contains(&secret);
    let exchange = serde_json::json!({
        "access_token": secret,
        "issued_token_type": issued_type,
        "token_type": "N_A",
    })
    .to_string();
    for status in [200u16, 400] {
        if let Err(e) = parse_id_jag_response(status, exchange.as_bytes(), "https://idp.example.com/token") {
            if checkable {
                assert_hidden(&format!("{e} {e:?}"), &secret, "an ID-JAG response error");
            }
        }
        let _ = parse_id_jag_response(status, document.as_bytes(), "https://idp.example.com/token");
    }
}

/// One DPoP key for the whole run: generating one per input would be most
/// of the work.
fn dpop() -> &'static Dpop {
    static DPOP: std::sync::OnceLock<Dpop> = std::sync::OnceLock::new();
    DPOP.get_or_init(|| Dpop::generate().expect("a DPoP key"))
}
