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
    // Compared without case, as media types are, and without allocating
    // (this runs for every response).
    let essence = value.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        BodyKind::Json
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        BodyKind::EventStream
    } else {
        BodyKind::Other
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
    let mut held = Held::Nothing;
    let mut read = 0usize;
    // Bounded: the bytes kept are capped at `max`, and a peer sending
    // empty frames without end is stopped by the call's deadline.
    loop {
        let chunk = match next_chunk(&mut response).await {
            Ok(Some(chunk)) if chunk.is_empty() => continue,
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Ok(held.into_bytes()),
            Err(e) => return Err(BodyError::Failed(client.request_error(e))),
        };
        read += chunk.len();
        if read > max {
            return Err(BodyError::TooLarge { read: read as u64 });
        }
        held = match held {
            Held::Nothing => Held::One(chunk),
            Held::One(first) => {
                let mut body = BytesMut::with_capacity(declared.map_or(0, |d| d as usize).max(read));
                body.extend_from_slice(&first);
                body.extend_from_slice(&chunk);
                Held::Many(body)
            }
            Held::Many(mut body) => {
                body.extend_from_slice(&chunk);
                Held::Many(body)
            }
        };
    }
}

/// What [`read_body_bounded`] holds of a body so far.
enum Held {
    Nothing,
    /// One chunk, kept as it came.
    One(Bytes),
    /// Two or more, copied into one buffer.
    Many(BytesMut),
}

impl Held {
    fn into_bytes(self) -> Bytes {
        match self {
            Held::Nothing => Bytes::new(),
            Held::One(chunk) => chunk,
            Held::Many(body) => body.freeze(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::builder::Settings;
    use crate::transport::ConnectConfig;
    use std::sync::Arc;

    fn client() -> HttpClient {
        let settings = Settings::new("http://127.0.0.1:9/mcp").expect("a valid URL");
        HttpClient::new(Arc::new(settings), &ConnectConfig::new("t")).expect("a client")
    }

    /// A response whose body arrives in `chunks`, declaring `length`.
    fn response(chunks: &[&'static [u8]], length: Option<usize>) -> HttpResponse {
        let chunks: Vec<Result<Bytes, std::io::Error>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        let mut response =
            http::Response::new(reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)));
        if let Some(length) = length {
            response.headers_mut().insert(CONTENT_LENGTH, length.into());
        }
        response
    }

    #[test]
    fn the_media_type_decides_the_kind_whatever_its_case_and_parameters() {
        let kind = |content_type: &str| {
            let mut response = response(&[], None);
            response.headers_mut().insert(CONTENT_TYPE, content_type.parse().unwrap());
            body_kind(&response)
        };
        assert_eq!(kind("application/json"), BodyKind::Json);
        assert_eq!(kind(" Application/JSON ; charset=utf-8"), BodyKind::Json);
        assert_eq!(kind("TEXT/event-stream"), BodyKind::EventStream);
        assert_eq!(kind("application/json-seq"), BodyKind::Other);
        assert_eq!(kind("text/html"), BodyKind::Other);
        assert_eq!(body_kind(&response(&[], None)), BodyKind::Other);
    }

    #[tokio::test]
    async fn chunks_are_joined_and_a_lone_chunk_is_taken_as_it_came() {
        let client = client();
        let cases: [(&[&'static [u8]], Option<usize>); 3] = [
            (&[b"ab", b"", b"cd", b"ef"], Some(6)),
            (&[b"", b"ab", b"cdef"], None),
            (&[b"abc", b"def"], Some(3)),
        ];
        for (chunks, declared) in cases {
            let body = read_body_bounded(&client, response(chunks, declared), 6).await.unwrap();
            assert_eq!(&body[..], b"abcdef", "{chunks:?}");
        }
        let lone: &'static [u8] = b"abcdef";
        let body = read_body_bounded(&client, response(&[b"", lone, b""], None), 6).await.unwrap();
        assert_eq!(body.as_ptr(), lone.as_ptr(), "a body in one chunk is not copied");
        let empty = read_body_bounded(&client, response(&[], Some(0)), 6).await.unwrap();
        assert!(empty.is_empty());
    }

    #[tokio::test]
    async fn a_body_over_the_bound_is_refused() {
        let client = client();
        let declared = read_body_bounded(&client, response(&[b"a"], Some(7)), 6).await;
        assert!(matches!(declared, Err(BodyError::TooLarge { read: 7 })), "{declared:?}");
        let sent = read_body_bounded(&client, response(&[b"abcd", b"efgh"], None), 6).await;
        assert!(matches!(sent, Err(BodyError::TooLarge { read: 8 })), "{sent:?}");
    }
}
