//! Provider conversions, both ways, against fixture JSON in the providers'
//! documented shapes: a catalog's tools as Anthropic and OpenAI tool
//! definitions, their tool calls dispatched through a host, and the results
//! rendered as their tool-result content.

use crate::support::tool_server::ToolServer;
use mcp_stack::providers::{anthropic, openai, ToolCall};
use mcp_stack::{host::Host, CallOpts, Definition, FailureClass};
use serde_json::{json, Value};

/// A one-pixel PNG, base64.
const TINY_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/providers").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares with a fixture, printing both on a difference.
fn assert_fixture(actual: &Value, name: &str) {
    let expected = fixture(name);
    assert!(
        actual == &expected,
        "{name} differs\n--- actual\n{}\n--- expected\n{}",
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(&expected).unwrap()
    );
}

/// The fixture's MCP tools, served as binding `notes`, with answers for the
/// calls the fixtures make.
async fn notes_host() -> (Host, ToolServer) {
    let tools = fixture("mcp_tools.json").as_array().unwrap().clone();
    let server = ToolServer::with_tools(tools).answering(|tool, args| match tool {
        "get_weather" => json!({
            "content": [{"type": "text", "text": "{\"temperature\":21.5,\"conditions\":\"sunny\"}"}],
            "structuredContent": {"temperature": 21.5, "conditions": "sunny"},
        }),
        "snapshot" => json!({"content": [
            {"type": "image", "data": TINY_PNG_BASE64, "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        ]}),
        "search" => {
            json!({"content": [{"type": "text", "text": "2 notes"}], "structuredContent": {"hits": 2}})
        }
        "fails" => json!({"content": [{"type": "text", "text": "the city is unknown"}], "isError": true}),
        "echo_args" => json!({"content": [{"type": "text", "text": args.to_string()}]}),
        _ => Value::Null,
    });
    let host = Host::new();
    assert!(host.add_all([Definition::new("notes", server.factory("notes"))]).await.is_empty());
    (host, server)
}

fn seen(server: &ToolServer, tool: &str) -> Vec<Value> {
    server.seen.lock().unwrap().iter().filter(|(t, _)| t == tool).map(|(_, a)| a.clone()).collect()
}

#[tokio::test]
async fn tools_come_out_in_each_providers_documented_shape() {
    let (host, _) = notes_host().await;
    let catalog = host.catalog();

    let claude = anthropic::tools(catalog.tools());
    assert_fixture(&Value::Array(claude.tools), "anthropic_tools.json");
    let has = |warnings: &[String], tool: &str, what: &str| {
        warnings.iter().any(|w| w.starts_with(&format!("mcp__notes__{tool}:")) && w.contains(what))
    };
    assert!(has(&claude.warnings, "search", "dropped \"anyOf\""), "{:?}", claude.warnings);
    assert_eq!(claude.warnings.len(), 1, "{:?}", claude.warnings);

    let chat = openai::tools(catalog.tools(), &openai::Options::chat());
    assert_fixture(&Value::Array(chat.tools), "openai_chat_tools.json");
    assert!(has(&chat.warnings, "search", "dropped \"anyOf\""));
    assert!(has(&chat.warnings, "snapshot", "empty \"properties\""));
    assert_eq!(chat.warnings.len(), 2, "{:?}", chat.warnings);

    let strict = openai::tools(catalog.tools(), &openai::Options::responses().strict(true));
    assert_fixture(&Value::Array(strict.tools), "openai_responses_tools_strict.json");
    let w = &strict.warnings;
    assert!(has(w, "configure", "without strict mode"), "{w:?}");
    assert!(has(w, "echo_args", "/properties/count required and nullable"), "{w:?}");
    assert!(has(w, "get_weather", "dropped \"minLength\""), "{w:?}");
    assert!(has(w, "search", "dropped \"uniqueItems\""), "{w:?}");
    host.close().await;
}

#[tokio::test]
async fn anthropic_tool_use_blocks_round_trip_to_tool_result_blocks() {
    let (host, server) = notes_host().await;
    let calls: Vec<ToolCall> =
        anthropic::tool_calls(&fixture("anthropic_message.json")).into_iter().map(|c| c.unwrap()).collect();
    assert_eq!(calls.len(), 4, "the text block is not a call");
    let mut blocks = Vec::new();
    let mut warnings = Vec::new();
    for call in &calls {
        let rendered = anthropic::answer(&host, call, CallOpts::default()).await;
        blocks.push(rendered.value);
        warnings.extend(rendered.warnings);
    }
    // What goes back as the next user message's content.
    assert_fixture(&Value::Array(blocks), "anthropic_tool_results.json");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("audio"));
    assert_eq!(seen(&server, "get_weather"), [json!({"city": "Paris"})]);
    assert_eq!(seen(&server, "fails"), [json!({"reason": "no such city"})]);
    assert_eq!(server.seen.lock().unwrap().len(), 3, "the unknown tool was refused before any I/O");
    host.close().await;
}

#[tokio::test]
async fn openai_chat_tool_calls_round_trip_to_tool_messages_with_strict_nulls_removed() {
    let (host, server) = notes_host().await;
    let options = openai::Options::chat().strict(true);
    let mut messages = Vec::new();
    for call in openai::tool_calls(&fixture("openai_chat_completion.json")) {
        match call {
            Ok(call) => {
                messages.push(openai::answer(&host, &call, &options, CallOpts::default()).await.value)
            }
            Err(bad) => {
                // Arguments that are not JSON: answered as an error, by id.
                assert_eq!(bad.error.class(), FailureClass::InvalidConfig);
                messages.push(openai::error(bad.id.as_deref().unwrap(), &bad.error, &options));
            }
        }
    }
    assert_fixture(&Value::Array(messages), "openai_chat_tool_messages.json");
    assert_eq!(seen(&server, "get_weather"), [json!({"city": "Paris", "units": "metric"})]);
    // Strict mode made the model send nulls for optional properties; the
    // server gets what the model meant.
    assert_eq!(seen(&server, "echo_args"), [json!({"text": "hi"})]);
    assert_eq!(seen(&server, "search"), [json!({"query": "rust", "filters": {}})]);
    assert_eq!(seen(&server, "snapshot"), [json!({})], "empty arguments are {{}}");
    assert!(seen(&server, "fails").is_empty());
    host.close().await;
}

#[tokio::test]
async fn without_strict_mode_a_null_reaches_the_server_as_sent() {
    let (host, server) = notes_host().await;
    let call = ToolCall {
        id: "call_1".into(),
        name: "mcp__notes__echo_args".into(),
        arguments: json!({"text": "hi", "count": null}),
    };
    openai::dispatch(&host, &call, &openai::Options::chat(), CallOpts::default()).await.unwrap();
    assert_eq!(seen(&server, "echo_args"), [json!({"text": "hi", "count": null})]);
    host.close().await;
}

#[tokio::test]
async fn openai_responses_function_calls_round_trip_to_function_call_outputs() {
    let (host, _) = notes_host().await;
    let options = openai::Options::responses();
    let calls: Vec<ToolCall> = openai::tool_calls(&fixture("openai_responses_response.json"))
        .into_iter()
        .map(|c| c.unwrap())
        .collect();
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        ["call_unLAR8MvFNptuiZK6K6HCy5k", "call_qZ8Tq2nWbXr5Lp7MvCk3Jd9s"],
        "by call_id; reasoning and messages skipped"
    );
    let mut outputs = Vec::new();
    for call in &calls {
        outputs.push(openai::answer(&host, call, &options, CallOpts::default()).await.value);
    }
    assert_fixture(&Value::Array(outputs), "openai_responses_outputs.json");
    host.close().await;
}

#[test]
fn malformed_calls_are_refused_with_their_id_when_it_can_be_read() {
    let bad = |v: Value| openai::parse_call(&v).unwrap_err();
    let e =
        bad(json!({"id": "call_1", "type": "function", "function": {"name": "x", "arguments": "[1, 2]"}}));
    assert_eq!((e.id.as_deref(), e.error.class()), (Some("call_1"), FailureClass::InvalidConfig));
    let e = bad(json!({"id": "call_2", "type": "function", "function": {"arguments": "{}"}}));
    assert_eq!(e.id.as_deref(), Some("call_2"));
    assert_eq!(bad(json!({"type": "function", "function": {"name": "x"}})).id, None);
    assert_eq!(bad(json!({"id": "a\nb", "function": {"name": "x"}})).id, None);
    assert_eq!(bad(json!({"id": "x".repeat(1000), "function": {"name": "x"}})).id, None);
    let huge = format!("{{\"a\": \"{}\"}}", "x".repeat(1 << 20 /* the documented bound on arguments */));
    assert!(bad(json!({"id": "c", "function": {"name": "x", "arguments": huge}}))
        .error
        .message()
        .contains("over"));
    let e = bad(json!({"type": "custom", "id": "ctc_1", "name": "x", "input": "free text"}));
    assert_eq!(e.id.as_deref(), Some("ctc_1"));

    let e =
        anthropic::parse_call(&json!({"type": "tool_use", "id": "toolu_1", "name": "x", "input": "text"}))
            .unwrap_err();
    assert_eq!((e.id.as_deref(), e.error.class()), (Some("toolu_1"), FailureClass::InvalidConfig));
    let ok = anthropic::parse_call(&json!({"type": "tool_use", "id": "toolu_2", "name": "x"})).unwrap();
    assert_eq!(ok.arguments, json!({}));
    assert!(anthropic::tool_calls(&json!({"content": "no blocks"})).is_empty());
}

#[test]
fn an_error_result_with_nothing_to_say_still_reads_as_an_error() {
    let result = mcp_stack::ToolResult { is_error: true, ..Default::default() };
    let claude = anthropic::result("toolu_1", &result).value;
    assert_eq!(claude, json!({"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true}));
    let gpt = openai::result("call_1", &result, &openai::Options::chat()).value;
    assert_eq!(gpt, json!({"role": "tool", "tool_call_id": "call_1", "content": "Tool error:"}));
    let cut = mcp_stack::ToolResult {
        content: vec![mcp_stack::Content::Text {
            text: "abc".into(),
            truncated: true,
            annotations: None,
            meta: None,
        }],
        ..Default::default()
    };
    let rendered = anthropic::result("toolu_2", &cut);
    assert_eq!(rendered.value["content"][0]["text"], "abc\n[truncated by the host]");
    assert_eq!(rendered.warnings.len(), 1);
}
