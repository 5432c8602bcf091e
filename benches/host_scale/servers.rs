//! The servers the bench runs against, each in a process of its own: the
//! bench binary re-executed with `--serve-stdio TOOLS` (one echo server on
//! stdin/stdout, what a host spawns per stdio binding) or `--serve-http
//! TOOLS` (one axum process answering MCP on any path `/s/{id}`, so many
//! HTTP bindings reach many endpoints of one process whose memory is not
//! the bench's). Both speak the `initialize` era (2025-11-25) with plain
//! JSON replies and list their tools in one page, made by [`tools_page`],
//! which the floor also uses to get the very bytes it parses.

use axum::http::header::CONNECTION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::io::{BufRead, Write};

/// The version a server answers `initialize` with.
const VERSION: &str = "2025-11-25";

/// One tool, about 390 bytes of JSON: a name, a sentence of description and
/// a small object schema, like a typical public server's tool. `version`
/// changes tool 0's description (the refresh case).
fn tool(i: usize, version: u64) -> Value {
    let mut description = format!(
        "Reads the record {i} of the store and returns it with its history, newest first, \
         one page at a time; pass the cursor of the previous page to get the next."
    );
    if i == 0 && version > 0 {
        description.push_str(&format!(" (revision {version})"));
    }
    json!({
        "name": format!("tool_{i}"),
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The record's id."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "cursor": {"type": "string"},
            },
            "required": ["id"],
        },
    })
}

/// The `tools/list` result of a server of `tools` tools, as compact JSON.
pub fn tools_page(tools: usize, version: u64) -> String {
    let tools: Vec<Value> = (0..tools).map(|i| tool(i, version)).collect();
    json!({ "tools": tools }).to_string()
}

/// The whole response line a server sends for `tools/list` with `id`.
pub fn tools_response(id: &Value, tools: usize, version: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, tools_page(tools, version))
}

fn initialize_result(request: &Value) -> Value {
    let version = request["params"]["protocolVersion"].as_str().unwrap_or(VERSION);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "host-scale", "version": "1"},
    })
}

fn reply(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

fn method_not_found(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}).to_string()
}

/// A stdio server with `tools` tools, on blocking std I/O (no runtime: a
/// small process, quick to start). A `tools/call` of any tool bumps the
/// revision of tool 0 and says so with `notifications/tools/list_changed`
/// before its result. Returns when stdin closes.
pub fn serve_stdio(tools: usize) {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut version = 0;
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let Ok(request) = serde_json::from_str::<Value>(&line) else { continue };
        let Some(id) = request.get("id") else { continue }; // a notification
        let answer = match request["method"].as_str() {
            Some("initialize") => reply(id, initialize_result(&request)),
            Some("tools/list") => tools_response(id, tools, version),
            Some("tools/call") => {
                version += 1;
                let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
                let _ = writeln!(out, "{changed}");
                reply(id, json!({"content": [{"type": "text", "text": "ok"}]}))
            }
            Some("ping") => reply(id, json!({})),
            _ => method_not_found(id),
        };
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            return;
        }
    }
}

/// An HTTP server with `tools` tools on every path `/s/{id}`, on loopback;
/// prints its port on stdout, and exits when stdin closes (the bench's end).
/// With `close`, every response says `Connection: close`, so that the
/// client keeps no idle connection in its pool (what a binding costs
/// without its share of the pool).
pub fn serve_http(tools: usize, close: bool) {
    std::thread::spawn(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {}
        std::process::exit(0);
    });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async move {
        let page: Value = serde_json::from_str(&tools_page(tools, 0)).expect("a page");
        let app = Router::new().route(
            "/s/{id}",
            post(move |Json(body): Json<Value>| {
                let page = page.clone();
                async move {
                    let mut response = answer_http(body, page);
                    if close {
                        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
                    }
                    response
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        println!("{}", listener.local_addr().expect("an address").port());
        axum::serve(listener, app).await.expect("the server");
    });
}

fn answer_http(body: Value, page: Value) -> Response {
    let Some(id) = body.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let result = match body["method"].as_str() {
        Some("initialize") => initialize_result(&body),
        Some("tools/list") => page,
        Some("ping") => json!({}),
        _ => {
            let error = json!({"code": -32601, "message": "Method not found"});
            return Json(json!({"jsonrpc": "2.0", "id": id, "error": error})).into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}
