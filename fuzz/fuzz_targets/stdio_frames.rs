//! The stdio frame decoder: `FrameReader` over arbitrary bytes arriving in
//! arbitrary pieces, then `SplitCheck` over its frames. Every frame stays
//! within its bound, nothing holds more than the bound, every damaged
//! frame's prefix is bounded, a split reply fails only with `framing`.
//!
//! The checks live in the crate (`mcp_stack::fuzzing::stdio_frames`), where the
//! internals they drive are visible.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_stack::fuzzing::stdio_frames::run(data));
