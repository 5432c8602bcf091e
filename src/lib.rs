//! A bounded, deadline-driven [MCP](https://modelcontextprotocol.io) client
//! for hosts, built as tower layers.
//!
//! A host (an agent, an IDE, a gateway) holds one [`Binding`] per server:
//! a connection over a transport (stdio, streamable HTTP, HTTP+SSE or
//! in-memory) inside a stack of `tower` layers, so that every call has an
//! absolute deadline no server can stretch, every result and message is
//! bounded while it is read, and every failure carries a stable
//! [`FailureClass`]. The stack can be recomposed, extended with layers of
//! your own, and tested one layer at a time. A [`host::Host`] holds many
//! bindings as one.
//!
//! # Example
//!
//! Connect to the built-in demo server (feature `demo`, on by default),
//! list its tools and call one that reports progress:
//!
//! ```
//! # #[cfg(feature = "demo")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition};
//! use std::time::Duration;
//!
//! // A server of yours is the same with another factory: a command line
//! // (`transport::stdio::StdioFactory`) or a URL (`transport::http::HttpBuilder`).
//! let definition = Definition::new("demo", mcp_stack::demo::factory());
//! let binding = Binding::connect(definition, Handlers::default()).await?;
//! for tool in binding.list_tools().await?.items {
//!     println!("{}", tool.name);
//! }
//! let opts = CallOpts::default()
//!     .with_timeout(Duration::from_secs(5))
//!     .with_progress(|p| println!("{}/{:?}", p.progress, p.total));
//! let result = binding.call_tool("count", serde_json::json!({"steps": 3}), opts).await?;
//! assert_eq!(result.content[0].as_text(), Some("counted to 3"));
//! binding.close().await;
//! # Ok(()) }
//! # #[cfg(not(feature = "demo"))]
//! # fn main() {}
//! ```
//!
//! # Where things are
//!
//! The everyday types are at the crate root; everything else is in the
//! module of its concern.
//!
//! - A binding and what configures it: [`Binding`] ([`Binding::connect`],
//!   or [`Binding::builder`] for layers of your own), [`Definition`],
//!   [`Limits`], [`Timeouts`], [`ToolFilter`], [`AllowedCapabilities`],
//!   [`ProtocolChoice`], [`ReconnectPolicy`], [`RetryPolicy`].
//! - A call: [`CallOpts`] (deadline, progress), the requests and responses
//!   every layer of the stack takes ([`McpRequest`], [`McpResponse`]), the
//!   results ([`ToolResult`], [`Content`], [`PromptResult`],
//!   [`ResourceResult`]).
//! - What goes wrong: [`Error`], [`FailureClass`]; what a binding reports:
//!   [`Event`], [`State`], [`Binding::events`].
//! - [`transport`]: stdio children ([`transport::stdio::StdioFactory`]),
//!   HTTP ([`transport::http::HttpBuilder`], feature `http`), in-memory.
//! - [`auth`]: OAuth 2.1 for the HTTP transports ([`auth::OAuth`], feature
//!   `oauth`).
//! - [`handlers`]: what the host answers when a server asks (elicitation,
//!   sampling, roots, logs): [`handlers::Handlers`].
//! - [`catalog`]: what a server offers, in generations the host adopts
//!   ([`catalog::Catalog`]); [`compat`]: how far a binding bends for an
//!   imperfect server.
//! - [`layer`]: the middleware, one module per layer; the order of the
//!   stack and why is in [`Binding`'s docs](Binding#the-stack).
//! - [`host`]: many bindings as one ([`host::Host`]), and the `mcpServers`
//!   config files; [`providers`]: a catalog as OpenAI or Anthropic tools.
//! - [`tasks`], [`skills`], [`cache`]: tasks and where started ones are
//!   recorded, Skills, cached list and read results.
//! - Below the stack: [`connection`] (the JSON-RPC engine), [`era`] (the
//!   two protocol eras and the choice between them), [`protocol`] (the
//!   wire types), [`session`], [`redact`].
//! - [`demo`]: the in-process demo server of the example above.
//!
//! # Guides
//!
//! The repository's `docs/` folder has the guides (`docs/README.md` is the
//! index): using the library, HTTP and OAuth, tasks and the extensions, a
//! host as several replicas, the `mcp` command, how the stack fits
//! together, testing and performance. What changed before 1.0 is in
//! `CHANGELOG.md`.
// The guides' code blocks stay doctests, as they were when the README was
// the crate docs: appended to these docs only when rustdoc collects doctests.
#![cfg_attr(doctest, doc = include_str!("../docs/using-the-library.md"))]
#![cfg_attr(doctest, doc = include_str!("../docs/remote-servers.md"))]
#![cfg_attr(doctest, doc = include_str!("../docs/architecture.md"))]
#![cfg_attr(doctest, doc = include_str!("../docs/protocol-features.md"))]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

#[cfg(feature = "oauth")]
pub mod auth;
mod binding;
pub mod cache;
mod canonical;
pub mod catalog;
pub mod compat;
mod config;
pub mod connection;
mod content;
#[cfg(feature = "demo")]
pub mod demo;
pub mod era;
mod error;
mod events;
mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod handlers;
pub mod host;
pub mod layer;
pub mod protocol;
pub mod providers;
pub mod redact;
mod request;
pub mod search;
mod serialize;
pub mod session;
pub mod skills;
#[cfg(any(test, feature = "redis"))]
mod store_record;
pub mod tasks;
pub mod transport;

// The everyday types live at the root, each at this one path: a binding and
// what configures it, the requests and responses of its stack, the results
// it hands back, its events and its errors. Everything else is in the module
// of its concern.
pub use binding::{
    Binding, BindingBuilder, BindingFuture, BindingService, Definition, Listing, StackParts, Status,
    TaskHandle, TaskStart, UserLayer,
};
pub use config::{
    AllowedCapabilities, AlwaysLoad, ClientExtensions, Limits, ProtocolChoice, ReconnectPolicy,
    RepeatableTools, RetryPolicy, Timeouts, ToolFilter,
};
pub use content::{
    Content, Dropped, Mark, PromptMessage, PromptResult, ResourceContent, ResourceResult, ResultMarks,
    ToolResult,
};
pub use error::{BoxError, Error, ErrorReport, FailureClass, Result};
pub use events::{Event, EventHandler, EventItem, EventStream, Failure, SampleOutcome, State};
pub use request::{BoxMcpService, CallOpts, McpRequest, McpResponse, ProgressSink, ProgressUpdate};
pub use tasks::{TaskInfo, TaskStatus};
