//! The HTTP transports (cargo feature `http`, on by default).
//!
//! - [`StreamableHttpFactory`]: streamable HTTP, the transport of protocol
//!   versions 2025-03-26 to 2025-11-25. Every message is a `POST`; a reply is
//!   one JSON body or an SSE stream; sessions, the optional `GET` listening
//!   stream and SSE resumption. See [`StreamableHttpFactory`].
//! - [`SseFactory`]: the HTTP+SSE transport of 2024-11-05. One long-lived
//!   `GET` event stream carries everything the server sends; messages are
//!   `POST`ed to the endpoint the stream names. See [`SseFactory`].
//! - [`HttpFactory`]: streamable HTTP that can fall back to HTTP+SSE when the
//!   first `POST` fails with 400, 404 or 405, as the specification's
//!   backwards-compatibility section describes. See [`HttpFactory`].
//!
//! # What every HTTP transport here keeps
//!
//! - **Bounds while reading.** A reply body to one request (a JSON body, or
//!   the SSE stream that answers one `POST`) is bounded by
//!   [`ConnectConfig::max_body_bytes`] as it arrives: past it, the response
//!   is abandoned (the connection to the server is dropped, nothing more is
//!   read) and the request ends with `limit_exceeded`. A declared
//!   `Content-Length` over the bound is refused before reading anything.
//!   Every SSE event is bounded by [`ConnectConfig::max_frame_bytes`] while it
//!   is being read; an event over it is skipped as [`Inbound::Damaged`]
//!   without being held whole, and the stream goes on. Long-lived streams
//!   (the `GET` listening stream, the HTTP+SSE event stream) carry an
//!   open-ended sequence of messages, like a stdio pipe: they are bounded per
//!   event, not in total.
//! - **Redirects are refused** unless the factory allows them
//!   (`allow_redirects`): a 3xx answer is then an error that says so. When
//!   they are allowed, the transport follows them itself (at most
//!   8), and the moment a redirect leaves the configured
//!   origin (scheme, host, port), the custom headers, the credentials of the
//!   URL and the `Mcp-Session-Id` are no longer sent, for that request and
//!   every later hop of it. A `POST` is only re-sent by 307 and 308 (301, 302
//!   and 303 would turn it into a `GET`, which means nothing to an MCP
//!   endpoint, so they are refused).
//! - **No secret in diagnostics.** The [`RedactedOrigin`] is
//!   `scheme://host[:port]`; the path, the query and any user info of the URL
//!   are never part of it, of an error, of an event or of a tracing field.
//!   Header values set on a factory are marked sensitive and never printed:
//!   the `Debug` output names the headers only. Errors from the HTTP client
//!   are stripped of their URL before they are kept.
//! - `TCP_NODELAY` is set on every connection. Proxies come from the
//!   environment as curl reads them unless the builder names one or turns
//!   them off; roots besides the platform's and a client certificate are
//!   the builder's too (see [`HttpBuilder`]).
//!
//!
//! # Per-hop HTTP services
//!
//! The one place an HTTP request leaves the client: a tower service per hop.
//!
//! Every request the HTTP transports make (streamable HTTP's `POST`, `GET`
//! and `DELETE`, HTTP+SSE's event stream and its `POST`s) is built by the
//! transport's redirect loop and sent, hop by hop, as one call of an
//! [`HttpService`]: an [`HttpRequest`] in, an [`HttpResponse`] out. The
//! innermost service is reqwest; layers sit on it (authorization, for one,
//! attaches a token and re-sends a request the server refused with `401`).
//! Bodies are [`Bytes`](bytes::Bytes), so a layer that re-sends a request clones it
//! cheaply.
//!
//! A builder adds such a layer as a recipe the transport runs once per
//! connection, so that the modules above the transport (authorization)
//! plug in without the transport naming them.
//!
//! What a layer may rely on, per call:
//! - the URI is the hop's absolute URL; the headers are complete (the
//!   transport decided which ones cross origins);
//! - a [`RequestTimeout`] extension, when present, bounds the exchange
//!   including its body (the innermost service applies it);
//! - the response body is still unread: a streaming reply (SSE) flows
//!   through as it arrives.
//!
//! Errors are the crate's [`Error`](crate::Error), already classified: a layer adds its own
//! classes (`auth_*`) and passes the others through.
//!
//! [`ConnectConfig::max_body_bytes`]: crate::transport::ConnectConfig::max_body_bytes
//! [`ConnectConfig::max_frame_bytes`]: crate::transport::ConnectConfig::max_frame_bytes
//! [`Inbound::Damaged`]: crate::transport::Inbound::Damaged
//! [`RedactedOrigin`]: crate::transport::RedactedOrigin

use std::time::Duration;

mod auto;
mod body;
mod builder;
mod client;
mod headers;
mod inbound;
mod legacy;
mod network;
mod peek;
pub(crate) mod service;
pub(crate) mod sse;
mod streamable;
mod tls;

pub use auto::{HttpFactory, HttpMode};
pub(crate) use builder::parse_url;
#[cfg(feature = "oauth")]
pub(crate) use builder::redacted_origin;
pub use builder::HttpBuilder;
pub use headers::SecretHeaders;
pub use legacy::SseFactory;
pub use service::{HttpRequest, HttpResponse, HttpService, RequestTimeout};
pub use streamable::{ResumePolicy, StreamableHttpFactory};
pub use tls::install_crypto_provider;

/// The class of a failure an HTTP status caused, for both transports:
/// `auth_required` for 401, `auth_denied` for 403, else `remote_http`.
pub(crate) fn status_class(status: reqwest::StatusCode) -> crate::error::FailureClass {
    use crate::error::FailureClass;
    match status {
        reqwest::StatusCode::UNAUTHORIZED => FailureClass::AuthRequired,
        reqwest::StatusCode::FORBIDDEN => FailureClass::AuthDenied,
        _ => FailureClass::RemoteHttp,
    }
}

/// The longest `Retry-After` taken: a day. A server asking for more is
/// asking the client to give up, which a deadline does anyway.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a 429 or 503 asks the client to wait: its `Retry-After`, in
/// seconds or as an HTTP date (a date in the past is no wait), at most
/// [`MAX_RETRY_AFTER`]. `None` for any other status, or a value that is
/// neither.
pub(crate) fn retry_after(
    status: reqwest::StatusCode,
    headers: &reqwest::header::HeaderMap,
) -> Option<Duration> {
    if !matches!(status.as_u16(), 429 | 503) {
        return None;
    }
    let text = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    let delay = match text.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => {
            let at = httpdate::parse_http_date(text).ok()?;
            at.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO)
        }
    };
    Some(delay.min(MAX_RETRY_AFTER))
}

/// The most redirects one request follows, when redirects are allowed.
pub(crate) const MAX_REDIRECTS: usize = 8;
/// How long connecting to the server may take.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an exchange that carries no reply may take: a notification's or
/// a response's `POST`, the `DELETE` on close.
pub(crate) const SHORT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long closing waits for the session's `DELETE`.
pub(crate) const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Messages a transport queues for the connection before its readers wait.
pub(crate) const INBOUND_QUEUE: usize = 64;
/// How much of an error body is quoted in an error message, in bytes.
pub(crate) const ERROR_BODY_QUOTE_BYTES: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
    use reqwest::StatusCode;

    fn after(status: u16, value: &str) -> Option<Duration> {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        retry_after(StatusCode::from_u16(status).unwrap(), &headers)
    }

    #[test]
    fn retry_after_reads_seconds_and_dates_on_429_and_503_only() {
        assert_eq!(after(429, "2"), Some(Duration::from_secs(2)));
        assert_eq!(after(503, " 120 "), Some(Duration::from_secs(120)));
        assert_eq!(
            after(503, "Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO),
            "a past date is no wait"
        );
        let soon = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(90));
        let waited = after(429, &soon).unwrap();
        assert!((Duration::from_secs(88)..=Duration::from_secs(90)).contains(&waited), "{waited:?}");
        assert_eq!(after(429, "99999999999"), Some(MAX_RETRY_AFTER));
        for bad in ["soon", "-1", "1.5", ""] {
            assert_eq!(after(429, bad), None, "{bad:?}");
        }
        assert_eq!(after(500, "2"), None);
        assert_eq!(after(200, "2"), None);
        assert_eq!(retry_after(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new()), None);
    }
}
