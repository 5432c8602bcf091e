//! [`Fetch`]: the one way the authorization flow talks to authorization
//! servers (metadata `GET`s, registration and token `POST`s).

use async_trait::async_trait;
use url::Url;

/// GET a metadata document.
///
/// Discovery reads through this trait so that it can be tested with a fake
/// and so that the HTTP transport decides how requests go out (its client,
/// its proxy and TLS settings). An implementation sends a plain `GET` with
/// `Accept: application/json` and no credentials, does not follow
/// redirects to other origins, and reads at most `limit` bytes of the body:
/// a longer body is an error, or cut at `limit + 1` bytes so the caller
/// sees it is over.
#[async_trait]
pub trait Fetch: Send + Sync {
    /// Fetches `url`, returning its status and at most `limit + 1` bytes of body.
    async fn get(&self, url: &Url, limit: usize) -> Result<Fetched, FetchError>;

    /// POSTs `body` to `url` with `headers` (which name its content type;
    /// the flow adds client authentication there, for the token endpoint
    /// only). Redirects are not followed, so no header ever reaches another
    /// URL; the body read is bounded as for [`Fetch::get`].
    async fn post(
        &self,
        url: &Url,
        headers: &http::HeaderMap,
        body: Vec<u8>,
        limit: usize,
    ) -> Result<Fetched, FetchError>;
}

/// A fetched response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers (a DPoP nonce, a `WWW-Authenticate`).
    pub headers: http::HeaderMap,
    /// The body, bounded by the limit asked for.
    pub body: Vec<u8>,
}

impl Fetched {
    /// A response with `status`, no headers and `body`.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self { status, headers: http::HeaderMap::new(), body: body.into() }
    }
}

/// Why a fetch failed (the request did not get a response).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

/// [`Fetch`] over reqwest: no redirects followed (a 3xx is returned as its
/// status, so discovery moves on), no cookies or credentials, a deadline per
/// request, and the body read chunk by chunk and cut at `limit + 1` bytes.
#[derive(Debug, Clone)]
pub struct HttpFetch {
    client: reqwest::Client,
    timeout: std::time::Duration,
}

impl HttpFetch {
    /// A fetcher with its own client and `timeout` per request. It honours
    /// the environment's proxy settings (`HTTPS_PROXY`, `NO_PROXY`, …), as
    /// the HTTP transports do; for a proxy or roots of your own, hand in a
    /// client ([`with_client`](Self::with_client)).
    pub fn new(timeout: std::time::Duration) -> Result<Self, FetchError> {
        crate::transport::http::install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| FetchError(e.to_string()))?;
        Ok(Self { client, timeout })
    }

    /// A fetcher over an existing client (its redirect policy is the
    /// caller's). Build it after
    /// [`install_crypto_provider`](crate::transport::http::install_crypto_provider)
    /// (or a rustls provider of your own): see there.
    pub fn with_client(client: reqwest::Client, timeout: std::time::Duration) -> Self {
        Self { client, timeout }
    }
}

impl HttpFetch {
    async fn send(&self, request: reqwest::RequestBuilder, limit: usize) -> Result<Fetched, FetchError> {
        let fetch = async {
            let mut response = request.send().await.map_err(|e| FetchError(e.without_url().to_string()))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let mut body = Vec::new();
            while let Some(chunk) =
                response.chunk().await.map_err(|e| FetchError(e.without_url().to_string()))?
            {
                let room = (limit + 1).saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() > limit {
                    break;
                }
            }
            Ok(Fetched { status, headers, body })
        };
        tokio::time::timeout(self.timeout, fetch).await.map_err(|_| FetchError("timed out".into()))?
    }
}

#[async_trait]
impl Fetch for HttpFetch {
    async fn get(&self, url: &Url, limit: usize) -> Result<Fetched, FetchError> {
        let request = self.client.get(url.as_str()).header(http::header::ACCEPT, "application/json");
        self.send(request, limit).await
    }

    async fn post(
        &self,
        url: &Url,
        headers: &http::HeaderMap,
        body: Vec<u8>,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        let request = self
            .client
            .post(url.as_str())
            .header(http::header::ACCEPT, "application/json")
            .headers(headers.clone())
            .body(body);
        self.send(request, limit).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A one-connection HTTP/1.1 server on loopback that answers `response`.
    async fn serve(response: Vec<u8>) -> Url {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = vec![0; 4096];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(&response).await;
            let _ = socket.shutdown().await;
        });
        Url::parse(&format!("http://{addr}/.well-known/oauth-protected-resource")).unwrap()
    }

    fn response(status: &str, extra: &str, body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    }

    fn fetcher() -> HttpFetch {
        HttpFetch::new(Duration::from_secs(30)).unwrap()
    }

    #[tokio::test]
    async fn reads_status_and_body() {
        let url = serve(response("200 OK", "content-type: application/json\r\n", b"{\"a\":1}")).await;
        let got = fetcher().get(&url, 1024).await.unwrap();
        assert_eq!((got.status, got.body), (200, b"{\"a\":1}".to_vec()));
    }

    #[tokio::test]
    async fn cuts_the_body_past_the_limit() {
        let url = serve(response("200 OK", "", &[b'x'; 10_000])).await;
        let got = fetcher().get(&url, 100).await.unwrap();
        assert_eq!(got.body.len(), 101);
    }

    #[tokio::test]
    async fn does_not_follow_redirects() {
        let url = serve(response("302 Found", "location: http://127.0.0.1:9/elsewhere\r\n", b"")).await;
        assert_eq!(fetcher().get(&url, 100).await.unwrap().status, 302);
    }

    #[tokio::test]
    async fn posts_without_following_redirects() {
        let url = serve(response("307 Temporary Redirect", "location: http://127.0.0.1:9/x\r\n", b"")).await;
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
        let got = fetcher().post(&url, &headers, b"{}".to_vec(), 100).await.unwrap();
        assert_eq!(got.status, 307);
        assert!(got.headers.contains_key(http::header::LOCATION));
    }

    #[tokio::test]
    async fn a_refused_connection_is_an_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!("http://{}/x", listener.local_addr().unwrap())).unwrap();
        drop(listener);
        assert!(fetcher().get(&url, 100).await.is_err());
    }
}
