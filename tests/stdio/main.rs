//! The stdio transport against real child processes: `sh`, `env`, and the
//! crate's own demo server (`mcp-stack-demo`).
//!
//! `cargo test --test stdio`
//!
//! - [`transport`]: the transport alone: framing, process groups left
//!   empty, the environment a child sees (an allowlist; proxy and
//!   certificate variables pass, their credentials stay hidden), a server
//!   that never starts explained by its stderr.
//! - [`binding`]: a binding over the demo server on stdio, started
//!   directly or through `sh -c`, and a 2026-07-28 server's own requests
//!   left unanswered.
//!
//! Not in the other binaries: [`transport`] sets process-wide environment
//! variables (proxies, certificate paths) that an HTTP client would read.

#[path = "../support/mod.rs"]
mod support;

mod binding;
mod transport;
