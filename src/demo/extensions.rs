//! The demo server's extensions: an app (MCP Apps) offered to a client
//! that declares `io.modelcontextprotocol/ui`, and one skill (SEP-2640,
//! `io.modelcontextprotocol/skills`, declared in `initialize`).
//!
//! - tools `clock` (for the model and its app) and `clock_refresh` (for
//!   the app only, `visibility: ["app"]`), both answering the server's
//!   Unix time, with the app `ui://demo/clock.html`
//!   (`text/html;profile=mcp-app`, a `_meta.ui` asking for a border and
//!   no origins);
//! - the skill `greeting-style`: `skill://demo/greeting-style/SKILL.md`
//!   and `STYLE.md` beside it, listed with their sizes and digests.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::canonical::hex;

/// The app's URI.
pub(super) const CLOCK_APP: &str = "ui://demo/clock.html";
/// The clock's app: the MCP Apps handshake by hand (`ui/initialize`, then
/// `ui/notifications/initialized`), the tool's result shown as it comes,
/// and a button that calls the app-only `clock_refresh` through the host.
const CLOCK_HTML: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>clock</title>
<style>body{font:16px system-ui,sans-serif;margin:16px}#t{font:32px monospace}</style></head>
<body><h1>Clock</h1><p id="t">waiting for the tool result</p>
<button id="refresh" disabled>Refresh (clock_refresh)</button>
<script>
// A host passes the tool result in; the app never reaches the network.
let next = 1;
const waiting = new Map();
function request(method, params) {
  const id = next++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve) => waiting.set(id, resolve));
}
function show(result) {
  const text = (result && result.content || []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
  document.getElementById("t").textContent = text || JSON.stringify(result);
}
window.addEventListener("message", (e) => {
  const m = e.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id !== undefined && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); return; }
  if (m.method === "ui/notifications/tool-result") show(m.params);
  if (m.method === "ui/resource-teardown") window.parent.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
});
request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "clock", version: "1" }, appCapabilities: {} })
  .then(() => {
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
    const button = document.getElementById("refresh");
    button.disabled = false;
    button.addEventListener("click", () => request("tools/call", { name: "clock_refresh", arguments: {} })
      .then((m) => show(m.result || m.error)));
  });
</script></body></html>
"#;

const SKILL_URI: &str = "skill://demo/greeting-style/SKILL.md";
const STYLE_URI: &str = "skill://demo/greeting-style/STYLE.md";
const SKILL_MD: &str = "---\nname: greeting-style\ndescription: How the demo server's greetings are phrased\n---\nGreet by name, once. See STYLE.md for the tone.\n";
const STYLE_MD: &str = "# Tone\n\nWarm, short, no exclamation marks.\n";

/// The app tools, for a client that declared the Apps extension.
pub(super) fn app_tools() -> [Value; 2] {
    let schema = json!({ "type": "object" });
    [
        json!({
            "name": "clock",
            "description": "The server's Unix time, with an app that shows it",
            "inputSchema": schema,
            "_meta": { "ui": { "resourceUri": CLOCK_APP } },
        }),
        json!({
            "name": "clock_refresh",
            "description": "The server's Unix time, for the clock app only",
            "inputSchema": schema,
            "_meta": { "ui": { "resourceUri": CLOCK_APP, "visibility": ["app"] } },
        }),
    ]
}

/// What `clock` and `clock_refresh` answer.
pub(super) fn clock() -> Value {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    json!({ "content": [{ "type": "text", "text": now.to_string() }] })
}

/// The app's entry in `resources/list`.
pub(super) fn app_resource() -> Value {
    json!({ "uri": CLOCK_APP, "name": "clock-app", "mimeType": crate::protocol::APP_MIME_TYPE })
}

/// `resources/read` of the app or the skill's files; `None` for any other
/// URI.
pub(super) fn read(uri: &str) -> Option<Value> {
    let item = match uri {
        CLOCK_APP => json!({
            "uri": uri, "mimeType": crate::protocol::APP_MIME_TYPE, "text": CLOCK_HTML,
            "_meta": { "ui": { "prefersBorder": true } },
        }),
        SKILL_URI => json!({ "uri": uri, "mimeType": "text/markdown", "text": SKILL_MD }),
        STYLE_URI => json!({ "uri": uri, "mimeType": "text/markdown", "text": STYLE_MD }),
        _ => return None,
    };
    Some(json!({ "contents": [item] }))
}

/// `skills/list`: the one skill, its files with their sizes and digests.
pub(super) fn skills() -> Value {
    let file = |uri: &str, text: &str| json!({ "uri": uri, "size": text.len(), "digest": format!("sha256:{}", hex(&Sha256::digest(text))) });
    json!({ "skills": [{
        "uri": SKILL_URI,
        "frontmatter": { "name": "greeting-style", "description": "How the demo server's greetings are phrased" },
        "resources": [file(SKILL_URI, SKILL_MD), file(STYLE_URI, STYLE_MD)],
    }]})
}
