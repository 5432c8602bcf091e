//! Converting wire blocks and results into the domain's content: media,
//! links, annotations and `_meta`, and what the result limit marked.

use super::*;
use crate::protocol::content::Role;
use serde_json::json;

fn response(result: Value, marks: ResultMarks) -> McpResponse {
    let mut rsp = McpResponse::new(result);
    rsp.extensions.insert(marks);
    rsp
}

#[test]
fn images_and_audio_given_as_data_urls_are_decoded_and_links_kept_as_links() {
    let block = |kind: &str, data: &str, mime: &str| -> ContentBlock {
        serde_json::from_value(json!({"type": kind, "data": data, "mimeType": mime})).unwrap()
    };
    let mut warnings = Vec::new();
    let png =
        Content::from_block(block("image", "data:image/png;base64,iVBORw0K", "image/png"), &mut warnings);
    assert_eq!(
        png,
        Content::Image {
            data: decode_base64("iVBORw0K").unwrap(),
            mime_type: "image/png".into(),
            annotations: None,
            meta: None
        }
    );
    // The URL's type when the block says none; parameters are fine.
    let wav =
        Content::from_block(block("audio", "DATA:audio/wav;rate=8000;base64,UklGRg==", ""), &mut warnings);
    assert_eq!(
        wav,
        Content::Audio {
            data: b"RIFF".to_vec(),
            mime_type: "audio/wav".into(),
            annotations: None,
            meta: None
        }
    );
    assert!(warnings.is_empty(), "{warnings:?}");

    let link = Content::from_block(block("image", "https://cdn.example/cat.png", "image/png"), &mut warnings);
    let expected = Content::ResourceLink {
        uri: "https://cdn.example/cat.png".into(),
        name: "image".into(),
        mime_type: Some("image/png".into()),
        description: None,
        title: None,
        size: None,
        annotations: None,
        meta: None,
    };
    assert_eq!(link, expected);

    for (data, mime, why) in [
        ("data:text/html;base64,PGI+", "image/png", "not of type image/*"),
        ("data:image/gif;base64,R0lG", "image/png", "differs from its mimeType"),
        ("data:image/svg+xml,<svg/>", "image/svg+xml", "not base64"),
        ("data:image/png;base64", "image/png", "no payload"),
        ("data:image/png;base64,@@@", "image/png", "payload is not base64"),
    ] {
        let mut warnings = Vec::new();
        let content = Content::from_block(block("image", data, mime), &mut warnings);
        assert_eq!(content, Content::Unsupported { kind: "image".into(), bytes: data.len() }, "{data}");
        assert!(warnings.len() == 1 && warnings[0].contains(why), "{data}: {warnings:?}");
    }
}

#[test]
fn a_resource_link_keeps_its_title_size_and_meta() {
    let block: ContentBlock = serde_json::from_value(json!({
        "type": "resource_link", "uri": "file:///r.md", "name": "r", "title": "Report\u{1b}[2J",
        "size": 7, "_meta": {"x-owner": "docs"}
    }))
    .unwrap();
    let Content::ResourceLink { title, size, meta, .. } = Content::from_block(block, &mut Vec::new()) else {
        panic!("a link")
    };
    let title = title.unwrap();
    assert!(title.starts_with("Report") && !title.contains('\u{1b}'), "{title:?}");
    assert_eq!(size, Some(7));
    assert_eq!(meta.unwrap()["x-owner"], "docs");
}

#[test]
fn annotations_and_meta_reach_the_host_checked() {
    let mut warnings = Vec::new();
    let block: ContentBlock = serde_json::from_value(json!({
        "type": "text", "text": "t", "_meta": {"x-trace": "abc"},
        "annotations": {"audience": ["user", "assistant", "user"], "priority": 0.7, "lastModified": "2026-07-28T10:00:00Z"}
    }))
    .unwrap();
    let Content::Text { annotations, meta, .. } = Content::from_block(block, &mut warnings) else { panic!() };
    let annotations = annotations.unwrap();
    assert_eq!(annotations.audience, Some(vec![Role::User, Role::Assistant]), "de-duplicated");
    assert_eq!(annotations.priority, Some(0.7));
    assert_eq!(annotations.last_modified.as_deref(), Some("2026-07-28T10:00:00Z"));
    assert_eq!(meta.unwrap()["x-trace"], "abc");
    assert!(warnings.is_empty());

    // A priority out of range and an overlong time cost themselves only.
    let block: ContentBlock = serde_json::from_value(json!({
        "type": "image", "data": "iVBORw0K", "mimeType": "image/png",
        "annotations": {"audience": ["assistant"], "priority": 7.5, "lastModified": "x".repeat(65)}
    }))
    .unwrap();
    let Content::Image { annotations, .. } = Content::from_block(block, &mut warnings) else { panic!() };
    assert_eq!(
        annotations,
        Some(Annotations { audience: Some(vec![Role::Assistant]), ..Default::default() })
    );
    assert_eq!(warnings.len(), 2, "{warnings:?}");

    let block: ContentBlock =
        serde_json::from_value(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "annotations": {"priority": -1}}))
            .unwrap();
    let Content::Audio { annotations, .. } = Content::from_block(block, &mut warnings) else { panic!() };
    assert_eq!(annotations, None, "nothing left of them");

    // An embedded resource keeps the block's and the item's own.
    let block: ContentBlock = serde_json::from_value(json!({
        "type": "resource", "annotations": {"priority": 1}, "_meta": {"block": 1},
        "resource": {"uri": "x:r", "text": "r", "_meta": {"item": 2}}
    }))
    .unwrap();
    let Content::Resource { resource, annotations, meta } = Content::from_block(block, &mut warnings) else {
        panic!()
    };
    assert_eq!(annotations.unwrap().priority, Some(1.0));
    assert_eq!(meta.unwrap()["block"], 1);
    assert_eq!(resource.meta.unwrap()["item"], 2);
}

#[test]
fn a_refused_item_becomes_unsupported_without_a_new_warning() {
    let marks = ResultMarks {
        items: [(1, Mark::Refused { kind: KIND_IMAGE, bytes: 12345 })].into(),
        structured_dropped: None,
        dropped: Dropped::default(),
    };
    let result = json!({"content": [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "", "mimeType": "image/png"}
    ]});
    let tool = ToolResult::from_response(response(result, marks)).unwrap();
    assert_eq!(tool.content[1], Content::Unsupported { kind: "image".into(), bytes: 12345 });
    assert_eq!(
        tool.content[0],
        Content::Text { text: "a".into(), truncated: false, annotations: None, meta: None }
    );
    assert!(tool.warnings.is_empty());
}

#[test]
fn a_truncated_mark_sets_truncated_on_text_and_resources() {
    let marks = ResultMarks {
        items: [(0, Mark::Truncated)].into(),
        structured_dropped: None,
        dropped: Dropped::default(),
    };
    let tool = ToolResult::from_response(response(
        json!({"content": [{"type": "text", "text": "ab"}]}),
        marks.clone(),
    ))
    .unwrap();
    assert_eq!(
        tool.content[0],
        Content::Text { text: "ab".into(), truncated: true, annotations: None, meta: None }
    );

    let read = json!({"contents": [{"uri": "x:a", "text": "cut"}, {"uri": "x:b", "text": "whole"}]});
    let r = ResourceResult::from_response(response(read, marks.clone())).unwrap();
    assert!(r.contents[0].truncated && !r.contents[1].truncated);
    assert_eq!(r.contents[0].text.as_deref(), Some("cut"));
    let blob = json!({"contents": [{"uri": "x:b", "blob": ""}]});
    let r = ResourceResult::from_response(response(blob, marks)).unwrap();
    assert!(r.contents[0].truncated);
    assert_eq!(r.contents[0].data, None);
    assert!(r.warnings.is_empty());
}

#[test]
fn what_a_server_writes_in_its_json_marks_nothing() {
    // The keys an earlier version of this crate used between its layers.
    let result = json!({"content": [
        {"type": "x-mcp-stack/unsupported", "kind": "image", "bytes": 1},
        {"type": "text", "text": "ab", "_meta": {"x-mcp-stack/truncated": true}}
    ]});
    let tool = ToolResult::from_response(McpResponse::new(result)).unwrap();
    // The server's `_meta` is data for the host, never a mark.
    let Content::Text { truncated, meta, .. } = &tool.content[1] else { panic!("{:?}", tool.content) };
    assert!(!truncated);
    assert_eq!(meta.as_ref().unwrap()["x-mcp-stack/truncated"], true);
    assert!(
        matches!(&tool.content[0], Content::Unsupported { kind, .. } if kind == "x-mcp-stack/unsupported")
    );
}

#[test]
fn dropped_items_become_one_stand_in_at_the_end() {
    let marks = ResultMarks { dropped: Dropped { items: 9984, bytes: 99840 }, ..ResultMarks::default() };
    let result = json!({"content": [{"type": "text", "text": "a"}]});
    let tool = ToolResult::from_response(response(result, marks)).unwrap();
    assert_eq!(tool.content.len(), 2);
    assert_eq!(tool.content[1], Content::Unsupported { kind: "9984 items".into(), bytes: 99840 });
    assert!(tool.warnings.is_empty(), "the layer warns, not the conversion");
    assert_eq!(dropped_kind(1), "1 item");
}

#[test]
fn a_result_that_is_not_a_tool_result_is_a_protocol_error() {
    let err = ToolResult::from_response(McpResponse::new(json!({"content": 7}))).unwrap_err();
    assert_eq!(err.class(), FailureClass::ServerProtocol);
}

#[test]
fn a_structured_result_and_its_meta_read_as_the_deserializer_reads_them() {
    let structured = json!({"records": [{"id": 1, "score": 0.25, "tags": ["a"]}], "next": null, "n": 1.0});
    let result = json!({"content": [], "structuredContent": structured, "_meta": {"k": {"deep": [1]}}});
    let tool = ToolResult::from_response(McpResponse::new(result)).unwrap();
    assert_eq!(tool.structured, Some(structured));
    // A null structured result is none; a structured result need not be an object.
    let null = json!({"content": [], "structuredContent": null, "_meta": null});
    assert_eq!(ToolResult::from_response(McpResponse::new(null)).unwrap().structured, None);
    let text = json!({"content": [], "structuredContent": "x"});
    assert_eq!(ToolResult::from_response(McpResponse::new(text)).unwrap().structured, Some(json!("x")));
    // A `_meta` that is not an object is refused, as before.
    let bad_meta = json!({"content": [], "structuredContent": {"a": 1}, "_meta": "x"});
    let err = ToolResult::from_response(McpResponse::new(bad_meta)).unwrap_err();
    assert_eq!(err.class(), FailureClass::ServerProtocol);
    assert!(err.message().contains("tools/call"), "{}", err.message());
}
