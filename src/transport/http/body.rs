//! Reading a response body within a bound, and what its `Content-Type`
//! says it carries.
//!
//! Apart from the transports because every reply they read whole (a JSON
//! reply, an error body to quote) is bounded the same way.

use bytes::{Bytes, BytesMut};
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE};

use super::client::HttpClient;
use super::HttpResponse;
use super::ERROR_BODY_QUOTE_BYTES;
use crate::error::{normalize_message, Error};

/// What a response's `Content-Type` says it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Json,
    EventStream,
    Other,
}

pub(crate) fn body_kind(response: &HttpResponse) -> BodyKind {
    let Some(value) = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return BodyKind::Other;
    };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => BodyKind::Json,
        "text/event-stream" => BodyKind::EventStream,
        _ => BodyKind::Other,
    }
}

/// Why reading a body stopped early.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Over the bound: `read` bytes had arrived (or were announced) when
    /// reading stopped.
    TooLarge { read: u64 },
    /// The body broke.
    Failed(Error),
}

/// Reads a whole body, never holding more than `max` bytes: a declared
/// length over `max` is refused before reading, and reading stops (and the
/// response is dropped, closing its connection) at the first chunk past it.
pub(crate) async fn read_body_bounded(
    client: &HttpClient,
    mut response: HttpResponse,
    max: usize,
) -> Result<Bytes, BodyError> {
    let declared = response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(declared) = declared {
        if declared > max as u64 {
            return Err(BodyError::TooLarge { read: declared });
        }
    }
    // The first chunk is kept as it came (a body in one chunk is taken
    // without a copy); a second starts a buffer of the declared length,
    // so that a large body is copied into place once rather than regrown
    // (callgrind, 1 MiB results over HTTP: the regrowth was a quarter of
    // a call's instructions). The declared length is at most `max`, and a
    // buffer a server declared but never filled is not touched memory.
    let mut first: Option<Bytes> = None;
    let mut body = BytesMut::new();
    let mut read = 0usize;
    // Bounded: every turn adds at least one byte or ends, and the total is
    // capped at `max`.
    loop {
        match next_chunk(&mut response).await {
            Ok(Some(chunk)) => {
                read += chunk.len();
                if read > max {
                    return Err(BodyError::TooLarge { read: read as u64 });
                }
                if let Some(held) = first.take() {
                    let expected = declared.map_or(0, |d| d as usize).max(read);
                    body.reserve(expected);
                    body.extend_from_slice(&held);
                }
                if body.is_empty() {
                    first = Some(chunk);
                } else {
                    body.extend_from_slice(&chunk);
                }
            }
            Ok(None) => return Ok(first.unwrap_or_else(|| body.freeze())),
            Err(e) => return Err(BodyError::Failed(client.request_error(e))),
        }
    }
}

/// The next piece of `response`'s body, `None` at its end; trailers are
/// skipped (the loop ends: a body has finitely many frames, and hyper
/// bounds the size of trailers).
pub(crate) async fn next_chunk(response: &mut HttpResponse) -> Result<Option<Bytes>, reqwest::Error> {
    use http_body_util::BodyExt as _;
    loop {
        match response.body_mut().frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
            Some(Err(e)) => return Err(e),
            None => return Ok(None),
        }
    }
}

/// A short, normalized quote of an error body for a message.
pub(crate) async fn error_body_quote(client: &HttpClient, response: HttpResponse) -> String {
    match read_body_bounded(client, response, 4 * ERROR_BODY_QUOTE_BYTES).await {
        Ok(body) => normalize_message(&String::from_utf8_lossy(&body), ERROR_BODY_QUOTE_BYTES),
        Err(_) => String::new(),
    }
}
