//! MCP Apps: the host's rules, enforced by the library and failing closed.
//! A scripted server whose tools declare `_meta.ui` (an app tool for both,
//! one for its app only, one for the model only, one with a resource that
//! is not `ui://`, one with an unknown visibility value and one with a
//! visibility that is not a list) beside a second server: the catalog
//! marks them, the Anthropic and OpenAI conversions and the host's model
//! routing never offer or route an app-only tool, and a call on behalf of
//! an app reaches only its own server's tools whose visibility includes
//! `"app"`.

use mcp_stack::catalog::apps::Visibility;
use mcp_stack::host::Host;
use mcp_stack::providers::{anthropic, openai};
use mcp_stack::{CallOpts, Definition, FailureClass, ProtocolChoice};
use serde_json::{json, Value};

use crate::support::modern::server;

fn tool(name: &str, meta: Value) -> Value {
    json!({ "name": name, "inputSchema": { "type": "object" }, "_meta": meta })
}

fn apps_server() -> mcp_stack::transport::memory::MemoryFactory {
    let tools = json!([
        tool("show", json!({ "ui": { "resourceUri": "ui://show/app.html" } })),
        tool("refresh", json!({ "ui": { "resourceUri": "ui://show/app.html", "visibility": ["app"] } })),
        tool("summarize", json!({ "ui": { "visibility": ["model"] } })),
        tool("web", json!({ "ui": { "resourceUri": "https://evil.example/app.html" } })),
        tool("odd", json!({ "ui": { "visibility": ["app", "admin"] } })),
        tool("broken", json!({ "ui": { "visibility": "model" } })),
        tool("flat", json!({ "ui/resourceUri": "ui://flat/app.html" })),
    ]);
    let (factory, _) = server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25", "capabilities": { "tools": {} },
            "serverInfo": { "name": "apps", "version": "1" }
        }})),
        "tools/list" => Some(json!({ "result": { "tools": tools } })),
        "tools/call" => {
            Some(json!({ "result": { "content": [{ "type": "text", "text": params["name"] }] } }))
        }
        _ => Some(json!({ "result": {} })),
    });
    factory
}

fn definition(name: &str) -> Definition {
    let mut definition = Definition::new(name, apps_server());
    definition.protocol = ProtocolChoice::Legacy;
    definition
}

#[tokio::test]
async fn app_only_tools_never_reach_a_model_and_apps_reach_only_their_own_servers_app_tools() {
    let host = Host::new();
    host.add(definition("apps")).unwrap();
    host.add(definition("other")).unwrap();
    host.settled().await;
    let apps = host.binding("apps").unwrap().catalog();
    let visibility = |name: &str| apps.tool(name).unwrap().app.as_ref().map(|a| a.visibility);
    assert_eq!(visibility("show"), Some(Visibility { model: true, app: true }));
    assert_eq!(visibility("refresh"), Some(Visibility { model: false, app: true }));
    assert_eq!(visibility("summarize"), Some(Visibility { model: true, app: false }));
    assert_eq!(visibility("odd"), Some(Visibility { model: false, app: true }), "unknown values ignored");
    assert_eq!(visibility("broken"), Some(Visibility { model: false, app: false }), "fails closed");
    let web = apps.tool("web").unwrap();
    assert_eq!(web.app.as_ref().unwrap().resource_uri, None, "not ui://");
    assert!(web.warnings.iter().any(|w| w.contains("not a ui:// URI")), "{:?}", web.warnings);
    let flat = apps.tool("flat").unwrap();
    assert_eq!(flat.app.as_ref().unwrap().resource_uri.as_deref(), Some("ui://flat/app.html"));
    assert!(flat.warnings.iter().any(|w| w.contains("deprecated")));
    assert!(apps.tool("show").unwrap().warnings.is_empty());

    // The conversions leave out what a model must not see, of both servers.
    let catalog = host.catalog();
    let for_claude = anthropic::tools(catalog.tools());
    let names: Vec<&str> = for_claude.tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for hidden in ["refresh", "odd", "broken"] {
        assert!(!names.iter().any(|n| n.ends_with(&format!("__{hidden}"))), "{hidden} offered: {names:?}");
    }
    assert!(names.contains(&"mcp__apps__show") && names.contains(&"mcp__apps__summarize"));
    assert_eq!(for_claude.tools.len(), 2 * 4, "four model-visible tools per server");
    let for_gpt = openai::tools(catalog.tools(), &openai::Options::chat());
    assert_eq!(for_gpt.tools.len(), for_claude.tools.len());
    assert!(for_gpt.warnings.iter().any(|w| w.contains("app only")));

    // The model path refuses an app-only tool; the app path takes it.
    let e = host.call_tool("mcp__apps__refresh", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    let ok = host.call_from_app("apps", "refresh", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(ok.content[0].as_text(), Some("refresh"));
    // An app may not call a model-only tool, nor one another server lists,
    // nor through a server the host does not have.
    let e = host.call_from_app("apps", "summarize", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    let e = host.call_from_app("apps", "mcp__other__show", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound, "{e}");
    let e = host.call_from_app("nowhere", "show", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound, "{e}");
    let e = host.call_from_app("apps", "broken", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "visible to nobody: {e}");
    host.close().await;
}
