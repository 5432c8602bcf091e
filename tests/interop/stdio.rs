//! Interop over stdio with real peers: the reference server "everything"
//! (Node) and a Python `mcp` 2.3.0 server (tests/fixtures/py_server.py).
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers and sets
//! `MCP_NODE`, `MCP_EVERYTHING_JS`, `MCP_PYTHON` and `MCP_CLI`. These tests
//! never skip: a missing peer is a failure.

use crate::support::peers::{everything, peer};
use mcp_stack::protocol::CompletionReference;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};

fn python() -> StdioFactory {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_server.py");
    StdioFactory::new(peer("MCP_PYTHON")).arg(script)
}

async fn connect(name: &str, factory: StdioFactory) -> Binding {
    Binding::connect(Definition::new(name, factory), Handlers::default()).await.expect("connect")
}

fn text_of(result: &mcp_stack::ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn everything_handshake_and_every_tool_listed() {
    let b = connect("everything", everything()).await;
    let session = b.session();
    assert_eq!(session.protocol_version, "2025-11-25");
    assert_eq!(session.server.name, "mcp-servers/everything");
    // Instructions are reported as data; nothing in the crate applies them.
    assert!(session.instructions.as_deref().unwrap_or_default().contains("Server instructions are working"));
    assert!(session.capabilities.tools.is_some());

    let tools = b.list_tools().await.unwrap();
    let names: Vec<&str> = tools.items.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-annotated-message",
        "get-env",
        "get-resource-links",
        "get-resource-reference",
        "get-structured-content",
        "get-sum",
        "get-tiny-image",
        "gzip-file-as-resource",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        "trigger-long-running-operation",
        "simulate-research-query",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    b.close().await;
}

#[tokio::test]
async fn everything_tools_echo_sum_image_structured() {
    let b = connect("everything", everything()).await;
    let r = b.call_tool("echo", json!({"message": "hi"}), CallOpts::default()).await.unwrap();
    assert_eq!(text_of(&r), "Echo: hi");
    assert!(!r.is_error);

    let r = b.call_tool("get-sum", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert!(text_of(&r).contains('5'), "{r:?}");

    let r = b.call_tool("get-tiny-image", json!({}), CallOpts::default()).await.unwrap();
    let image = r.content.iter().find_map(|c| match c {
        Content::Image { data, mime_type, .. } => Some((data.len(), mime_type.clone())),
        _ => None,
    });
    let (bytes, mime) = image.expect("an image");
    assert_eq!(mime, "image/png");
    assert!(bytes > 1000);

    let r = b
        .call_tool("get-structured-content", json!({"location": "Chicago"}), CallOpts::default())
        .await
        .unwrap();
    let s = r.structured.expect("structured content");
    for key in ["temperature", "conditions", "humidity"] {
        assert!(s.get(key).is_some(), "{key} missing in {s}");
    }

    // A bad argument is the tool's error, not a protocol failure.
    let r = b.call_tool("get-structured-content", json!({}), CallOpts::default()).await.unwrap();
    assert!(r.is_error);
    b.close().await;
}

#[tokio::test]
async fn everything_long_running_operation_reports_progress() {
    let b = connect("everything", everything()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push((p.progress, p.total)));
    let r = b
        .call_tool("trigger-long-running-operation", json!({"duration": 0.6, "steps": 3}), opts)
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);
    assert!(b.status().progress_routes == 0);
    b.close().await;
}

#[tokio::test]
async fn everything_prompts_resources_templates_completion() {
    let b = connect("everything", everything()).await;
    let prompts = b.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.items.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]);

    let mut args = Map::new();
    args.insert("city".into(), json!("Lisbon"));
    args.insert("state".into(), json!("Lisboa"));
    let p = b.get_prompt("args-prompt", args, mcp_stack::CallOpts::default()).await.unwrap();
    assert!(p.messages.iter().any(|m| m.content.as_text().unwrap_or_default().contains("Lisbon")), "{p:?}");

    let resources = b.list_resources().await.unwrap();
    assert!(resources.items.len() >= 6, "{:?}", resources.items);
    let templates = b.list_resource_templates().await.unwrap();
    let uris: Vec<&str> = templates.items.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(uris.contains(&"demo://resource/dynamic/text/{resourceId}"));
    let read =
        b.read_resource("demo://resource/dynamic/text/1", mcp_stack::CallOpts::default()).await.unwrap();
    assert!(read.contents[0].text.as_deref().unwrap_or_default().starts_with("Resource 1"));

    let department = CompletionReference::Prompt { name: "completable-prompt".into(), title: None };
    let c = b
        .complete(department.clone(), "department", "E", Map::new(), mcp_stack::CallOpts::default())
        .await
        .unwrap();
    assert_eq!(c.completion.values, ["Engineering"]);
    let mut context = Map::new();
    context.insert("department".into(), json!("Engineering"));
    let c = b.complete(department, "name", "", context, mcp_stack::CallOpts::default()).await.unwrap();
    assert!(!c.completion.values.is_empty(), "{c:?}");
    b.close().await;
}

#[tokio::test]
async fn python_sdk_tools_progress_and_structured_output() {
    let b = connect("python", python()).await;
    assert_eq!(b.session().server.name, "py-test-server");
    let tools = b.list_tools().await.unwrap();
    let names: Vec<&str> = tools.items.iter().map(|t| t.name.as_str()).collect();
    for expected in ["add", "slow_count", "weather"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let weather = tools.items.iter().find(|t| t.name == "weather").unwrap();
    assert!(weather.output_schema.is_some());

    let r = b.call_tool("add", json!({"a": 2, "b": 40}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"result": 42})));

    let r = b.call_tool("weather", json!({"city": "Oslo"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"city": "Oslo", "temperature_c": 16.0})));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = CallOpts::default().with_progress(move |p| sink.lock().unwrap().push((p.progress, p.message)));
    let r = b.call_tool("slow_count", json!({"steps": 4}), opts).await.unwrap();
    assert_eq!(text_of(&r), "counted 4");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert_eq!(seen[3], (4.0, Some("step 4".to_string())));
    b.close().await;
}

/// Runs the `mcp` command against server-everything.
fn cli(args: &[&str]) -> (i32, Value) {
    let node = peer("MCP_NODE");
    let js = peer("MCP_EVERYTHING_JS");
    let out = std::process::Command::new(peer("MCP_CLI"))
        .arg("--stdio")
        .arg(format!("{node} {js} stdio"))
        .args(args)
        .output()
        .expect("run the CLI");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (out.status.code().unwrap_or(-1), doc)
}

#[test]
fn cli_lists_every_tool_and_calls_echo() {
    let (code, all) = cli(&["tools", "--json", "--binding", "ev-1"]);
    assert_eq!(code, 0);
    // One server: one catalog.
    assert_eq!(all["catalogs"].as_array().map(Vec::len), Some(1), "{all}");
    let doc = &all["catalogs"][0];
    assert_eq!(doc["binding"], "ev-1");
    assert_eq!(doc["protocolVersion"], "2025-11-25");
    assert_eq!(doc["server"]["name"], "mcp-servers/everything");
    assert_eq!(doc["generation"], 1);
    let hex64 =
        |v: &Value| v.as_str().is_some_and(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(hex64(&doc["digest"]), "{}", doc["digest"]);
    assert_eq!(doc["appliedTolerances"], json!([]), "server-everything needs no tolerance over stdio");
    let tools = doc["tools"].as_array().unwrap();
    assert!(tools.len() >= 13, "{doc}");
    // Every tool's _meta is there (null when it has none).
    assert!(tools.iter().all(|t| t.get("meta").is_some()), "{doc}");
    assert!(tools.iter().all(|t| t["rawName"].is_string() && t["inputSchema"].is_object()));
    let mut model_names = std::collections::HashSet::new();
    for t in tools {
        let model = t["modelName"].as_str().unwrap_or_else(|| panic!("no modelName: {t}"));
        assert!(model.starts_with("mcp__ev-1__"), "{model}");
        assert!(
            model.len() <= 64 && model.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
        assert!(model_names.insert(model.to_string()), "{model} twice");
        assert!(hex64(&t["inputSchemaDigest"]), "{t}");
        assert!(t["outputSchemaDigest"].is_null() || hex64(&t["outputSchemaDigest"]), "{t}");
        assert_eq!(t["outputSchema"].is_null(), t["outputSchemaDigest"].is_null(), "{t}");
    }
    let echo = tools.iter().find(|t| t["rawName"] == "echo").unwrap();
    assert_eq!(echo["modelName"], "mcp__ev-1__echo");
    let structured = tools.iter().find(|t| t["rawName"] == "get-structured-content").unwrap();
    assert!(hex64(&structured["outputSchemaDigest"]), "{structured}");
    // The same offering, read again, has the same digest.
    let (_, again) = cli(&["tools", "--json", "--binding", "ev-1"]);
    assert_eq!(again["catalogs"][0]["digest"], doc["digest"]);

    // By raw name (one server) and by model name (through the host).
    let (code, doc) = cli(&["call", "echo", r#"{"message":"hi"}"#, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(doc["content"][0]["text"], "Echo: hi");
    let (code, doc) = cli(&["--binding", "ev-1", "call", "mcp__ev-1__echo", r#"{"message":"hi"}"#, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(doc["isError"], false);
    assert_eq!(doc["content"][0]["text"], "Echo: hi");

    let (code, doc) = cli(&["call", "get-structured-content", "{}", "--json"]);
    assert_eq!(code, 5, "a tool error exits 5: {doc}");
}

/// The installed-command path of the README: a config file in the
/// `mcpServers` shape naming server-everything and the Python server.
#[test]
fn cli_with_a_config_of_server_everything_and_the_python_server() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_server.py");
    let config = json!({
        "mcpServers": {
            "everything": { "command": peer("MCP_NODE"), "args": [peer("MCP_EVERYTHING_JS"), "stdio"] },
            "py": { "command": peer("MCP_PYTHON"), "args": [script] },
        }
    });
    let path = std::env::temp_dir().join(format!("mcp-interop-config-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(peer("MCP_CLI"))
            .arg("--config")
            .arg(&path)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run the CLI");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let doc: Value =
            serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
        (out.status.code().unwrap_or(-1), doc)
    };

    // The plain `servers` a person reads: one line per server.
    let out = std::process::Command::new(peer("MCP_CLI"))
        .arg("--config")
        .arg(&path)
        .arg("servers")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the CLI");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for name in ["everything", "py"] {
        assert!(text.lines().any(|l| l.contains(name) && l.contains("ready")), "{name} not ready in: {text}");
    }

    let (code, doc) = run(&["servers", "--json"]);
    assert_eq!(code, 0, "{doc}");
    let servers = doc["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2, "{doc}");
    assert!(servers.iter().all(|s| s["state"] == "ready" && s["toolCount"].as_u64() > Some(0)), "{doc}");

    let (code, doc) = run(&["tools", "--json"]);
    assert_eq!(code, 0, "{doc}");
    let names: Vec<&str> = doc["catalogs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["tools"].as_array().unwrap())
        .map(|t| t["modelName"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mcp__everything__echo") && names.contains(&"mcp__py__add"), "{names:?}");

    let (code, doc) = run(&["call", "mcp__py__add", r#"{"a":2,"b":3}"#, "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["structuredContent"]["result"], 5, "{doc}");
    let (code, doc) = run(&["call", "mcp__everything__echo", r#"{"message":"both"}"#, "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["content"][0]["text"], "Echo: both");
    let _ = std::fs::remove_file(&path);
}
