//! Inputs the fuzz targets under `fuzz/` found, kept as regression tests of
//! the behaviour decided for them.

use mcp_stack::transport::framing::{FrameReader, SplitCheck};
use mcp_stack::transport::Inbound;

async fn frames(data: &[u8], max: usize) -> Vec<Inbound> {
    let mut reader = FrameReader::new(data, max);
    let mut split = SplitCheck::new(max);
    let mut out = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        split.feed(frame, &mut out);
    }
    split.finish(&mut out);
    out
}

/// `stdio_frames`, crash-ceb7d81b: a line of a carriage return, a vertical
/// tab and a space. Blank lines are those of ASCII whitespace (space, tab,
/// CR, LF, form feed); a vertical tab is not JSON whitespace either, so the
/// line is a frame, which the engine then drops as a damaged message.
#[tokio::test]
async fn a_line_with_a_vertical_tab_is_not_blank() {
    let out = frames(b"\r\x0b \n{\"a\":1}\n  \n", 64).await;
    assert_eq!(out, vec![Inbound::Frame("\r\x0b ".into()), Inbound::Frame("{\"a\":1}".into())]);
}

/// `http_headers`, crash-440361b8: a header name that held text the target
/// took for a secret. Names are not secret and are quoted (bounded) in the
/// error that refuses them; values never are.
#[test]
fn a_refused_header_name_is_quoted_and_its_value_is_not() {
    let mut headers = mcp_stack::transport::http::SecretHeaders::default();
    let e = headers.insert("Authork3yS3cretearer A", "the-value-s3cret").unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(shown.contains("Authork3yS3cretearer A"), "{shown}");
    assert!(!shown.contains("the-value-s3cret"), "{shown}");
}
