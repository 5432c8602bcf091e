//! Issue 44: what a model sees, over real peers. A host of the demo server
//! (in-process), the reference server "everything" (Node, stdio) and the
//! Python `mcp` server (tests/fixtures/py_server.py, streamable HTTP); a
//! deferred conversation whose model is scripted: it is sent one
//! always-loaded tool, `search_tools` and `read_result`; it searches, the
//! hits are loaded, it calls one on a real server; an oversized result
//! comes back as a preview and a handle and is read back whole.
//!
//! Run through `scripts/interop.sh` (`MCP_NODE`, `MCP_EVERYTHING_JS`,
//! `MCP_PYTHON`); a missing peer is a failure.

use crate::support::peers::{everything, free_port, peer, start_listening};
use mcp_stack::host::Host;
use mcp_stack::providers::budget::{OutputBudget, READ_RESULT_TOOL_NAME};
use mcp_stack::providers::exposure::{Deferral, ToolExposure, ToolSession, SEARCH_TOOL_NAME};
use mcp_stack::providers::{anthropic, ToolCall};
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::{CallOpts, Definition, FailureClass};
use serde_json::json;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: "toolu_1".into(), name: name.into(), arguments }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_conversation_over_three_servers_searches_loads_calls_and_reads_back() {
    let port = free_port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_server.py");
    let mut command = Command::new(peer("MCP_PYTHON"));
    command.arg(script).arg("--http").arg(port.to_string()).stderr(Stdio::null());
    let _python = start_listening(command, port, "the Python server", LIMIT).await;
    let python = StreamableHttpFactory::new(&format!("http://127.0.0.1:{port}/mcp")).expect("a valid URL");

    let host = Host::new();
    let failed = tokio::time::timeout(
        LIMIT,
        host.add_all([
            Definition::new("demo", mcp_stack::demo::factory()),
            Definition::new("everything", everything()),
            Definition::new("py", python),
        ]),
    )
    .await
    .expect("the servers connect in time");
    assert!(failed.is_empty(), "{failed:?}");
    let catalog = host.catalog();
    let visible = catalog.tools().filter(|t| t.visible_to_model()).count();
    assert!(visible > 20, "{visible} tools over three servers");

    let mut session = ToolSession::new(ToolExposure::Deferred(
        Deferral::default().always(["mcp__demo__echo", "mcp__demo__big_text"]),
    ))
    .with_budget(OutputBudget::tokens(1_000));
    let offered = session.offered(&catalog);
    assert_eq!(offered.tools.len(), 2);
    assert!(offered.search_tool && offered.read_result);
    assert_eq!(offered.deferred, visible - 2);
    // What the first turn sends Anthropic: two tools and the two meta-tools.
    let mut first_turn = anthropic::tools(offered.tools.iter().copied()).tools;
    first_turn.push(mcp_stack::providers::exposure::anthropic_search_tool());
    first_turn.push(mcp_stack::providers::exposure::anthropic_read_result_tool());
    let sent = serde_json::to_string(&first_turn).unwrap().len();
    let all = serde_json::to_string(&anthropic::tools(catalog.tools()).tools).unwrap().len();
    assert!(sent * 3 < all, "deferred sends {sent} bytes, all {all}");

    // The weather tool of the Python server: not loaded, so refused.
    let weather = call("mcp__py__weather", json!({ "city": "Lisbon" }));
    let refused = session.call(&host, &weather, CallOpts::default()).await.unwrap_err();
    assert_eq!(refused.class(), FailureClass::ToolUnavailable);

    // The model searches, in its own words; the tool is loaded and called.
    let found = session
        .call(
            &host,
            &call(SEARCH_TOOL_NAME, json!({ "query": "what is the weather forecast in a city" })),
            CallOpts::default(),
        )
        .await
        .unwrap();
    let text = found.content[0].as_text().unwrap();
    assert!(text.contains("mcp__py__weather"), "{text}");
    let answer = session.call(&host, &weather, CallOpts::default()).await.unwrap();
    assert!(!answer.is_error, "{answer:?}");
    assert!(answer.content.iter().any(|c| c.as_text().is_some_and(|t| t.contains("Lisbon"))), "{answer:?}");

    // A tool of everything, found by what it does.
    let found = session
        .call(
            &host,
            &call(SEARCH_TOOL_NAME, json!({ "query": "echo back a message", "limit": 3 })),
            CallOpts::default(),
        )
        .await
        .unwrap();
    assert!(found.content[0].as_text().unwrap().contains("mcp__everything__echo"), "{found:?}");
    let echoed = session
        .call(
            &host,
            &call("mcp__everything__echo", json!({ "message": "from the model" })),
            CallOpts::default(),
        )
        .await
        .unwrap();
    assert!(echoed.content[0].as_text().unwrap().contains("from the model"));

    // An oversized result: a preview and a handle, read back whole.
    let big = session
        .call(&host, &call("mcp__demo__big_text", json!({ "bytes": 300_000 })), CallOpts::default())
        .await
        .unwrap();
    let preview = big.content[0].as_text().unwrap();
    assert!(preview.contains("over the output budget"), "{preview}");
    let handle = preview.split('"').nth(1).unwrap().to_string();
    let mut whole = String::new();
    for _ in 0..20 {
        let args = json!({ "handle": handle, "offset": whole.chars().count(), "length": 65_536 });
        let page =
            session.call(&host, &call(READ_RESULT_TOOL_NAME, args), CallOpts::default()).await.unwrap();
        let text = page.content[0].as_text().unwrap();
        let (head, body) = text.split_once('\n').unwrap();
        whole.push_str(body);
        if head.contains("(the end)") {
            break;
        }
    }
    assert_eq!(whole, ('a'..='z').cycle().take(300_000).collect::<String>());
    host.close().await;
}
