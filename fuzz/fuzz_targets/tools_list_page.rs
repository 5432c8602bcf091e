//! Catalog ingest of `tools/list` pages: a real `Connection` over the
//! in-memory transport, whose server answers each `tools/list` with the next
//! page of the input (pages separated by NUL bytes) as its `result`, and
//! discovery as a binding runs it at connect. On tokio's paused clock, so a
//! reply that never comes costs nothing. Whatever is built keeps the
//! catalog's rules.
//!
//! The checks live in the crate (`mcp_stack::fuzzing::tools_list_page`), where the
//! internals they drive are visible.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_stack::fuzzing::tools_list_page::run(data));
