//! What an MCP server and its authorization server send the OAuth client:
//! `WWW-Authenticate` challenges, Protected Resource Metadata,
//! authorization server metadata, token responses, the redirect's query,
//! `DPoP-Nonce` headers and nonce challenges, and an enterprise IdP's
//! token exchange answer (the ID-JAG).
//! Whatever the bytes, parsing ends with a value or a classified error, never
//! a panic; a token or code the input carries never shows in `Debug` or in
//! an error; a parsed challenge's scope list is never longer than its input.
//!
//! The checks live in the crate (`mcp_stack::fuzzing::auth_documents`), where the
//! internals they drive are visible.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mcp_stack::fuzzing::auth_documents::run(data));
