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

pub use auto::{HttpFactory, HttpMode};
pub use builder::HttpBuilder;
#[cfg(feature = "oauth")]
pub(crate) use builder::{parse_url, redacted_origin};
pub use headers::SecretHeaders;
pub use legacy::SseFactory;
pub use service::{HttpRequest, HttpResponse, HttpService, RequestTimeout};
pub use streamable::{ResumePolicy, StreamableHttpFactory};

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
