//! The one small MCP server every client of the bench talks to, over stdio.
//!
//! `echo-server legacy|modern`: `legacy` answers `initialize` at
//! 2025-11-25 (and refuses `server/discover` as an unknown method);
//! `modern` answers `server/discover` at 2026-07-28 and marks each result
//! `resultType: "complete"`. Either way:
//!
//! - `tools/list`: `echo` and, with `ECHO_TOOLS=N`, N-1 more tools, each
//!   with a small input schema (one page: every client reads the same);
//! - `tools/call` of any tool: `{"text": T}` echoes T; `{"bytes": N}`
//!   answers N bytes of text (at most 8 MiB);
//! - `ping`; anything else with an id: -32601.
//!
//! One reply per request, written and flushed at once, in the order read:
//! the same for every client, so the server's own cost is the same on each
//! side of a ratio. It never writes anything else (no logs, no
//! notifications), and it ends when stdin closes.

use serde_json::{json, Value};
use std::io::{BufRead, Write};

const MAX_BYTES: usize = 8 << 20;

fn main() {
    let modern = match std::env::args().nth(1).as_deref() {
        Some("modern") => true,
        Some("legacy") | None => false,
        Some(other) => {
            eprintln!("echo-server: legacy or modern, not {other:?}");
            std::process::exit(2);
        }
    };
    let tools: usize = std::env::var("ECHO_TOOLS").ok().and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
    let catalog = catalog(tools);
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        let Some(id) = message.get("id").cloned() else { continue };
        let method = message["method"].as_str().unwrap_or_default();
        let outcome = match method {
            "initialize" if !modern => Ok(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "echo-server", "version": "1.0.0" },
            })),
            "server/discover" if modern => Ok(json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "echo-server", "version": "1.0.0" },
                "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "echo-server", "version": "1.0.0" } },
                "ttlMs": 0,
                "cacheScope": "private",
            })),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": catalog })),
            "tools/call" => Ok(call(&message["params"]["arguments"])),
            _ => Err(json!({ "code": -32601, "message": format!("method not found: {method}") })),
        };
        let reply = match outcome {
            Ok(mut result) => {
                if modern {
                    result["resultType"] = json!("complete");
                }
                json!({ "jsonrpc": "2.0", "id": id, "result": result })
            }
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        let mut bytes = serde_json::to_vec(&reply).expect("a value serializes");
        bytes.push(b'\n');
        if stdout.write_all(&bytes).and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
}

fn call(arguments: &Value) -> Value {
    if let Some(n) = arguments.get("records").and_then(Value::as_u64) {
        return records(n as usize);
    }
    let text = match arguments.get("bytes").and_then(Value::as_u64) {
        Some(n) => "x".repeat((n as usize).min(MAX_BYTES)),
        None => arguments["text"].as_str().unwrap_or_default().to_string(),
    };
    json!({ "content": [{ "type": "text", "text": text }], "isError": false })
}

/// A structured result of `n` records like a data tool's (about 90
/// bytes each), with a one-line text beside it.
fn records(n: usize) -> Value {
    let records: Vec<Value> = (0..n.min(MAX_BYTES / 100))
        .map(|i| {
            json!({
                "id": i,
                "name": format!("record {i}"),
                "tags": ["alpha", "beta"],
                "score": i as f64 * 0.25,
                "active": i % 2 == 0,
            })
        })
        .collect();
    json!({
        "content": [{ "type": "text", "text": format!("{} records", records.len()) }],
        "structuredContent": { "records": records },
        "isError": false,
    })
}

/// `echo` and `n - 1` tools like those of a real server: a description and
/// a few typed properties.
fn catalog(n: usize) -> Value {
    let mut tools = vec![json!({
        "name": "echo",
        "description": "Echoes text, or answers `bytes` bytes of it",
        "inputSchema": {
            "type": "object",
            "properties": { "text": { "type": "string" }, "bytes": { "type": "integer", "minimum": 0 } },
        },
    })];
    for i in 1..n {
        tools.push(json!({
            "name": format!("tool_{i:04}"),
            "description": format!("Tool number {i}: looks a record up by id and returns its fields"),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The record's id" },
                    "fields": { "type": "array", "items": { "type": "string" } },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100 },
                },
                "required": ["id"],
            },
            "annotations": { "readOnlyHint": true },
        }));
    }
    Value::Array(tools)
}
