//! The SSE decoder of the HTTP transports: arbitrary bytes in arbitrary
//! chunks, read by the event reader with small bounds. No message over the
//! frame bound, no damaged prefix over its bound, the body bound holds, and
//! the splitter alone never holds more than its bound.

use crate::transport::http::sse::{decode, Block, EventSplitter};
use crate::transport::DAMAGED_PREFIX_BYTES;

/// Reads `data` (two bounds, a chunk size, then the body) and checks what
/// the reader and the splitter give.
pub fn run(data: &[u8]) {
    let [frame, body, step, rest @ ..] = data else { return };
    let max_frame = 1 + usize::from(*frame) * 8;
    let max_body = (*body != 0).then(|| usize::from(*body) * 32);
    let step = 1 + usize::from(*step);
    let chunks: Vec<Vec<u8>> = rest.chunks(step).map(<[u8]>::to_vec).collect();

    let trace = super::read_sse(chunks.clone(), max_frame, max_body);
    for message in &trace.messages {
        assert!(message.len() <= max_frame, "a message of {} bytes over {max_frame}", message.len());
        assert!(!message.is_empty());
    }
    for (_, prefix, _) in &trace.damaged {
        assert!(prefix.len() <= DAMAGED_PREFIX_BYTES);
    }
    if let Some(max) = max_body {
        if !trace.body_limit {
            assert!(rest.len() <= max, "read {} bytes past the body bound {max}", rest.len());
        }
    }

    let bound = max_frame.max(DAMAGED_PREFIX_BYTES);
    let mut splitter = EventSplitter::new(max_frame);
    for chunk in &chunks {
        for block in splitter.push(chunk) {
            match block {
                Block::Event(bytes) => {
                    assert!(bytes.len() <= bound);
                    let _ = decode(bytes);
                }
                Block::Oversized { prefix, bytes } => {
                    assert!(prefix.len() <= DAMAGED_PREFIX_BYTES);
                    assert!(bytes > bound as u64);
                }
            }
        }
        assert!(splitter.buffered() <= bound);
    }
}
