//! [`Fetch`]: the one way discovery reads the network.

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
}

/// A fetched response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The HTTP status code.
    pub status: u16,
    /// The body, bounded by the limit asked for.
    pub body: Vec<u8>,
}

/// Why a fetch failed (the request did not get a response).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);
