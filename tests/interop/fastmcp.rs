//! FastMCP 4.1.6, the most used Python server framework, through the `mcp`
//! command: its tools that elicit (`ctx.elicit`) or list roots
//! (`ctx.session.list_roots()`) refuse on 2026-07-28 connections and work on
//! the `initialize` era, so under the default protocol choice the default
//! profile recognizes it and speaks `initialize`
//! (`legacy_era_for_mrtr_less_servers`, reported as applied). A FastMCP
//! server the profile cannot recognize (its author set its own version)
//! gets a hint naming the one-line configuration, and works with it.
//!
//! Run through `scripts/interop.sh`, which installs FastMCP in its own venv
//! and sets `MCP_FASTMCP_PYTHON` and `MCP_CLI`. These tests never skip: a
//! missing peer is a failure. The HTTP server runs on a free port and is
//! killed when its test ends.

use crate::support::peers::{free_port, peer, start_listening};
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The bound on every wait.
const LIMIT: Duration = Duration::from_secs(60);

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fastmcp_server.py");

fn server_line(extra: &str) -> String {
    format!("{} {SCRIPT} {extra}", peer("MCP_FASTMCP_PYTHON"))
}

/// Runs `mcp` with `args` (stdin closed), bounded by [`LIMIT`] through its
/// own timeouts: the startup and request timeouts are well under it.
fn mcp(args: &[&str]) -> Output {
    Command::new(peer("MCP_CLI"))
        .args(["--startup-timeout-ms", "30000", "--request-timeout-ms", "30000"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp")
}

fn both(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `tools --json`, a call of `pick_color` answered with the form's default,
/// and a call of `list_roots` offered `root`, against `server` (the
/// arguments naming one server, `fm`); each must succeed.
fn exercise(server: &[&str], root: &str) {
    let mut args = server.to_vec();
    args.extend(["tools", "--json"]);
    let out = mcp(&args);
    assert!(out.status.success(), "tools: {}", both(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let catalog = &doc["catalogs"][0];
    assert_eq!(catalog["protocolVersion"], "2025-11-25", "the initialize era: {doc}");
    let applied: Vec<&str> =
        catalog["appliedTolerances"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(applied.contains(&"legacy_era_for_mrtr_less_servers"), "reported as applied: {applied:?}");

    let mut args = server.to_vec();
    args.extend(["--accept-defaults", "call", "mcp__fm__pick_color", "{}"]);
    let out = mcp(&args);
    assert!(out.status.success(), "pick_color: {}", both(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("color=blue"), "{}", both(&out));

    let mut args = server.to_vec();
    args.extend(["--root", root, "call", "mcp__fm__list_roots", "{}"]);
    let out = mcp(&args);
    assert!(out.status.success(), "list_roots: {}", both(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("roots=file://") && stdout.contains(root), "{}", both(&out));
}

#[test]
fn fastmcp_over_stdio_elicits_and_lists_roots_under_the_default_choice() {
    let root = std::env::temp_dir();
    let line = server_line("");
    exercise(&["--stdio", &line, "--binding", "fm"], root.to_str().unwrap());
}

#[tokio::test]
async fn fastmcp_over_http_elicits_and_lists_roots_under_the_default_choice() {
    let port = free_port();
    let mut command = Command::new(peer("MCP_FASTMCP_PYTHON"));
    command.arg(SCRIPT).arg("--http").arg(port.to_string()).stderr(Stdio::null());
    let _server = start_listening(command, port, "the FastMCP server", LIMIT).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let root = std::env::temp_dir();
    let root = root.to_str().unwrap().to_string();
    // The CLI is a blocking child: off the runtime's thread.
    tokio::task::spawn_blocking(move || exercise(&["--http", &url, "--binding", "fm"], &root))
        .await
        .expect("the HTTP checks");
}

#[test]
fn an_unrecognized_fastmcp_server_gets_a_hint_and_works_with_the_one_line_config() {
    // The author's own version: nothing says FastMCP 4 any more.
    let line = server_line("--version 1.2.0");
    let out =
        mcp(&["--stdio", &line, "--binding", "fm", "--accept-defaults", "call", "mcp__fm__pick_color", "{}"]);
    assert!(!out.status.success(), "the 2026-07-28 era refuses ctx.elicit: {}", both(&out));
    let said = both(&out);
    assert!(said.contains("unavailable on 2026-07-28 connections"), "{said}");
    assert!(
        said.contains("--protocol legacy") && said.contains(r#""protocol": "legacy""#),
        "the hint: {said}"
    );

    // The one line the hint names, in a config file.
    let dir = std::env::temp_dir().join(format!("mcp-fastmcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let entry = serde_json::json!({ "mcpServers": { "fm": {
        "command": peer("MCP_FASTMCP_PYTHON"),
        "args": [SCRIPT, "--version", "1.2.0"],
        "x-mcp-stack": { "protocol": "legacy" }
    }}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let config = config.to_str().unwrap();
    let out = mcp(&["--config", config, "--accept-defaults", "call", "mcp__fm__pick_color", "{}"]);
    assert!(out.status.success(), "with the config: {}", both(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("color=blue"), "{}", both(&out));
    let root = dir.to_str().unwrap();
    let out = mcp(&["--config", config, "--root", root, "call", "mcp__fm__list_roots", "{}"]);
    assert!(out.status.success(), "with the config: {}", both(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("roots=file://"), "{}", both(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
