//! Interop with real peers written by others: the reference server
//! "everything" (Node), the Python SDK `mcp` 2.3.0, the TypeScript SDK v2
//! server, FastMCP 4.1.6, and the `oidc-provider` authorization server.
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers, sets
//! the variables naming them (`support::peers`) and runs this binary one
//! module at a time, starting what each needs in between:
//! `cargo test --features interop --test interop -- stdio:: --test-threads=1`.
//! These tests never skip: a missing peer is a failure. Feature `interop`;
//! the modules over HTTP need `http`, the OAuth ones `oauth` (both on by
//! default).
//!
//! - [`stdio`]: everything and the Python server over stdio, and the `mcp`
//!   command with a config file of both.
//! - [`tasks`]: everything's `simulate-research-query` run as a task:
//!   through `call_tool`, followed to its result, asking for input, and
//!   cancelled.
//! - [`handlers`]: the host's handlers against everything: elicitation,
//!   sampling, roots, logging, subscriptions, completion.
//! - [`http`]: everything in its `streamableHttp` and `sse` modes, the
//!   Python server over streamable HTTP (a session it forgets).
//! - [`host`]: a host of three bindings over real peers, one killed while
//!   the others serve.
//! - [`modern_era`]: the 2026-07-28 era with the Python and TypeScript
//!   SDKs' modern servers, and everything through the fallback.
//! - [`tasks_extension`]: the 2026-07-28 Tasks extension against a Python SDK
//!   server of it: followed, asking for input, cancelled, and taken up by
//!   id from a second `mcp` process.
//! - [`fastmcp`]: FastMCP through the `mcp` command, on the era its profile
//!   picks.
//! - [`mcp_apps`]: MCP Apps against the published example server
//!   `server-basic-vanillajs` over stdio and HTTP, and `mcp apps` /
//!   `read-app` against it.
//! - [`fastmcp_task_server`]: the Tasks extension served by FastMCP's own
//!   engine over stdio and HTTP: followed, cancelled, refused without the
//!   extension, and through `mcp call --task`.
//! - [`network`]: the `mcp` command through tinyproxy (environment and
//!   flags), to a server behind a test CA, and with a client certificate.
//! - [`redis`]: public cached results shared by two replicas through a
//!   real `redis-server`, and Redis going away.
//! - [`oauth`]: discovery, registration, the code flow and a refresh at
//!   `oidc-provider`, in front of a Python resource server.
//! - [`oauth_extensions`]: `private_key_jwt` and DPoP with server nonces at
//!   `oidc-provider`.
//! - [`redis_faults`]: the Redis stores (tokens, task records, the cache)
//!   restarted, paused, full, holding newer or garbage records; tokens
//!   sealed at rest; two processes refreshing at once refresh once.
//! - [`replicas`]: two processes of one host share their tokens and started
//!   tasks through a real `redis-server`: one authorizes and starts a task,
//!   the other never authorizes and polls the task to its result.
//! - [`unix_socket`]: the example transport `examples/unix_socket/`, built
//!   only on the public `Transport` traits, against everything served on a
//!   Unix socket by `socat`: a call, a server killed mid-call, a missing
//!   socket, and a close that leaves no process behind.
//! - [`inspect`]: `mcp inspect` in Chromium (playwright-core): the token,
//!   a tool's form, an elicitation, both example apps rendered, the
//!   monitor's app-only tool, and a hostile app refused.

#[path = "../support/mod.rs"]
mod support;

mod handlers;
mod inspect;
mod stdio;
mod tasks;
mod unix_socket;

#[cfg(feature = "http")]
mod fastmcp;
mod fastmcp_task_server;
#[cfg(feature = "http")]
mod host;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod mcp_apps;
#[cfg(feature = "http")]
mod model_view;
#[cfg(feature = "http")]
mod modern_era;
#[cfg(feature = "http")]
mod network;
mod redis;
#[cfg(feature = "http")]
mod tasks_extension;

#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "oauth")]
mod oauth_extensions;
#[cfg(feature = "oauth")]
mod redis_faults;
#[cfg(feature = "oauth")]
mod replicas;
