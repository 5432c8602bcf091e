//! What the integration tests share: servers to test against, and ways to
//! watch what a binding did.
//!
//! - [`scripted`]: in-memory MCP servers a test scripts request by request,
//!   to misbehave on purpose, and what they saw.
//! - [`tool_server`]: an in-memory MCP server with the tools a test sets
//!   (for hosts and provider conversions).
//! - [`http_server`]: an axum router served on a free loopback port.
//! - [`modern`]: a scripted server over the in-memory transport that
//!   answers by method (either era), for end-to-end tests of a binding.
//! - [`peers`]: the real peers of the interop tests (Node, Python), found
//!   through the variables `scripts/interop.sh` sets.
//! - [`proxy`]: a forwarding HTTP proxy that records what it carried.
//! - [`process_group`]: who is still alive in a stdio server's process group.
//! - [`recorded_events`]: a binding's events, recorded to read or wait for.
//! - [`server_requests`]: the requests a 2026-07-28 server must not get
//!   answered, and handlers that record whether they were asked.
//! - [`tls`]: a throw-away CA and a TLS listener for the axum servers.
//! - [`trace_capture`]: tracing output captured as a user would see it.
//! - [`wire`]: JSON-RPC as plain JSON, for the test servers.
// Each test binary includes all of this and uses only part of it.
#![allow(dead_code)]

pub mod http_server;
pub mod modern;
pub mod peers;
pub mod process_group;
pub mod proxy;
pub mod recorded_events;
pub mod scripted;
pub mod server_requests;
pub mod tls;
pub mod tool_server;
pub mod trace_capture;
pub mod wire;
