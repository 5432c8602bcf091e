//! Server-initiated work end to end: elicitation, sampling, roots, logs,
//! subscriptions and completions, through real bindings against the demo
//! server and scripted servers.

use crate::support::recorded_events::Events;
use crate::support::scripted::{id_of, scripted, scripted_with, Wire};
use mcp_stack::protocol::CompletionReference;
use mcp_stack::protocol::LoggingLevel;
use mcp_stack::protocol::Root;
use mcp_stack::{
    handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Definition, Error, Event, FailureClass,
    Limits, Timeouts, ToolResult,
};
use mcp_stack::{
    handlers::{
        ElicitAction, ElicitRequest, ElicitResult, ElicitationMode, ElicitationModes, LogMessage,
        SampleRequest, SampleResult,
    },
    SampleOutcome,
};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

/// The log records a binding queues for its handler, as `Handlers::logging`
/// documents it; past it, records are dropped and counted.
const LOG_QUEUE: usize = 256;

/// How long a test waits for an event.
const WAIT: Duration = Duration::from_secs(10);

const ALL_CAPS: AllowedCapabilities =
    AllowedCapabilities::none().with_elicitation(true).with_sampling(true).with_roots(true);

fn demo_definition() -> Definition {
    let mut def = Definition::new("demo", mcp_stack::demo::factory());
    def = def.with_capabilities(ALL_CAPS);
    def
}

async fn connect(def: Definition, handlers: Handlers) -> Binding {
    Binding::connect(def, handlers).await.expect("connect")
}

fn text_of(r: &ToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
}

/// The client error a demo tool quotes when the client refused its request.
fn client_error(r: &ToolResult) -> Value {
    assert!(r.is_error, "expected a client error, got {r:?}");
    r.structured.as_ref().expect("structured error")["error"].clone()
}

fn form_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0, "default": 30}
        },
        "required": ["name", "email"]
    })
}

// ---- capabilities -----------------------------------------------------------

async fn advertised(def_caps: AllowedCapabilities, handlers: Handlers) -> Value {
    let (factory, rec) = scripted(|_w, _r| {});
    let mut def = Definition::new("t", factory);
    def = def.with_capabilities(def_caps);
    let b = connect(def, handlers).await;
    b.close().await;
    rec.find("initialize")[0]["params"]["capabilities"].clone()
}

fn all_handlers() -> Handlers {
    Handlers::default()
        .elicitation(|_| async { Ok(ElicitResult::decline()) })
        .sampling(|_| async { Ok(SampleResult::text("m", "x")) })
        .with_roots(vec![Root::new("file:///tmp")])
}

#[tokio::test]
async fn a_capability_is_advertised_only_with_its_handler_and_the_definitions_consent() {
    assert_eq!(advertised(ALL_CAPS, Handlers::default()).await, json!({}));
    assert_eq!(advertised(AllowedCapabilities::default(), all_handlers()).await, json!({}));
    assert_eq!(
        advertised(ALL_CAPS, all_handlers()).await,
        json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": true}})
    );
    let with_url_and_tools =
        all_handlers().elicitation_modes(ElicitationModes { form: true, url: true }).sampling_tools(true);
    assert_eq!(
        advertised(ALL_CAPS, with_url_and_tools).await,
        json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {"listChanged": true}})
    );
    let only_sampling = AllowedCapabilities::default().with_sampling(true);
    assert_eq!(advertised(only_sampling, all_handlers()).await, json!({"sampling": {}}));
}

#[tokio::test]
async fn the_demo_lists_client_tools_only_for_declared_capabilities() {
    let b = connect(Definition::new("demo", mcp_stack::demo::factory()), all_handlers()).await;
    let names: Vec<String> = b.list_tools().await.unwrap().items.into_iter().map(|t| t.name).collect();
    assert!(!names.iter().any(|n| n == "elicit" || n == "sample" || n == "roots"), "{names:?}");
    b.close().await;
    let b = connect(demo_definition(), all_handlers()).await;
    let names: Vec<String> = b.list_tools().await.unwrap().items.into_iter().map(|t| t.name).collect();
    for tool in ["elicit", "sample", "roots"] {
        assert!(names.iter().any(|n| n == tool), "{tool} missing from {names:?}");
    }
    b.close().await;
}

// ---- elicitation ------------------------------------------------------------

#[tokio::test]
async fn an_elicitation_message_one_byte_over_its_bound_is_refused_not_trimmed() {
    const BOUND: usize = 64;
    let seen = Arc::new(Mutex::new(Vec::<ElicitRequest>::new()));
    let log = seen.clone();
    let events = Events::default();
    let handlers = events.install(Handlers::default().elicitation(move |req: ElicitRequest| {
        log.lock().unwrap().push(req.clone());
        async move { Ok(ElicitResult::accept(Map::from_iter([("name".into(), json!("Ada"))]))) }
    }));
    let mut def = demo_definition();
    def = def.with_limits(Limits::default().with_max_elicit_message_bytes(BOUND));
    let b = connect(def, handlers).await;
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});

    // Exactly at the bound: delivered whole. ("é" is two bytes: the bound is
    // in bytes, not characters.)
    let at_bound = format!("{}é", "a".repeat(BOUND - 2));
    assert_eq!(at_bound.len(), BOUND);
    let r = b
        .call_tool("elicit", json!({"message": at_bound, "schema": schema}), CallOpts::default())
        .await
        .unwrap();
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.structured.unwrap(), json!({"action": "accept", "content": {"name": "Ada"}}));
    assert_eq!(seen.lock().unwrap()[0].message, at_bound);

    // One byte over: refused before the host sees it, and not shortened.
    let over = "b".repeat(BOUND + 1);
    let r =
        b.call_tool("elicit", json!({"message": over, "schema": schema}), CallOpts::default()).await.unwrap();
    let error = client_error(&r);
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["class"], "elicitation_invalid");
    assert!(error["message"].as_str().unwrap().contains("65 bytes"), "{error}");
    assert_eq!(seen.lock().unwrap().len(), 1, "the host never saw the over-bound request");
    let (action, class) = events
        .wait_for(WAIT, |e| match e {
            Event::ElicitationResolved { action, class: Some(FailureClass::ElicitationInvalid), .. } => {
                Some((*action, FailureClass::ElicitationInvalid))
            }
            _ => None,
        })
        .await;
    assert_eq!((action, class), (None, FailureClass::ElicitationInvalid));
    b.close().await;
}

#[tokio::test]
async fn an_answer_that_breaks_the_schema_is_not_sent() {
    // The server asks on the first tools/call and answers the call at once;
    // the recorder sees what the client sent back.
    let (factory, rec) = scripted(|wire: &Wire, req| {
        if req.method == "tools/call" {
            wire.raw(
                json!({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {
                    "message": "Who are you?", "requestedSchema": form_schema()
                }})
                .to_string(),
            );
            wire.reply(&id_of(req), json!({"content": []}));
        }
    });
    let events = Events::default();
    let handlers = events.install(Handlers::default().elicitation(|_req| async {
        let answer = json!({"name": "Ada", "email": "ada-at-example", "age": -3});
        Ok(ElicitResult::accept(answer.as_object().unwrap().clone()))
    }));
    let mut def = Definition::new("t", factory);
    def = def.with_capabilities(ALL_CAPS);
    let b = connect(def, handlers).await;
    b.call_tool("go", json!({}), CallOpts::default()).await.unwrap();

    let message = events
        .wait_for(WAIT, |e| match e {
            Event::ElicitationResolved {
                action: None,
                class: Some(FailureClass::ElicitationInvalid),
                message,
                ..
            } => message.clone(),
            _ => None,
        })
        .await;
    assert!(message.contains("/email") && message.contains("/age"), "{message}");
    assert!(!message.contains("ada-at-example"), "the report quotes no answer: {message}");

    let reply = rec.reply_to(0).await;
    assert!(reply.get("result").is_none(), "{reply}");
    assert_eq!(reply["error"]["code"], -32603);
    assert_eq!(reply["error"]["data"]["class"], "elicitation_invalid");
    let wire = serde_json::to_string(&*rec.seen.lock().unwrap()).unwrap();
    assert!(!wire.contains("ada-at-example"), "the invalid answer reached the server: {wire}");
    b.close().await;
}

#[tokio::test]
async fn a_valid_form_answer_is_sent_and_events_carry_mode_action_and_duration() {
    let events = Events::default();
    let handlers = events.install(Handlers::default().elicitation(|req: ElicitRequest| async move {
        assert_eq!(req.mode, ElicitationMode::Form);
        assert_eq!(req.binding, "demo");
        let mut answer = req.defaults();
        answer.insert("name".into(), json!("Ada"));
        answer.insert("email".into(), json!("ada@example.com"));
        req.validate(&answer)?;
        Ok(ElicitResult::accept(answer))
    }));
    let b = connect(demo_definition(), handlers).await;
    let r = b
        .call_tool("elicit", json!({"message": "Who?", "schema": form_schema()}), CallOpts::default())
        .await
        .unwrap();
    assert_eq!(
        r.structured.unwrap(),
        json!({"action": "accept", "content": {"name": "Ada", "email": "ada@example.com", "age": 30}})
    );
    events
        .wait_for(WAIT, |e| match e {
            Event::ElicitationResolved {
                mode: ElicitationMode::Form,
                action: Some(ElicitAction::Accept),
                class: None,
                ..
            } => Some(()),
            _ => None,
        })
        .await;
    assert_eq!(events.matching(|e| matches!(e, Event::ElicitationRequested { .. }).then_some(())).len(), 1);
    b.close().await;
}

#[tokio::test]
async fn decline_and_cancel_are_answers_with_their_classes() {
    let events = Events::default();
    let handlers = events.install(Handlers::default().elicitation(|req: ElicitRequest| async move {
        match req.message.as_str() {
            "decline" => Ok(ElicitResult::decline()),
            "cancel" => Ok(ElicitResult::cancel()),
            _ => Err(Error::new(FailureClass::ElicitationDeclined, "the person said no")),
        }
    }));
    let b = connect(demo_definition(), handlers).await;
    for (message, action) in [("decline", "decline"), ("cancel", "cancel"), ("error", "decline")] {
        let r = b.call_tool("elicit", json!({"message": message}), CallOpts::default()).await.unwrap();
        assert_eq!(r.structured.unwrap(), json!({"action": action}), "{message}");
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let classes = events.matching(|e| match e {
        Event::ElicitationResolved { class, action, .. } => Some((*action, *class)),
        _ => None,
    });
    assert_eq!(
        classes,
        [
            (Some(ElicitAction::Decline), Some(FailureClass::ElicitationDeclined)),
            (Some(ElicitAction::Cancel), Some(FailureClass::ElicitationCancelled)),
            (Some(ElicitAction::Decline), Some(FailureClass::ElicitationDeclined)),
        ]
    );
    b.close().await;
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_elicitation_times_out_as_cancel() {
    let events = Events::default();
    let handlers = events.install(Handlers::default().elicitation(|_req| async {
        std::future::pending::<()>().await;
        unreachable!()
    }));
    let mut def = demo_definition();
    def = def.with_timeouts(
        Timeouts::default().with_elicitation(Duration::from_secs(30)).with_request(Duration::from_secs(120)),
    );
    let b = connect(def, handlers).await;
    let started = Instant::now();
    let r = b.call_tool("elicit", json!({"message": "anyone?"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured.unwrap(), json!({"action": "cancel"}));
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(30) && waited < Duration::from_secs(31), "{waited:?}");
    let (class, duration) = events
        .wait_for(WAIT, |e| match e {
            Event::ElicitationResolved { class: Some(c), duration, .. } => Some((*c, *duration)),
            _ => None,
        })
        .await;
    assert_eq!(class, FailureClass::ElicitationTimeout);
    assert_eq!(duration, Duration::from_secs(30));
    b.close().await;
}

#[tokio::test]
async fn url_mode_passes_the_url_as_data_and_routes_completion() {
    let seen = Arc::new(Mutex::new(None::<ElicitRequest>));
    let slot = seen.clone();
    let events = Events::default();
    let handlers = events.install(
        Handlers::default()
            .elicitation(move |req: ElicitRequest| {
                *slot.lock().unwrap() = Some(req);
                async { Ok(ElicitResult::accept_url()) }
            })
            .elicitation_modes(ElicitationModes { form: true, url: true }),
    );
    let b = connect(demo_definition(), handlers).await;
    let url = "https://evil.example/\u{202e}gnp.exe?x=1";
    let args =
        json!({"mode": "url", "message": "Open this", "url": url, "elicitation_id": "e-1", "complete": true});
    let r = b.call_tool("elicit", args, CallOpts::default()).await.unwrap();
    assert_eq!(r.structured.unwrap(), json!({"action": "accept"}));
    let req = seen.lock().unwrap().clone().unwrap();
    assert_eq!(req.mode, ElicitationMode::Url);
    assert_eq!(req.url.as_deref(), Some(url), "passed verbatim, not vetted");
    assert_eq!(req.elicitation_id.as_deref(), Some("e-1"));
    assert!(req.schema.is_none());
    let id = events
        .wait_for(WAIT, |e| match e {
            Event::ElicitationComplete { elicitation_id, .. } => Some(elicitation_id.clone()),
            _ => None,
        })
        .await;
    assert_eq!(id, "e-1");
    b.close().await;
}

#[tokio::test]
async fn an_undeclared_mode_is_invalid_params() {
    let calls = Arc::new(AtomicUsize::new(0));
    let count = calls.clone();
    let handlers = Handlers::default().elicitation(move |_req| {
        count.fetch_add(1, Ordering::SeqCst);
        async { Ok(ElicitResult::accept_url()) }
    });
    let b = connect(demo_definition(), handlers).await;
    let args = json!({"mode": "url", "message": "Open", "url": "https://example.com"});
    let r = b.call_tool("elicit", args, CallOpts::default()).await.unwrap();
    assert_eq!(client_error(&r)["code"], -32602);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    b.close().await;
}

#[tokio::test]
async fn url_mode_is_refused_before_2025_11_25_even_when_declared() {
    let older = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1"},
    });
    let (factory, rec) = scripted_with(older, |wire: &Wire, req| {
        if req.method == "tools/call" {
            wire.raw(
                json!({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {
                    "mode": "url", "message": "Open", "url": "https://example.com", "elicitationId": "e"
                }})
                .to_string(),
            );
            wire.reply(&id_of(req), json!({"content": []}));
        }
    });
    let handlers = Handlers::default()
        .elicitation(|_req| async { Ok(ElicitResult::accept_url()) })
        .elicitation_modes(ElicitationModes { form: true, url: true });
    let mut def = Definition::new("t", factory);
    def = def.with_capabilities(ALL_CAPS);
    let b = connect(def, handlers).await;
    assert_eq!(b.session().protocol_version, "2025-06-18");
    b.call_tool("go", json!({}), CallOpts::default()).await.unwrap();
    let reply = rec.reply_to(0).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    b.close().await;
}

#[tokio::test]
async fn sep1034_defaults_are_accepted_whole() {
    // The schema of the conformance scenario elicitation-sep1034-client-defaults.
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": true}
    }, "required": []});
    let handlers = Handlers::default()
        .elicitation(|req: ElicitRequest| async move { Ok(ElicitResult::accept(req.defaults())) });
    let b = connect(demo_definition(), handlers).await;
    let r = b
        .call_tool(
            "elicit",
            json!({"message": "accept with defaults", "schema": schema}),
            CallOpts::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        r.structured.unwrap(),
        json!({"action": "accept", "content": {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true}})
    );
    b.close().await;
}

// ---- sampling ---------------------------------------------------------------

#[tokio::test]
async fn max_tokens_is_capped_never_raised() {
    let seen = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let log = seen.clone();
    let events = Events::default();
    let handlers = events.install(Handlers::default().sampling(move |req: SampleRequest| {
        log.lock().unwrap().push((req.max_tokens, req.requested_max_tokens));
        let text = req.text();
        async move { Ok(SampleResult::text("test-model", format!("echo: {text}"))) }
    }));
    let mut def = demo_definition();
    def = def.with_limits(Limits::default().with_max_sampling_tokens(50));
    let b = connect(def, handlers).await;
    let r = b
        .call_tool("sample", json!({"prompt": "hi", "max_tokens": 100000}), CallOpts::default())
        .await
        .unwrap();
    let result = r.structured.unwrap();
    assert_eq!(result["content"], json!({"type": "text", "text": "echo: hi"}));
    assert_eq!(result["model"], "test-model");
    assert_eq!(result["role"], "assistant");
    b.call_tool("sample", json!({"prompt": "small", "max_tokens": 10}), CallOpts::default()).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), [(50, 100000), (10, 10)]);
    let granted = events
        .wait_for(WAIT, |e| match e {
            Event::SamplingRequested { max_tokens, requested_max_tokens: 100000, depth: 1, .. } => {
                Some(*max_tokens)
            }
            _ => None,
        })
        .await;
    assert_eq!(granted, 50);
    let resolved = events
        .wait_for(WAIT, |e| match e {
            Event::SamplingResolved { outcome, model, max_tokens: 50, .. } => Some((*outcome, model.clone())),
            _ => None,
        })
        .await;
    assert_eq!(resolved, (SampleOutcome::Completed, Some("test-model".into())));
    b.close().await;
}

#[tokio::test]
async fn a_sampling_request_at_depth_three_with_limit_two_is_refused_over_budget() {
    // Each handler calls the demo's `sample` tool back through the binding:
    // the server then samples again, one level deeper.
    let slot: Arc<OnceLock<Binding>> = Arc::new(OnceLock::new());
    let handler_slot = slot.clone();
    let depths = Arc::new(Mutex::new(Vec::new()));
    let log = depths.clone();
    let events = Events::default();
    let handlers = events.install(Handlers::default().sampling(move |req: SampleRequest| {
        let binding = handler_slot.get().expect("binding").clone();
        log.lock().unwrap().push(req.depth);
        async move {
            assert_eq!(mcp_stack::layer::sampling_depth::sampling_depth(), req.depth);
            let nested =
                binding.call_tool("sample", json!({"prompt": "deeper"}), CallOpts::default()).await?;
            Ok(SampleResult::text("m", format!("depth {} got [{}]", req.depth, text_of(&nested))))
        }
    }));
    let mut def = demo_definition();
    def = def.with_limits(Limits::default().with_max_sampling_depth(2).with_max_sampling_concurrency(8));
    let b = connect(def, handlers).await;
    slot.set(b.clone()).unwrap();

    let r = b.call_tool("sample", json!({"prompt": "start"}), CallOpts::default()).await.unwrap();
    assert!(!r.is_error, "{r:?}");
    assert_eq!(*depths.lock().unwrap(), [1, 2], "the host never served depth 3");
    let text = text_of(&r);
    assert!(text.contains("depth 1 got") && text.contains("depth 2 got"), "{text}");
    assert!(
        text.contains("client error -1: sampling_over_budget: sampling depth 3 exceeds the limit of 2"),
        "{text}"
    );

    let refused = events
        .wait_for(WAIT, |e| match e {
            Event::SamplingResolved { depth: 3, outcome, class, .. } => Some((*outcome, *class)),
            _ => None,
        })
        .await;
    assert_eq!(refused, (SampleOutcome::OverBudget, Some(FailureClass::SamplingOverBudget)));
    let mut requested = events.matching(|e| match e {
        Event::SamplingRequested { depth, .. } => Some(*depth),
        _ => None,
    });
    requested.sort();
    assert_eq!(requested, [1, 2, 3]);
    b.close().await;
}

#[tokio::test]
async fn sampling_concurrency_over_its_cap_is_refused_at_once() {
    let (open_tx, open_rx) = tokio::sync::watch::channel(false);
    let handlers = Handlers::default().sampling(move |_req| {
        let mut open = open_rx.clone();
        async move {
            let _ = open.wait_for(|o| *o).await;
            Ok(SampleResult::text("m", "done"))
        }
    });
    let mut def = demo_definition();
    def = def.with_limits(Limits::default().with_max_sampling_concurrency(1));
    def = def.with_allow_parallel_calls(true);
    let b = connect(def, handlers).await;
    let first = {
        let b = b.clone();
        tokio::spawn(async move { b.call_tool("sample", json!({"prompt": "1"}), CallOpts::default()).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = b.call_tool("sample", json!({"prompt": "2"}), CallOpts::default()).await.unwrap();
    let error = client_error(&second);
    assert_eq!(error["data"]["class"], "sampling_over_budget");
    open_tx.send(true).unwrap();
    let first = first.await.unwrap().unwrap();
    assert!(!first.is_error, "{first:?}");
    b.close().await;
}

#[tokio::test]
async fn tools_in_sampling_only_when_declared() {
    let seen = Arc::new(Mutex::new(None));
    let log = seen.clone();
    let handlers = move |tools: bool| {
        let log = log.clone();
        Handlers::default()
            .sampling(move |req: SampleRequest| {
                *log.lock().unwrap() = Some(req.tools.clone());
                async { Ok(SampleResult::text("m", "ok")) }
            })
            .sampling_tools(tools)
    };
    let b = connect(demo_definition(), handlers(false)).await;
    let r =
        b.call_tool("sample", json!({"prompt": "p", "with_tools": true}), CallOpts::default()).await.unwrap();
    assert_eq!(client_error(&r)["code"], -32602);
    assert!(seen.lock().unwrap().is_none(), "the host was not asked");
    b.close().await;

    let b = connect(demo_definition(), handlers(true)).await;
    let r =
        b.call_tool("sample", json!({"prompt": "p", "with_tools": true}), CallOpts::default()).await.unwrap();
    assert!(!r.is_error, "{r:?}");
    let tools = seen.lock().unwrap().clone().unwrap().unwrap();
    assert_eq!(tools[0].name, "echo");
    b.close().await;
}

// ---- roots ------------------------------------------------------------------

#[tokio::test]
async fn roots_are_served_and_changes_announced() {
    let roots = Arc::new(Mutex::new(vec![Root::new("file:///tmp/a"), Root::new("https://not-a-file")]));
    let current = roots.clone();
    let handlers = Handlers::default().roots(move |_| {
        let roots = current.lock().unwrap().clone();
        async move { Ok(roots) }
    });
    let b = connect(demo_definition(), handlers).await;
    let r = b.call_tool("roots", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(
        r.structured.unwrap(),
        json!({"roots": [{"uri": "file:///tmp/a"}]}),
        "non-file roots are left out"
    );
    b.notify_roots_changed().await.unwrap();
    b.close().await;

    let b = connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default()).await;
    let err = b.notify_roots_changed().await.unwrap_err();
    assert_eq!(err.class(), FailureClass::InvalidConfig);
    b.close().await;
}

#[tokio::test]
async fn roots_list_changed_reaches_the_server() {
    let (factory, rec) = scripted(|_w, _r| {});
    let mut def = Definition::new("t", factory);
    def = def.with_capabilities(ALL_CAPS);
    let b = connect(def, Handlers::default().with_roots(vec![Root::new("file:///x")])).await;
    b.notify_roots_changed().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while rec.find("notifications/roots/list_changed").is_empty() {
        assert!(Instant::now() < deadline, "never sent");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    b.close().await;
}

// ---- logging ----------------------------------------------------------------

fn collecting_log_handler(records: Arc<Mutex<Vec<LogMessage>>>) -> Handlers {
    Handlers::default().log(move |m: LogMessage| {
        records.lock().unwrap().push(m);
        async { Ok(()) }
    })
}

#[tokio::test]
async fn set_level_is_sent_only_with_a_log_handler_and_a_logging_server() {
    let logging_server = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "scripted", "version": "1"},
    });
    let answer = |w: &Wire, r: &crate::support::wire::Request| w.reply(&id_of(r), json!({}));
    let records = Arc::new(Mutex::new(Vec::new()));

    let (factory, rec) = scripted_with(logging_server.clone(), answer);
    let mut def = Definition::new("t", factory);
    def = def.with_log_level(LoggingLevel::Warning);
    let b = connect(def, collecting_log_handler(records.clone())).await;
    assert_eq!(rec.find("logging/setLevel")[0]["params"], json!({"level": "warning"}));
    b.close().await;

    let (factory, rec) = scripted_with(logging_server, answer);
    let b = connect(Definition::new("t", factory), Handlers::default()).await;
    assert!(rec.find("logging/setLevel").is_empty(), "no handler, no logs turned on");
    b.close().await;

    let (factory, rec) = scripted(answer);
    let b = connect(Definition::new("t", factory), collecting_log_handler(records)).await;
    assert!(rec.find("logging/setLevel").is_empty(), "the server does not log");
    let err = b.set_log_level(LoggingLevel::Debug).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::InvalidConfig);
    b.close().await;
}

#[tokio::test]
async fn log_records_are_bounded_and_at_the_requested_level() {
    let records = Arc::new(Mutex::new(Vec::new()));
    let mut def = demo_definition();
    def = def.with_log_level(LoggingLevel::Warning);
    def = def.with_limits(Limits::default().with_max_log_message_bytes(32));
    let b = connect(def, collecting_log_handler(records.clone())).await;
    // The demo honours setLevel: info is below warning, nothing is sent.
    let r = b.call_tool("log", json!({"count": 3, "level": "info"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured.unwrap()["sent"], 0);
    let long = "x\u{1b}[31m".repeat(40);
    let r = b
        .call_tool("log", json!({"count": 2, "level": "error", "text": long}), CallOpts::default())
        .await
        .unwrap();
    assert_eq!(r.structured.unwrap()["sent"], 2);
    let deadline = Instant::now() + Duration::from_secs(5);
    while records.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "records never arrived");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for m in records.lock().unwrap().iter() {
        assert_eq!(m.level, LoggingLevel::Error);
        assert_eq!(m.logger.as_deref(), Some("demo"));
        assert!(m.text.len() <= 32 && m.truncated, "{m:?}");
        assert!(!m.text.contains('\u{1b}'), "{m:?}");
    }
    // Changed at run time.
    b.set_log_level(LoggingLevel::Debug).await.unwrap();
    let r = b.call_tool("log", json!({"count": 1, "level": "info"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured.unwrap()["sent"], 1);
    b.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_log_flood_with_a_slow_handler_does_not_delay_a_concurrent_call() {
    const FLOOD: u64 = 10_000;
    let delivered = Arc::new(AtomicUsize::new(0));
    let count = delivered.clone();
    let handlers = Handlers::default().log(move |_m: LogMessage| {
        let count = count.clone();
        async move {
            // A slow handler: 10 ms a record, 100 s for the whole flood.
            tokio::time::sleep(Duration::from_millis(10)).await;
            count.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    });
    let mut def = demo_definition();
    def = def.with_log_level(LoggingLevel::Debug);
    def = def.with_allow_parallel_calls(true);
    let b = connect(def, handlers).await;

    let started = Instant::now();
    b.call_tool("echo", json!({"message": "baseline"}), CallOpts::default()).await.unwrap();
    let normal = started.elapsed();

    let flood = {
        let b = b.clone();
        tokio::spawn(async move { b.call_tool("log", json!({"count": FLOOD}), CallOpts::default()).await })
    };
    tokio::task::yield_now().await;
    let started = Instant::now();
    let r = b.call_tool("echo", json!({"message": "during the flood"}), CallOpts::default()).await.unwrap();
    let during = started.elapsed();
    assert!(!flood.is_finished(), "the call was answered while the flood was still going");
    assert_eq!(text_of(&r), "during the flood");
    assert!(
        during <= normal + Duration::from_millis(100),
        "the call took {during:?} during the flood, {normal:?} normally"
    );

    let r = flood.await.unwrap().unwrap();
    assert_eq!(r.structured.unwrap()["sent"], FLOOD);
    let dropped = b.dropped_logs();
    assert!(dropped > 0, "a slow handler and a full queue must drop");
    assert_eq!(b.status().dropped_logs, dropped);
    // What was queued is delivered, in time; nothing else.
    tokio::time::sleep(Duration::from_millis(10) * (LOG_QUEUE as u32 + 10)).await;
    let delivered = delivered.load(Ordering::SeqCst) as u64;
    assert_eq!(delivered + dropped, FLOOD, "delivered {delivered}, dropped {dropped}");
    assert!(delivered <= LOG_QUEUE as u64 + 1, "{delivered}");
    b.close().await;
}

// ---- resources --------------------------------------------------------------

#[tokio::test]
async fn subscriptions_deliver_updates_and_are_kept_for_a_new_connection() {
    let events = Events::default();
    let b = connect(demo_definition(), events.install(Handlers::default())).await;
    b.subscribe("demo://readme").await.unwrap();
    b.subscribe("demo://notes/1").await.unwrap();
    assert_eq!(b.subscriptions(), ["demo://notes/1", "demo://readme"]);
    let r = b.call_tool("touch", json!({"uri": "demo://readme"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured.unwrap()["notified"], true);
    let uri = events
        .wait_for(WAIT, |e| match e {
            Event::ResourceUpdated { uri, .. } => Some(uri.clone()),
            _ => None,
        })
        .await;
    assert_eq!(uri, "demo://readme");
    assert!(b.resubscribe_all().await.is_empty());

    b.unsubscribe("demo://readme").await.unwrap();
    assert_eq!(b.subscriptions(), ["demo://notes/1"]);
    let r = b.call_tool("touch", json!({"uri": "demo://readme"}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured.unwrap()["notified"], false);
    b.close().await;
}

#[tokio::test]
async fn subscribing_without_server_support_is_a_clear_error() {
    let (factory, rec) = scripted(|_w, _r| {});
    let b = connect(Definition::new("t", factory), Handlers::default()).await;
    let err = b.subscribe("demo://x").await.unwrap_err();
    assert_eq!(err.class(), FailureClass::InvalidConfig);
    assert!(err.message().contains("subscriptions"), "{err}");
    assert!(rec.find("resources/subscribe").is_empty(), "nothing was sent");
    assert!(b.subscriptions().is_empty());
    b.close().await;
}

// ---- completions ------------------------------------------------------------

#[tokio::test]
async fn completion_values_are_bounded_in_count_and_bytes() {
    let (factory, _rec) = scripted(|w: &Wire, r| {
        let mut values: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        values[1] = "x".repeat(2000);
        w.reply(&id_of(r), json!({"completion": {"values": values, "total": 150, "hasMore": false}}));
    });
    let b = connect(Definition::new("t", factory), Handlers::default()).await;
    let reference = CompletionReference::Prompt { name: "p".into(), title: None };
    let c = b.complete(reference, "a", "", Map::new(), mcp_stack::CallOpts::default()).await.unwrap();
    assert_eq!(c.completion.values.len(), 100 /* the documented bound */);
    assert_eq!(c.completion.values[0], "v0");
    assert_eq!(c.completion.values[1], "v2", "the over-long value is dropped, not cut");
    assert_eq!(c.completion.has_more, Some(true));
    assert_eq!(c.completion.total, Some(150));
    b.close().await;
}
