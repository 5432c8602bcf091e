//! A binding against the built-in demo server: every request kind.

use mcp_stack::protocol::CompletionReference;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition};
use serde_json::{json, Map};
use std::sync::{Arc, Mutex};

async fn demo() -> Binding {
    Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default()).await.unwrap()
}

#[tokio::test]
async fn handshake_reports_identity_and_instructions() {
    let b = demo().await;
    let s = b.session();
    assert_eq!(s.protocol_version, "2025-11-25");
    assert_eq!(s.server.name, "mcp-stack-demo");
    assert!(s.instructions.as_deref().unwrap().contains("demo server"));
    let status = b.status();
    assert_eq!(status.state, mcp_stack::State::Ready);
    assert_eq!(status.transport_kind, "memory");
    assert_eq!(status.redacted_origin, "memory://demo");
    b.ping().await.unwrap();
    b.close().await;
}

#[tokio::test]
async fn tools_are_listed_and_called() {
    let b = demo().await;
    let tools = b.list_tools().await.unwrap();
    let names: Vec<_> = tools.items.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["echo", "add", "count", "tiny_image", "log", "touch", "announce", "crash", "big_text", "sleep"]
    );
    assert!(tools.warnings.is_empty());

    let r = b.call_tool("echo", json!({"message": "hi"}), CallOpts::default()).await.unwrap();
    assert_eq!(
        r.content,
        vec![Content::Text { text: "hi".into(), truncated: false, annotations: None, meta: None }]
    );
    let r = b.call_tool("add", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"sum": 5.0})));
    let r = b.call_tool("tiny_image", json!({}), CallOpts::default()).await.unwrap();
    assert!(
        matches!(&r.content[0], Content::Image { data, mime_type, .. } if mime_type == "image/png" && data.starts_with(b"\x89PNG"))
    );
    let r = b.call_tool("add", json!({"a": "x"}), CallOpts::default()).await.unwrap();
    assert!(r.is_error);
    b.close().await;
}

#[tokio::test]
async fn progress_arrives_in_order_at_the_callers_sink() {
    let b = demo().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push((p.progress, p.total)));
    let r = b.call_tool("count", json!({"steps": 5}), opts).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("counted to 5"));
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, (1..=5).map(|i| (i as f64, Some(5.0))).collect::<Vec<_>>());
    assert!(b.status().progress_routes == 0);
    b.close().await;
}

#[tokio::test]
async fn prompts_resources_and_completion() {
    let b = demo().await;
    let prompts = b.list_prompts().await.unwrap();
    assert_eq!(prompts.items[0].name, "greeting");
    let resources = b.list_resources().await.unwrap();
    assert_eq!(resources.items[0].uri, "demo://readme");
    let templates = b.list_resource_templates().await.unwrap();
    assert_eq!(templates.items[0].uri_template, "demo://notes/{id}");
    let p = greeting_note_and_completion(&b).await;
    assert_eq!(p.messages[0].role, "user");
    b.close().await;
}

/// The demo's prompt, a note read through its template, a missing
/// resource and the prompt argument's completion, in either era; the
/// prompt's result, for more checks.
pub(crate) async fn greeting_note_and_completion(b: &Binding) -> mcp_stack::PromptResult {
    let mut args = Map::new();
    args.insert("name".into(), json!("Ada"));
    let p = b.get_prompt("greeting", args, mcp_stack::CallOpts::default()).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("Say hello to Ada."));
    let r = b.read_resource("demo://notes/7", mcp_stack::CallOpts::default()).await.unwrap();
    assert_eq!(r.contents[0].text.as_deref(), Some("Note 7."));
    let err = b.read_resource("demo://missing", mcp_stack::CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), mcp_stack::FailureClass::NotFound);
    let c = b
        .complete(
            CompletionReference::Prompt { name: "greeting".into(), title: None },
            "name",
            "A",
            Map::new(),
            mcp_stack::CallOpts::default(),
        )
        .await
        .unwrap();
    assert_eq!(c.completion.values, ["Ada", "Alan"]);
    p
}
