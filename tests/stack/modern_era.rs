//! The 2026-07-28 era end to end over the in-memory transport: choosing the
//! era, per-request `_meta`, `resultType`, modern errors and multi
//! round-trip requests, against scripted servers.

use mcp_stack::handlers::{ElicitRequest, ElicitResult};
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};

use crate::support::modern::{server, server_per_connection, Seen};
use mcp_stack::ProtocolChoice;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

fn discover_result() -> Value {
    json!({ "result": {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": {} },
        "serverInfo": { "name": "modern-test", "version": "1.0" }
    }})
}

fn initialize_result() -> Value {
    json!({ "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": { "tools": {} },
        "serverInfo": { "name": "legacy-test", "version": "1.0" }
    }})
}

fn tools_list() -> Value {
    json!({ "result": { "tools": [ { "name": "t", "inputSchema": { "type": "object" } } ] } })
}

/// A server of both eras' lists and calls, with `discover` and `call`
/// deciding what matters to a test.
fn both(
    discover: impl Fn(&Value) -> Option<Value> + Send + Sync + 'static,
    call: impl Fn(&Value) -> Option<Value> + Send + Sync + 'static,
) -> (MemoryFactory, Seen) {
    server(move |method, params| match method {
        "server/discover" => discover(params),
        "initialize" => Some(initialize_result()),
        "tools/list" => Some(tools_list()),
        "tools/call" => call(params),
        _ => Some(json!({ "result": {} })),
    })
}

fn definition(factory: MemoryFactory, protocol: ProtocolChoice) -> Definition {
    let mut definition = Definition::new("modern", factory);
    definition = definition.with_protocol(protocol);
    definition
}

/// Whether `request` carries none of the 2026-07-28 `_meta` (as a legacy
/// request must not).
fn no_modern_meta(request: &Value) -> bool {
    request["params"].get("_meta").is_none_or(|m| m.get("io.modelcontextprotocol/protocolVersion").is_none())
}

fn done() -> Option<Value> {
    Some(json!({ "result": { "content": [ { "type": "text", "text": "done" } ] } }))
}

#[tokio::test(start_paused = true)]
async fn auto_falls_back_to_initialize_when_discover_is_never_answered() {
    let (factory, seen) = both(|_| None, |_| done());
    let start = Instant::now();
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    let waited = start.elapsed();
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    assert!(waited >= mcp_stack::Timeouts::default().discover(), "waited {waited:?}");
    assert!(waited < Duration::from_secs(30), "within the startup timeout: {waited:?}");
    assert_eq!(&seen.methods()[..2], ["server/discover", "initialize"]);
    // The legacy era sends no `_meta` of the modern one.
    assert!(no_modern_meta(&seen.requests("initialize")[0]));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn auto_falls_back_at_once_on_a_non_modern_error() {
    let (factory, seen) =
        both(|_| Some(json!({ "error": { "code": -32601, "message": "Method not found" } })), |_| done());
    let start = Instant::now();
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!(binding.status().protocol_version, "2025-11-25");
    assert_eq!(binding.catalog().protocol_version, "2025-11-25");
    assert_eq!(seen.requests("initialize").len(), 1);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn auto_speaks_modern_with_meta_on_every_request() {
    let (factory, seen) = both(|_| Some(discover_result()), |_| done());
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2026-07-28");
    assert_eq!(binding.session().server.name, "modern-test");
    assert_eq!(binding.catalog().protocol_version, "2026-07-28");
    assert_eq!(binding.status().protocol_version, "2026-07-28");
    binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap();
    assert!(seen.requests("initialize").is_empty(), "no initialize on a modern server");
    let calls = seen.0.lock().unwrap().clone();
    for request in calls.iter().filter(|m| m.get("id").is_some()) {
        let meta = &request["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{request}");
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object(), "{request}");
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "mcp-stack", "{request}");
        assert!(meta.get("io.modelcontextprotocol/logLevel").is_none(), "no log handler, no log level");
    }
    assert!(seen.requests("logging/setLevel").is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_unsupported_version_is_retried_once_with_a_supported_one() {
    let first = Arc::new(Mutex::new(true));
    let (factory, seen) = both(
        move |_| {
            let mut first = first.lock().unwrap();
            if std::mem::take(&mut *first) {
                let data = json!({ "supported": ["2026-07-28"], "requested": "x" });
                return Some(json!({ "error": { "code": -32022, "message": "Unsupported", "data": data } }));
            }
            Some(discover_result())
        },
        |_| done(),
    );
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2026-07-28");
    assert_eq!(seen.requests("server/discover").len(), 2);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_modern_error_never_falls_back_and_names_what_was_offered() {
    let (factory, seen) = both(
        |_| {
            let data = json!({ "supported": ["2030-01-01"] });
            Some(json!({ "error": { "code": -32022, "message": "Unsupported", "data": data } }))
        },
        |_| done(),
    );
    let e =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::UnsupportedProtocol, "{e}");
    assert!(e.message().contains("2030-01-01"), "{e}");
    assert!(seen.requests("initialize").is_empty(), "a modern error never falls back");
}

/// A -32022 that names the version it refused as supported, twice: one
/// retry, then a `server_protocol` error that says so (not that the server
/// speaks none of ours).
#[tokio::test(start_paused = true)]
async fn a_server_refusing_the_version_it_lists_is_asked_twice_and_named_contradictory() {
    let (factory, seen) = both(
        |_| {
            let data = json!({ "supported": ["2026-07-28"], "requested": "2026-07-28" });
            Some(json!({ "error": { "code": -32022, "message": "Unsupported", "data": data } }))
        },
        |_| done(),
    );
    let e =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert!(!e.message().contains("speaks none"), "{e}");
    assert!(e.message().contains("names it among the versions it supports"), "{e}");
    assert_eq!(seen.requests("server/discover").len(), 2, "one retry");
    assert!(seen.requests("initialize").is_empty());
}

/// A -32022 whose mutually supported versions are all `initialize`-era
/// ones: the automatic choice falls back to `initialize` (the version
/// negotiation the specification asks for); a binding limited to
/// 2026-07-28 fails `unsupported_protocol` naming them.
#[tokio::test(start_paused = true)]
async fn a_modern_error_offering_only_legacy_versions_falls_back_to_initialize_under_auto() {
    let refuse = |_: &Value| {
        let data = json!({ "supported": ["2025-11-25", "2025-06-18"], "requested": "2026-07-28" });
        Some(json!({ "error": { "code": -32022, "message": "Unsupported", "data": data } }))
    };
    let (factory, seen) = both(refuse, |_| done());
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    assert_eq!(seen.requests("server/discover").len(), 1, "no modern version to retry with");
    assert_eq!(seen.requests("initialize").len(), 1);
    binding.close().await;

    let (factory, seen) = both(refuse, |_| done());
    let e =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::UnsupportedProtocol, "{e}");
    assert!(e.message().contains("2025-06-18"), "{e}");
    assert!(seen.requests("initialize").is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_legacy_binding_refused_every_version_fails_unsupported_protocol() {
    let (factory, _seen) = server(|method, _| match method {
        "initialize" => {
            let data = json!({ "supported": ["2026-07-28"] });
            Some(
                json!({ "error": { "code": -32022, "message": "Unsupported protocol version", "data": data } }),
            )
        }
        _ => Some(json!({ "result": {} })),
    });
    let e =
        Binding::connect(definition(factory, ProtocolChoice::Legacy), Handlers::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::UnsupportedProtocol, "{e}");
    assert!(e.message().contains("2026-07-28"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn a_modern_only_binding_refuses_a_legacy_server() {
    let (factory, seen) =
        both(|_| Some(json!({ "error": { "code": -32601, "message": "Method not found" } })), |_| done());
    let e =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::UnsupportedProtocol, "{e}");
    assert!(seen.requests("initialize").is_empty());
}

#[tokio::test(start_paused = true)]
async fn result_types_and_modern_errors_are_classified() {
    let (factory, _seen) = both(
        |_| Some(discover_result()),
        |params| match params["arguments"]["case"].as_str() {
            Some("unknown") => Some(json!({ "result": { "resultType": "eventually", "content": [] } })),
            Some("capability") => Some(json!({ "error": { "code": -32021, "message": "needs sampling",
                "data": { "requiredCapabilities": { "sampling": {} } } } })),
            _ => Some(json!({ "result": { "content": [] } })),
        },
    );
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    binding.call_tool("t", json!({}), CallOpts::default()).await.expect("no resultType is complete");
    let e = binding.call_tool("t", json!({ "case": "unknown" }), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    let e = binding.call_tool("t", json!({ "case": "capability" }), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig, "{e}");
    assert!(e.message().contains("sampling"), "{e}");
    binding.close().await;
}

fn elicit_input(state: Option<&str>) -> Value {
    let mut result = json!({
        "resultType": "input_required",
        "inputRequests": { "confirm": { "method": "elicitation/create", "params": {
            "message": "Confirm?",
            "requestedSchema": { "type": "object", "properties": { "ok": { "type": "boolean", "default": true } } }
        } } }
    });
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    json!({ "result": result })
}

fn accepting() -> Handlers {
    Handlers::default()
        .elicitation(|req: ElicitRequest| async move { Ok(ElicitResult::accept(req.defaults())) })
}

#[tokio::test(start_paused = true)]
async fn input_required_is_fulfilled_and_resent_with_the_state_verbatim() {
    // A state with characters a re-encoding would change.
    const STATE: &str = "{\"n\": 1,  \"é\":\"\\u00e9\"}";
    let (factory, seen) = both(
        |_| Some(discover_result()),
        |params| match (params.get("inputResponses"), params["arguments"]["state"].as_bool()) {
            (None, Some(true)) => Some(elicit_input(Some(STATE))),
            (None, _) => Some(elicit_input(None)),
            (Some(_), _) => done(),
        },
    );
    let mut def = definition(factory, ProtocolChoice::Modern);
    let capabilities = def.capabilities().with_elicitation(true);
    def = def.with_capabilities(capabilities);
    let binding = Binding::connect(def, accepting()).await.unwrap();
    let result = binding.call_tool("t", json!({ "state": true }), CallOpts::default()).await.unwrap();
    assert!(!result.is_error);
    binding.call_tool("t", json!({ "state": false }), CallOpts::default()).await.unwrap();
    let calls = seen.requests("tools/call");
    assert_eq!(calls.len(), 4);
    assert_ne!(calls[0]["id"], calls[1]["id"], "a re-send has a new id");
    assert_eq!(calls[1]["params"]["requestState"], STATE, "echoed verbatim");
    assert_eq!(calls[1]["params"]["inputResponses"]["confirm"]["action"], "accept");
    assert_eq!(calls[1]["params"]["inputResponses"]["confirm"]["content"]["ok"], true);
    assert_eq!(calls[1]["params"]["arguments"], json!({ "state": true }), "same params");
    assert!(calls[2]["params"].get("inputResponses").is_none(), "the next call starts clean");
    assert!(calls[3]["params"].get("requestState").is_none(), "no state given, none sent");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn input_rounds_are_bounded() {
    let (factory, seen) = both(|_| Some(discover_result()), |_| Some(elicit_input(Some("again"))));
    let mut def = definition(factory, ProtocolChoice::Modern);
    let capabilities = def.capabilities().with_elicitation(true);
    def = def.with_capabilities(capabilities);
    let binding = Binding::connect(def, accepting()).await.unwrap();
    let e = binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::LimitExceeded, "{e}");
    assert_eq!(
        seen.requests("tools/call").len(),
        8 + 1 /* the documented bound on input rounds, then the refused one */
    );
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn input_rounds_never_outlive_the_deadline() {
    // The server takes no time; the host's elicitation takes 4 s a round.
    let (factory, _seen) = both(|_| Some(discover_result()), |_| Some(elicit_input(Some("again"))));
    let mut def = definition(factory, ProtocolChoice::Modern);
    let capabilities = def.capabilities().with_elicitation(true);
    def = def.with_capabilities(capabilities);
    let slow = Handlers::default().elicitation(|req: ElicitRequest| async move {
        tokio::time::sleep(Duration::from_secs(4)).await;
        Ok(ElicitResult::accept(req.defaults()))
    });
    let binding = Binding::connect(def, slow).await.unwrap();
    let start = Instant::now();
    let opts = CallOpts::default().with_timeout(Duration::from_secs(10));
    let e = binding.call_tool("t", json!({}), opts).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::Deadline, "{e}");
    assert!(start.elapsed() <= Duration::from_secs(10) + Duration::from_millis(10), "{:?}", start.elapsed());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn parallel_input_rounds_keep_their_own_state() {
    let (factory, seen) = both(
        |_| Some(discover_result()),
        |params| match params.get("requestState") {
            None => {
                let who = params["arguments"]["who"].as_str().unwrap().to_string();
                Some(elicit_input(Some(&format!("state-of-{who}"))))
            }
            Some(_) => done(),
        },
    );
    let mut def = definition(factory, ProtocolChoice::Modern);
    let capabilities = def.capabilities().with_elicitation(true);
    def = def.with_capabilities(capabilities);
    def = def.with_allow_parallel_calls(true);
    let binding = Binding::connect(def, accepting()).await.unwrap();
    let (a, b) = tokio::join!(
        binding.call_tool("t", json!({ "who": "a" }), CallOpts::default()),
        binding.call_tool("t", json!({ "who": "b" }), CallOpts::default()),
    );
    a.unwrap();
    b.unwrap();
    for call in seen.requests("tools/call") {
        if let Some(state) = call["params"].get("requestState") {
            let who = call["params"]["arguments"]["who"].as_str().unwrap();
            assert_eq!(state, &json!(format!("state-of-{who}")), "{call}");
        }
    }
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_log_handler_asks_for_logs_per_request_and_never_sets_the_level() {
    let (factory, seen) = both(|_| Some(discover_result()), |_| done());
    let def = definition(factory, ProtocolChoice::Modern);
    let handlers = Handlers::default().log(|_| async { Ok(()) });
    let binding = Binding::connect(def, handlers).await.unwrap();
    binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap();
    let call = &seen.requests("tools/call")[0];
    assert_eq!(call["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "info");
    assert!(seen.requests("logging/setLevel").is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_header_mismatch_refetches_the_tools_and_retries_once() {
    let calls = Arc::new(Mutex::new(0u32));
    let count = calls.clone();
    let always = Arc::new(Mutex::new(false));
    let keep_refusing = always.clone();
    let (factory, seen) = both(
        |_| Some(discover_result()),
        move |_| {
            let mut n = count.lock().unwrap();
            *n += 1;
            if *n == 1 || *keep_refusing.lock().unwrap() {
                return Some(
                    json!({ "error": { "code": -32020, "message": "Header mismatch: Mcp-Param-Region" } }),
                );
            }
            done()
        },
    );
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    let lists_before = seen.requests("tools/list").len();
    binding.call_tool("t", json!({}), CallOpts::default()).await.expect("the retry succeeds");
    assert_eq!(seen.requests("tools/call").len(), 2);
    assert!(seen.requests("tools/list").len() > lists_before, "the tools were fetched again");
    *always.lock().unwrap() = true;
    let e = binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert_eq!(seen.requests("tools/call").len(), 4, "retried once, not more");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_list_changed_on_the_listen_stream_becomes_a_candidate() {
    let listed = Arc::new(Mutex::new(0u32));
    let count = listed.clone();
    let (factory, seen) = server(move |method, _params| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": { "listChanged": true } },
            "serverInfo": { "name": "modern-test", "version": "1.0" }
        }})),
        "tools/list" => {
            let mut n = count.lock().unwrap();
            *n += 1;
            let mut tools = vec![json!({ "name": "t", "inputSchema": { "type": "object" } })];
            if *n > 1 {
                tools.push(json!({ "name": "u", "inputSchema": { "type": "object" } }));
            }
            Some(json!({ "result": { "tools": tools } }))
        }
        "subscriptions/listen" => Some(json!({ "notify": [
            { "method": "notifications/subscriptions/acknowledged",
              "params": { "notifications": { "toolsListChanged": true } } },
            { "method": "notifications/tools/list_changed", "params": {} }
        ]})),
        _ => Some(json!({ "result": {} })),
    });
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    let mut waited = 0;
    while binding.candidate().is_none() {
        assert!(waited < 100, "no candidate after the list_changed");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    let candidate = binding.candidate().unwrap();
    assert!(candidate.tool("u").is_some());
    assert!(binding.catalog().tool("u").is_none(), "adopted only when the host says so");
    let listen = &seen.requests("subscriptions/listen")[0];
    assert_eq!(listen["params"]["notifications"], json!({ "toolsListChanged": true }));
    assert_eq!(listen["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn the_verdict_is_kept_for_the_next_dial() {
    use mcp_stack::connection::NoInbound;
    use mcp_stack::era::Dialer;
    use mcp_stack::transport::ConnectConfig;
    let (factory, seen) =
        both(|_| Some(json!({ "error": { "code": -32601, "message": "Method not found" } })), |_| done());
    let dialer = Dialer::new(Arc::new(factory), ConnectConfig::new("t"), Arc::new(NoInbound))
        .protocol(ProtocolChoice::Auto);
    let (first, session) = dialer.dial().await.unwrap();
    assert_eq!(session.protocol_version, "2025-11-25");
    assert_eq!(dialer.verdict(), Some(false));
    first.close().await;
    let (second, session) = dialer.clone().dial().await.unwrap();
    assert_eq!(session.protocol_version, "2025-11-25");
    assert_eq!(seen.requests("server/discover").len(), 1, "the reconnect does not probe again");
    assert_eq!(seen.requests("initialize").len(), 2);
    second.close().await;

    let (factory, seen) = both(|_| Some(discover_result()), |_| done());
    let dialer = Dialer::new(Arc::new(factory), ConnectConfig::new("t"), Arc::new(NoInbound))
        .protocol(ProtocolChoice::Auto);
    for _ in 0..2 {
        let (connection, session) = dialer.dial().await.unwrap();
        assert_eq!(session.protocol_version, "2026-07-28");
        connection.close().await;
    }
    assert_eq!(dialer.verdict(), Some(true));
    assert!(seen.requests("initialize").is_empty());
}

#[tokio::test(start_paused = true)]
async fn subscribe_changes_the_listen_request_and_updates_arrive() {
    let (factory, seen) = server(move |method, params| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "resources": { "subscribe": true } },
            "serverInfo": { "name": "modern-test", "version": "1.0" }
        }})),
        "resources/list" => {
            Some(json!({ "result": { "resources": [ { "uri": "demo://a", "name": "a" } ] } }))
        }
        "subscriptions/listen" => {
            let uris =
                params["notifications"]["resourceSubscriptions"].as_array().cloned().unwrap_or_default();
            let notes: Vec<Value> = uris
                .iter()
                .map(|uri| json!({ "method": "notifications/resources/updated", "params": { "uri": uri } }))
                .collect();
            Some(json!({ "notify": notes }))
        }
        _ => Some(json!({ "result": {} })),
    });
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = updates.clone();
    let handlers = Handlers::default().with_events(move |e| {
        if let mcp_stack::Event::ResourceUpdated { uri, .. } = e {
            sink.lock().unwrap().push(uri);
        }
    });
    let binding = Binding::connect(definition(factory, ProtocolChoice::Modern), handlers).await.unwrap();
    assert!(seen.requests("subscriptions/listen").is_empty(), "nothing to listen for yet");
    binding.subscribe("demo://a").await.unwrap();
    let mut waited = 0;
    while updates.lock().unwrap().is_empty() {
        assert!(waited < 100, "no update");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(updates.lock().unwrap()[0], "demo://a");
    assert!(seen.requests("resources/subscribe").is_empty(), "no resources/subscribe in this era");
    let listen = seen.requests("subscriptions/listen");
    assert_eq!(listen[0]["params"]["notifications"]["resourceSubscriptions"], json!(["demo://a"]));
    binding.unsubscribe("demo://a").await.unwrap();
    assert!(binding.subscriptions().is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_dropped_modern_call_is_cancelled_by_notice_off_http() {
    // The in-memory transport is message-oriented like stdio: the era
    // cancels with notifications/cancelled (over HTTP it closes the stream).
    let (factory, seen) = both(|_| Some(discover_result()), |_| None);
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    let call = binding.call_tool("t", json!({}), CallOpts::default());
    let outcome = tokio::time::timeout(Duration::from_secs(1), call).await;
    assert!(outcome.is_err(), "the server never answers");
    let mut waited = 0;
    while seen.requests("notifications/cancelled").is_empty() {
        assert!(waited < 50, "no cancellation");
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    let id = seen.requests("tools/call")[0]["id"].clone();
    assert_eq!(seen.requests("notifications/cancelled")[0]["params"]["requestId"], id);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_acknowledgement_short_of_the_filter_is_a_warning() {
    let (factory, _seen) = server(move |method, _params| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": { "listChanged": true } },
            "serverInfo": { "name": "modern-test", "version": "1.0" }
        }})),
        "tools/list" => Some(tools_list()),
        "subscriptions/listen" => Some(json!({ "notify": [
            { "method": "notifications/subscriptions/acknowledged", "params": { "notifications": {} } }
        ]})),
        _ => Some(json!({ "result": {} })),
    });
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let sink = warnings.clone();
    let handlers = Handlers::default().with_events(move |e| {
        if let mcp_stack::Event::Warning { text, .. } = e {
            sink.lock().unwrap().push(text);
        }
    });
    let binding = Binding::connect(definition(factory, ProtocolChoice::Modern), handlers).await.unwrap();
    let mut waited = 0;
    while !warnings.lock().unwrap().iter().any(|w| w.contains("acknowledged")) {
        assert!(waited < 100, "no warning: {:?}", warnings.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    binding.close().await;
}

/// A transport that loses the first request of each method in `lose` the way
/// a broken HTTP response stream does: not delivered, reported
/// `indeterminate` for its id while the connection stays up.
struct Lossy {
    inner: MemoryFactory,
    lose: &'static [&'static str],
}

struct LossySender {
    inner: Arc<dyn mcp_stack::transport::MessageSender>,
    lost: Mutex<Vec<String>>,
    lose: &'static [&'static str],
    inject: tokio::sync::mpsc::UnboundedSender<Inbound>,
}

struct LossyReceiver {
    inner: Box<dyn mcp_stack::transport::MessageReceiver>,
    inject: tokio::sync::mpsc::UnboundedReceiver<Inbound>,
}

#[async_trait::async_trait]
impl mcp_stack::transport::MessageSender for LossySender {
    async fn send(&self, message: String) -> Result<(), mcp_stack::Error> {
        let parsed: Value = serde_json::from_str(&message).unwrap();
        if let Some(method) = parsed["method"].as_str().filter(|m| self.lose.contains(m)) {
            let mut lost = self.lost.lock().unwrap();
            if !lost.iter().any(|m| m == method) {
                lost.push(method.to_string());
                let id = serde_json::from_value(parsed["id"].clone()).unwrap();
                let class = FailureClass::Indeterminate;
                let _ = self.inject.send(Inbound::RequestFailed {
                    id,
                    class,
                    message: "stream broke".into(),
                    http_status: None,
                    retry_after: None,
                });
                return Ok(());
            }
        }
        self.inner.send(message).await
    }
    async fn close(&self) -> Result<(), mcp_stack::Error> {
        self.inner.close().await
    }
}

#[async_trait::async_trait]
impl mcp_stack::transport::MessageReceiver for LossyReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, mcp_stack::Error> {
        tokio::select! {
            Some(item) = self.inject.recv() => Ok(Some(item)),
            item = self.inner.recv() => item,
        }
    }
}

#[async_trait::async_trait]
impl mcp_stack::transport::TransportFactory for Lossy {
    fn kind(&self) -> &'static str {
        "memory"
    }
    fn redacted_origin(&self) -> mcp_stack::transport::RedactedOrigin {
        self.inner.redacted_origin()
    }
    async fn connect(
        &self,
        config: &mcp_stack::transport::ConnectConfig,
    ) -> Result<Transport, mcp_stack::Error> {
        let Transport { sender, receiver } = self.inner.connect(config).await?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        Ok(Transport {
            sender: Arc::new(LossySender {
                inner: sender,
                lost: Mutex::new(Vec::new()),
                lose: self.lose,
                inject: tx,
            }),
            receiver: Box::new(LossyReceiver { inner: receiver, inject: rx }),
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_lost_read_is_reissued_and_a_lost_tool_call_is_indeterminate() {
    let (inner, seen) = server(|method, _| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {}, "resources": {} },
            "serverInfo": { "name": "modern-test", "version": "1.0" }
        }})),
        "tools/list" => Some(tools_list()),
        "resources/read" => Some(json!({ "result": { "contents": [ { "uri": "demo://a", "text": "a" } ] } })),
        "tools/call" => done(),
        _ => Some(json!({ "result": {} })),
    });
    let factory = Lossy { inner, lose: &["resources/read", "tools/call"] };
    let mut def = Definition::new("lossy", factory);
    def = def.with_protocol(ProtocolChoice::Modern);
    let binding = Binding::connect(def, Handlers::default()).await.unwrap();
    binding.read_resource("demo://a", CallOpts::default()).await.expect("re-issued with a new id");
    assert_eq!(seen.requests("resources/read").len(), 1, "the lost one never reached the server");
    let e = binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::Indeterminate, "{e}");
    assert!(seen.requests("tools/call").is_empty(), "a tool call is never sent again");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn roots_changes_send_nothing_on_the_modern_era() {
    let (factory, seen) = both(|_| Some(discover_result()), |_| done());
    let mut def = definition(factory, ProtocolChoice::Modern);
    let capabilities = def.capabilities().with_roots(true);
    def = def.with_capabilities(capabilities);
    let handlers = Handlers::default().roots(|_| async move { Ok(Vec::new()) });
    let binding = Binding::connect(def, handlers).await.unwrap();
    binding.notify_roots_changed().await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(seen.requests("notifications/roots/list_changed").is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_input_kind_the_client_did_not_declare_is_refused() {
    let (factory, seen) = both(|_| Some(discover_result()), |_| Some(elicit_input(Some("s"))));
    // No elicitation declared, no handler.
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    let e = binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::ServerProtocol, "{e}");
    assert!(e.message().contains("elicitation/create"), "{e}");
    assert_eq!(seen.requests("tools/call").len(), 1, "not sent again");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_lost_tool_call_is_reissued_only_when_the_definition_opts_in() {
    let (inner, seen) = server(|method, _| match method {
        "server/discover" => Some(discover_result()),
        "tools/list" => Some(tools_list()),
        "tools/call" => done(),
        _ => Some(json!({ "result": {} })),
    });
    let factory = Lossy { inner, lose: &["tools/call"] };
    let mut def = Definition::new("lossy", factory);
    def = def.with_protocol(ProtocolChoice::Modern);
    def = def.with_reissue_lost_tool_calls(true);
    let binding = Binding::connect(def, Handlers::default()).await.unwrap();
    let result = binding.call_tool("t", json!({}), CallOpts::default()).await.expect("re-issued");
    assert!(!result.is_error);
    let calls = seen.requests("tools/call");
    assert_eq!(calls.len(), 1, "the lost one never reached the server; the re-issue did");
    assert_ne!(calls[0]["id"], json!(null));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn listen_notifications_are_told_apart_by_their_subscription_id() {
    // One channel for every stream, as on stdio: what another subscription
    // sends (here stamped 999, a stream this binding never opened or has
    // replaced) is not this stream's.
    let (factory, _seen) = server(move |method, _params| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "resources": { "subscribe": true } },
            "serverInfo": { "name": "modern-test", "version": "1.0" }
        }})),
        "resources/list" => Some(json!({ "result": { "resources": [] } })),
        "subscriptions/listen" => Some(json!({ "notify": [
            { "method": "notifications/subscriptions/acknowledged",
              "params": { "notifications": {} }, "_sid": 999 },
            { "method": "notifications/resources/updated", "params": { "uri": "demo://foreign" }, "_sid": 999 },
            { "method": "notifications/subscriptions/acknowledged",
              "params": { "notifications": { "resourceSubscriptions": ["demo://a"] } } },
            { "method": "notifications/resources/updated", "params": { "uri": "demo://a" } }
        ]})),
        _ => Some(json!({ "result": {} })),
    });
    let seen_events = Arc::new(Mutex::new(Vec::new()));
    let sink = seen_events.clone();
    let handlers = Handlers::default().with_events(move |e| match e {
        mcp_stack::Event::ResourceUpdated { uri, .. } => sink.lock().unwrap().push(format!("updated {uri}")),
        mcp_stack::Event::Warning { text, .. } => sink.lock().unwrap().push(format!("warning {text}")),
        _ => {}
    });
    let binding = Binding::connect(definition(factory, ProtocolChoice::Modern), handlers).await.unwrap();
    binding.subscribe("demo://a").await.unwrap();
    let mut waited = 0;
    while !seen_events.lock().unwrap().iter().any(|e| e == "updated demo://a") {
        assert!(waited < 100, "no update: {:?}", seen_events.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let events = seen_events.lock().unwrap().clone();
    assert!(!events.iter().any(|e| e.contains("demo://foreign")), "another stream's update: {events:?}");
    assert!(
        !events.iter().any(|e| e.contains("acknowledged")),
        "another stream's acknowledgement: {events:?}"
    );
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_header_mismatch_resend_ends_at_the_calls_original_deadline() {
    let calls = Arc::new(Mutex::new(0u32));
    let count = calls.clone();
    let (factory, seen) = both(
        |_| Some(discover_result()),
        move |_| {
            let mut n = count.lock().unwrap();
            *n += 1;
            match *n {
                // Refused after 3 s of the call's 5 s.
                1 => Some(json!({ "delayMs": 3000,
                    "error": { "code": -32020, "message": "Header mismatch: Mcp-Param-Region" } })),
                // The resend is never answered.
                _ => None,
            }
        },
    );
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    let start = Instant::now();
    let opts = CallOpts::default().with_timeout(Duration::from_secs(5));
    let e = binding.call_tool("t", json!({}), opts).await.unwrap_err();
    let took = start.elapsed();
    assert_eq!(e.class(), FailureClass::Deadline, "{e}");
    assert!(
        took >= Duration::from_secs(5) && took <= Duration::from_secs(5) + Duration::from_millis(10),
        "{took:?}"
    );
    assert_eq!(seen.requests("tools/call").len(), 2, "resent once, within the first deadline");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_url_elicitation_through_input_required_is_consent_only() {
    let (factory, seen) = both(
        |_| Some(discover_result()),
        |params| match params.get("inputResponses") {
            None => Some(json!({ "result": {
                "resultType": "input_required",
                "inputRequests": { "login": { "method": "elicitation/create", "params": {
                    "mode": "url", "message": "Sign in", "url": "https://example.com/login"
                } } }
            }})),
            Some(_) => done(),
        },
    );
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let handlers = Handlers::default()
        .elicitation(move |req: ElicitRequest| {
            record.lock().unwrap().push(req.clone());
            async move { Ok(ElicitResult::accept_url()) }
        })
        .elicitation_modes(mcp_stack::handlers::ElicitationModes { form: true, url: true })
        .with_events(move |e| {
            if let mcp_stack::Event::ElicitationComplete { .. } = e {
                sink.lock().unwrap().push(e);
            }
        });
    let mut def = definition(factory, ProtocolChoice::Modern);
    let capabilities = def.capabilities().with_elicitation(true);
    def = def.with_capabilities(capabilities);
    let binding = Binding::connect(def, handlers).await.unwrap();
    binding.call_tool("t", json!({}), CallOpts::default()).await.expect("consented");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].url.as_deref(), Some("https://example.com/login"));
    assert_eq!(asked[0].elicitation_id, None, "consent only: no id to wait on");
    let calls = seen.requests("tools/call");
    assert_eq!(calls[1]["params"]["inputResponses"]["login"], json!({ "action": "accept" }), "no content");
    assert!(events.lock().unwrap().is_empty());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_listen_result_ends_the_stream_and_an_error_reopens_it_with_backoff() {
    let listen_server = |graceful: bool| {
        server(move |method, _params| match method {
            "server/discover" => Some(json!({ "result": {
                "supportedVersions": ["2026-07-28"],
                "capabilities": { "tools": { "listChanged": true } },
                "serverInfo": { "name": "modern-test", "version": "1.0" }
            }})),
            "tools/list" => Some(tools_list()),
            "subscriptions/listen" if graceful => Some(json!({ "result": { "resultType": "complete" } })),
            "subscriptions/listen" => Some(json!({ "error": { "code": -32603, "message": "stream lost" } })),
            _ => Some(json!({ "result": {} })),
        })
    };
    // A result: the server ended the subscription on purpose; not re-opened.
    let (factory, seen) = listen_server(true);
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(seen.requests("subscriptions/listen").len(), 1);
    binding.close().await;

    // Any other end: opened again after LISTEN_BACKOFF, then twice that.
    let (factory, seen) = listen_server(false);
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Modern), Handlers::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(seen.requests("subscriptions/listen").len(), 1);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(seen.requests("subscriptions/listen").len(), 2, "after 1 s");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(seen.requests("subscriptions/listen").len(), 2, "the next waits 2 s");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(seen.requests("subscriptions/listen").len(), 3);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn the_listen_stream_is_opened_again_after_a_reconnect() {
    let (factory, seen) = server(move |method, params| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": { "listChanged": true } },
            "serverInfo": { "name": "modern-test", "version": "1.0" }
        }})),
        "tools/list" => Some(tools_list()),
        "subscriptions/listen" => Some(json!({ "notify": [] })),
        "tools/call" if params["name"] == "die" => Some(json!({ "die": true })),
        "tools/call" => done(),
        _ => Some(json!({ "result": {} })),
    });
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(seen.requests("subscriptions/listen").len(), 1);
    let e = binding.call_tool("die", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::Indeterminate, "{e}");
    binding.call_tool("t", json!({}), CallOpts::default()).await.expect("after the reconnect");
    let mut waited = 0;
    while seen.requests("subscriptions/listen").len() < 2 {
        assert!(waited < 100, "no listen stream after the reconnect");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(seen.requests("server/discover").len(), 2, "a modern verdict is confirmed by the next dial");
    assert!(seen.requests("initialize").is_empty());
    binding.close().await;
}

/// A FastMCP 4 server's `server/discover` answer: the author's name, the
/// FastMCP version, the MCP Apps extension FastMCP always declares.
fn fastmcp_discover(version: &str) -> Value {
    json!({ "result": {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": { "listChanged": false }, "extensions": { "io.modelcontextprotocol/ui": {} } },
        "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "weather", "version": version } }
    }})
}

fn quirk() -> mcp_stack::compat::Tolerance {
    mcp_stack::compat::Tolerance::LegacyEraForMrtrLessServers
}

#[tokio::test(start_paused = true)]
async fn auto_speaks_initialize_to_fastmcp_4_and_reports_the_tolerance() {
    let (factory, seen) = both(|_| Some(fastmcp_discover("4.1.6")), |_| done());
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    assert_eq!(binding.catalog().protocol_version, "2025-11-25");
    assert_eq!(binding.catalog().applied_tolerances, [quirk()]);
    // The same connection: discover, then initialize.
    assert_eq!(&seen.methods()[..3], ["server/discover", "initialize", "notifications/initialized"]);
    binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap();
    assert!(no_modern_meta(&seen.requests("tools/call")[0]));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_fastmcp_server_refusing_initialize_after_discover_gets_a_new_connection() {
    // As FastMCP over stdio: a connection that answered discover keeps the
    // 2026-07-28 era and refuses initialize with -32022.
    let (factory, seen) = server_per_connection(|n, method, _| match method {
        "server/discover" => Some(fastmcp_discover("4.0.0b3")),
        "initialize" if n == 0 => Some(json!({ "error": { "code": -32022,
            "message": "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
            "data": { "supported": ["2026-07-28"] } } })),
        "initialize" => Some(initialize_result()),
        "tools/list" => Some(tools_list()),
        _ => Some(json!({ "result": {} })),
    });
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    assert_eq!(binding.catalog().applied_tolerances, [quirk()]);
    assert_eq!(seen.requests("server/discover").len(), 1, "the new connection is not probed again");
    assert_eq!(seen.requests("initialize").len(), 2);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_pinned_choice_or_a_profile_without_the_tolerance_keeps_fastmcp_modern() {
    for (protocol, profile) in [
        (ProtocolChoice::Modern, mcp_stack::compat::Profile::default()),
        (ProtocolChoice::Pinned("2026-07-28".into()), mcp_stack::compat::Profile::default()),
        (ProtocolChoice::Auto, mcp_stack::compat::Profile::default_v1()),
        (ProtocolChoice::Auto, mcp_stack::compat::Profile::strict_v1()),
    ] {
        let (factory, seen) = both(|_| Some(fastmcp_discover("4.1.6")), |_| done());
        let mut definition = definition(factory, protocol.clone());
        definition = definition.with_compat(profile.clone());
        let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
        assert_eq!(binding.session().protocol_version, "2026-07-28", "{protocol} {}", profile.id());
        assert!(binding.catalog().applied_tolerances.is_empty());
        assert!(seen.requests("initialize").is_empty());
        binding.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn servers_not_known_to_lack_mrtr_stay_modern() {
    // FastMCP with the author's version; a 4.x server without the
    // extension; the plain modern server.
    let answers = [
        fastmcp_discover("1.2.0"),
        json!({ "result": { "supportedVersions": ["2026-07-28"], "capabilities": {},
            "serverInfo": { "name": "other", "version": "4.1.6" } } }),
        discover_result(),
    ];
    for answer in answers {
        let reply = answer.clone();
        let (factory, _) = both(move |_| Some(reply.clone()), |_| done());
        let binding =
            Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
        assert_eq!(binding.session().protocol_version, "2026-07-28", "{answer}");
        binding.close().await;
    }
    // A generated FastMCP name is recognized whatever the version.
    let mut answer = fastmcp_discover("1.2.0");
    answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] = json!("FastMCP-1a2b");
    let (factory, _) = both(move |_| Some(answer.clone()), |_| done());
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn the_reconnect_of_a_fastmcp_binding_goes_to_initialize_and_still_reports_it() {
    use mcp_stack::connection::NoInbound;
    use mcp_stack::era::Dialer;
    use mcp_stack::transport::ConnectConfig;
    let (factory, seen) = both(|_| Some(fastmcp_discover("4.1.6")), |_| done());
    let dialer = Dialer::new(Arc::new(factory), ConnectConfig::new("t"), Arc::new(NoInbound));
    for _ in 0..2 {
        let (connection, session) = dialer.dial().await.unwrap();
        assert_eq!(session.protocol_version, "2025-11-25");
        assert_eq!(session.transport_tolerances, [quirk()]);
        connection.close().await;
    }
    assert_eq!(seen.requests("server/discover").len(), 1);
    assert_eq!(seen.requests("initialize").len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_tool_refusing_to_ask_on_2026_07_28_gets_a_hint() {
    let refusal = |text: &str| {
        Some(json!({ "result": { "isError": true, "content": [ { "type": "text", "text": text } ] } }))
    };
    let (factory, _) = both(
        |_| Some(discover_result()),
        move |params| match params["name"].as_str() {
            Some("t") => {
                refusal("elicitation via server-initiated requests is unavailable on 2026-07-28 connections.")
            }
            _ => refusal("plain failure"),
        },
    );
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    let result = binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap();
    assert!(result.is_error);
    assert_eq!(result.warnings.len(), 1, "{:?}", result.warnings);
    assert!(result.warnings[0].contains("--protocol legacy"), "{:?}", result.warnings);
    assert!(result.warnings[0].contains(r#""x-mcp-stack": {"protocol": "legacy"}"#), "{:?}", result.warnings);
    binding.close().await;

    // A JSON-RPC error saying the same (the SDK's wording) carries it too.
    let (factory, _) = both(
        |_| Some(discover_result()),
        |_| {
            Some(json!({ "error": { "code": -32600, "message":
                "Cannot send 'roots/list': this transport context has no back-channel for server-initiated requests." } }))
        },
    );
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    let e = binding.call_tool("t", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::RemoteToolError);
    assert!(e.message().contains("--protocol legacy"), "{}", e.message());
    binding.close().await;
}

/// A dual-era server slow to start (`npx`, `uvx` fetching it): the probe
/// goes unanswered, the server then reads it, chooses 2026-07-28 for the
/// connection and refuses the fallback `initialize` with -32022.
fn slow_dual_era(discover: Value) -> (MemoryFactory, Seen) {
    let discovers = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    server_per_connection(move |n, method, _| match method {
        "server/discover" => {
            let mut answer = discover.clone();
            if discovers.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                answer["delayMs"] = json!(8000);
            }
            Some(answer)
        }
        "initialize" if n == 0 => Some(json!({ "error": { "code": -32022,
            "message": "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
            "data": { "supported": ["2026-07-28"] } } })),
        "initialize" => Some(initialize_result()),
        "tools/list" => Some(tools_list()),
        _ => Some(json!({ "result": {} })),
    })
}

#[tokio::test(start_paused = true)]
async fn a_slow_dual_era_server_refusing_the_fallback_is_probed_again() {
    let (factory, seen) = slow_dual_era(discover_result());
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2026-07-28");
    assert_eq!(seen.requests("server/discover").len(), 2);
    assert_eq!(seen.requests("initialize").len(), 1);
    binding.close().await;

    // FastMCP 4, slow: probed again, then initialize on a new connection.
    let (factory, seen) = slow_dual_era(fastmcp_discover("4.1.6"));
    let binding =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap();
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    assert_eq!(binding.catalog().applied_tolerances, [quirk()]);
    assert_eq!(seen.requests("initialize").len(), 3);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_slow_legacy_server_refusing_initialize_still_fails_unsupported_protocol() {
    // -32022 offering only versions this client does not speak: no second probe.
    let (factory, seen) = server(|method, _| match method {
        "server/discover" => None,
        "initialize" => Some(json!({ "error": { "code": -32022, "message": "no",
            "data": { "supported": ["2030-01-01"] } } })),
        _ => Some(json!({ "result": {} })),
    });
    let e =
        Binding::connect(definition(factory, ProtocolChoice::Auto), Handlers::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::UnsupportedProtocol);
    assert_eq!(seen.requests("server/discover").len(), 1);
}
