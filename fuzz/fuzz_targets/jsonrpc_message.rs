//! JSON-RPC message parsing: `Message::parse` over arbitrary text. What it
//! accepts it serializes back to text that parses to the same message; a
//! frame it calls too deep is deep, and its raw result is JSON.
//!
//! The checks live in the crate (`mcp_stack::fuzzing::jsonrpc_message`), where the
//! internals they drive are visible.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_stack::fuzzing::jsonrpc_message::run(data));
