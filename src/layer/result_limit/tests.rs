use serde_json::{json, Value};
use tokio_test::{assert_pending, assert_ready};
use tower_test::mock;

use super::bounds::{decoded_len, serialized_len};
use super::*;
use crate::content::{Content, Dropped, Mark, ResourceResult, ResultMarks, ToolResult, KIND_IMAGE};

/// Sends `method` through a [`ResultLimit`] over a mock whose answer is
/// `result`, and returns what comes out.
async fn through(limits: Limits, method: &str, result: Value) -> McpResponse {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(ResultLimitLayer::new(limits));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(McpRequest::new(method, Default::default())));
    assert_pending!(fut.poll());
    let (req, send) = handle.next_request().await.unwrap();
    assert_eq!(req.method, method);
    send.send_response(McpResponse::new(result));
    assert_ready!(fut.poll()).unwrap()
}

fn text_limit(max: usize) -> Limits {
    Limits::default().with_max_text_result_bytes(max)
}

fn marks(rsp: &McpResponse) -> ResultMarks {
    rsp.extensions.get::<ResultMarks>().cloned().unwrap_or_default()
}

/// Whether item `i` of the result was marked cut.
fn truncated(rsp: &McpResponse, i: usize) -> bool {
    marks(rsp).is_truncated(i)
}

/// What item `i` of the result was marked refused as, if it was.
fn refused(rsp: &McpResponse, i: usize) -> Option<(&'static str, usize)> {
    match marks(rsp).item(i) {
        Some(Mark::Refused { kind, bytes }) => Some((kind, bytes)),
        _ => None,
    }
}

/// A base64 string that decodes to `n` bytes.
fn b64(n: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(vec![7u8; n])
}

fn tool_content(rsp: &McpResponse) -> Vec<Content> {
    let before = rsp.warnings.len();
    let result = ToolResult::from_response(rsp.clone()).unwrap();
    assert_eq!(result.warnings.len(), before, "conversion added warnings: {:?}", result.warnings);
    result.content
}

#[tokio::test(start_paused = true)]
async fn text_within_the_budget_is_untouched() {
    let result = json!({"content": [{"type": "text", "text": "héllo"}, {"type": "text", "text": "wörld"}]});
    let rsp = through(text_limit(12), "tools/call", result.clone()).await;
    assert_eq!(rsp.result, result);
    assert!(rsp.warnings.is_empty());
}

#[tokio::test(start_paused = true)]
async fn text_is_cut_at_a_utf8_boundary_across_items() {
    // "abcd" is 4 bytes; "é" 2, "€" 3, "🦀" 4. The budget of 9 leaves 5 for
    // the second item: "é€" is exactly 5 bytes, and the crab would cross it.
    let result = json!({"content": [
        {"type": "text", "text": "abcd"},
        {"type": "text", "text": "é€🦀tail"},
        {"type": "image", "data": b64(3), "mimeType": "image/png"},
        {"type": "text", "text": "later"},
    ]});
    let rsp = through(text_limit(9), "tools/call", result).await;
    let items = rsp.result["content"].as_array().unwrap();
    assert_eq!(items[0]["text"], "abcd");
    assert!(!truncated(&rsp, 0));
    assert_eq!(items[1]["text"], "é€");
    assert!(truncated(&rsp, 1));
    // Non-text items are not touched by the text budget.
    assert_eq!(items[2]["type"], "image");
    // Everything after the cut is emptied: the host keeps a prefix.
    assert_eq!(items[3]["text"], "");
    assert!(truncated(&rsp, 3));
    assert_eq!(rsp.warnings, vec!["cut the text to 9 bytes of the 22 received".to_string()]);

    // A budget that ends inside a character cuts below it.
    // Boundaries of "é€🦀tail" fall at 0, 2, 5, 9, 10, ...
    for (budget, kept) in [(1, ""), (3, "é"), (4, "é"), (5, "é€"), (8, "é€"), (9, "é€🦀"), (10, "é€🦀t")]
    {
        let result = json!({"content": [{"type": "text", "text": "é€🦀tail"}]});
        let rsp = through(text_limit(budget), "tools/call", result).await;
        assert_eq!(rsp.result["content"][0]["text"], kept, "budget {budget}");
    }

    let converted = tool_content(
        &through(
            text_limit(9),
            "tools/call",
            json!({"content": [
                {"type": "text", "text": "abcdé€🦀"},
            ]}),
        )
        .await,
    );
    assert_eq!(
        converted,
        vec![Content::Text { text: "abcdé€".into(), truncated: true, annotations: None, meta: None }]
    );
}

#[tokio::test(start_paused = true)]
async fn structured_content_over_its_bound_is_dropped_with_a_warning() {
    let structured = json!({"rows": ["a", "b", "c"]});
    let size = serialized_len(&structured);
    assert_eq!(size, r#"{"rows":["a","b","c"]}"#.len());

    let limits = Limits::default().with_max_structured_bytes(size);
    let result = json!({"content": [], "structuredContent": structured});
    let rsp = through(limits, "tools/call", result.clone()).await;
    assert_eq!(rsp.result, result, "exactly at the bound is kept");

    let limits = Limits::default().with_max_structured_bytes(size - 1);
    let rsp = through(limits, "tools/call", result).await;
    assert!(rsp.result.get("structuredContent").is_none());
    assert_eq!(rsp.result["content"], json!([]));
    assert_eq!(rsp.warnings.len(), 1);
    assert!(rsp.warnings[0].contains("structured content of 22 bytes"), "{:?}", rsp.warnings);
    // The marks say it was withheld, so validation does not call it missing;
    // the server's JSON carries no trace of the crate.
    assert_eq!(marks(&rsp).structured_dropped(), Some(22));
    assert!(rsp.result.get("_meta").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_binary_item_over_its_size_is_refused() {
    let limits = Limits::default().with_max_binary_item_bytes(10);
    let result = json!({"content": [
        {"type": "image", "data": b64(10), "mimeType": "image/png"},
        {"type": "audio", "data": b64(11), "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "x:big", "blob": b64(12)}},
        {"type": "resource", "resource": {"uri": "x:small", "blob": b64(1)}},
    ]});
    let rsp = through(limits, "tools/call", result).await;
    let items = rsp.result["content"].as_array().unwrap();
    assert_eq!(items[0]["type"], "image");
    assert_eq!(refused(&rsp, 0), None);
    // A refused item keeps its place and shape, its payload emptied.
    assert_eq!(items[1], json!({"type": "audio", "data": "", "mimeType": "audio/wav"}));
    assert_eq!(refused(&rsp, 1), Some(("audio", 11)));
    assert_eq!(items[2], json!({"type": "resource", "resource": {"uri": "x:big", "blob": ""}}));
    assert_eq!(refused(&rsp, 2), Some(("resource", 12)));
    assert_eq!(items[3]["resource"]["uri"], "x:small");
    assert_eq!(rsp.warnings.len(), 2);
    assert!(rsp.warnings[0].contains("audio item of 11 bytes"), "{:?}", rsp.warnings);

    let content = tool_content(&rsp);
    assert_eq!(content[1], Content::Unsupported { kind: "audio".into(), bytes: 11 });
    assert_eq!(content[2], Content::Unsupported { kind: "resource".into(), bytes: 12 });
    assert!(matches!(&content[0], Content::Image { data, .. } if data.len() == 10));
}

#[tokio::test(start_paused = true)]
async fn binary_items_beyond_the_count_are_removed_from_a_tool_result() {
    let limits = Limits::default().with_max_binary_items(2).with_max_binary_item_bytes(8);
    let result = json!({"content": [
        {"type": "image", "data": b64(9), "mimeType": "image/png"},   // over size: no place used
        {"type": "image", "data": b64(1), "mimeType": "image/png"},
        {"type": "text", "text": "between"},
        {"type": "audio", "data": b64(2), "mimeType": "audio/wav"},
        {"type": "image", "data": b64(3), "mimeType": "image/png"},   // third kept-able: removed
        {"type": "resource", "resource": {"uri": "x:r", "blob": b64(4)}}, // removed
        {"type": "text", "text": "after"},
    ]});
    let rsp = through(limits, "tools/call", result).await;
    let items = rsp.result["content"].as_array().unwrap();
    let types: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["image", "image", "text", "audio", "text"]);
    // The one refused for its size keeps its place; marks use kept indices.
    assert_eq!(refused(&rsp, 0), Some((KIND_IMAGE, 9)));
    assert_eq!(items[4]["text"], "after");
    assert_eq!(marks(&rsp).dropped(), Some(Dropped { items: 2, bytes: 7 }));
    assert_eq!(rsp.warnings.len(), 2);
    assert_eq!(rsp.warnings[1], "dropped 2 items of 7 bytes: 2 binary items beyond the first 2");

    let content = tool_content(&rsp);
    assert_eq!(content.len(), 6);
    assert_eq!(content[0], Content::Unsupported { kind: "image".into(), bytes: 9 });
    assert_eq!(content[5], Content::Unsupported { kind: "2 items".into(), bytes: 7 });
}

/// Issue 13, item 4: a result with 10,000 images kept 16 and 9,984
/// one-for-one stand-ins.
#[tokio::test(start_paused = true)]
async fn ten_thousand_images_keep_sixteen_and_one_stand_in() {
    let image = json!({"type": "image", "data": b64(3), "mimeType": "image/png"});
    let result = json!({"content": vec![image; 10_000]});
    let rsp = through(Limits::default(), "tools/call", result).await;
    assert_eq!(rsp.result["content"].as_array().unwrap().len(), 16);
    assert_eq!(marks(&rsp).dropped(), Some(Dropped { items: 9984, bytes: 9984 * 3 }));
    assert_eq!(rsp.warnings, ["dropped 9984 items of 29952 bytes: 9984 binary items beyond the first 16"]);
    let content = tool_content(&rsp);
    assert_eq!(content.len(), 17);
    assert!(content[..16].iter().all(|c| matches!(c, Content::Image { data, .. } if data.len() == 3)));
    assert_eq!(content[16], Content::Unsupported { kind: "9984 items".into(), bytes: 29952 });
}

#[tokio::test(start_paused = true)]
async fn items_beyond_the_item_count_are_removed() {
    let limits = Limits::default().with_max_content_items(3);
    let text = |t: &str| json!({"type": "text", "text": t});
    let result = json!({"content": [text("a"), text("b"), text("c"), text("d"), text("e")]});
    let rsp = through(limits, "tools/call", result).await;
    assert_eq!(rsp.result["content"].as_array().unwrap().len(), 3);
    let bytes = 2 * serialized_len(&text("d"));
    assert_eq!(marks(&rsp).dropped(), Some(Dropped { items: 2, bytes }));
    assert_eq!(rsp.warnings, [format!("dropped 2 items of {bytes} bytes: 2 items beyond the first 3")]);
    let content = tool_content(&rsp);
    assert_eq!(content.last(), Some(&Content::Unsupported { kind: "2 items".into(), bytes }));

    // Resources and prompts: the same count; no stand-in is invented.
    let read = json!({"contents": [{"uri": "x:1", "text": "1"}, {"uri": "x:2", "text": "2"},
        {"uri": "x:3", "text": "3"}, {"uri": "x:4", "text": "4"}]});
    let rsp = through(limits, "resources/read", read).await;
    assert_eq!(rsp.result["contents"].as_array().unwrap().len(), 3);
    assert_eq!(marks(&rsp).dropped().map(|d| d.items), Some(1));
    assert_eq!(ResourceResult::from_response(rsp).unwrap().contents.len(), 3);
    let m = json!({"role": "user", "content": {"type": "text", "text": "hi"}});
    let rsp = through(limits, "prompts/get", json!({"messages": vec![m; 5]})).await;
    assert_eq!(rsp.result["messages"].as_array().unwrap().len(), 3);
    assert_eq!(rsp.warnings.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn decoded_size_comes_from_the_base64_length() {
    for n in 0..10 {
        assert_eq!(decoded_len(&b64(n)), n, "padded, {n} bytes");
        assert_eq!(decoded_len(b64(n).trim_end_matches('=')), n, "unpadded, {n} bytes");
    }
}

#[tokio::test(start_paused = true)]
async fn resource_contents_are_bounded_by_the_same_rules() {
    let limits = Limits::default().with_max_text_result_bytes(6).with_max_binary_item_bytes(4);
    let result = json!({"contents": [
        {"uri": "x:1", "mimeType": "text/plain", "text": "ünï"},      // 5 bytes
        {"uri": "x:2", "blob": b64(5)},                                // over size
        {"uri": "x:3", "text": "çode"},                                // crosses the budget
        {"uri": "x:4", "blob": b64(4)},
    ]});
    let rsp = through(limits, "resources/read", result).await;
    let items = rsp.result["contents"].as_array().unwrap();
    assert_eq!(items[0]["text"], "ünï");
    assert!(!truncated(&rsp, 0));
    assert_eq!(items[1]["blob"], "");
    assert!(truncated(&rsp, 1));
    assert_eq!(items[2]["text"], "");
    assert!(truncated(&rsp, 2));
    assert_eq!(items[3]["blob"], b64(4));
    assert_eq!(rsp.warnings.len(), 2);

    let read = ResourceResult::from_response(rsp.clone()).unwrap();
    assert_eq!(read.warnings.len(), 2, "the conversion adds none");
    let contents = read.contents;
    assert!(!contents[0].truncated);
    assert_eq!((contents[1].data.as_ref(), contents[1].truncated), (None, true));
    assert_eq!((contents[2].text.as_deref(), contents[2].truncated), (Some(""), true));
    assert_eq!(contents[3].data.as_ref().map(Vec::len), Some(4));
}

#[tokio::test(start_paused = true)]
async fn prompt_messages_are_bounded_by_the_same_rules() {
    let limits = Limits::default().with_max_text_result_bytes(8).with_max_binary_items(1);
    let result = json!({"description": "a long description that is not content", "messages": [
        {"role": "user", "content": {"type": "text", "text": "hello"}},
        {"role": "assistant", "content": {"type": "image", "data": b64(2), "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "wörld"}},
        {"role": "user", "content": {"type": "image", "data": b64(2), "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "resource", "resource": {"uri": "x:t", "text": "more"}}},
    ]});
    let rsp = through(limits, "prompts/get", result).await;
    let messages = rsp.result["messages"].as_array().unwrap();
    assert_eq!(rsp.result["description"], "a long description that is not content");
    assert_eq!(messages[0]["content"]["text"], "hello");
    assert_eq!(messages[1]["content"]["type"], "image");
    // 3 bytes left: "w" and "ö" (2) fit, "r" does not.
    assert_eq!(messages[2]["content"]["text"], "wö");
    assert!(truncated(&rsp, 2));
    assert_eq!(messages[3]["content"]["data"], "");
    assert_eq!(refused(&rsp, 3), Some((KIND_IMAGE, 2)));
    // An embedded resource's text shares the budget.
    assert_eq!(messages[4]["content"]["resource"]["text"], "");
    assert!(truncated(&rsp, 4));
    let prompt = crate::content::PromptResult::from_response(rsp).unwrap();
    assert_eq!(prompt.messages[3].content, Content::Unsupported { kind: "image".into(), bytes: 2 });
}

#[tokio::test(start_paused = true)]
async fn other_methods_pass_untouched() {
    let limits = Limits::default()
        .with_max_text_result_bytes(1)
        .with_max_structured_bytes(1)
        .with_max_binary_item_bytes(1)
        .with_max_binary_items(1);
    let result = json!({
        "content": [{"type": "text", "text": "long text"}, {"type": "image", "data": b64(100), "mimeType": "image/png"}],
        "structuredContent": {"a": 1},
        "contents": [{"uri": "x:1", "text": "long text"}],
        "messages": [{"role": "user", "content": {"type": "text", "text": "long text"}}],
        "tools": [{"name": "t", "description": "long text"}],
    });
    for method in ["tools/list", "resources/list", "prompts/list", "completion/complete", "ping", "custom/x"]
    {
        let rsp = through(limits, method, result.clone()).await;
        assert_eq!(rsp.result, result, "{method}");
        assert!(rsp.warnings.is_empty(), "{method}");
    }
}

#[tokio::test(start_paused = true)]
async fn what_a_server_writes_in_its_json_marks_nothing() {
    // The keys an earlier version of this crate used between its layers.
    let result = json!({"content": [
        {"type": "x-mcp-stack/unsupported", "kind": "image", "bytes": 1},
        {"type": "text", "text": "fine", "_meta": {"x-mcp-stack/truncated": true}},
    ]});
    let rsp = through(Limits::default(), "tools/call", result.clone()).await;
    assert_eq!(rsp.result, result, "the server's JSON is the server's");
    assert!(marks(&rsp).is_empty());
    let converted = ToolResult::from_response(rsp).unwrap();
    // Not a mark: the block's `_meta`, handed to the host as data.
    let Content::Text { text, truncated, meta, .. } = &converted.content[1] else { panic!() };
    assert_eq!((text.as_str(), *truncated), ("fine", false));
    assert_eq!(meta.as_ref().unwrap()["x-mcp-stack/truncated"], true);
}

#[tokio::test(start_paused = true)]
async fn a_result_of_the_wrong_shape_is_left_for_the_conversion() {
    for result in [json!("text"), json!({"content": "not a list"}), json!({"contents": [1, "x"]})] {
        let rsp = through(text_limit(1), "tools/call", result.clone()).await;
        assert_eq!(rsp.result, result);
    }
}

#[tokio::test(start_paused = true)]
async fn an_error_passes_through() {
    let (mut svc, mut handle) =
        mock::spawn_layer::<McpRequest, McpResponse, _>(ResultLimitLayer::new(Limits::default()));
    assert_ready!(svc.poll_ready()).unwrap();
    let mut fut = tokio_test::task::spawn(svc.call(McpRequest::new("tools/call", Default::default())));
    assert_pending!(fut.poll());
    let (_req, send) = handle.next_request().await.unwrap();
    send.send_error(crate::Error::new(crate::FailureClass::RemoteToolError, "no"));
    let err = crate::Error::from_boxed(assert_ready!(fut.poll()).unwrap_err());
    assert_eq!(err.class(), crate::FailureClass::RemoteToolError);
}
