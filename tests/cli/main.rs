//! The `mcp` command, run as a built binary against the stdio demo server
//! (`mcp-stack-demo`): nothing to install.
//!
//! `cargo test --features cli --test cli`

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Output, Stdio};

mod extensions;
mod inspect;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const DEMO: &str = env!("CARGO_BIN_EXE_mcp-stack-demo");

fn mcp(args: &[&str]) -> Output {
    Command::new(MCP).args(args).stdin(Stdio::null()).output().expect("run mcp")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("an exit code, not a signal")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    let text = stdout(out);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}\n{}", stderr(out)))
}

/// A config file, in the Claude Desktop shape, of two demo servers over
/// stdio; deleted when dropped.
struct Config {
    path: std::path::PathBuf,
}

impl Config {
    fn two_demos(tag: &str) -> Config {
        let path = std::env::temp_dir().join(format!("mcp-cli-test-{}-{tag}.json", std::process::id()));
        let text = json!({
            "mcpServers": {
                "alpha": { "command": DEMO },
                "beta": { "command": DEMO, "env": { "DEMO_GREETING": "from-config" } },
            }
        });
        std::fs::File::create(&path).unwrap().write_all(text.to_string().as_bytes()).unwrap();
        Config { path }
    }

    /// The demo twice: `legacy` (2025-11-25) and `modern` (2026-07-28,
    /// which lists no `touch`, `log`, `roots`, ...).
    fn legacy_and_modern(tag: &str) -> Config {
        let path = std::env::temp_dir().join(format!("mcp-cli-test-{}-{tag}.json", std::process::id()));
        let text = json!({
            "mcpServers": {
                "legacy": { "command": DEMO },
                "modern": { "command": DEMO, "args": ["--modern"] },
            }
        });
        std::fs::File::create(&path).unwrap().write_all(text.to_string().as_bytes()).unwrap();
        Config { path }
    }

    fn arg(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[test]
fn servers_lists_each_binding_with_state_transport_protocol_and_tool_count() {
    let config = Config::two_demos("servers");
    let out = mcp(&["--config", config.arg(), "servers", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json_of(&out);
    let servers = doc["servers"].as_array().unwrap();
    let names: Vec<&str> = servers.iter().map(|s| s["binding"].as_str().unwrap()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    for s in servers {
        assert_eq!(s["state"], "ready", "{s}");
        assert_eq!(s["transportKind"], "stdio", "{s}");
        assert_eq!(s["protocolVersion"], "2025-11-25", "{s}");
        assert_eq!(s["failure"], Value::Null, "{s}");
        assert!(s["toolCount"].as_u64().unwrap() >= 9, "{s}");
    }

    let out = mcp(&["--config", config.arg(), "servers"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("NAME") && lines[0].contains("LAST FAILURE"), "{text}");
    assert!(
        lines[1].starts_with("alpha") && lines[1].contains("ready") && lines[1].contains("stdio"),
        "{text}"
    );
    assert!(lines[2].starts_with("beta") && lines[2].contains("2025-11-25"), "{text}");
}

#[test]
fn servers_reports_a_server_that_could_not_connect() {
    let out = mcp(&["--stdio", "/nonexistent/mcp-server", "--binding", "gone", "servers", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = &json_of(&out)["servers"][0];
    assert_eq!(s["binding"], "gone");
    assert_eq!(s["state"], "failed");
    assert!(s["failure"]["class"].is_string(), "{s}");
    assert_eq!(s["toolCount"], 0);
}

#[test]
fn tools_json_lists_every_servers_tools_by_model_name_with_their_meta() {
    let config = Config::two_demos("tools");
    let out = mcp(&["--config", config.arg(), "tools", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json_of(&out);
    let catalogs = doc["catalogs"].as_array().unwrap();
    assert_eq!(catalogs.len(), 2);
    let model_names: Vec<&str> = catalogs
        .iter()
        .flat_map(|c| c["tools"].as_array().unwrap())
        .map(|t| t["modelName"].as_str().unwrap())
        .collect();
    for name in ["mcp__alpha__echo", "mcp__beta__echo", "mcp__alpha__env", "mcp__beta__add"] {
        assert!(model_names.contains(&name), "{name} in {model_names:?}");
    }
    let env = catalogs[0]["tools"].as_array().unwrap().iter().find(|t| t["rawName"] == "env").unwrap();
    assert_eq!(env["meta"], json!({ "dev.mcp-stack.demo/reads": "environment" }), "{env}");
    assert_eq!(catalogs[0]["appliedTolerances"], json!([]));

    // The text form: one line per tool, model name first.
    let out = mcp(&["--config", config.arg(), "tools"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.lines().any(|l| l.starts_with("mcp__beta__echo ")), "{text}");
}

#[test]
fn call_routes_a_model_name_through_the_host() {
    let config = Config::two_demos("call");
    let out =
        mcp(&["--config", config.arg(), "call", "mcp__beta__env", r#"{"name":"DEMO_GREETING"}"#, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["content"][0]["text"], "from-config");
    let out =
        mcp(&["--config", config.arg(), "call", "mcp__alpha__env", r#"{"name":"DEMO_GREETING"}"#, "--json"]);
    assert_eq!(json_of(&out)["content"][0]["text"], "null", "alpha has no such variable");

    // A raw name is ambiguous with two servers: refused before any I/O, a
    // usage error (see tool_names_that_miss_... for what it says).
    let out = mcp(&["--config", config.arg(), "call", "echo", r#"{"message":"hi"}"#]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));
    // ... unless --server names one.
    let out = mcp(&["--config", config.arg(), "--server", "alpha", "call", "echo", r#"{"message":"hi"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "hi\n");
}

#[test]
fn a_raw_name_works_with_one_server_and_the_exit_codes_are_as_documented() {
    let out = mcp(&["--stdio", DEMO, "call", "add", r#"{"a":2,"b":3}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).starts_with("5\n"), "{}", stdout(&out));
    // The tool's isError is 5.
    let out = mcp(&["--stdio", DEMO, "call", "add", r#"{"a":"x"}"#, "--json"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert_eq!(json_of(&out)["isError"], true);
    // Arguments that are not a JSON object are a usage error, found before
    // connecting.
    let out = mcp(&["--stdio", DEMO, "call", "add", "[1]"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    // A server that cannot be started is 3.
    let out = mcp(&["--stdio", "/nonexistent/mcp-server", "tools"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    // A help that documents them.
    let out = mcp(&["--help"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("5    the tool returned isError"), "{}", stdout(&out));
    assert!(stdout(&out).contains("[default: 30000 = 30 s]"), "{}", stdout(&out));
}

#[test]
fn env_reaches_the_stdio_server_and_nothing_else_does() {
    let out = Command::new(MCP)
        .args(["--stdio", DEMO, "--env", "MCP_CLI_TEST_VALUE=given", "--json", "call", "env"])
        .arg(r#"{"name":"MCP_CLI_TEST_VALUE"}"#)
        .env("MCP_CLI_TEST_SECRET", "not-for-the-server")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["structuredContent"], json!({ "value": "given" }));
    // The CLI's own environment stays behind the allowlist.
    let out = Command::new(MCP)
        .args(["--stdio", DEMO, "--json", "call", "env", r#"{"name":"MCP_CLI_TEST_SECRET"}"#])
        .env("MCP_CLI_TEST_SECRET", "not-for-the-server")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["structuredContent"], json!({ "value": null }));
    // --env is for --stdio only, and needs KEY=VALUE.
    assert_eq!(code(&mcp(&["--env", "A=b", "tools"])), 2);
    let out = mcp(&["--stdio", DEMO, "--env", "no-equals-s3cret", "tools"]);
    assert_eq!(code(&out), 2);
    assert!(!stderr(&out).contains("s3cret"), "{}", stderr(&out));
}

#[test]
fn a_closed_stdout_ends_the_command_quietly_without_a_panic() {
    for args in [&["--stdio", DEMO, "tools"][..], &["--stdio", DEMO, "tools", "--json"][..]] {
        let mut child = Command::new(MCP)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before the command can have written anything:
        // it connects to a child server first.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(code(&out), 0, "{err}");
    }
}

#[test]
fn server_text_reaches_the_terminal_with_escapes_made_visible_and_json_stays_exact() {
    let hostile = "\u{1b}[2J\u{1b}]0;pwned\u{7}red\u{9b}31m \u{202e}txt.exe\u{2066}x\u{2069}\u{200f}\u{61c}";
    let args = json!({ "message": hostile }).to_string();
    let out = mcp(&["--stdio", DEMO, "call", "echo", &args]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{200f}', '\u{61c}'] {
        assert!(!text.contains(c), "{c:?} reached the terminal: {text:?}");
    }
    assert_eq!(
        text,
        "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}red\\u{9b}31m \\u{202e}txt.exe\\u{2066}x\\u{2069}\\u{200f}\\u{61c}\n"
    );

    let out = mcp(&["--stdio", DEMO, "call", "echo", &args, "--json"]);
    assert_eq!(json_of(&out)["content"][0]["text"], hostile);
}

#[test]
fn single_server_commands_need_server_when_there_are_several() {
    let config = Config::two_demos("prompts");
    let out = mcp(&["--config", config.arg(), "prompts"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--server"), "{}", stderr(&out));
    let out = mcp(&["--config", config.arg(), "--server", "beta", "prompts", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["prompts"][0]["name"], "greeting");
    let out = mcp(&["--config", config.arg(), "--server", "beta", "read", "demo://readme"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stdout(&out).is_empty());
}

#[test]
fn protocol_chooses_the_era_and_tools_json_reports_the_negotiated_version() {
    let version_of = |args: &[&str]| {
        let out = mcp(args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        json_of(&out)["catalogs"][0]["protocolVersion"].as_str().unwrap().to_string()
    };
    // The demo is a legacy server: auto (the default) falls back to
    // initialize at once, as legacy does.
    assert_eq!(version_of(&["--stdio", DEMO, "tools", "--json"]), "2025-11-25");
    assert_eq!(version_of(&["--stdio", DEMO, "--protocol", "auto", "tools", "--json"]), "2025-11-25");
    assert_eq!(version_of(&["--stdio", DEMO, "--protocol", "legacy", "tools", "--json"]), "2025-11-25");
    assert_eq!(version_of(&["--stdio", DEMO, "--protocol", "2025-11-25", "tools", "--json"]), "2025-11-25");
    let out = mcp(&["--stdio", DEMO, "--protocol", "legacy", "servers", "--json"]);
    assert_eq!(json_of(&out)["servers"][0]["protocolVersion"], "2025-11-25");
    // A pinned version the server does not answer with: no connection.
    let out = mcp(&["--stdio", DEMO, "--protocol", "2025-06-18", "tools", "--json"]);
    assert_eq!(code(&out), 3, "could not connect: {}", stdout(&out));
    assert_eq!(json_of(&out)["error"]["class"], "unsupported_protocol");

    // Modern only: the legacy demo cannot be spoken to.
    let out = mcp(&["--stdio", DEMO, "--protocol", "modern", "servers", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let s = &json_of(&out)["servers"][0];
    assert_eq!(s["state"], "failed", "{s}");
    assert_eq!(s["failure"]["class"], "unsupported_protocol", "{s}");

    let out = mcp(&["--protocol", "1999-01-01", "tools"]);
    assert_eq!(code(&out), 2, "a usage error: {}", stderr(&out));
    assert!(stderr(&out).contains("--protocol"), "{}", stderr(&out));

    // The demo of the modern era (`mcp-stack-demo --modern`): auto finds
    // it modern, and a call goes through.
    let modern = format!("{DEMO} --modern");
    assert_eq!(version_of(&["--stdio", &modern, "tools", "--json"]), "2026-07-28");
    assert_eq!(version_of(&["--stdio", &modern, "--protocol", "modern", "tools", "--json"]), "2026-07-28");
    let out = mcp(&["--stdio", &modern, "call", "echo", r#"{"message":"both eras"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("both eras"), "{}", stdout(&out));
    let out = mcp(&["--stdio", &modern, "--protocol", "legacy", "servers", "--json"]);
    assert_eq!(json_of(&out)["servers"][0]["state"], "failed", "{}", stdout(&out));
}

/// A server on a thread of its own (its own runtime) whose tools quote
/// the request's headers back: as a gateway's error page (HTTP 502) and
/// in a JSON-RPC error's message and data.
fn reflecting_server() -> String {
    local_server("mcp")
}

/// The in-process test server's URL at `path` (see [`reflecting_server`]).
fn local_server(path: &str) -> String {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    async fn reflect(headers: HeaderMap, body: axum::body::Bytes) -> axum::response::Response {
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let id = body["id"].clone();
        if id.is_null() {
            return StatusCode::ACCEPTED.into_response();
        }
        let echoed: String =
            headers.iter().map(|(n, v)| format!("{n}: {}\n", v.to_str().unwrap_or("?"))).collect();
        let reply = match body["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "reflect", "version": "1"}}}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "page", "inputSchema": {"type": "object"}},
                {"name": "rpc", "inputSchema": {"type": "object"}}]}}),
            "tools/call" if body["params"]["name"] == "page" => {
                return (StatusCode::BAD_GATEWAY, format!("upstream refused:\n{echoed}")).into_response()
            }
            "tools/call" => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000,
                "message": format!("refused: {echoed}"), "data": {"headers": echoed}}}),
            _ => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
            }
        };
        ([(axum::http::header::CONTENT_TYPE, "application/json")], reply.to_string()).into_response()
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let router = axum::Router::new()
                .route("/mcp", axum::routing::post(reflect))
                // A web page, not an MCP endpoint.
                .route(
                    "/page",
                    axum::routing::any(|| async {
                        (
                            StatusCode::NOT_IMPLEMENTED,
                            [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")],
                            "<!DOCTYPE html><html><body><h1>Not Implemented</h1></body></html>",
                        )
                    }),
                )
                // A server of 2026-07-28 only: initialize is refused with
                // the versions it speaks.
                .route(
                    "/modern",
                    axum::routing::any(|body: axum::body::Bytes| async move {
                        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let error = json!({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32022,
                            "message": "Unsupported protocol version",
                            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}});
                        (
                            StatusCode::BAD_REQUEST,
                            [(axum::http::header::CONTENT_TYPE, "application/json")],
                            error.to_string(),
                        )
                    }),
                );
            let _ = axum::serve(listener, router).await;
        });
    });
    format!("http://{}/{path}", rx.recv().unwrap())
}

#[test]
fn secrets_a_server_reflects_never_reach_stdout_or_stderr() {
    const KEY: &str = "api-key-LEAK-77c1-0123456789";
    const TOKEN: &str = "static-token-LEAK-77c1-0123456789";
    let url = reflecting_server();
    let url_with_key = format!("{url}?key=url-key-LEAK-77c1-0123456789");
    let authorization = format!("Authorization: Bearer {TOKEN}");
    let api_key = format!("X-Api-Key: {KEY}");
    for tool in ["page", "rpc"] {
        for json in [false, true] {
            let mut args = vec!["--http", &url_with_key, "--protocol", "legacy", "--header", &api_key];
            args.extend(["--header", &authorization, "call", tool, "{}"]);
            if json {
                args.push("--json");
            }
            let out =
                Command::new(MCP).args(&args).env("RUST_LOG", "trace").stdin(Stdio::null()).output().unwrap();
            assert_eq!(code(&out), 4, "{tool} {json}: {}", stderr(&out));
            let shown = format!("{}\n{}", stdout(&out), stderr(&out));
            assert!(shown.contains("x-api-key: [redacted]"), "{tool} {json}: the quote is shown: {shown}");
            assert!(!shown.contains("LEAK-77c1"), "{tool} {json}: a secret leaked: {shown}");
        }
    }
}

/// `mcp` with `stdin` written to its standard input.
fn mcp_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(MCP)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Arguments of 10 MiB from stdin (`-`) and from a file (`@FILE`), within
/// a raised --max-frame-bytes; past the bound a usage error that names it.
#[test]
fn big_arguments_come_from_stdin_or_a_file_and_are_bounded() {
    let big = json!({ "message": "x".repeat(10 << 20) }).to_string();
    let raised = (16 << 20).to_string();
    let out = mcp_with_stdin(
        &["--stdio", DEMO, "--max-frame-bytes", &raised, "call", "echo", "-", "--json"],
        big.as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json_of(&out);
    assert_eq!(doc["isError"], false);
    // The echo came back, cut at the text result's bound and marked.
    assert!(doc["content"][0]["text"].as_str().unwrap().starts_with("xxxx"), "{}", &stdout(&out)[..200]);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("args.json");
    std::fs::write(&file, &big).unwrap();
    let at = format!("@{}", file.display());
    let out = mcp(&["--stdio", DEMO, "--max-frame-bytes", &raised, "call", "echo", &at, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    // The default bound (4 MiB): refused before anything starts.
    let out = mcp(&["--stdio", DEMO, "call", "echo", &at, "--json"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let error = &json_of(&out)["error"];
    assert_eq!(error["class"], "invalid_arguments", "{error}");
    assert!(error["message"].as_str().unwrap().contains("--max-frame-bytes"), "{error}");
    // A missing file is named.
    let out = mcp(&["--stdio", DEMO, "call", "echo", "@/nonexistent/args.json"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("/nonexistent/args.json"), "{}", stderr(&out));
}

/// Every way a tool name can miss, each refused before any I/O as a usage
/// error that says what to do.
#[test]
fn tool_names_that_miss_say_which_servers_list_them_and_what_was_meant() {
    let config = Config::two_demos("names");
    // A raw name two servers list: which, and --server.
    let out = mcp(&["--config", config.arg(), "call", "echo", r#"{"message":"hi"}"#]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not_found") && err.contains("2 servers (alpha, beta)") && err.contains("--server"),
        "{err}"
    );
    assert!(err.contains("mcp__alpha__echo"), "{err}");
    // With --server it works.
    let out = mcp(&["--config", config.arg(), "--server", "beta", "call", "echo", r#"{"message":"hi"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A model-name typo: the closest names.
    let out = mcp(&["--config", config.arg(), "call", "mcp__alpha__ecoh", "--json"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let error = &json_of(&out)["error"];
    assert_eq!(error["class"], "not_found");
    assert!(error["message"].as_str().unwrap().contains(r#"did you mean "mcp__alpha__echo""#), "{error}");
    // An unknown raw name on one server: refused, not sent.
    let out = mcp(&["--stdio", DEMO, "call", "nosuch_tool"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains(r#"the server "server" lists no tool "nosuch_tool""#), "{}", stderr(&out));
}

/// Issue 43, item 14: a raw name that exactly one of several servers lists
/// is routed to it, and the command says which server answered.
#[test]
fn a_raw_name_one_of_several_servers_lists_is_routed_to_it() {
    let config = Config::legacy_and_modern("routed");
    let out = mcp(&["--config", config.arg(), "call", "touch", r#"{"uri":"demo://readme"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains(r#""touch" is served by the server "legacy""#), "{}", stderr(&out));
    // --json keeps stderr free of it: the document is the answer.
    let out = mcp(&["--config", config.arg(), "call", "touch", r#"{"uri":"demo://readme"}"#, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("served by"), "{}", stderr(&out));
}

/// Each failure names itself: bad arguments, a failed prompt or resource,
/// a bad URL, a missing config file, a web page, a 2026-07-28-only server.
#[test]
fn errors_name_what_went_wrong_and_what_to_do() {
    let class_and_message = |out: &Output| {
        let error = json_of(out)["error"].clone();
        (error["class"].as_str().unwrap().to_string(), error["message"].as_str().unwrap().to_string())
    };
    let out = mcp(&["--stdio", DEMO, "call", "echo", "{not json", "--json"]);
    assert_eq!(code(&out), 2);
    assert_eq!(class_and_message(&out).0, "invalid_arguments");
    let out = mcp(&["--stdio", DEMO, "get-prompt", "nosuch", "--json"]);
    assert_eq!(code(&out), 4);
    assert_eq!(class_and_message(&out).0, "remote_error");
    let out = mcp(&["--stdio", DEMO, "read", "demo://nothing", "--json"]);
    assert_eq!(class_and_message(&out).0, "not_found", "a missing resource is not_found");
    let out = mcp(&["--http", "not a url", "tools"]);
    assert_eq!(code(&out), 2);
    assert!(!stderr(&out).contains("invalid_config: invalid_config"), "{}", stderr(&out));
    let out = mcp(&["--config", "/nonexistent/mcp.json", "tools"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("/nonexistent/mcp.json"), "{}", stderr(&out));
    let out = mcp(&["--http", &local_server("page"), "tools", "--json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let (_, message) = class_and_message(&out);
    assert!(message.contains("not an MCP endpoint") && !message.contains("<html"), "{message}");
    let out = mcp(&["--http", &local_server("modern"), "--protocol", "legacy", "tools", "--json"]);
    assert_eq!(code(&out), 3, "{}", stdout(&out));
    let (class, message) = class_and_message(&out);
    assert_eq!(class, "unsupported_protocol", "{message}");
    assert!(
        message.contains("2026-07-28") && message.contains("auto") && !message.contains("405"),
        "{message}"
    );
}

/// `-h` is short and `--help` complete: grouped, every default shown, in
/// words a user knows, with examples.
#[test]
fn the_help_is_short_with_h_and_grouped_with_help() {
    let short = stdout(&mcp(&["-h"]));
    let long = stdout(&mcp(&["--help"]));
    assert!(short.lines().count() < 45, "{} lines:\n{short}", short.lines().count());
    assert!(short.contains("Examples:"), "{short}");
    assert!(long.lines().count() > short.lines().count() * 2, "{long}");
    for heading in [
        "Connection:",
        "Authorization (--http, --sse):",
        "Timeouts (every server):",
        "Limits (every server):",
    ] {
        assert!(long.contains(heading), "{heading}: {long}");
    }
    assert!(!long.contains("Timeouts.") && !long.contains("Limits.max"), "library words: {long}");
    assert!(long.contains("[default: auto"), "--protocol's default: {long}");
    let call = stdout(&mcp(&["call", "-h"]));
    assert!(call.lines().count() < 40, "{} lines:\n{call}", call.lines().count());
    assert!(call.contains("Examples:") && call.contains("@FILE"), "{call}");
}

/// Prompts' arguments are strings; `read --output` saves a blob; empty
/// listings say so; structured content is not printed twice.
#[test]
fn prompts_resources_and_output_read_as_a_person_expects() {
    let out = mcp(&["--stdio", DEMO, "get-prompt", "greeting", r#"{"name": 42}"#, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("Say hello to 42."), "{}", stdout(&out));
    let out = mcp(&["--stdio", DEMO, "get-prompt", "greeting", r#"{"name": {"a": 1}}"#, "--json"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json_of(&out)["error"]["class"], "invalid_arguments");

    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("logo.png");
    let out = mcp(&["--stdio", DEMO, "read", "demo://logo", "--output", saved.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bytes = std::fs::read(&saved).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{bytes:?}");
    assert!(stdout(&out).contains("(image/png)"), "{}", stdout(&out));
    let out = mcp(&["--stdio", DEMO, "read", "demo://logo"]);
    assert!(stdout(&out).contains("image/png") && stdout(&out).contains("--output"), "{}", stdout(&out));

    let out = mcp(&["--stdio", DEMO, "resources"]);
    let text = stdout(&out);
    let columns: Vec<usize> = text.lines().map(|l| l.rfind(' ').unwrap() + 1).collect();
    assert_eq!(columns.len(), 3, "the readme, the logo and the clock app: {text}");
    assert!(columns.windows(2).all(|w| w[0] == w[1]), "aligned: {text}");

    // The demo's add returns its sum as text and as structured content:
    // printed once.
    let out = mcp(&["--stdio", DEMO, "call", "add", r#"{"a":2,"b":3}"#]);
    assert_eq!(stdout(&out), "5\n");

    let out = mcp(&["--stdio", DEMO, "servers"]);
    let text = stdout(&out);
    let header = text.lines().next().unwrap();
    let row = text.lines().nth(1).unwrap();
    assert_eq!(header.find("PROTOCOL"), row.find("2025-11-25"), "{text}");
}

/// Every `--json` document says its format version.
#[test]
fn every_json_document_carries_its_format_version() {
    for args in [&["tools", "--json"][..], &["servers", "--json"], &["call", "nosuch", "--json"]] {
        let out = mcp(args);
        assert_eq!(json_of(&out)["formatVersion"], 2, "{args:?}: {}", stdout(&out));
    }
}

/// Ctrl-C during a call: the server is sent notifications/cancelled, the
/// command says it was interrupted and cancelled, and exits 130 (as a shell
/// reports SIGINT).
#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_call_on_the_wire_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("read.log");
    let server =
        format!("sh {}/tests/fixtures/hanging_server.sh {}", env!("CARGO_MANIFEST_DIR"), log.display());
    let child = Command::new(MCP)
        .args(["--stdio", &server, "call", "hang", "{}"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The call is in flight once the server has read it (bounded wait).
    let called = || std::fs::read_to_string(&log).unwrap_or_default().contains(r#""method":"tools/call""#);
    for _ in 0..400 {
        if called() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(called(), "the call never reached the server");
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let rest = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted") && rest.contains("cancelled"), "{rest}");
    let read = std::fs::read_to_string(&log).unwrap();
    assert!(read.contains(r#""method":"notifications/cancelled""#), "the server was told: {read}");
}

/// RUST_LOG output has colour only on a terminal: a pipe gets plain text.
#[test]
fn tracing_on_a_pipe_has_no_colour_codes() {
    let out = Command::new(MCP)
        .args(["tools"])
        .env("RUST_LOG", "mcp_stack=debug")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0);
    let err = stderr(&out);
    assert!(err.contains("DEBUG"), "tracing ran: {err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// A stdio server that never finishes starting: the timeout says what it
/// last wrote on stderr, and names --env and the environment allowlist.
#[cfg(unix)]
#[test]
fn a_server_that_does_not_start_says_what_it_last_wrote() {
    let server = "sh -c 'echo npm ERR! unable to get local issuer certificate >&2; exec sleep 30'";
    let out = mcp(&["--stdio", server, "--startup-timeout-ms", "1500", "tools"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("startup_timeout") && err.contains("unable to get local issuer certificate"),
        "{err}"
    );
    assert!(err.contains("--env"), "{err}");
}

/// `--proxy` and `--no-proxy` go with an HTTP server, and a bad proxy URL
/// is a usage error that does not quote it (it may hold credentials).
/// (Requests through a proxy are tested in `tests/http/proxy.rs`.)
#[test]
fn proxy_flags_need_an_http_server_and_a_valid_url() {
    let out = mcp(&["--stdio", DEMO, "--proxy", "http://127.0.0.1:3128", "tools"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--proxy and --no-proxy need --http or --sse"), "{}", stderr(&out));
    let out = mcp(&["--http", "http://127.0.0.1:1/mcp", "--proxy", "not a url pw-0453", "tools"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("proxy URL"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("pw-0453"), "{}", stderr(&out));
    let out =
        mcp(&["--http", "http://127.0.0.1:1/mcp", "--proxy", "http://127.0.0.1:3128", "--no-proxy", "tools"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

/// `--cacert`, `--cert` and `--key` go with an HTTP server; `--cert` and
/// `--key` go together; a file that is missing or not PEM is a usage error
/// naming the flag, never quoting the file. (Servers behind a private CA
/// and mutual TLS are reached in `tests/http/tls.rs` and, through this
/// command, in `tests/interop/network.rs`.)
#[test]
fn certificate_flags_need_an_http_server_and_readable_pem() {
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "key-material-0454").unwrap();
    let not_pem = not_pem.to_str().unwrap();
    let out = mcp(&["--stdio", DEMO, "--cacert", not_pem, "tools"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--cacert, --cert and --key need --http or --sse"), "{}", stderr(&out));
    let out = mcp(&["--http", "https://127.0.0.1:1/mcp", "--cert", not_pem, "tools"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let missing = dir.path().join("missing.pem");
    let out = mcp(&["--http", "https://127.0.0.1:1/mcp", "--cacert", missing.to_str().unwrap(), "tools"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--cacert: cannot open"), "{}", stderr(&out));
    for args in [["--cacert", not_pem, "", ""], ["--cert", not_pem, "--key", not_pem]] {
        let mut all = vec!["--http", "https://127.0.0.1:1/mcp"];
        all.extend(args.iter().filter(|a| !a.is_empty()));
        all.push("tools");
        let out = mcp(&all);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not valid PEM") || stderr(&out).contains("no PEM"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("key-material-0454"), "{}", stderr(&out));
    }
}

/// `call --task` runs the demo's `count` as a task: each status change and
/// each progress report is a line on stderr (not a terminal here), the
/// result on stdout, and `--json`
/// carries the task's last status. A model name is routed as a plain call
/// is; a tool that forbids tasks is refused before anything is sent.
#[test]
fn a_call_runs_as_a_task_and_its_status_changes_are_shown() {
    let out = mcp(&["--stdio", DEMO, "call", "count", r#"{"steps":4,"delay_ms":500}"#, "--task"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "counted to 4");
    let err = stderr(&out);
    let (lines, progress): (Vec<&str>, Vec<&str>) = err.lines().partition(|l| !l.starts_with("progress "));
    // The task's progress, reported after the start was answered, under
    // the start's token.
    assert_eq!(
        progress,
        (1..=4).map(|i| format!("progress {i}/4 step {i} of 4")).collect::<Vec<_>>(),
        "{err}"
    );
    assert_eq!(lines.first(), Some(&"task demo-task-0: working: count started"), "{err}");
    assert!(
        lines.iter().any(|l| l.starts_with("task demo-task-0: working: step ")),
        "a poll saw a step: {err}"
    );
    assert_eq!(lines.last(), Some(&"task demo-task-0: completed"), "{err}");
    assert_eq!(lines.len(), lines.iter().collect::<std::collections::HashSet<_>>().len(), "each once: {err}");

    let args =
        ["--stdio", DEMO, "call", "mcp__server__count", r#"{"steps":1}"#, "--task", "--ttl-ms", "5000"];
    let out = mcp(&[&args[..], &["--json"]].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json_of(&out);
    assert_eq!(doc["content"][0]["text"], "counted to 1");
    assert_eq!(doc["task"]["id"], "demo-task-0");
    assert_eq!(doc["task"]["status"], "completed");
    assert_eq!(doc["task"]["ttlMs"], 5000);
    assert!(!stderr(&out).contains("task "), "--json shows no status lines: {}", stderr(&out));

    let out = mcp(&["--stdio", DEMO, "call", "echo", r#"{"message":"x"}"#, "--task", "--json"]);
    assert_eq!(code(&out), 4);
    assert_eq!(json_of(&out)["error"]["class"], "tool_unavailable");
    let out = mcp(&["--stdio", DEMO, "call", "count", "--ttl-ms", "5"]);
    assert_eq!(code(&out), 2, "--ttl-ms needs --task: {}", stderr(&out));
}

/// A wait that outlasts the request deadline ends the waiting, not the
/// task, and the error says whether another run can take the task up.
#[test]
fn a_task_wait_past_the_deadline_says_how_to_resume() {
    let out = mcp(&[
        "--stdio",
        DEMO,
        "--request-timeout-ms",
        "1500",
        "call",
        "sleep",
        r#"{"ms":30000}"#,
        "--task",
        "--json",
    ]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let error = &json_of(&out)["error"];
    assert_eq!(error["class"], "deadline");
    let message = error["message"].as_str().unwrap();
    // Over stdio the server process ends with the command: no hint that
    // could not work (issue 43, item 15); HTTP on 2026-07-28 gets the
    // `mcp tasks result ID` hint (tests/interop/tasks_extension.rs).
    assert!(message.contains("task demo-task-0 ends with the server process"), "{message}");
    assert!(!message.contains("mcp tasks result"), "{message}");
}

/// `tasks list|get|cancel` ask the server; a fresh demo server holds no
/// tasks, and an id it never gave is its error, classified.
#[test]
fn tasks_commands_reach_the_servers_tasks() {
    let out = mcp(&["--stdio", DEMO, "tasks", "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "server server holds no tasks for this client");
    let out = mcp(&["--stdio", DEMO, "tasks", "list", "--json"]);
    assert_eq!(json_of(&out)["tasks"], json!([]));
    for action in ["get", "result", "cancel"] {
        let out = mcp(&["--stdio", DEMO, "tasks", action, "demo-task-7", "--json"]);
        assert_eq!(code(&out), 4, "{action}: {}", stderr(&out));
        let error = &json_of(&out)["error"];
        assert_eq!(error["class"], "remote_error", "{action}: {error}");
        assert!(error["message"].as_str().unwrap().contains("no such task"), "{action}: {error}");
    }
}

/// Issue 43, item 14: what a person meeting the command trips on.
#[test]
fn the_command_reads_well_to_a_newcomer() {
    // `tools` shows each tool's parameters: required first, optional marked.
    let tools = stdout(&mcp(&["tools"]));
    let add = tools.lines().position(|l| l.starts_with("mcp__server__add ")).expect("add listed");
    assert_eq!(tools.lines().nth(add + 1), Some("    (a: number, b: number)"), "{tools}");
    let count = tools.lines().position(|l| l.starts_with("mcp__server__count ")).expect("count listed");
    assert_eq!(tools.lines().nth(count + 1), Some("    (steps: integer, delay_ms?: integer)"), "{tools}");
    let prompts = stdout(&mcp(&["prompts"]));
    assert!(prompts.contains("greeting") && prompts.contains("    (name)"), "{prompts}");

    // `call --output` saves an image's bytes (and text when there is none).
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("tiny.png");
    let out = mcp(&["call", "tiny_image", "--output", png.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"), "the PNG's bytes");
    assert!(stdout(&out).contains("(image/png)"), "{}", stdout(&out));
    let txt = dir.path().join("echo.txt");
    let out = mcp(&["call", "echo", r#"{"message":"kept"}"#, "--output", txt.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&txt).unwrap(), "kept");

    // A program that does not speak MCP is told so in plain words.
    let out = mcp(&["--stdio", "cat", "tools"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("does not speak MCP"), "{}", stderr(&out));

    // Roots are declared without --root: a server that asks is told there
    // are none, not refused (issue 43, item 17); with --root, that one.
    let out = mcp(&["call", "roots", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = json_of(&out)["content"][0]["text"].as_str().unwrap().to_string();
    assert!(text.contains(r#""roots":[]"#) || text.contains(r#""roots": []"#), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let out = mcp(&["--root", dir.path().to_str().unwrap(), "call", "roots", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("file://"), "{}", stdout(&out));

    // The demo server has a help text and exits 0 with it.
    let help = Command::new(DEMO).arg("--help").stdin(Stdio::null()).output().unwrap();
    assert_eq!(code(&help), 0);
    assert!(stdout(&help).contains("Usage: mcp-stack-demo"), "{}", stdout(&help));
}

/// Issue 44, item 5: `tools --search` ranks the tools for a query, and
/// `tools --for PROVIDER` prints what that provider is sent, with its cost.
#[test]
fn tools_search_and_tools_for_a_provider() {
    let out = mcp(&["tools", "--search", "add two numbers", "-k", "3", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let document = json_of(&out);
    assert!(document["formatVersion"].is_number(), "{document}");
    let hits = document["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 3, "{document}");
    assert_eq!(hits[0]["server"], "server");
    assert_eq!(hits[0]["tool"], "add");
    assert_eq!(hits[0]["modelName"], "mcp__server__add");
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
    let text = stdout(&mcp(&["tools", "--search", "add two numbers", "-k", "1"]));
    assert!(text.starts_with("mcp__server__add "), "{text}");
    assert_eq!(code(&mcp(&["tools", "--search", "x", "-k", "0"])), 2, "-k is 1 to 100");

    for provider in ["openai", "anthropic", "gemini"] {
        let out = mcp(&["tools", "--for", provider, "--json"]);
        assert_eq!(code(&out), 0, "{provider}: {}", stderr(&out));
        let document = json_of(&out);
        assert!(document["estimatedTokens"].as_u64().unwrap() > 100, "{provider}: {document}");
        let text = stdout(&mcp(&["tools", "--for", provider]));
        assert!(text.contains("tokens"), "{provider}: {text}");
    }
    let gemini = json_of(&mcp(&["tools", "--for", "gemini", "--json"]));
    assert!(gemini["tools"][0]["functionDeclarations"].is_array(), "{gemini}");
    // Deferred: the search tool alone (the demo marks nothing always
    // loaded), at a fraction of the tokens.
    let all = json_of(&mcp(&["tools", "--for", "anthropic", "--json"]));
    let deferred = json_of(&mcp(&["tools", "--for", "anthropic", "--deferred", "--json"]));
    let names: Vec<&str> =
        deferred["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["search_tools"], "{deferred}");
    assert!(deferred["estimatedTokens"].as_u64() < all["estimatedTokens"].as_u64(), "{deferred}");
}
