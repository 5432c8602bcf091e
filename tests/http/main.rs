//! The HTTP transports against local servers (axum on loopback, free
//! ports), with real sockets.
//!
//! `cargo test --test http` (feature `http`, on by default).
//!
//! - [`transport`]: streamable HTTP, HTTP+SSE and the automatic fallback,
//!   their bounds and their security rules.
//! - [`modern_era`]: the 2026-07-28 era over streamable HTTP: stateless
//!   POSTs, a dropped call cancelled by closing its stream, server requests
//!   outside `input_required` dropped unanswered.
//! - [`session_renewal`]: a server that forgets every session: one renewal,
//!   then a classified failure at once.
//! - [`unanswered_replies`]: a reply that does not answer its request ends
//!   that request at once, classified, not at its deadline.
//! - [`netfaults`]: latency, a bandwidth cap, resets, half-open and
//!   blackholed connections, through a TCP proxy on loopback.
//! - [`proxy`]: a proxy the definition names, the environment's, none; a
//!   host's own client.
//! - [`pool`]: bindings to one origin share their connections.
//! - [`retry`]: 429 and 503 retried after `Retry-After` within the
//!   deadline, a 500 only for a tool safe to run twice, off with one switch.
//! - [`session_controls`]: the session id reported when assigned and when
//!   it expires, resumed by id, and kept or deleted on close.
//! - [`tls`]: a server behind a private CA, one that requires a client
//!   certificate (mutual TLS), and bad PEM.
//! - [`netns`]: a partition between network namespaces. Ignored here: only
//!   `scripts/netfaults.sh` runs it (`--ignored netns::`), as root, with the
//!   namespaces it makes.
//!
//! A test of [`transport`] installs a process-wide tracing subscriber at
//! TRACE (`support::trace_capture::global`), so that its check that a
//! secret never shows sees every test's events.

#[path = "../support/mod.rs"]
mod support;

mod modern_era;
mod netfaults;
mod netns;
mod pool;
mod proxy;
mod retry;
mod session_controls;
mod session_renewal;
mod tls;
mod transport;
mod unanswered_replies;
