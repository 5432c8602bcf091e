//! Who may reach the inspector: the checks every request of both
//! listeners passes before any route sees it, and the headers every answer
//! carries. One middleware, so no route can forget a check.
//!
//! In order:
//!
//! 1. **Host.** The `Host` header must name the listener itself
//!    (`127.0.0.1:PORT`, or `localhost:PORT`), else `403`: a web page that
//!    points a name of its own at 127.0.0.1 (DNS rebinding) sends its own
//!    name. The MCP Inspector's CVE-2025-49596 was a loopback inspector
//!    that any web page could reach and make start a process.
//! 2. **Secret.** The request carries the secret (the page's token, or an
//!    app's key on the sandbox origin) in its query (`token=` / `key=`) or
//!    the `X-Mcp-Inspect-Token` header, compared in constant time, else
//!    `401`.
//! 3. **Origin.** A request that may change state (any method but `GET`
//!    and `HEAD`) must carry an `Origin` that is the listener's own and a
//!    JSON `Content-Type` (which no form and no "simple" cross-origin
//!    request can send), else `403`.
//!
//! No answer carries a CORS header, so no other origin can read one.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq as _;

/// The header that carries the token on the page's own requests.
pub(crate) const TOKEN_HEADER: &str = "x-mcp-inspect-token";

/// What one listener accepts.
pub(crate) struct Gate {
    /// The address it listens on.
    pub(crate) addr: SocketAddr,
    /// Where the secret is in the query: `token` (the page) or `key` (an
    /// app's documents on the sandbox origin; checked by the route, since
    /// each app has its own).
    pub(crate) secret: Secret,
}

pub(crate) enum Secret {
    /// The page's token, on every request.
    Token(String),
    /// Each route checks its app's key.
    PerApp,
}

impl Gate {
    /// The `Host` values that name this listener.
    fn hosts(&self) -> [String; 2] {
        let port = self.addr.port();
        [self.origin_host(), format!("localhost:{port}")]
    }

    fn origin_host(&self) -> String {
        match self.addr {
            SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
            SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
        }
    }

    /// The listener's own origin, as its pages are reached.
    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.origin_host())
    }
}

/// The middleware: the checks above, then the headers of every answer.
pub(crate) async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let mut response = match check(&gate, request.method(), request.headers(), request.uri().query()) {
        Ok(()) => next.run(request).await,
        Err((status, why)) => (status, why).into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn check(
    gate: &Gate,
    method: &Method,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<(), (StatusCode, &'static str)> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let hosts = gate.hosts();
    let Some(via) = hosts.iter().position(|h| h.eq_ignore_ascii_case(host)) else {
        return Err((StatusCode::FORBIDDEN, "this server answers only to its own loopback address"));
    };
    if let Secret::Token(token) = &gate.secret {
        let given = headers
            .get(TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| query_value(query, "token"));
        if !given.is_some_and(|given| secret_eq(&given, token)) {
            return Err((
                StatusCode::UNAUTHORIZED,
                "the token is missing or wrong: use the URL mcp inspect printed",
            ));
        }
    }
    if !matches!(*method, Method::GET | Method::HEAD) {
        let own = format!("http://{}", hosts[via]);
        let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
        if !origin.is_some_and(|o| o.eq_ignore_ascii_case(&own)) {
            return Err((
                StatusCode::FORBIDDEN,
                "a request that changes state must come from the inspector's page",
            ));
        }
        let json = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| {
            t.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
        if !json {
            return Err((StatusCode::FORBIDDEN, "a request that changes state must be application/json"));
        }
    }
    Ok(())
}

/// Whether `given` is `secret`, in time that does not depend on where
/// they differ.
pub(crate) fn secret_eq(given: &str, secret: &str) -> bool {
    given.len() == secret.len() && bool::from(given.as_bytes().ct_eq(secret.as_bytes()))
}

/// The value of `name` in a query string (the secrets are hex, so no
/// decoding is needed: an encoded one is simply wrong).
pub(crate) fn query_value(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| value.to_string())
    })
}

/// 32 random bytes from the OS, as 64 hex digits.
pub(crate) fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate() -> Gate {
        Gate { addr: "127.0.0.1:4000".parse().unwrap(), secret: Secret::Token("ab".repeat(32)) }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn host_token_and_origin_are_each_required() {
        let g = gate();
        let token = "ab".repeat(32);
        let q = format!("token={token}");
        let ok =
            |m: &Method, h: &[(&str, &str)], q: Option<&str>| check(&g, m, &headers(h), q).map_err(|e| e.0);
        assert_eq!(ok(&Method::GET, &[("host", "127.0.0.1:4000")], Some(&q)), Ok(()));
        assert_eq!(ok(&Method::GET, &[("host", "localhost:4000")], Some(&q)), Ok(()));
        assert_eq!(ok(&Method::GET, &[("host", "evil.example:4000")], Some(&q)), Err(StatusCode::FORBIDDEN));
        assert_eq!(ok(&Method::GET, &[("host", "127.0.0.1:4001")], Some(&q)), Err(StatusCode::FORBIDDEN));
        assert_eq!(ok(&Method::GET, &[], Some(&q)), Err(StatusCode::FORBIDDEN));
        assert_eq!(ok(&Method::GET, &[("host", "127.0.0.1:4000")], None), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(
            ok(&Method::GET, &[("host", "127.0.0.1:4000")], Some("token=ab")),
            Err(StatusCode::UNAUTHORIZED)
        );
        let by_header = [("host", "127.0.0.1:4000"), (TOKEN_HEADER, token.as_str())];
        assert_eq!(ok(&Method::GET, &by_header, None), Ok(()));
        let post = |origin: Option<&str>, ct: &str| {
            let mut h =
                vec![("host", "127.0.0.1:4000"), (TOKEN_HEADER, token.as_str()), ("content-type", ct)];
            if let Some(o) = origin {
                h.push(("origin", o));
            }
            ok(&Method::POST, &h, None)
        };
        assert_eq!(post(Some("http://127.0.0.1:4000"), "application/json"), Ok(()));
        assert_eq!(post(Some("http://127.0.0.1:4000"), "application/json; charset=utf-8"), Ok(()));
        assert_eq!(post(None, "application/json"), Err(StatusCode::FORBIDDEN));
        assert_eq!(post(Some("http://evil.example"), "application/json"), Err(StatusCode::FORBIDDEN));
        assert_eq!(post(Some("null"), "application/json"), Err(StatusCode::FORBIDDEN));
        assert_eq!(post(Some("http://127.0.0.1:4000"), "text/plain"), Err(StatusCode::FORBIDDEN));
    }

    #[test]
    fn secrets_are_random_and_compared_whole() {
        let (a, b) = (random_secret(), random_secret());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(secret_eq(&a, &a.clone()));
        assert!(!secret_eq(&a, &b));
        assert!(!secret_eq(&a, &a[..63]));
        assert_eq!(query_value(Some("x=1&token=t&y"), "token").as_deref(), Some("t"));
        assert_eq!(query_value(Some("tokens=t"), "token"), None);
    }
}
