//! The SSE decoder of the HTTP transports: arbitrary bytes in arbitrary
//! chunks, read by the event reader with small bounds. No message over the
//! frame bound, no damaged prefix over its bound, the body bound holds, and
//! the splitter alone never holds more than its bound.
//!
//! The checks live in the crate (`mcp_stack::fuzzing::sse_events`), where the
//! internals they drive are visible.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_stack::fuzzing::sse_events::run(data));
