//! The human step: an [`AuthorizationHandler`] takes the authorization URL
//! to the user and brings back the redirect's query.
//!
//! The host decides how: the handler is a tower service (an
//! [`AuthorizationRequest`] in, the redirect's query string out, as a
//! [`Secret`] since it carries the code), like the binding's other handlers.
//! Two are built in:
//!
//! - [`AuthorizationHandler::headless`]: follows the URL itself with
//!   redirects off and reads `code`, `state` and `iss` from the `Location`
//!   that points at the redirect URI. For tests and for authorization
//!   servers that approve without a person (the conformance suite's).
//! - [`AuthorizationHandler::loopback`]: listens on `127.0.0.1`, prints the
//!   URL on stderr (and can open a browser), waits, bounded, for the
//!   browser's redirect, and answers it with a small page.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tower::util::BoxCloneSyncService;
use tower::ServiceExt as _;
use url::Url;

use super::Secret;
use crate::error::{Error, FailureClass};

/// The longest the headless handler follows redirects inside the
/// authorization server before it expects the redirect URI.
pub(crate) const MAX_AUTHORIZATION_HOPS: usize = 8;
/// How long the loopback handler waits for the browser by default.
pub(crate) const DEFAULT_LOOPBACK_WAIT: Duration = Duration::from_secs(300);
/// The largest HTTP request the loopback listener reads.
const MAX_LOOPBACK_REQUEST_BYTES: usize = 16 * 1024;
/// Connections the loopback listener answers before giving up (a browser
/// asks for `/favicon.ico` too).
const MAX_LOOPBACK_CONNECTIONS: usize = 32;

/// What the host is asked to do: send the user to [`url`](Self::url), who
/// comes back to [`redirect_uri`](Self::redirect_uri).
#[derive(Clone)]
pub struct AuthorizationRequest {
    url: Url,
    redirect_uri: String,
}

impl fmt::Debug for AuthorizationRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The query holds `state`: origin and path only.
        f.debug_struct("AuthorizationRequest")
            .field(
                "endpoint",
                &format_args!("{}{}", self.url.origin().ascii_serialization(), self.url.path()),
            )
            .finish_non_exhaustive()
    }
}

impl AuthorizationRequest {
    /// A request to open `url` and come back to `redirect_uri`.
    pub fn new(url: Url, redirect_uri: impl Into<String>) -> Self {
        Self { url, redirect_uri: redirect_uri.into() }
    }

    /// The authorization URL (it carries `state`: show it to the user only).
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Where the authorization server sends the user back.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }
}

/// The service behind an [`AuthorizationHandler`].
pub(super) type AuthorizationService = BoxCloneSyncService<AuthorizationRequest, Secret, Error>;

/// Takes the authorization URL to the user; returns the redirect's query.
///
/// A handler knows its redirect URI before any flow starts (the loopback one
/// binds its port first), since the URI is part of the registration and of
/// the authorization request. Its errors are classified: a person who
/// closes the window is `auth_denied`, a handler that cannot reach anyone is
/// `auth_required`.
#[derive(Clone)]
pub struct AuthorizationHandler {
    redirect_uri: String,
    service: AuthorizationService,
}

impl fmt::Debug for AuthorizationHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationHandler")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl AuthorizationHandler {
    /// A handler over any service, for the redirect URI it answers at.
    pub fn new<S>(redirect_uri: impl Into<String>, service: S) -> Self
    where
        S: tower_service::Service<AuthorizationRequest, Response = Secret, Error = Error>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        Self { redirect_uri: redirect_uri.into(), service: BoxCloneSyncService::new(service) }
    }

    /// A handler from an async closure.
    pub fn from_fn<F, Fut>(redirect_uri: impl Into<String>, f: F) -> Self
    where
        F: Fn(AuthorizationRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Secret, Error>> + Send + 'static,
    {
        Self::new(redirect_uri, tower::service_fn(f))
    }

    /// The headless handler: follows the authorization URL with redirects
    /// off (at most 8, each within `timeout`) until
    /// a `Location` points at `redirect_uri`, and returns that location's
    /// query. Nothing listens at `redirect_uri`; it only has to be a URI the
    /// authorization server accepts. Cookies the authorization server sets
    /// on the way (its login and consent state, as `oidc-provider` keeps
    /// them) are sent back on the following hops of the same authorization
    /// and then dropped.
    pub fn headless(redirect_uri: impl Into<String>, timeout: Duration) -> Result<Self, Error> {
        // Checked now, so that a bad setting fails when it is made; each
        // authorization builds its own client, so cookies never outlive it.
        headless_client(timeout)?;
        Ok(Self::from_fn(redirect_uri, move |request: AuthorizationRequest| async move {
            follow(&headless_client(timeout)?, request).await
        }))
    }

    /// The loopback handler: binds `127.0.0.1` on `options.port` (0: any
    /// free port) now, so that its redirect URI is known; when asked, prints
    /// the URL on stderr, opens a browser if `options.open_browser`, and
    /// waits at most `options.wait` for the redirect.
    pub async fn loopback(options: LoopbackOptions) -> Result<Self, Error> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", options.port)).await.map_err(|e| {
            Error::new(FailureClass::InvalidConfig, "could not listen on 127.0.0.1 for the OAuth redirect")
                .with_source(e)
        })?;
        let port =
            listener.local_addr().map_err(|e| Error::new(FailureClass::InvalidConfig, e.to_string()))?.port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let listener = Arc::new(tokio::sync::Mutex::new(listener));
        Ok(Self::from_fn(redirect_uri, move |request: AuthorizationRequest| {
            let listener = listener.clone();
            let options = options.clone();
            async move {
                eprintln!("Open this URL in a browser to authorize the MCP client:\n\n  {}\n", request.url());
                if options.open_browser {
                    open_browser(request.url());
                }
                let listener = listener.lock().await;
                tokio::time::timeout(options.wait, accept_redirect(&listener)).await.map_err(|_| {
                    Error::new(
                        FailureClass::AuthRequired,
                        format!("no authorization arrived within {:?}", options.wait),
                    )
                })?
            }
        }))
    }

    /// The redirect URI this handler answers at.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Runs the human step for `request`.
    pub async fn authorize(&self, request: AuthorizationRequest) -> Result<Secret, Error> {
        self.service.clone().oneshot(request).await
    }
}

/// Settings of [`AuthorizationHandler::loopback`].
#[derive(Debug, Clone)]
pub struct LoopbackOptions {
    /// The port on 127.0.0.1 (0, the default: any free port). A fixed port
    /// is for authorization servers that register exact redirect URIs.
    pub port: u16,
    /// Open the system browser on the URL (off by default: printing it is
    /// always done).
    pub open_browser: bool,
    /// How long to wait for the browser's redirect.
    pub wait: Duration,
}

impl Default for LoopbackOptions {
    fn default() -> Self {
        Self { port: 0, open_browser: false, wait: DEFAULT_LOOPBACK_WAIT }
    }
}

/// The headless handler's client: no redirects followed by reqwest (the
/// handler looks at each `Location` itself), a fresh cookie jar (an
/// authorization server keeps its login and consent state in cookies across
/// the redirects of one authorization), a deadline per request, and the
/// environment's proxy settings, as everywhere.
fn headless_client(timeout: Duration) -> Result<reqwest::Client, Error> {
    crate::transport::http::install_crypto_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_store(true)
        .timeout(timeout)
        .build()
        .map_err(|e| {
            Error::new(FailureClass::InvalidConfig, "could not build the HTTP client")
                .with_source(e.without_url())
        })
}

async fn follow(client: &reqwest::Client, request: AuthorizationRequest) -> Result<Secret, Error> {
    let target = Url::parse(request.redirect_uri())
        .map_err(|_| Error::new(FailureClass::InvalidConfig, "the OAuth redirect URI is not a URL"))?;
    let mut url = request.url.clone();
    for _ in 0..MAX_AUTHORIZATION_HOPS {
        let response = client.get(url.as_str()).send().await.map_err(|e| {
            Error::new(FailureClass::AuthFailed, "the authorization endpoint could not be reached")
                .with_source(e.without_url())
        })?;
        let status = response.status();
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| url.join(l).ok());
        let Some(location) = location.filter(|_| status.is_redirection()) else {
            return Err(Error::new(
                FailureClass::AuthRequired,
                format!(
                    "the authorization endpoint answered HTTP {} without redirecting: it needs a person, \
                     which the headless handler cannot be",
                    status.as_u16()
                ),
            ));
        };
        if location.origin() == target.origin() && location.path() == target.path() {
            return Ok(Secret::new(location.query().unwrap_or("")));
        }
        url = location;
    }
    Err(Error::new(
        FailureClass::AuthFailed,
        format!("the authorization endpoint redirected more than {MAX_AUTHORIZATION_HOPS} times"),
    ))
}

async fn accept_redirect(listener: &tokio::net::TcpListener) -> Result<Secret, Error> {
    let failed = |e: std::io::Error| {
        Error::new(FailureClass::AuthFailed, "the OAuth redirect listener failed").with_source(e)
    };
    for _ in 0..MAX_LOOPBACK_CONNECTIONS {
        let (mut socket, _) = listener.accept().await.map_err(failed)?;
        let mut buf = Vec::with_capacity(1024);
        let mut chunk = [0u8; 1024];
        // Bounded: stops at the end of the headers, at the cap, or at EOF.
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_LOOPBACK_REQUEST_BYTES {
            match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        let line = buf.split(|b| *b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        let target = line.split(' ').nth(1).unwrap_or("");
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if path != "/callback" {
            let _ = socket
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
            continue;
        }
        let page = "<!doctype html><title>Authorized</title><p>The MCP client received the authorization. \
                    You can close this window.</p>";
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = socket.write_all(answer.as_bytes()).await;
        let _ = socket.shutdown().await;
        return Ok(Secret::new(query));
    }
    Err(Error::new(FailureClass::AuthFailed, "the OAuth redirect listener saw no callback"))
}

fn open_browser(url: &Url) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    // Best effort: the URL is printed either way.
    let _ = std::process::Command::new(program)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn loopback_returns_the_callback_query_and_ignores_other_paths() {
        let handler = AuthorizationHandler::loopback(LoopbackOptions::default()).await.unwrap();
        let redirect = handler.redirect_uri().to_owned();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let url = Url::parse("https://as.example.com/authorize?state=s").unwrap();
        let waiting = tokio::spawn({
            let handler = handler.clone();
            let redirect = redirect.clone();
            async move { handler.authorize(AuthorizationRequest::new(url, redirect)).await }
        });
        crate::transport::http::install_crypto_provider();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let base = redirect.trim_end_matches("/callback");
        // The listener may not be waiting yet: retry the favicon until it answers.
        for _ in 0..100 {
            if let Ok(r) = client.get(format!("{base}/favicon.ico")).send().await {
                assert_eq!(r.status(), 404);
                break;
            }
            tokio::task::yield_now().await;
        }
        let page = client.get(format!("{redirect}?code=c&state=s")).send().await.unwrap();
        assert_eq!(page.status(), 200);
        let query = waiting.await.unwrap().unwrap();
        assert_eq!(query.expose(), "code=c&state=s");
    }

    #[test]
    fn the_request_debug_hides_the_query() {
        let url = Url::parse("https://as.example.com/authorize?state=SENTINEL").unwrap();
        let shown = format!("{:?}", AuthorizationRequest::new(url, "http://127.0.0.1/cb"));
        assert!(!shown.contains("SENTINEL") && shown.contains("/authorize"), "{shown}");
    }
}
