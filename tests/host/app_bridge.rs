//! MCP Apps, the host side: an `AppBridge` for one rendered app of the
//! demo server (`clock`, with the app-only `clock_refresh`) and of a
//! scripted server beside another one. The initialize exchange, the tool's
//! input and result, the app's own calls, and hostile apps: oversized
//! messages, floods, another server's tool, a model-only tool, a resource
//! that is not `ui://`, links and messages the host never allowed, and
//! requests after teardown. All in process, no sleeps.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcp_stack::handlers::Handlers;
use mcp_stack::host::app_bridge::{AppBridge, AppBridgeConfig, AppDisplayMode, AppHostContext, AppTheme};
use mcp_stack::host::Host;
use mcp_stack::{Binding, CallOpts, ClientExtensions, Definition, Error, ProtocolChoice};
use serde_json::{json, Value};

use crate::support::modern::server;

async fn demo() -> Binding {
    let definition = Definition::new("demo", mcp_stack::demo::factory())
        .with_extensions(ClientExtensions::default().apps());
    Binding::connect(definition, Handlers::default()).await.unwrap()
}

fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string().into_bytes()
}

fn notification(method: &str, params: Value) -> Vec<u8> {
    json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string().into_bytes()
}

/// The bridge after the initialize exchange.
async fn initialized(bridge: &AppBridge) {
    let init = json!({ "protocolVersion": "2026-01-26", "appInfo": { "name": "t", "version": "1" }, "appCapabilities": {} });
    let answer = bridge.handle(&request(0, "ui/initialize", init)).await;
    assert!(answer[0]["result"].is_object(), "{answer:?}");
    bridge.handle(&notification("ui/notifications/initialized", json!({}))).await;
}

/// A host handler that never answers, and a channel told each time it is
/// entered.
fn never_answering() -> (
    impl tower::Service<
            Value,
            Response = Value,
            Error = Error,
            Future = impl std::future::Future<Output = Result<Value, Error>> + Send,
        > + Clone
        + Send
        + Sync
        + 'static,
    tokio::sync::mpsc::UnboundedReceiver<()>,
) {
    let (entered_tx, entered) = tokio::sync::mpsc::unbounded_channel::<()>();
    let handler = tower::service_fn(move |_: Value| {
        let entered_tx = entered_tx.clone();
        async move {
            entered_tx.send(()).unwrap();
            std::future::pending::<()>().await;
            Ok::<_, Error>(json!({}))
        }
    });
    (handler, entered)
}

/// The one answer's error: (code, class).
fn refusal(answer: &[Value]) -> (i64, String) {
    assert_eq!(answer.len(), 1, "{answer:?}");
    let error = &answer[0]["error"];
    assert!(error.is_object(), "not refused: {answer:?}");
    (error["code"].as_i64().unwrap(), error["data"]["class"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn the_initialize_exchange_gives_the_hosts_context_and_releases_held_notifications() {
    let binding = demo().await;
    let result = binding.call_tool("clock", json!({}), CallOpts::default()).await.unwrap();
    let context = AppHostContext::default()
        .with_theme(AppTheme::Dark)
        .with_display_mode(AppDisplayMode::Inline)
        .with_locale("en-GB");
    let bridge = AppBridge::new(binding, "clock", context).unwrap();
    assert!(bridge.tool_input(json!({ "zone": "UTC" })).is_empty(), "held until initialized");
    assert!(bridge.tool_input_partial(json!({ "z": 1 })).is_empty());
    assert!(bridge.tool_input_partial(json!({ "zo": 2 })).is_empty());
    assert!(bridge.tool_result(&result).is_empty());
    // A request before ui/initialize is refused.
    let early = bridge.handle(&request(9, "tools/call", json!({ "name": "clock_refresh" }))).await;
    assert_eq!(refusal(&early).0, -32600);
    let init = json!({ "protocolVersion": "2026-01-26", "appInfo": { "name": "clock", "version": "1" }, "appCapabilities": {} });
    let answer = bridge.handle(&request(1, "ui/initialize", init)).await;
    let result_of_init = &answer[0]["result"];
    assert_eq!(answer[0]["id"], 1);
    assert_eq!(result_of_init["protocolVersion"], "2026-01-26");
    let host_context = &result_of_init["hostContext"];
    assert_eq!(host_context["theme"], "dark");
    assert_eq!(host_context["displayMode"], "inline");
    assert_eq!(host_context["locale"], "en-GB");
    assert_eq!(host_context["toolInfo"]["tool"]["name"], "clock");
    let capabilities = &result_of_init["hostCapabilities"];
    assert!(capabilities["serverTools"].is_object() && capabilities["openLinks"].is_null());
    assert!(!bridge.is_initialized());
    let released = bridge.handle(&notification("ui/notifications/initialized", json!({}))).await;
    let methods: Vec<&str> = released.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        [
            "ui/notifications/tool-input",
            "ui/notifications/tool-input-partial",
            "ui/notifications/tool-result"
        ],
        "in order, the older partial input replaced"
    );
    assert_eq!(released[0]["params"]["arguments"]["zone"], "UTC");
    assert_eq!(released[1]["params"]["arguments"]["zo"], 2);
    assert!(released[2]["params"]["content"].is_array());
    // Once initialized, notifications go at once.
    let cancelled = bridge.tool_cancelled("the user stopped it");
    assert_eq!(cancelled[0]["method"], "ui/notifications/tool-cancelled");
    let mode = bridge.handle(&request(2, "ui/request-display-mode", json!({ "mode": "fullscreen" }))).await;
    assert_eq!(mode[0]["result"]["mode"], "inline", "the host decides");
    let ping = bridge.handle(&request(3, "ping", json!({}))).await;
    assert_eq!(ping[0]["result"], json!({}));
}

#[tokio::test]
async fn an_app_calls_its_own_app_tool_and_reads_only_ui_resources_of_its_server() {
    let bridge = AppBridge::new(demo().await, "clock", AppHostContext::default()).unwrap();
    initialized(&bridge).await;
    let answer =
        bridge.handle(&request(1, "tools/call", json!({ "name": "clock_refresh", "arguments": {} }))).await;
    assert_eq!(answer[0]["id"], 1);
    assert_eq!(answer[0]["result"]["isError"], false);
    assert!(answer[0]["result"]["content"][0]["text"].is_string(), "{answer:?}");
    let read = bridge.handle(&request(2, "resources/read", json!({ "uri": "ui://demo/clock.html" }))).await;
    assert_eq!(read[0]["result"]["contents"][0]["uri"], "ui://demo/clock.html", "{read:?}");
    for uri in [
        "demo://readme",
        "file:///etc/passwd",
        "https://evil.example/x",
        "skill://demo/greeting-style/SKILL.md",
    ] {
        let refused = bridge.handle(&request(3, "resources/read", json!({ "uri": uri }))).await;
        assert_eq!(refusal(&refused), (-32000, "invalid_arguments".into()), "{uri}");
    }
    let missing =
        bridge.handle(&request(4, "resources/read", json!({ "uri": "ui://elsewhere/app.html" }))).await;
    let (code, _) = refusal(&missing);
    assert_eq!(code, -32000);
    let unknown = bridge.handle(&request(5, "sampling/createMessage", json!({}))).await;
    assert_eq!(refusal(&unknown).0, -32601);
    let bad = bridge.handle(&request(6, "tools/call", json!({ "name": 7 }))).await;
    assert_eq!(refusal(&bad), (-32602, "invalid_arguments".into()));
}

fn scripted(tools: Value) -> mcp_stack::transport::memory::MemoryFactory {
    let (factory, _) = server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25", "capabilities": { "tools": {}, "resources": {} },
            "serverInfo": { "name": "s", "version": "1" }
        }})),
        "tools/list" => Some(json!({ "result": { "tools": tools } })),
        "tools/call" => {
            Some(json!({ "result": { "content": [{ "type": "text", "text": params["name"] }] } }))
        }
        _ => Some(json!({ "result": {} })),
    });
    factory
}

#[tokio::test]
async fn an_app_never_reaches_a_model_only_tool_or_another_servers_tool() {
    let tool =
        |name: &str, meta: Value| json!({ "name": name, "inputSchema": { "type": "object" }, "_meta": meta });
    let apps = scripted(json!([
        tool("show", json!({ "ui": { "resourceUri": "ui://show/app.html" } })),
        tool("refresh", json!({ "ui": { "resourceUri": "ui://show/app.html", "visibility": ["app"] } })),
        tool("summarize", json!({ "ui": { "visibility": ["model"] } })),
    ]));
    let other = scripted(json!([tool("wipe", json!({}))]));
    let host = Host::new();
    host.add(Definition::new("apps", apps).with_protocol(ProtocolChoice::Legacy)).unwrap();
    host.add(Definition::new("other", other).with_protocol(ProtocolChoice::Legacy)).unwrap();
    host.settled().await;
    assert!(AppBridge::new(host.binding("apps").unwrap(), "summarize", AppHostContext::default()).is_err());
    let bridge = AppBridge::new(host.binding("apps").unwrap(), "show", AppHostContext::default()).unwrap();
    initialized(&bridge).await;
    let own = bridge.handle(&request(1, "tools/call", json!({ "name": "refresh" }))).await;
    assert_eq!(own[0]["result"]["content"][0]["text"], "refresh");
    let model_only = bridge.handle(&request(2, "tools/call", json!({ "name": "summarize" }))).await;
    assert_eq!(refusal(&model_only), (-32000, "tool_unavailable".into()));
    for name in ["wipe", "other__wipe", "other/wipe"] {
        let elsewhere = bridge.handle(&request(3, "tools/call", json!({ "name": name }))).await;
        assert_eq!(refusal(&elsewhere), (-32000, "not_found".into()), "{name}");
    }
}

#[tokio::test]
async fn oversized_and_malformed_messages_are_refused_before_anything_is_done() {
    let bridge = AppBridge::new(demo().await, "clock", AppHostContext::default()).unwrap();
    initialized(&bridge).await;
    let mut huge =
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"".to_vec();
    huge.resize(10 << 20, b'a');
    let answer = bridge.handle(&huge).await;
    assert_eq!(refusal(&answer), (-32600, "limit_exceeded".into()));
    assert_eq!(answer[0]["id"], Value::Null);
    let not_json = bridge.handle(b"{\"jsonrpc\":").await;
    assert_eq!(refusal(&not_json).0, -32700);
    let batch = bridge.handle(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]").await;
    assert_eq!(refusal(&batch).0, -32600);
    let odd_id = bridge.handle(b"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}").await;
    assert_eq!(refusal(&odd_id).0, -32600);
    // A smaller bound holds too.
    let small = AppBridge::new(demo().await, "clock", AppHostContext::default())
        .unwrap()
        .with_config(AppBridgeConfig::default().with_max_message_bytes(64));
    let answer = small.handle(&request(1, "ui/initialize", json!({ "padding": "x".repeat(64) }))).await;
    assert_eq!(refusal(&answer), (-32600, "limit_exceeded".into()));
}

#[tokio::test]
async fn a_flood_of_requests_is_bounded_in_flight() {
    let (entered_tx, mut entered) = tokio::sync::mpsc::unbounded_channel::<()>();
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let gate = release.clone();
    let handler = tower::service_fn(move |_params: Value| {
        let entered_tx = entered_tx.clone();
        let gate = gate.clone();
        async move {
            entered_tx.send(()).unwrap();
            gate.acquire().await.unwrap().forget();
            Ok::<_, Error>(json!({}))
        }
    });
    let bridge = AppBridge::new(demo().await, "clock", AppHostContext::default())
        .unwrap()
        .with_config(AppBridgeConfig::default().with_max_requests_in_flight(2))
        .with_message(handler);
    initialized(&bridge).await;
    let message = json!({ "role": "user", "content": [{ "type": "text", "text": "hi" }] });
    let mut waiting = Vec::new();
    for id in 0..2 {
        let (bridge, message) = (bridge.clone(), message.clone());
        waiting.push(tokio::spawn(async move { bridge.handle(&request(id, "ui/message", message)).await }));
        entered.recv().await.unwrap();
    }
    for id in 2..50 {
        let flood = bridge.handle(&request(id, "tools/call", json!({ "name": "clock_refresh" }))).await;
        assert_eq!(refusal(&flood), (-32000, "limit_exceeded".into()));
    }
    release.add_permits(2);
    for answer in waiting {
        assert_eq!(answer.await.unwrap()[0]["result"], json!({}));
    }
    let after = bridge.handle(&request(60, "tools/call", json!({ "name": "clock_refresh" }))).await;
    assert!(after[0]["result"].is_object(), "the bound frees up: {after:?}");
}

#[tokio::test]
async fn links_messages_and_model_context_are_refused_unless_the_host_answers_them() {
    let refused_by_default = AppBridge::new(demo().await, "clock", AppHostContext::default()).unwrap();
    initialized(&refused_by_default).await;
    let message = json!({ "role": "user", "content": [{ "type": "text", "text": "buy now" }] });
    for (method, params) in [
        ("ui/open-link", json!({ "url": "https://example.com" })),
        ("ui/message", message.clone()),
        ("ui/update-model-context", json!({ "content": [] })),
    ] {
        let answer = refused_by_default.handle(&request(1, method, params)).await;
        assert_eq!(refusal(&answer), (-32000, "tool_unavailable".into()), "{method}");
    }
    let opened = Arc::new(AtomicUsize::new(0));
    let count = opened.clone();
    let open_link = tower::service_fn(move |params: Value| {
        count.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(params["url"], "https://example.com/docs");
            Ok::<_, Error>(json!({}))
        }
    });
    let refuse = tower::service_fn(|_: Value| async {
        Err::<Value, _>(Error::new(mcp_stack::FailureClass::ElicitationDeclined, "the user said no"))
    });
    let bridge = AppBridge::new(demo().await, "clock", AppHostContext::default())
        .unwrap()
        .with_open_link(open_link)
        .with_message(refuse);
    let init = json!({ "protocolVersion": "2026-01-26", "appInfo": { "name": "t", "version": "1" }, "appCapabilities": {} });
    let answer = bridge.handle(&request(0, "ui/initialize", init)).await;
    assert!(answer[0]["result"]["hostCapabilities"]["openLinks"].is_object());
    let answer =
        bridge.handle(&request(1, "ui/open-link", json!({ "url": "https://example.com/docs" }))).await;
    assert_eq!(answer[0]["result"], json!({}));
    for url in ["javascript:alert(1)", "file:///etc/passwd", "https://a.example/\nx", ""] {
        let answer = bridge.handle(&request(2, "ui/open-link", json!({ "url": url }))).await;
        assert_eq!(refusal(&answer), (-32602, "invalid_arguments".into()), "{url:?}");
    }
    assert_eq!(opened.load(Ordering::SeqCst), 1, "bad links never reach the handler");
    let answer = bridge.handle(&request(3, "ui/message", message)).await;
    assert_eq!(refusal(&answer), (-32000, "elicitation_declined".into()));
    assert_eq!(answer[0]["error"]["message"], "the user said no");
    let not_user =
        bridge.handle(&request(4, "ui/message", json!({ "role": "assistant", "content": [] }))).await;
    assert_eq!(refusal(&not_user).0, -32602);
}

#[tokio::test]
async fn logs_are_bounded_and_teardown_ends_the_apps_requests() {
    let config = AppBridgeConfig::default().with_max_log_entries(3).with_max_log_entry_bytes(16);
    let bridge =
        AppBridge::new(demo().await, "clock", AppHostContext::default()).unwrap().with_config(config);
    initialized(&bridge).await;
    for i in 0..10 {
        let log = notification(
            "notifications/message",
            json!({ "level": "warning", "data": format!("{i}{}", "x".repeat(100)) }),
        );
        assert!(bridge.handle(&log).await.is_empty());
    }
    bridge.handle(&notification("notifications/message", json!({ "level": "shout", "data": 1 }))).await;
    let (logs, dropped) = bridge.take_logs();
    assert_eq!((logs.len(), dropped), (3, 8));
    assert!(logs[0].data.starts_with("\"8") && logs[0].data.len() <= 16, "{logs:?}");
    assert_eq!(logs[2].level, "info", "an unknown level is read as info");
    bridge
        .handle(&notification("ui/notifications/size-changed", json!({ "width": 320, "height": 240 })))
        .await;
    assert_eq!(bridge.size(), Some((320, 240)));
    let teardown = bridge.teardown("closed");
    assert_eq!(teardown[0]["method"], "ui/resource-teardown");
    assert!(bridge.is_torn_down());
    let after = bridge.handle(&request(1, "tools/call", json!({ "name": "clock_refresh" }))).await;
    assert_eq!(refusal(&after), (-32000, "transport_closed".into()));
    assert!(bridge.tool_input(json!({})).is_empty(), "nothing is sent after teardown");
    let answered = json!({ "jsonrpc": "2.0", "id": teardown[0]["id"], "result": {} }).to_string();
    assert!(bridge.handle(answered.as_bytes()).await.is_empty());
    assert!(bridge.teardown("again").is_empty());
}

#[tokio::test]
async fn an_app_cancels_its_own_request_and_it_is_not_answered() {
    let (handler, mut entered) = never_answering();
    let bridge = AppBridge::new(demo().await, "clock", AppHostContext::default())
        .unwrap()
        .with_config(AppBridgeConfig::default().with_max_requests_in_flight(1))
        .with_model_context(handler);
    initialized(&bridge).await;
    let waiting = {
        let bridge = bridge.clone();
        tokio::spawn(async move { bridge.handle(&request(7, "ui/update-model-context", json!({}))).await })
    };
    entered.recv().await.unwrap();
    let again = bridge.handle(&request(8, "ping", json!({}))).await;
    assert_eq!(refusal(&again), (-32000, "limit_exceeded".into()), "the one slot is taken");
    assert!(bridge
        .handle(&notification("notifications/cancelled", json!({ "requestId": 7 })))
        .await
        .is_empty());
    assert!(waiting.await.unwrap().is_empty(), "a cancelled request is not answered");
    let ping = bridge.handle(&request(9, "ping", json!({}))).await;
    assert_eq!(ping[0]["result"], json!({}), "its slot is free again");
}

#[tokio::test]
async fn the_host_wraps_what_reaches_the_server_after_the_bridges_checks() {
    use mcp_stack::host::app_bridge::{AppServerRequest, AppServerService};
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let audit = tower::util::MapRequestLayer::new(move |request: AppServerRequest| {
        record.lock().unwrap().push(format!("{request:?}"));
        request
    });
    let bridge =
        AppBridge::new(demo().await, "clock", AppHostContext::default()).unwrap().with_server_layer(audit);
    initialized(&bridge).await;
    bridge.handle(&request(1, "tools/call", json!({ "name": "clock_refresh" }))).await;
    bridge.handle(&request(2, "resources/read", json!({ "uri": "file:///etc/passwd" }))).await;
    bridge.handle(&request(3, "tools/call", json!({ "name": "nope" }))).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "refused requests never reach the layer: {seen:?}");
    assert!(seen[0].contains("clock_refresh"));
    let refuse_all = tower::layer::layer_fn(|_inner: AppServerService| {
        tower::service_fn(|_: AppServerRequest| async {
            Err::<Value, _>(Error::new(
                mcp_stack::FailureClass::LimitExceeded,
                "the host's secret rate limit",
            ))
        })
    });
    let bridge = AppBridge::new(demo().await, "clock", AppHostContext::default())
        .unwrap()
        .with_server_layer(refuse_all);
    initialized(&bridge).await;
    let answer = bridge.handle(&request(1, "tools/call", json!({ "name": "clock_refresh" }))).await;
    assert_eq!(refusal(&answer), (-32000, "limit_exceeded".into()));
    assert!(!answer[0]["error"]["message"].as_str().unwrap().contains("secret"), "told by its class only");
}

#[tokio::test]
async fn the_app_is_told_its_sandbox_list_changes_and_may_ask_to_be_torn_down() {
    let binding = demo().await;
    let uri =
        binding.catalog().tool("clock").and_then(|t| t.app.clone()).and_then(|a| a.resource_uri).unwrap();
    let app = binding.read_app(&uri, CallOpts::default()).await.unwrap();
    let mut meta = app.meta.clone();
    meta.csp.connect_domains = vec!["https://api.example.com".into()];
    meta.permissions.clipboard_write = true;
    let bridge = AppBridge::new(binding, "clock", AppHostContext::default()).unwrap().with_sandbox(&meta);
    // Held until the app initialized, like every host notification.
    assert!(bridge.tools_changed().is_empty());
    let init = json!({ "protocolVersion": "2026-01-26", "appInfo": { "name": "t", "version": "1" }, "appCapabilities": {} });
    let answer = bridge.handle(&request(0, "ui/initialize", init)).await;
    let capabilities = &answer[0]["result"]["hostCapabilities"];
    assert_eq!(capabilities["sandbox"]["csp"]["connectDomains"], json!(["https://api.example.com"]));
    assert_eq!(capabilities["sandbox"]["permissions"], json!({ "clipboardWrite": {} }));
    assert_eq!(capabilities["serverTools"]["listChanged"], true);
    let released = bridge.handle(&notification("ui/notifications/initialized", json!({}))).await;
    assert_eq!(released.len(), 1);
    assert_eq!(released[0]["method"], "notifications/tools/list_changed");
    assert_eq!(bridge.resources_changed()[0]["method"], "notifications/resources/list_changed");
    // A display mode outside the protocol's is refused; a known one is
    // answered with the mode the host shows it in.
    let odd = bridge.handle(&request(1, "ui/request-display-mode", json!({ "mode": "cinema" }))).await;
    assert_eq!(refusal(&odd), (-32602, "invalid_arguments".into()));
    let asked = bridge.handle(&request(2, "ui/request-display-mode", json!({ "mode": "fullscreen" }))).await;
    assert_eq!(asked[0]["result"]["mode"], "inline");
    assert!(!bridge.is_teardown_requested());
    assert!(bridge.handle(&notification("ui/notifications/request-teardown", json!({}))).await.is_empty());
    assert!(bridge.is_teardown_requested());
    assert!(!bridge.is_torn_down(), "the host decides");
}

#[tokio::test]
async fn teardown_ends_the_requests_in_flight_unanswered() {
    let (handler, mut entered) = never_answering();
    let bridge =
        AppBridge::new(demo().await, "clock", AppHostContext::default()).unwrap().with_message(handler);
    initialized(&bridge).await;
    let message = json!({ "role": "user", "content": [{ "type": "text", "text": "hi" }] });
    let waiting = tokio::spawn({
        let bridge = bridge.clone();
        async move { bridge.handle(&request(7, "ui/message", message)).await }
    });
    entered.recv().await.unwrap();
    assert_eq!(bridge.teardown("closed").len(), 1);
    assert!(waiting.await.unwrap().is_empty(), "a torn-down app is not answered");
    // Every later request is refused: the app is torn down.
    let after = bridge.handle(&request(8, "ping", json!({}))).await;
    assert_eq!(refusal(&after), (-32000, "transport_closed".into()));
}
