//! The client stack end to end, through real bindings over the in-memory
//! transport: the demo server in-process and scripted servers that
//! misbehave on purpose (`support::scripted`).
//!
//! `cargo test --test stack`; one module: `cargo test --test stack -- catalog::`.
//!
//! The connection and its eras:
//! - [`engine`]: the connection engine against servers that misbehave.
//! - [`reply_backlog`]: replies to a server's requests are bounded; a
//!   flooding server ends the connection with `limit_exceeded`.
//! - [`reconnect`]: servers that refuse connects or die mid-call, and a
//!   stdio server process killed mid-call.
//! - [`modern_era`]: the 2026-07-28 era: choosing it, `_meta`,
//!   `resultType`, modern errors, multi round-trip requests.
//! - [`client_identity`]: what the client tells a server it is, in every
//!   handshake.
//! - [`extensions`]: extensions and experimental capabilities declared
//!   in both eras, the server's read from its handshake.
//!
//! The layers and what a binding hands back:
//! - [`layers`]: the tool filter, result limits and tool-call gate.
//! - [`user_layer`]: a host's own layers inside a live binding, and the one
//!   call path of `binding.service()`.
//! - [`tower_layers`]: each of tower's own middleware inside a live
//!   binding, and the classes of the errors they make.
//! - [`result_items`]: a result with 10,000 images keeps `max_binary_items`.
//! - [`events`]: `Binding::events`, the stream of a binding's events.
//! - [`handlers`]: server-initiated work: elicitation, sampling, roots,
//!   logs, subscriptions, completions.
//! - [`demo`]: every request kind against the built-in demo server.
//! - [`demo_modern`]: the demo server in the 2026-07-28 era.
//! - [`tasks`]: tool calls run as tasks (2025-11-25): polled, fetched,
//!   cancelled, taken up by id, recorded in a task store; the demo
//!   server's tasks.
//! - [`hostile_tasks`]: tasks against servers that lie about them: another
//!   task's messages, a final status contradicted, `tasks/list` floods.
//! - [`held_tasks`]: the receiver side of 2025-11-25 tasks: a server's
//!   task-augmented elicitation run as a task of the client's.
//! - [`modern_tasks`]: the 2026-07-28 Tasks extension: a task followed to
//!   the result `tasks/get` carries, input answered with `tasks/update`,
//!   cancelled with `tasks/cancel`.
//! - [`skills`]: Skills (SEP-2640): listed without fetching, loaded and
//!   verified file by file only when asked.
//!
//! The catalog:
//! - [`caching`]: list results kept while the server says they are fresh
//!   (SEP-2549), through reconnects and notifications.
//! - [`catalog`]: discovery, model names, digests, generations, profiles,
//!   output validation.
//! - [`catalog_refresh`]: what a refresh lists again, and what it combines
//!   with what was listed before.
//! - [`deep_entries`]: an entry nested too deep costs itself alone; a
//!   discovery whose every page failed is a connect failure.
//! - [`display_strings`]: titles, descriptions and raw names neutralize
//!   control and bidirectional characters.
//!
//! Values on their own:
//! - [`serialize`]: the JSON (`serde`) form of the domain types.
//! - [`fuzz_regressions`]: inputs the fuzz targets under `fuzz/` found.

#[path = "../support/mod.rs"]
mod support;

mod caching;
mod catalog;
mod catalog_refresh;
mod client_identity;
mod deep_entries;
mod demo;
mod demo_modern;
mod display_strings;
mod engine;
mod events;
mod extensions;
mod fuzz_regressions;
mod handlers;
mod held_tasks;
mod hostile_tasks;
mod layers;
mod modern_era;
mod modern_tasks;
mod reconnect;
mod reply_backlog;
mod result_items;
mod serialize;
mod skills;
mod tasks;
mod tower_layers;
mod user_layer;
