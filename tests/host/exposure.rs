//! Issue 44, item 2: deferred loading. A conversation over the demo server
//! is sent its always-loaded tools and `search_tools`; the model searches,
//! the hits are loaded and callable; a tool not loaded is refused with a
//! message the model can act on; `Auto` defers only past its share of the
//! context window; what is loaded stays bounded.

use mcp_stack::providers::exposure::{self, Deferral, ToolExposure, ToolSession, SEARCH_TOOL_NAME};
use mcp_stack::providers::ToolCall;
use mcp_stack::{host::Host, CallOpts, Definition, FailureClass};
use serde_json::json;

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: "call-1".into(), name: name.into(), arguments }
}

fn names(offered: &exposure::Offered<'_>) -> Vec<String> {
    offered.tools.iter().map(|t| t.model_name.clone()).collect()
}

async fn demo_host() -> Host {
    let host = Host::new();
    assert!(host.add_all([Definition::new("demo", mcp_stack::demo::factory())]).await.is_empty());
    host
}

#[tokio::test]
async fn a_deferred_conversation_searches_loads_and_calls() {
    let host = demo_host().await;
    let visible = host.catalog().tools().filter(|t| t.visible_to_model()).count();
    let mut session =
        ToolSession::new(ToolExposure::Deferred(Deferral::default().always(["mcp__demo__echo"])));

    let catalog = host.catalog();
    let offered = session.offered(&catalog);
    assert_eq!(names(&offered), ["mcp__demo__echo"]);
    assert!(offered.search_tool);
    assert_eq!(offered.deferred, visible - 1);

    // Not loaded yet: refused before anything is sent, saying what to do.
    let refused =
        session.call(&host, &call("mcp__demo__add", json!({"a": 2, "b": 3})), CallOpts::default()).await;
    let e = refused.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable);
    assert!(e.message().contains("search_tools"), "{e}");

    // The model searches; the hits' definitions come back and are loaded.
    let found = session
        .call(
            &host,
            &call(SEARCH_TOOL_NAME, json!({"query": "add two numbers", "limit": 2})),
            CallOpts::default(),
        )
        .await
        .unwrap();
    let text = found.content[0].as_text().unwrap();
    assert!(text.contains("mcp__demo__add") && text.contains("inputSchema"), "{text}");
    assert!(session.loaded().any(|n| n == "mcp__demo__add"));
    let offered = session.offered(&catalog);
    assert!(names(&offered).contains(&"mcp__demo__add".to_string()));

    // Now it is callable; an always-loaded one was all along.
    let sum =
        session.call(&host, &call("mcp__demo__add", json!({"a": 2, "b": 3})), CallOpts::default()).await;
    assert_eq!(sum.unwrap().content[0].as_text(), Some("5"));
    let echoed =
        session.call(&host, &call("mcp__demo__echo", json!({"message": "hi"})), CallOpts::default()).await;
    assert_eq!(echoed.unwrap().content[0].as_text(), Some("hi"));

    // An empty query is the model's error to fix, not a failure.
    let empty = session.call(&host, &call(SEARCH_TOOL_NAME, json!({})), CallOpts::default()).await.unwrap();
    assert!(empty.is_error);
    host.close().await;
}

#[tokio::test]
async fn auto_defers_only_past_its_share_of_the_context_window() {
    let host = demo_host().await;
    let catalog = host.catalog();
    let tokens = exposure::estimated_tokens(catalog.tools().filter(|t| t.visible_to_model()));
    assert!(tokens > 100, "{tokens}");
    let roomy = ToolSession::new(ToolExposure::Auto {
        context_tokens: tokens * 1000,
        percent: 5,
        deferral: Deferral::default(),
    });
    let offered = roomy.offered(&catalog);
    assert!(!offered.search_tool && offered.deferred == 0);
    let tight = ToolSession::new(ToolExposure::Auto {
        context_tokens: tokens,
        percent: 5,
        deferral: Deferral::default(),
    });
    assert!(tight.offered(&catalog).search_tool);
    // Every tool offered: search_tools is not a tool of this conversation.
    let mut all = ToolSession::new(ToolExposure::All);
    let e = all
        .call(&host, &call(SEARCH_TOOL_NAME, json!({"query": "x"})), CallOpts::default())
        .await
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound);
    host.close().await;
}

#[tokio::test]
async fn what_searches_load_stays_bounded() {
    let host = demo_host().await;
    let mut session =
        ToolSession::new(ToolExposure::Deferred(Deferral::default().max_loaded(2).hits_per_search(5)));
    for query in ["add numbers", "echo a message", "count with progress", "a tiny image"] {
        session
            .call(&host, &call(SEARCH_TOOL_NAME, json!({"query": query})), CallOpts::default())
            .await
            .unwrap();
    }
    assert_eq!(session.loaded().count(), 2);
    let huge = "find ".repeat(200_000);
    let hits =
        session.call(&host, &call(SEARCH_TOOL_NAME, json!({"query": huge})), CallOpts::default()).await;
    assert!(hits.is_ok());
    assert_eq!(session.loaded().count(), 2);
    host.close().await;
}

#[test]
fn the_meta_tool_is_valid_for_every_provider() {
    let gemini = exposure::gemini_search_tool();
    assert_eq!(super::provider_rules::gemini_violations(&gemini), Vec::<String>::new());
    let anthropic = exposure::anthropic_search_tool();
    assert_eq!(super::provider_rules::anthropic_violations(&anthropic), Vec::<String>::new());
    let openai = exposure::openai_search_tool();
    assert_eq!(openai["function"]["name"], SEARCH_TOOL_NAME);
    assert_eq!(openai["function"]["parameters"]["required"], json!(["query"]));
    let gemini = exposure::gemini_read_result_tool();
    assert_eq!(super::provider_rules::gemini_violations(&gemini), Vec::<String>::new());
    let anthropic = exposure::anthropic_read_result_tool();
    assert_eq!(super::provider_rules::anthropic_violations(&anthropic), Vec::<String>::new());
    assert_eq!(exposure::openai_read_result_tool()["function"]["name"], "read_result");
}

/// Issue 44, item 3: a result over the output budget reaches the model as
/// a preview that says what was left out, and is read back whole, page by
/// page, through `read_result`.
#[tokio::test]
async fn an_oversized_result_is_a_preview_and_a_handle_read_back_whole() {
    use mcp_stack::providers::budget::{OutputBudget, READ_RESULT_TOOL_NAME};
    let host = demo_host().await;
    let mut session = ToolSession::new(ToolExposure::All).with_budget(OutputBudget::tokens(1_000));
    assert!(session.offered(&host.catalog()).read_result);

    // Within the budget: the result as it is.
    let small =
        session.call(&host, &call("mcp__demo__big_text", json!({"bytes": 100})), CallOpts::default()).await;
    assert_eq!(small.unwrap().content[0].as_text().unwrap().len(), 100);
    assert!(session.results().is_empty());

    let big = session
        .call(&host, &call("mcp__demo__big_text", json!({"bytes": 200_000})), CallOpts::default())
        .await
        .unwrap();
    let preview = big.content[0].as_text().unwrap();
    assert!(preview.len() < 4 * 1_000, "the preview fits the budget: {} bytes", preview.len());
    assert!(preview.contains("over the output budget") && preview.contains("read_result"), "{preview}");
    assert!(preview.contains("characters left out"), "says what was left out: {preview}");
    let handle = preview.split('"').nth(1).unwrap().to_string();
    assert!(handle.starts_with("result-"), "{preview}");

    // Read back whole.
    let mut whole = String::new();
    let mut offset = 0;
    for _ in 0..10 {
        let page = session
            .call(
                &host,
                &call(READ_RESULT_TOOL_NAME, json!({"handle": handle, "offset": offset, "length": 65536})),
                CallOpts::default(),
            )
            .await
            .unwrap();
        let text = page.content[0].as_text().unwrap();
        let (head, body) = text.split_once('\n').unwrap();
        whole.push_str(body);
        offset += body.chars().count();
        if head.contains("(the end)") {
            break;
        }
    }
    let expected: String = ('a'..='z').cycle().take(200_000).collect();
    assert_eq!(whole, expected, "read back whole");
    let missing = session
        .call(&host, &call(READ_RESULT_TOOL_NAME, json!({"handle": "result-999"})), CallOpts::default())
        .await
        .unwrap();
    assert!(missing.is_error);
    host.close().await;
}

#[tokio::test]
async fn a_servers_always_load_setting_keeps_its_tools_loaded_and_callable() {
    // As a config file's `"alwaysLoad": ["add"]` would set it.
    let host = Host::new();
    let def = Definition::new("demo", mcp_stack::demo::factory())
        .with_always_load(mcp_stack::AlwaysLoad::Tools(vec!["add".into()]));
    assert!(host.add_all([def]).await.is_empty());
    let catalog = host.catalog();
    let add = catalog.tools().find(|t| t.raw_name == "add").unwrap();
    assert!(add.always_load, "the setting reaches the tool's spec");
    assert!(catalog.tools().filter(|t| t.raw_name != "add").all(|t| !t.always_load));

    let mut session = ToolSession::new(ToolExposure::Deferred(Deferral::default()));
    assert_eq!(names(&session.offered(&catalog)), ["mcp__demo__add"]);
    let sum =
        session.call(&host, &call("mcp__demo__add", json!({"a": 2, "b": 3})), CallOpts::default()).await;
    assert_eq!(sum.unwrap().content[0].as_text(), Some("5"), "callable without a search");
    host.close().await;
}
