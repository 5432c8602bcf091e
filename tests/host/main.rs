//! Hosts: many bindings as one `Host`, the configuration files users
//! already have, a catalog as model providers' tools, and a binding inside
//! a web gateway.
//!
//! `cargo test --test host`
//!
//! - [`host`]: a host of several in-process bindings: the merged catalog,
//!   routing by model name, failing closed, isolation between bindings,
//!   events, bounded closing.
//! - [`config_file`]: `mcpServers` / `servers` files in the Claude Desktop,
//!   Cursor and VS Code shapes (`tests/fixtures/config/`), with variables
//!   and bad entries.
//! - [`providers`]: tools as Anthropic and OpenAI tool definitions, their
//!   tool calls dispatched through a host, results as their content
//!   (`tests/fixtures/providers/`).
//! - [`axum_gateway`]: the `axum_gateway` example's router on a loopback
//!   port, sent real HTTP requests.
//! - [`apps`]: MCP Apps' visibility rules: app-only tools never offered or
//!   routed to a model, an app's calls kept to its own server's app tools.
//! - [`app_bridge`]: the host side of a rendered app: the initialize
//!   exchange, the tool's input and result, the app's requests through the
//!   host's policy, and hostile apps refused.

#[path = "../support/mod.rs"]
mod support;

mod app_bridge;
mod apps;
mod axum_gateway;
mod config_file;
mod exposure;
mod host;
mod provider_rules;
mod providers;
mod search;
