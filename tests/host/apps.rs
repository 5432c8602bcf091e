//! MCP Apps: the host's rules, enforced by the library and failing closed.
//! A scripted server whose tools declare `_meta.ui` (an app tool for both,
//! one for its app only, one for the model only, one with a resource that
//! is not `ui://`, one with an unknown visibility value and one with a
//! visibility that is not a list) beside a second server: the catalog
//! marks them, the Anthropic and OpenAI conversions and the host's model
//! routing never offer or route an app-only tool, and a call on behalf of
//! an app reaches only its own server's tools whose visibility includes
//! `"app"`. Then the apps' HTML: read, checked, fingerprinted, with drift
//! reported, and every bad answer a classified error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_stack::catalog::apps::{AppFingerprintStore, FileAppFingerprintStore, Visibility};
use mcp_stack::compat::{Profile, Tolerance};
use mcp_stack::handlers::Handlers;
use mcp_stack::host::Host;
use mcp_stack::providers::{anthropic, openai};
use mcp_stack::{Binding, CallOpts, Definition, Event, EventItem, FailureClass, McpRequest, ProtocolChoice};
use serde_json::{json, Value};
use tower::ServiceExt;

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
    definition = definition.with_protocol(ProtocolChoice::Legacy);
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
    assert_eq!(apps.applied_tolerances, [Tolerance::AppFlatResourceUri], "the flat key is a tolerance");

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

/// Issue 43, item 6: the binding itself refuses an app-only tool on every
/// path but an app's (its methods, its service, a task), saying why, before
/// anything is sent; an app's call of a tool not for apps is refused too.
#[tokio::test]
async fn the_binding_refuses_an_app_only_tool_on_every_path_but_an_apps() {
    let binding = Binding::connect(definition("apps"), Handlers::default()).await.unwrap();
    let e = binding.call_tool("refresh", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    assert!(e.message().contains("for its app only"), "says why: {e}");
    let request = McpRequest::with_value("tools/call", json!({ "name": "refresh", "arguments": {} }));
    let e = binding.service().oneshot(request).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    let e = binding.call_tool_task("refresh", json!({}), None, CallOpts::default()).await.unwrap_err();
    assert!(matches!(e.class(), FailureClass::ToolUnavailable | FailureClass::InvalidArguments), "{e}");
    // "broken" is visible to nobody; "odd" is the app's.
    for hidden in ["broken", "odd"] {
        let e = binding.call_tool(hidden, json!({}), CallOpts::default()).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::ToolUnavailable, "{hidden}: {e}");
    }

    let ok = binding.call_tool_from_app("refresh", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(ok.content[0].as_text(), Some("refresh"));
    let e = binding.call_tool_from_app("summarize", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    assert!(e.message().contains("not for apps"), "{e}");
    let e = binding.call_tool_from_app("broken", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ToolUnavailable, "{e}");
    // A tool for both, and one without an app declaration, take both paths.
    for both in ["show", "flat"] {
        binding.call_tool(both, json!({}), CallOpts::default()).await.unwrap();
        binding.call_tool_from_app(both, json!({}), CallOpts::default()).await.unwrap();
    }
    binding.close().await;
}

#[tokio::test]
async fn without_the_tolerance_the_deprecated_flat_key_is_ignored() {
    let mut definition = definition("strict");
    definition = definition.with_compat(Profile::strict_v1());
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let catalog = binding.catalog();
    let flat = catalog.tool("flat").unwrap();
    assert_eq!(flat.app.as_ref().unwrap().resource_uri, None);
    assert!(flat.warnings.iter().any(|w| w.contains("app_flat_resource_uri")), "{:?}", flat.warnings);
    assert!(catalog.applied_tolerances.is_empty());
    binding.close().await;
}

/// A server of app resources: `show` (text, its own `_meta.ui`, its HTML
/// changing with `version`), `listed` (a blob; `_meta.ui` only in the
/// listing), and the bad ones.
fn app_resources_server(
    version: Arc<AtomicUsize>,
) -> (mcp_stack::transport::memory::MemoryFactory, crate::support::modern::Seen) {
    server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25", "capabilities": { "resources": {} },
            "serverInfo": { "name": "apps", "version": "1" }
        }})),
        "resources/list" => Some(json!({ "result": { "resources": [
            { "uri": "ui://show/app.html", "name": "show", "mimeType": "text/html;profile=mcp-app",
              "_meta": { "ui": { "csp": { "connectDomains": ["https://listed.example"] } } } },
            { "uri": "ui://listed/app.html", "name": "listed", "mimeType": "text/html;profile=mcp-app",
              "_meta": { "ui": { "csp": { "resourceDomains": ["https://cdn.example"] }, "prefersBorder": true } } },
        ]}})),
        "resources/read" => {
            let uri = params["uri"].as_str().unwrap_or_default();
            let html = |text: String, mime: &str, meta: Value| {
                let mut item = json!({ "uri": uri, "mimeType": mime, "text": text });
                if !meta.is_null() {
                    item["_meta"] = meta;
                }
                item
            };
            let mime = "text/html;profile=mcp-app";
            let contents = match uri {
                "ui://show/app.html" => vec![html(
                    format!("<p>version {}</p>", version.load(Ordering::SeqCst)),
                    mime,
                    json!({ "ui": { "csp": { "connectDomains": ["https://api.example"] }, "permissions": { "camera": {} } } }),
                )],
                "ui://listed/app.html" => {
                    vec![
                        json!({ "uri": uri, "mimeType": "text/html; profile=mcp-app", "blob": "PHA+aGk8L3A+" }),
                    ]
                }
                "ui://wrong/app.html" => vec![html("<p>plain</p>".into(), "text/html", Value::Null)],
                "ui://big/app.html" => vec![html("x".repeat(64 * 1024), mime, Value::Null)],
                "ui://two/app.html" => {
                    vec![
                        html("<p>1</p>".into(), mime, Value::Null),
                        html("<p>2</p>".into(), mime, Value::Null),
                    ]
                }
                "ui://badblob/app.html" => vec![json!({ "uri": uri, "mimeType": mime, "blob": "//79" })],
                _ => vec![],
            };
            Some(json!({ "result": { "contents": contents } }))
        }
        _ => Some(json!({ "result": {} })),
    })
}

#[tokio::test]
async fn an_apps_html_is_read_checked_fingerprinted_and_its_drift_reported() {
    let version = Arc::new(AtomicUsize::new(1));
    let (factory, seen) = app_resources_server(version.clone());
    let mut definition = Definition::new("apps", factory);
    definition = definition.with_protocol(ProtocolChoice::Legacy);
    let limits = definition.limits().with_max_text_result_bytes(16 * 1024);
    definition = definition.with_limits(limits);
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let mut events = binding.events();
    let listed =
        binding.catalog().resources.iter().find(|r| r.uri == "ui://listed/app.html").unwrap().clone();
    assert_eq!(listed.app.unwrap().csp.resource_domains, ["https://cdn.example"]);

    // The content item's _meta.ui wins over the listing's.
    let show = binding.read_app("ui://show/app.html", CallOpts::default()).await.unwrap();
    assert_eq!(show.html, "<p>version 1</p>");
    assert_eq!(show.meta.csp.connect_domains, ["https://api.example"]);
    assert!(show.meta.permissions.camera && !show.meta.permissions.microphone);
    assert_eq!((show.fingerprint.len(), show.generation, show.drift.clone()), (64, 1, None));
    // Read again unchanged: the same fingerprint, no drift.
    let again = binding.read_app("ui://show/app.html", CallOpts::default()).await.unwrap();
    assert_eq!((again.fingerprint.as_str(), again.drift.clone()), (show.fingerprint.as_str(), None));
    // The server changes the HTML: drift, naming the earlier fingerprint.
    version.store(2, Ordering::SeqCst);
    let changed = binding.read_app("ui://show/app.html", CallOpts::default()).await.unwrap();
    assert_ne!(changed.fingerprint, show.fingerprint);
    let drift = changed.drift.expect("drift");
    assert_eq!((drift.previous.as_str(), drift.previous_generation), (show.fingerprint.as_str(), Some(1)));
    let warned = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Some(EventItem::Event(Event::Warning { text, .. })) if text.contains("changed") => {
                    return text
                }
                Some(_) => continue,
                None => panic!("the binding is gone"),
            }
        }
    })
    .await
    .expect("a warning event");
    assert!(warned.contains("ui://show/app.html") && warned.contains(&changed.fingerprint[..16]), "{warned}");

    // A blob; the listing's _meta.ui, as the item has none.
    let blob = binding.read_app("ui://listed/app.html", CallOpts::default()).await.unwrap();
    assert_eq!(blob.html, "<p>hi</p>");
    assert_eq!(blob.meta.csp.resource_domains, ["https://cdn.example"]);
    assert_eq!(blob.meta.prefers_border, Some(true));

    // Bad answers: each a classified error naming the app.
    for (uri, class) in [
        ("ui://wrong/app.html", FailureClass::VerificationFailed),
        ("ui://big/app.html", FailureClass::LimitExceeded),
        ("ui://two/app.html", FailureClass::VerificationFailed),
        ("ui://none/app.html", FailureClass::VerificationFailed),
        ("ui://badblob/app.html", FailureClass::VerificationFailed),
    ] {
        let e = binding.read_app(uri, CallOpts::default()).await.unwrap_err();
        assert_eq!(e.class(), class, "{uri}: {e}");
        assert!(e.to_string().contains(uri), "{e}");
    }
    // Not ui://: refused before any I/O.
    let reads = seen.requests("resources/read").len();
    let e = binding.read_app("https://evil.example/app.html", CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidArguments, "{e}");
    assert_eq!(seen.requests("resources/read").len(), reads);
    binding.close().await;
}

/// Issue 43, item 11: with an app fingerprint store on the definition, a
/// binding's first read of an app is compared with the fingerprint an
/// earlier binding of the same server kept there. Keyed by the server (the
/// transport's endpoint), not the binding's name: another server under the
/// same name and URI is not compared with it. A damaged file is read as
/// empty: no drift, no failure.
#[tokio::test]
async fn an_app_changed_since_an_earlier_binding_is_reported_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn AppFingerprintStore> =
        Arc::new(FileAppFingerprintStore::new(dir.path().join("app-fingerprints.json")));
    let version = Arc::new(AtomicUsize::new(1));
    let (factory, _) = app_resources_server(version.clone());
    let factory: Arc<dyn mcp_stack::transport::TransportFactory> = Arc::new(factory);
    let bind = |factory: Arc<dyn mcp_stack::transport::TransportFactory>, store: Option<_>| async move {
        let mut definition = Definition::with_factory("apps", factory);
        definition = definition.with_protocol(ProtocolChoice::Legacy);
        if let Some(store) = store {
            definition = definition.with_app_fingerprint_store(store);
        }
        Binding::connect(definition, Handlers::default()).await.unwrap()
    };
    let read = |binding: Binding| async move {
        let app = binding.read_app("ui://show/app.html", CallOpts::default()).await.unwrap();
        binding.close().await;
        app
    };

    let first = read(bind(factory.clone(), Some(store.clone())).await).await;
    assert_eq!(first.drift, None, "nothing kept yet");
    // Unchanged: a new binding's first read finds the same fingerprint.
    let same = read(bind(factory.clone(), Some(store.clone())).await).await;
    assert_eq!((same.fingerprint.as_str(), same.drift), (first.fingerprint.as_str(), None));
    // Without the store, nothing is compared across bindings.
    version.store(2, Ordering::SeqCst);
    assert_eq!(read(bind(factory.clone(), None).await).await.drift, None);
    // Changed: the next binding's first read reports it, with its event.
    let binding = bind(factory.clone(), Some(store.clone())).await;
    let mut events = binding.events();
    let changed = binding.read_app("ui://show/app.html", CallOpts::default()).await.unwrap();
    let drift = changed.drift.clone().expect("drift across bindings");
    assert_eq!((drift.previous.as_str(), drift.previous_generation), (first.fingerprint.as_str(), None));
    let warned = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.recv().await {
                Some(EventItem::Event(Event::Warning { text, .. })) if text.contains("changed") => {
                    return text
                }
                Some(_) => continue,
                None => panic!("the binding is gone"),
            }
        }
    })
    .await
    .expect("a warning event");
    assert!(warned.contains("earlier read") && warned.contains(&changed.fingerprint[..16]), "{warned}");
    // Its own next read compares with its own: no drift.
    let again = binding.read_app("ui://show/app.html", CallOpts::default()).await.unwrap();
    assert_eq!(again.drift, None);
    binding.close().await;

    // Another server under the same binding name and URI: its own key.
    let (other, _) = app_resources_server(Arc::new(AtomicUsize::new(9)));
    assert_eq!(read(bind(Arc::new(other), Some(store.clone())).await).await.drift, None);

    // A damaged file: read as empty, the read goes on, no drift.
    std::fs::write(dir.path().join("app-fingerprints.json"), b"{\"entries\": [\"damaged").unwrap();
    version.store(3, Ordering::SeqCst);
    let after_damage = read(bind(factory.clone(), Some(store.clone())).await).await;
    assert_eq!(after_damage.drift, None);
    // ... and replaced: the next binding compares with what was just read.
    version.store(4, Ordering::SeqCst);
    let next = read(bind(factory, Some(store)).await).await;
    assert_eq!(next.drift.map(|d| d.previous), Some(after_damage.fingerprint));
}
