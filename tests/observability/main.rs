//! Observability: one `tracing` span per request (binding, method, request
//! id, the tool's model name) at levels a busy host can read, no secret in
//! any span or event, and the W3C trace context in `_meta` when a
//! definition opts in.
//!
//! `cargo test --test observability`
//!
//! - [`spans`]: the scenarios, one after another on one thread, each
//!   capturing its thread's output with tracing-subscriber's fmt layer
//!   (`support::trace_capture::capture`).
//!
//! A binary of its own: with other tests hitting the same callsites on
//! parallel threads without a subscriber, tracing's process-wide callsite
//! cache can drop lines from a thread's subscriber (see [`spans`]).

#[path = "../support/mod.rs"]
mod support;

mod spans;
