//! Issue 24: MCP Apps against the published example server
//! `@modelcontextprotocol/server-basic-vanillajs` 2.0.3 (ext-apps), over
//! stdio and streamable HTTP: its app tool marked (its nested
//! `_meta.ui.resourceUri` taken, so the flat key it also sends is not
//! needed), its `ui://` resource read, checked (`text/html;profile=mcp-app`,
//! 217,951 bytes, within the default limits) and fingerprinted the same way
//! on both transports and on a second read (no drift), the OpenAI and
//! Anthropic conversions offering it (its visibility is the default, both),
//! the model path and the app path both reaching it; then `mcp apps` and
//! `mcp read-app` against it.
//!
//! The host's rules for an app-only tool against
//! `@modelcontextprotocol/server-system-monitor` 2.0.3, whose
//! `poll-system-stats` is `visibility: ["app"]` (the server itself lets
//! anyone call it: hiding it is the host's job): left out of both
//! conversions, refused on the model path (`tool_unavailable`, before any
//! I/O), reached on its own app's path, refused to the other server's app.
//!
//! Over HTTP the server listens on every interface; it is started under
//! tests/fixtures/loopback_only.js, which binds it to 127.0.0.1.
//!
//! Run through `scripts/interop.sh`, which installs it and sets
//! `MCP_APPS_VANILLAJS_DIR`. Never skipped: a missing peer is a failure.

use crate::support::peers::{free_port, peer, start_listening};
use mcp_stack::catalog::apps::Visibility;
use mcp_stack::compat::Tolerance;

use mcp_stack::handlers::Handlers;
use mcp_stack::host::Host;
use mcp_stack::providers::{anthropic, openai};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::{Binding, CallOpts, ClientExtensions, Definition};
use serde_json::json;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);
const TOOL: &str = "get-time";
const APP: &str = "ui://get-time/mcp-app.html";
/// The size of the app's HTML in 2.0.3.
const APP_BYTES: usize = 217_951;
const LOOPBACK_ONLY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/loopback_only.js");

fn entry_point() -> String {
    format!("{}/dist/index.js", peer("MCP_APPS_VANILLAJS_DIR"))
}

fn stdio() -> StdioFactory {
    StdioFactory::new(peer("MCP_NODE")).arg(entry_point()).arg("--stdio")
}

fn monitor() -> StdioFactory {
    StdioFactory::new(peer("MCP_NODE"))
        .arg(format!("{}/dist/index.js", peer("MCP_APPS_MONITOR_DIR")))
        .arg("--stdio")
}

fn definition(name: &str, factory: impl TransportFactory + 'static) -> Definition {
    let mut definition = Definition::new(name, factory);
    definition = definition.with_extensions(ClientExtensions::default().apps());
    let timeouts = definition.timeouts().with_startup(LIMIT);
    definition = definition.with_timeouts(timeouts);
    definition
}

/// What the binding must show of the server's app; its fingerprint.
async fn exercise(binding: &Binding) -> String {
    let catalog = binding.catalog();
    let tool = catalog.tool(TOOL).expect("get-time is listed");
    let app = tool.app.as_ref().expect("get-time is an app tool");
    assert_eq!(app.resource_uri.as_deref(), Some(APP));
    assert_eq!(app.visibility, Visibility { model: true, app: true });
    assert!(tool.visible_to_model() && tool.callable_from_app());
    assert!(
        !catalog.applied_tolerances.contains(&Tolerance::AppFlatResourceUri),
        "the nested key is there: {:?}",
        catalog.applied_tolerances
    );
    let listed = catalog.resources.iter().find(|r| r.uri == APP).expect("the app is listed");
    assert_eq!(listed.mime_type.as_deref(), Some("text/html;profile=mcp-app"));

    let read = binding.read_app(APP, CallOpts::default().with_timeout(LIMIT)).await.expect("read_app");
    assert_eq!(read.html.len(), APP_BYTES);
    assert!(read.html.trim_start().to_ascii_lowercase().starts_with("<!doctype html>"));
    assert_eq!(read.meta, Default::default(), "the example declares no CSP or permissions");
    assert_eq!((read.fingerprint.len(), read.drift.clone()), (64, None));
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let again = binding.read_app(APP, CallOpts::default().with_timeout(LIMIT)).await.unwrap();
    assert_eq!((again.fingerprint.as_str(), again.drift), (read.fingerprint.as_str(), None));
    read.fingerprint
}

/// The host's rules with the server's one tool, for the model and its app.
async fn host_rules(definition: Definition) {
    let name = definition.name().to_string();
    let host = Host::new();
    host.add(definition).unwrap();
    host.ready(&name).await.expect("connects");
    let model_name = format!("mcp__{name}__{TOOL}");
    let catalog = host.catalog();
    let for_claude = anthropic::tools(catalog.tools());
    assert!(for_claude.tools.iter().any(|t| t["name"] == model_name.as_str()), "{:?}", for_claude.tools);
    let for_gpt = openai::tools(catalog.tools(), &openai::Options::chat());
    assert_eq!(for_gpt.tools.len(), for_claude.tools.len());
    let opts = || CallOpts::default().with_timeout(LIMIT);
    let by_model = host.call_tool(&model_name, json!({}), opts()).await.expect("the model path");
    let by_app = host.call_from_app(&name, TOOL, json!({}), opts()).await.expect("the app path");
    for result in [by_model, by_app] {
        assert!(!result.is_error);
        assert!(result.structured.as_ref().is_some_and(|s| s["time"].is_string()), "{result:?}");
    }
    host.close().await;
}

#[tokio::test]
async fn over_stdio_the_app_tool_is_marked_and_its_html_read_and_fingerprinted() {
    let binding = Binding::connect(definition("apps", stdio()), Handlers::default()).await.expect("connects");
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    exercise(&binding).await;
    binding.close().await;
    host_rules(definition("apps", stdio())).await;
}

#[tokio::test]
async fn over_http_the_same_app_has_the_same_fingerprint() {
    let port = free_port();
    let mut command = Command::new(peer("MCP_NODE"));
    command
        .arg("-r")
        .arg(LOOPBACK_ONLY)
        .arg(entry_point())
        .env("PORT", port.to_string())
        .stderr(Stdio::null());
    let _server = start_listening(command, port, "the Apps example server", LIMIT).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = || HttpBuilder::new(&url).build().unwrap();
    let over_http =
        Binding::connect(definition("apps-http", http()), Handlers::default()).await.expect("connects");
    let over_stdio =
        Binding::connect(definition("apps", stdio()), Handlers::default()).await.expect("connects");
    assert_eq!(exercise(&over_http).await, exercise(&over_stdio).await, "one app, one fingerprint");
    over_http.close().await;
    over_stdio.close().await;
    host_rules(definition("apps-http", http())).await;
}

#[tokio::test]
async fn mcp_apps_and_read_app_reach_the_examples_app() {
    let server = format!("{} {} --stdio", peer("MCP_NODE"), entry_point());
    let mcp = |args: &[&str]| {
        Command::new(peer("MCP_CLI"))
            .args(["--stdio", &server])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let apps = mcp(&["apps", "--json"]);
    assert!(apps.status.success(), "{}", String::from_utf8_lossy(&apps.stderr));
    let document: serde_json::Value = serde_json::from_slice(&apps.stdout).unwrap();
    assert_eq!(document["apps"][0]["rawName"], TOOL);
    assert_eq!(document["apps"][0]["resourceUri"], APP);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.html");
    let read = mcp(&["read-app", TOOL, "--output", file.to_str().unwrap()]);
    assert!(read.status.success(), "{}", String::from_utf8_lossy(&read.stderr));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), APP_BYTES as u64);
    let said = String::from_utf8_lossy(&read.stderr);
    assert!(said.contains(&format!("{APP}: fingerprint sha256:")), "{said}");
}

#[tokio::test]
async fn an_app_only_tool_never_reaches_a_model_and_reaches_its_own_app() {
    let host = Host::new();
    host.add(definition("monitor", monitor())).unwrap();
    host.add(definition("apps", stdio())).unwrap();
    host.ready("monitor").await.expect("connects");
    host.ready("apps").await.expect("connects");
    let monitor = host.binding("monitor").unwrap().catalog();
    let poll = monitor.tool("poll-system-stats").expect("listed");
    assert_eq!(poll.app.as_ref().unwrap().visibility, Visibility { model: false, app: true });
    let info = monitor.tool("get-system-info").expect("listed");
    assert!(info.visible_to_model() && info.app.as_ref().unwrap().resource_uri.is_some());

    let catalog = host.catalog();
    let for_claude = anthropic::tools(catalog.tools());
    let for_gpt = openai::tools(catalog.tools(), &openai::Options::chat());
    for offered in [&for_claude.tools, &for_gpt.tools] {
        let text = serde_json::to_string(offered).unwrap();
        assert!(!text.contains("poll-system-stats"), "offered to a model: {text}");
        assert!(text.contains("mcp__monitor__get-system-info"), "{text}");
    }

    let opts = || CallOpts::default().with_timeout(LIMIT);
    let refused = host.call_tool("mcp__monitor__poll-system-stats", json!({}), opts()).await.unwrap_err();
    assert_eq!(refused.class(), mcp_stack::FailureClass::ToolUnavailable, "{refused}");
    let stats = host.call_from_app("monitor", "poll-system-stats", json!({}), opts()).await.expect("its app");
    assert!(stats.structured.as_ref().is_some_and(|s| s["cpu"].is_object()), "{stats:?}");
    let other = host.call_from_app("apps", "poll-system-stats", json!({}), opts()).await.unwrap_err();
    assert_eq!(other.class(), mcp_stack::FailureClass::NotFound, "another server's app: {other}");

    // Its app is read and checked like any other.
    let uri = info.app.as_ref().unwrap().resource_uri.clone().unwrap();
    let app = host.binding("monitor").unwrap().read_app(&uri, opts()).await.expect("read_app");
    assert!(app.html.len() > 100_000 && app.fingerprint.len() == 64);
    host.close().await;
}
