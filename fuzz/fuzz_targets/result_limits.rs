//! Result conversion with the limits: an arbitrary JSON result through the
//! public `ResultLimitLayer` over a `tower::service_fn`, then converted as
//! the binding converts it (`ToolResult::from_response`, which reads the
//! layer's typed marks). What comes out stays within the limits the input
//! bytes chose.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stack::{Content, ToolResult};
use mcp_stack::layer::result_limit::ResultLimitLayer;
use mcp_stack::{McpRequest, McpResponse};
use mcp_stack::Limits;
use serde_json::Value;
use std::future::Future;
use std::task::{Context, Poll, Waker};
use tower::{service_fn, Layer, ServiceExt};

const METHODS: [&str; 4] = ["tools/call", "prompts/get", "resources/read", "tools/list"];

fn ready<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the layer waited on a ready service"),
    }
}

fn encoded_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

fuzz_target!(|data: &[u8]| {
    let [text, structured, item, items, method, rest @ ..] = data else { return };
    let Ok(result) = serde_json::from_slice::<Value>(rest) else { return };
    // Small bounds (a zero field would select its default).
    let limits = Limits::default()
        .with_max_text_result_bytes(1 + usize::from(*text))
        .with_max_structured_bytes(1 + usize::from(*structured) * 4)
        .with_max_binary_item_bytes(1 + usize::from(*item))
        .with_max_binary_items(1 + usize::from(*items % 8));
    let method = METHODS[usize::from(*method) % METHODS.len()];
    let inner = service_fn(move |_req: McpRequest| {
        let result = result.clone();
        async move { Ok::<_, mcp_stack::Error>(McpResponse::new(result)) }
    });
    let service = ResultLimitLayer::new(limits).layer(inner);
    let request = McpRequest::new(method, Default::default());
    let response = ready(service.oneshot(request)).expect("the layer adds no failure");
    if method != "tools/call" {
        return;
    }
    let Ok(call) = ToolResult::from_response(response) else { return };
    if let Some(structured) = &call.structured {
        assert!(encoded_len(structured) <= limits.max_structured_bytes(), "structured content over its bound");
    }
    let (mut text_bytes, mut binaries) = (0, 0);
    for content in call.content {
        match content {
            Content::Text { text, .. } => text_bytes += text.len(),
            Content::Image { data, .. } | Content::Audio { data, .. } => {
                assert!(data.len() <= limits.max_binary_item_bytes(), "an item of {} bytes", data.len());
                binaries += 1;
            }
            _ => {}
        }
    }
    assert!(text_bytes <= limits.max_text_result_bytes(), "{text_bytes} bytes of text kept");
    assert!(binaries <= limits.max_binary_items(), "{binaries} binary items kept");
});
