//! JSON-RPC message parsing: `Message::parse` over arbitrary text. What it
//! accepts it serializes back to text that parses to the same message; a
//! frame it calls too deep is deep, and its raw result is JSON.

use serde_json::value::RawValue;

use crate::protocol::jsonrpc::{nests_deeper_than, EnvelopeError, Message, MAX_MESSAGE_DEPTH};

/// Feeds `data` to the parser and checks what it gives.
pub fn run(data: &[u8]) {
    let deep = nests_deeper_than(data, MAX_MESSAGE_DEPTH);
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Message::parse(text) {
        Ok(message) => {
            assert!(!deep, "a message deeper than the bound was parsed");
            let again = Message::parse(&message.to_json()).expect("its own text parses");
            assert_eq!(again, message);
        }
        Err(EnvelopeError::TooDeep(too_deep)) => {
            assert!(deep);
            if let Some(result) = too_deep.result() {
                serde_json::from_str::<&RawValue>(result).expect("the raw result is JSON");
            }
        }
        Err(_) => {}
    }
}
