//! The HTTP transports (cargo feature `http`, on by default).
//!
//! - [`StreamableHttpFactory`]: streamable HTTP, the transport of protocol
//!   versions 2025-03-26 to 2025-11-25. Every message is a `POST`; a reply is
//!   one JSON body or an SSE stream; sessions, the optional `GET` listening
//!   stream and SSE resumption. See [`streamable`].
//! - [`SseFactory`]: the HTTP+SSE transport of 2024-11-05. One long-lived
//!   `GET` event stream carries everything the server sends; messages are
//!   `POST`ed to the endpoint the stream names. See [`legacy`].
//! - [`HttpFactory`]: streamable HTTP that can fall back to HTTP+SSE when the
//!   first `POST` fails with 400, 404 or 405, as the specification's
//!   backwards-compatibility section describes. See [`auto`].
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
//!   [`MAX_REDIRECTS`]), and the moment a redirect leaves the configured
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
//! - `TCP_NODELAY` is set on every connection; there is no proxy (a proxy
//!   taken from the environment would be a route the definition did not
//!   name).
//!
//! [`ConnectConfig::max_body_bytes`]: crate::transport::ConnectConfig::max_body_bytes
//! [`ConnectConfig::max_frame_bytes`]: crate::transport::ConnectConfig::max_frame_bytes
//! [`Inbound::Damaged`]: crate::transport::Inbound::Damaged
//! [`RedactedOrigin`]: crate::transport::RedactedOrigin

use std::time::Duration;

pub mod auto;
mod body;
mod builder;
mod client;
mod headers;
mod inbound;
pub mod legacy;
mod peek;
pub mod service;
pub mod sse;
pub mod streamable;

pub use auto::{HttpFactory, HttpMode};
pub use builder::{redacted_origin, HttpBuilder};
pub use headers::SecretHeaders;
pub use legacy::SseFactory;
pub use service::{HttpRequest, HttpResponse, HttpService, RequestTimeout};
pub use streamable::{ResumePolicy, StreamableHttpFactory};

/// The most redirects one request follows, when redirects are allowed.
pub const MAX_REDIRECTS: usize = 8;
/// How long connecting to the server may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an exchange that carries no reply may take: a notification's or
/// a response's `POST`, the `DELETE` on close.
pub const SHORT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long closing waits for the session's `DELETE`.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Messages a transport queues for the connection before its readers wait.
pub const INBOUND_QUEUE: usize = 64;
/// How much of an error body is quoted in an error message, in bytes.
pub const ERROR_BODY_QUOTE_BYTES: usize = 256;
