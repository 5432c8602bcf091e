//! Authorization: OAuth 2.1 end to end, its extensions, and the secrets it
//! handles never coming back out.
//!
//! `cargo test --test auth` (feature `oauth`, on by default).
//!
//! - [`oauth`]: the flow through a binding over streamable HTTP against a
//!   fake server that is its own authorization server: discovery, the code
//!   flow with the headless handler, refresh, step-up, token stores.
//! - [`extensions`]: `private_key_jwt`, DPoP and its nonces, workload
//!   identity, enterprise-managed authorization (ID-JAG), through an
//!   `AuthLayer` over fakes.
//! - [`issuer_binding`]: pre-registered credentials go only to the
//!   authorization server they belong to.
//! - [`redaction`]: what the client sent (tokens, secrets, static headers)
//!   is scrubbed from whatever a server quotes back, in errors, events,
//!   handlers and tracing.
//!
//! Tracing: tests of [`oauth`] and [`redaction`] install a process-wide
//! subscriber at TRACE (`support::trace_capture::global`) that sees every
//! test's events. One test of [`extensions`] captures its own thread's
//! output instead, and checks for a line (the ID-JAG) that only that
//! module's tests produce, one at a time; so the tests of the other
//! modules running beside it cannot make tracing's callsite cache drop it.

#[path = "../support/mod.rs"]
mod support;

mod extensions;
mod issuer_binding;
mod oauth;
mod redaction;
