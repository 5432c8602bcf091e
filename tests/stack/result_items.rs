//! Issue 13, item 4, through a real binding: a tool result with 10,000
//! images keeps `max_binary_items` of them and one stand-in that counts the
//! rest, with one warning; before, it kept 16 and 9,984 stand-ins.

use crate::support::scripted::{id_of, scripted_lists};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition, Limits};
use serde_json::json;

#[tokio::test]
async fn ten_thousand_images_become_sixteen_and_one_stand_in() {
    let factory = scripted_lists(|wire, req| match req.method.as_str() {
        "tools/list" => wire
            .reply(&id_of(req), json!({"tools": [{"name": "gallery", "inputSchema": {"type": "object"}}]})),
        "tools/call" => {
            // "AAAA" decodes to 3 bytes.
            let image = json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
            let text = json!({"type": "text", "text": "the end"});
            let mut content = vec![image; 10_000];
            content.push(text);
            wire.reply(&id_of(req), json!({ "content": content }));
        }
        _ => {}
    })
    .0;
    let binding = Binding::connect(Definition::new("items", factory), Handlers::default()).await.unwrap();
    let result = binding.call_tool("gallery", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(result.content.len(), 18, "16 images, the text, one stand-in");
    assert!(result.content[..16].iter().all(|c| matches!(c, Content::Image { data, .. } if data.len() == 3)));
    assert_eq!(result.content[16].as_text(), Some("the end"));
    assert_eq!(result.content[17], Content::Unsupported { kind: "9984 items".into(), bytes: 9984 * 3 });
    assert_eq!(result.warnings, ["dropped 9984 items of 29952 bytes: 9984 binary items beyond the first 16"]);

    // Any kind of item past `max_content_items` goes the same way.
    let mut def = Definition::new(
        "items2",
        scripted_lists(|wire, req| {
            if req.method == "tools/call" {
                let text = json!({"type": "text", "text": "t"});
                wire.reply(&id_of(req), json!({ "content": vec![text; 300] }));
            } else if req.method == "tools/list" {
                wire.reply(
                    &id_of(req),
                    json!({"tools": [{"name": "many", "inputSchema": {"type": "object"}}]}),
                );
            }
        })
        .0,
    );
    def = def.with_limits(Limits::default().with_max_content_items(100));
    let b2 = Binding::connect(def, Handlers::default()).await.unwrap();
    let r = b2.call_tool("many", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content.len(), 101);
    assert!(matches!(&r.content[100], Content::Unsupported { kind, .. } if kind == "200 items"));
    binding.close().await;
    b2.close().await;
}

/// Issue 22, item 6: an image given as a `data:` URL is decoded; one over
/// `max_binary_item_bytes` is dropped with a warning, like any image.
#[tokio::test]
async fn a_data_url_image_is_decoded_and_one_over_its_bound_dropped_with_a_warning() {
    let factory = scripted_lists(|wire, req| match req.method.as_str() {
        "tools/list" => {
            wire.reply(&id_of(req), json!({"tools": [{"name": "draw", "inputSchema": {"type": "object"}}]}))
        }
        "tools/call" => {
            let small =
                json!({"type": "image", "data": "data:image/png;base64,AAAA", "mimeType": "image/png"});
            let big = format!("data:image/png;base64,{}", "AAAA".repeat(1024));
            let big = json!({"type": "image", "data": big, "mimeType": "image/png"});
            wire.reply(&id_of(req), json!({ "content": [small, big] }));
        }
        _ => {}
    })
    .0;
    let mut definition = Definition::new("data_url", factory);
    definition = definition.with_limits(Limits::default().with_max_binary_item_bytes(1024));
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let result = binding.call_tool("draw", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(
        result.content[0],
        Content::Image { data: vec![0, 0, 0], mime_type: "image/png".into(), annotations: None, meta: None }
    );
    assert!(
        matches!(&result.content[1], Content::Unsupported { kind, .. } if kind == "image"),
        "{:?}",
        result.content[1]
    );
    assert_eq!(result.warnings.len(), 1, "{:?}", result.warnings);
    binding.close().await;
}
