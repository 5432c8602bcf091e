//! The catalog through a real binding: discovery, model names, digests,
//! generations, profiles and output validation, over scripted servers and
//! the demo server.

use crate::support::scripted::{id_of, initialize_result, scripted, scripted_all, scripted_lists, Wire};
use crate::support::wire::Request;
use mcp_stack::catalog::meta::ToolExtras;
use mcp_stack::catalog::{Family, RefreshOutcome};
use mcp_stack::compat::{Profile, Tolerance};
use mcp_stack::RetryPolicy;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Event, FailureClass, State};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Answers a list request from `entries`, `page_size` per page, the cursor
/// being the index of the next entry.
/// The shape a model name has, as the catalog documents it: 1 to 64 bytes
/// of `[A-Za-z0-9_-]`.
fn is_valid_model_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn serve_page(wire: &Wire, req: &Request, key: &str, entries: &[Value], page_size: usize) {
    let start: usize =
        req.params.as_ref().and_then(|p| p["cursor"].as_str()).map(|c| c.parse().unwrap()).unwrap_or(0);
    let end = (start + page_size).min(entries.len());
    let mut result = json!({ key: entries[start..end] });
    if end < entries.len() {
        result["nextCursor"] = json!(end.to_string());
    }
    wire.reply(&id_of(req), result);
}

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

/// A server whose tools are `tools` (changeable), paged `page_size` at a time.
fn tool_server(
    tools: Arc<Mutex<Vec<Value>>>,
    page_size: usize,
) -> mcp_stack::transport::memory::MemoryFactory {
    scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/list" => serve_page(wire, req, "tools", &tools.lock().unwrap(), page_size),
        "tools/call" => {
            let name = req.params.as_ref().unwrap()["name"].as_str().unwrap().to_string();
            wire.reply(&id_of(req), json!({"content": [{"type": "text", "text": name}]}));
        }
        _ => {}
    })
    .0
}

fn recorder() -> (Handlers, Arc<Mutex<Vec<Event>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    (Handlers::default().with_events(move |e| sink.lock().unwrap().push(e)), events)
}

#[tokio::test]
async fn fifty_colliding_tools_get_distinct_valid_model_names_and_invalid_ones_are_refused() {
    let mut names: Vec<String> = ["search", "Search", "SEARCH", "se.arch", "se arch", "se_arch", "se/arch"]
        .into_iter()
        .map(String::from)
        .collect();
    names.push(format!("{}a", &"search".repeat(34)[..199]));
    names.push(format!("{}b", &"search".repeat(34)[..199]));
    names.extend(["поиск", "検索", "搜索", "🔍"].map(String::from));
    let mut i = 0;
    while names.len() < 50 {
        for sep in [" ", ".", "/"] {
            if names.len() < 50 {
                names.push(format!("search{sep}{i}"));
            }
        }
        i += 1;
    }
    assert_eq!(names.iter().filter(|n| n.len() == 200).count(), 2);
    let mut entries: Vec<Value> = names.iter().map(|n| tool(n)).collect();
    entries.push(tool(""));
    entries.push(tool(&"x".repeat(600)));
    entries.push(tool("search\nnow"));
    entries.rotate_left(20);
    let tools = Arc::new(Mutex::new(entries));
    let binding =
        Binding::connect(Definition::new("many", tool_server(tools, 7)), Handlers::default()).await.unwrap();

    let catalog = binding.catalog();
    assert_eq!(catalog.generation, 1);
    assert_eq!(catalog.tools.len(), 50);
    let mut seen = BTreeSet::new();
    for spec in &catalog.tools {
        assert!(is_valid_model_name(&spec.model_name), "{}", spec.model_name);
        assert!(spec.model_name.starts_with("mcp__many__"));
        assert!(seen.insert(spec.model_name.to_ascii_lowercase()), "duplicate {}", spec.model_name);
        assert_eq!(catalog.tool_by_model_name(&spec.model_name).unwrap().raw_name, spec.raw_name);
    }
    // Every member of a collision group is suffixed, not just the later ones.
    for raw in ["search", "Search", "SEARCH"] {
        let m = &catalog.tool(raw).unwrap().model_name;
        let lower = m.to_ascii_lowercase();
        assert!(lower.starts_with("mcp__many__search_") && m.len() == "mcp__many__search_".len() + 8, "{m}");
    }
    for raw in ["поиск", "検索", "搜索", "🔍"] {
        assert!(catalog.tool(raw).unwrap().model_name.starts_with("mcp__many__tool_"));
    }
    // The invalid ones are refused, each with a warning that says why.
    let warnings = catalog.warnings.join("\n");
    assert!(warnings.contains("its name is empty"), "{warnings}");
    assert!(warnings.contains("is 600 bytes, over 512"), "{warnings}");
    assert!(warnings.contains("contains a control character"), "{warnings}");
    assert!(catalog.tool("").is_none() && catalog.tool("search\nnow").is_none());
    assert!(catalog.applied_tolerances.is_empty());
    // A call by model name resolves through the table to the raw name.
    let raw =
        catalog.tool_by_model_name(&catalog.tool("se arch").unwrap().model_name).unwrap().raw_name.clone();
    let r = binding.call_tool(&raw, json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("se arch"));
    binding.close().await;
}

#[tokio::test]
async fn a_server_repeating_its_cursor_forever_ends_discovery_with_a_warning() {
    let (factory, rec) = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            let n = req.params.as_ref().and_then(|p| p["cursor"].as_str()).map_or(0, |_| 1);
            wire.reply(&id_of(req), json!({"tools": [tool(&format!("t{n}"))], "nextCursor": "again"}));
        }
    });
    let mut def = Definition::new("loop", factory);
    let limits = def.limits().with_max_catalog_pages(10);
    def = def.with_limits(limits);
    let binding = Binding::connect(def, Handlers::default()).await.unwrap();
    let catalog = binding.catalog();
    assert!(catalog.warnings.iter().any(|w| w.contains("repeated a cursor")), "{:?}", catalog.warnings);
    assert_eq!(catalog.tools.len(), 2);
    assert_eq!(rec.find("tools/list").len(), 2);
    binding.close().await;
}

#[tokio::test]
async fn a_server_with_endless_pages_is_cut_at_the_page_limit() {
    let (factory, rec) = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            let n: u64 =
                req.params.as_ref().and_then(|p| p["cursor"].as_str()).map_or(0, |c| c.parse().unwrap());
            wire.reply(
                &id_of(req),
                json!({"tools": [tool(&format!("t{n}"))], "nextCursor": (n + 1).to_string()}),
            );
        }
    });
    let mut def = Definition::new("endless", factory);
    let limits = def.limits().with_max_catalog_pages(5);
    def = def.with_limits(limits);
    let binding = Binding::connect(def, Handlers::default()).await.unwrap();
    let catalog = binding.catalog();
    assert_eq!(rec.find("tools/list").len(), 5);
    assert_eq!(catalog.tools.len(), 5);
    assert!(catalog.warnings.iter().any(|w| w.contains("stopped after 5 pages")), "{:?}", catalog.warnings);
    binding.close().await;
}

#[tokio::test]
async fn the_digest_is_identical_across_two_connections_to_the_demo_server() {
    let (handlers, events) = recorder();
    let a = Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), handlers).await.unwrap();
    let b = Binding::connect(Definition::new("other", mcp_stack::demo::factory()), Handlers::default())
        .await
        .unwrap();
    let (ca, cb) = (a.catalog(), b.catalog());
    assert_eq!(ca.digest.len(), 64);
    assert_eq!(ca.digest, cb.digest, "the binding name is host policy, not offering");
    let raw: Vec<&str> = ca.tools.iter().map(|t| t.raw_name.as_str()).collect();
    assert_eq!(
        raw,
        ["add", "announce", "big_text", "count", "crash", "echo", "log", "sleep", "tiny_image", "touch"]
    );
    let models: Vec<&str> = ca.tools.iter().map(|t| t.model_name.as_str()).collect();
    let expected: Vec<String> = raw.iter().map(|r| format!("mcp__demo__{r}")).collect();
    assert_eq!(models, expected);
    assert_eq!(ca.prompts[0].name, "greeting");
    let uris: Vec<&str> = ca.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["demo://logo", "demo://readme"]);
    assert_eq!(ca.resource_templates[0].uri_template, "demo://notes/{id}");
    assert!(ca.applied_tolerances.is_empty() && ca.warnings.is_empty(), "{:?}", ca.warnings);
    let add = ca.tool("add").unwrap();
    assert_eq!(add.output_schema_digest.as_deref().map(str::len), Some(64));
    assert_eq!(add.input_schema_digest, cb.tool("add").unwrap().input_schema_digest);

    let status = a.status();
    assert_eq!(status.state, State::Ready);
    assert_eq!(status.catalog_generation, 1);
    assert_eq!(status.catalog_digest, ca.digest);
    assert_eq!((status.candidate_generation, status.candidate_digest.as_str()), (0, ""));
    assert!(status.stale_families.is_empty());
    assert_eq!(status.compat_profile, "default/v3");

    // Structured content that matches the output schema passes untouched.
    let r = a.call_tool("add", json!({"a": 2, "b": 3}), CallOpts::default()).await.unwrap();
    assert_eq!(r.structured, Some(json!({"sum": 5.0})));
    assert!(r.warnings.is_empty());
    a.close().await;
    b.close().await;

    tokio::time::sleep(Duration::from_millis(20)).await;
    let events = events.lock().unwrap().clone();
    let transitions: Vec<(State, State)> = events
        .iter()
        .filter_map(|e| match e {
            Event::StateChanged { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .take(3)
        .collect();
    assert_eq!(
        transitions,
        [
            (State::Configured, State::Starting),
            (State::Starting, State::Discovering),
            (State::Discovering, State::Ready)
        ]
    );
    assert!(events.iter().any(|e| matches!(e,
        Event::CatalogAdopted { generation: 1, previous: 0, digest, .. } if *digest == ca.digest)));
}

#[tokio::test]
async fn the_catalog_digest_matches_its_vector_whatever_the_order_and_page_split() {
    const VECTOR: &str = "05d2e4926208f9bb4cda530a032e50ad4b31493221807435701d733a0dd0825a";
    let fixed: Value = serde_json::from_str(include_str!("../fixtures/catalog_vector.json")).unwrap();
    for (reverse, page_size) in [(false, 100), (true, 1), (false, 1), (true, 2)] {
        let fixed = fixed.clone();
        let (factory, _rec) = scripted_all(move |wire, req| {
            let list = |key: &str| {
                let mut entries = fixed[key].as_array().unwrap().clone();
                if reverse {
                    entries.reverse();
                }
                serve_page(wire, req, key, &entries, page_size);
            };
            match req.method.as_str() {
                "initialize" => {
                    let mut init = initialize_result();
                    init["capabilities"] = json!({"tools": {}, "prompts": {}, "resources": {}});
                    wire.reply(&id_of(req), init);
                }
                "tools/list" => list("tools"),
                "prompts/list" => list("prompts"),
                "resources/list" => list("resources"),
                "resources/templates/list" => list("resourceTemplates"),
                _ => {}
            }
        });
        let binding = Binding::connect(Definition::new("v", factory), Handlers::default()).await.unwrap();
        assert_eq!(binding.catalog().digest, VECTOR, "reverse {reverse}, page size {page_size}");
        assert_eq!(binding.catalog().tools.len(), 2);
        binding.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_list_changed_before_the_initialize_reply_does_not_break_discovery() {
    let (factory, rec) = scripted_all(|wire, req| match req.method.as_str() {
        "initialize" => {
            wire.notify("notifications/tools/list_changed", json!({}));
            let mut init = initialize_result();
            init["capabilities"] = json!({"tools": {"listChanged": true}});
            wire.reply(&id_of(req), init);
        }
        "tools/list" => wire.reply(&id_of(req), json!({"tools": [tool("echo")]})),
        _ => {}
    });
    let (handlers, events) = recorder();
    let binding = Binding::connect(Definition::new("early", factory), handlers).await.unwrap();
    assert_eq!(binding.catalog().tools[0].raw_name, "echo");
    assert!(binding.status().stale_families.is_empty());
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Discovery answered the early notification: no refetch follows it.
    assert_eq!(rec.find("tools/list").len(), 1);
    assert_eq!(binding.catalog().generation, 1);
    assert!(binding.candidate().is_none());
    let events = events.lock().unwrap().clone();
    assert!(events.iter().any(|e| matches!(e, Event::CatalogStale { family: Family::Tools, .. })));
    binding.close().await;
}

/// Sends `n` tools/list_changed notifications back to back.
fn burst(wire: &Wire, n: usize) {
    for _ in 0..n {
        wire.notify("notifications/tools/list_changed", json!({}));
    }
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_a_thousand_notifications_causes_a_bounded_number_of_refetches() {
    let tools = Arc::new(Mutex::new(vec![tool("echo"), tool("burst")]));
    let list = tools.clone();
    let (factory, rec) = scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/list" => serve_page(wire, req, "tools", &list.lock().unwrap(), 10),
        "tools/call" => {
            burst(wire, 1000);
            wire.reply(&id_of(req), json!({"content": []}));
        }
        _ => {}
    });
    let (handlers, events) = recorder();
    let binding = Binding::connect(Definition::new("b", factory), handlers).await.unwrap();
    assert_eq!(rec.find("tools/list").len(), 1);
    binding.call_tool("burst", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let refetches = rec.find("tools/list").len() - 1;
    assert!((1..=2).contains(&refetches), "{refetches} refetches for 1000 notifications");
    assert!(binding.status().stale_families.is_empty());
    // Nothing changed: no candidate.
    assert!(binding.candidate().is_none());
    let events = events.lock().unwrap().clone();
    let stale = events.iter().filter(|e| matches!(e, Event::CatalogStale { .. })).count();
    assert!((1..=2).contains(&stale), "{stale} stale events");
    assert!(events.iter().any(|e| matches!(e, Event::CatalogRefreshed { generation: 1, .. })));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_changed_tool_becomes_a_candidate_and_its_calls_wait_for_adoption() {
    let tools = Arc::new(Mutex::new(vec![tool("echo"), tool("stable")]));
    let server_tools = tools.clone();
    let (factory, _rec) = scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/list" => serve_page(wire, req, "tools", &server_tools.lock().unwrap(), 10),
        "tools/call" => {
            if req.params.as_ref().unwrap()["name"] == "change" {
                burst(wire, 3);
            }
            wire.reply(&id_of(req), json!({"content": []}));
        }
        _ => {}
    });
    let (handlers, events) = recorder();
    let binding = Binding::connect(Definition::new("c", factory), handlers).await.unwrap();
    let first = binding.catalog();

    // The server changes echo's input schema and says so.
    tools.lock().unwrap()[0] = json!({"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}});
    binding.call_tool("change", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;

    let candidate = binding.candidate().expect("a candidate");
    assert_eq!(candidate.generation, 2);
    assert_ne!(candidate.digest, first.digest);
    assert_eq!(binding.catalog().generation, 1, "calls still use the adopted generation");
    let status = binding.status();
    assert_eq!((status.catalog_generation, status.candidate_generation), (1, 2));
    assert_eq!(status.candidate_digest, candidate.digest);

    // A call to the changed tool is refused before any I/O; others proceed.
    let err = binding.call_tool("echo", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::ToolSchemaChanged);
    binding.call_tool("stable", json!({}), CallOpts::default()).await.unwrap();

    assert_eq!(binding.adopt(7).unwrap_err().class(), FailureClass::NotFound);
    let adopted = binding.adopt(2).unwrap();
    assert_eq!(adopted.generation, 2);
    assert_eq!(binding.catalog().digest, candidate.digest);
    assert!(binding.candidate().is_none());
    assert_eq!(binding.adopt(2).unwrap().generation, 2, "adopting what is in force is a no-op");
    binding.call_tool("echo", json!({"text": "hi"}), CallOpts::default()).await.unwrap();

    // Back to the first offering: a new candidate whose digest is the first's.
    *tools.lock().unwrap() = vec![tool("echo"), tool("stable")];
    match binding.refresh_catalog().await.unwrap() {
        RefreshOutcome::Candidate(c) => {
            assert_eq!((c.generation, c.digest.as_str()), (3, first.digest.as_str()));
        }
        other => panic!("{other:?}"),
    }
    // Identical again to the adopted one: the candidate is withdrawn.
    *tools.lock().unwrap() = vec![
        json!({"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}),
        tool("stable"),
    ];
    assert_eq!(binding.refresh_catalog().await.unwrap(), RefreshOutcome::Unchanged);
    assert!(binding.candidate().is_none());
    assert_eq!(binding.adopt(3).unwrap_err().class(), FailureClass::CatalogStale);

    let events = events.lock().unwrap().clone();
    assert!(events.iter().any(|e| matches!(e, Event::CatalogCandidate { generation: 2, adopted: 1, .. })));
    assert!(events.iter().any(|e| matches!(e, Event::CatalogAdopted { generation: 2, previous: 1, .. })));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_refresh_keeps_the_adopted_generation_and_retries_under_the_policy() {
    let failing = Arc::new(Mutex::new(false));
    let fail = failing.clone();
    let (factory, rec) = scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/list" => {
            if *fail.lock().unwrap() {
                let id = id_of(req);
                wire.raw(
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "busy"}})
                        .to_string(),
                );
            } else {
                wire.reply(&id_of(req), json!({"tools": [tool("echo")]}));
            }
        }
        "tools/call" => {
            burst(wire, 1);
            wire.reply(&id_of(req), json!({"content": []}));
        }
        _ => {}
    });
    let (handlers, events) = recorder();
    let mut def = Definition::new("r", factory);
    def =
        def.with_refresh(RetryPolicy::default().with_attempts(3).with_base_delay(Duration::from_millis(100)));
    let binding = Binding::connect(def, handlers).await.unwrap();
    let adopted = binding.catalog();

    *failing.lock().unwrap() = true;
    binding.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(rec.find("tools/list").len(), 1 + 3, "three tries");
    assert_eq!(binding.catalog(), adopted);
    assert!(binding.candidate().is_none());
    let status = binding.status();
    assert_eq!(status.stale_families, ["tools"]);
    assert_eq!(status.state, State::Degraded);
    assert_eq!(status.failure.as_ref().unwrap().class, FailureClass::RemoteToolError);
    let retrying: Vec<bool> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::CatalogRejected { retrying, adopted: 1, .. } => Some(*retrying),
            _ => None,
        })
        .collect();
    assert_eq!(retrying, [true, true, false]);

    // The server recovers and announces a change: the binding catches up.
    *failing.lock().unwrap() = false;
    binding.call_tool("echo", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let status = binding.status();
    assert!(status.stale_families.is_empty());
    assert_eq!(status.state, State::Ready);
    binding.close().await;
}

/// A server with a tool whose output schema is unusable (its `$ref` points
/// at the network), a tool with a good one, and a weather tool whose
/// structured results can be made to fail their schema.
fn imperfect_server() -> mcp_stack::transport::memory::MemoryFactory {
    let tools = vec![
        json!({"name": "remote_ref", "inputSchema": {"type": "object"},
               "outputSchema": {"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}}}),
        json!({"name": "weather", "title": "Weather", "inputSchema": {"type": "object"},
               "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]},
               "_meta": {"agentfootprint": {"resultKind": "weather", "gates": "maybe"}}}),
    ];
    scripted_lists(move |wire, req| match req.method.as_str() {
        "tools/list" => wire.reply(&id_of(req), json!({ "tools": tools })),
        "tools/call" => {
            let args = &req.params.as_ref().unwrap()["arguments"];
            let result = match args["mode"].as_str() {
                Some("good") => json!({"content": [], "structuredContent": {"temp": 21.5}}),
                Some("bad") => json!({"content": [{"type": "text", "text": "21.5"}], "structuredContent": {"temp": "warm"}}),
                Some("error") => json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
                _ => json!({"content": [{"type": "text", "text": "21.5"}]}),
            };
            wire.reply(&id_of(req), result);
        }
        _ => {}
    })
    .0
}

#[tokio::test]
async fn profiles_decide_unusable_output_schemas_and_report_what_was_applied() {
    let default =
        Binding::connect(Definition::new("d", imperfect_server()), Handlers::default()).await.unwrap();
    let c = default.catalog();
    let kept = c.tool("remote_ref").expect("kept under default/v1");
    assert_eq!(kept.output_schema, None);
    assert_eq!(kept.output_schema_digest, None);
    assert!(kept.warnings[0].contains("does not compile"), "{:?}", kept.warnings);
    assert_eq!(c.applied_tolerances, [Tolerance::InvalidOutputSchema]);

    let mut def = Definition::new("s", imperfect_server());
    def = def.with_compat(Profile::strict_v1());
    let strict = Binding::connect(def, Handlers::default()).await.unwrap();
    let c = strict.catalog();
    assert!(c.tool("remote_ref").is_none(), "refused under strict/v1");
    assert!(c.warnings.iter().any(|w| w.contains("remote_ref")));
    assert!(c.applied_tolerances.is_empty());
    assert_eq!(strict.status().compat_profile, "strict/v1");
    // The profile is host policy: the digest is the same.
    assert_eq!(c.digest, default.catalog().digest);

    // `_meta` declarations: the bad field is dropped with one warning.
    let weather = c.tool("weather").unwrap();
    let extras = weather.declarations::<ToolExtras>("s");
    assert_eq!(extras.value.result_kind.as_deref(), Some("weather"));
    assert_eq!(extras.value.gates, None);
    assert_eq!(extras.warnings.len(), 1);
    assert!(extras.warnings[0].contains("binding s") && extras.warnings[0].contains("\"weather\""));
    default.close().await;
    strict.close().await;
}

#[tokio::test]
async fn structured_content_is_validated_and_a_failure_follows_the_profile() {
    let default =
        Binding::connect(Definition::new("d", imperfect_server()), Handlers::default()).await.unwrap();
    let call = |b: &Binding, mode: &str| {
        let b = b.clone();
        let args = json!({"mode": mode});
        async move { b.call_tool("weather", args, CallOpts::default()).await }
    };
    let r = call(&default, "good").await.unwrap();
    assert_eq!(r.structured, Some(json!({"temp": 21.5})));
    assert!(r.warnings.is_empty());
    let r = call(&default, "bad").await.unwrap();
    assert_eq!(r.structured, None);
    assert_eq!(r.content[0].as_text(), Some("21.5"));
    assert!(
        r.warnings[0].contains("at /temp") && r.warnings[0].contains("structured_content_mismatch"),
        "{:?}",
        r.warnings
    );
    let r = call(&default, "missing").await.unwrap();
    assert!(r.warnings[0].contains("no structuredContent"), "{:?}", r.warnings);
    let r = call(&default, "error").await.unwrap();
    assert!(r.is_error && r.warnings.is_empty());

    let mut def = Definition::new("s", imperfect_server());
    def = def.with_compat(Profile::strict_v1());
    let strict = Binding::connect(def, Handlers::default()).await.unwrap();
    assert!(call(&strict, "good").await.is_ok());
    let err = call(&strict, "bad").await.unwrap_err();
    assert_eq!(err.class(), FailureClass::ServerProtocol);
    assert!(err.message().contains("at /temp"), "{err}");
    assert_eq!(call(&strict, "missing").await.unwrap_err().class(), FailureClass::ServerProtocol);
    assert!(call(&strict, "error").await.unwrap().is_error);
    default.close().await;
    strict.close().await;
}

#[tokio::test]
async fn bounds_drop_entries_and_cut_lists_with_warnings() {
    let mut deep = json!({"type": "string"});
    for _ in 0..10 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let tools = vec![
        tool("ok"),
        json!({"name": "deep", "inputSchema": deep}),
        json!({"name": "big", "inputSchema": {"type": "object", "description": "x".repeat(5000)}}),
        json!({"name": "no_schema"}),
        json!({"name": "string_args", "inputSchema": {"type": "string"}}),
        json!({"name": "dup", "inputSchema": {"type": "object"}}),
        json!({"name": "dup", "inputSchema": {"type": "object", "description": "other"}}),
        json!({"name": "same", "inputSchema": {"type": "object"}}),
        json!({"name": "same", "inputSchema": {"type": "object"}}),
        json!({"name": 7, "inputSchema": {"type": "object"}}),
        json!({"name": "ctl_title", "title": "Bad\u{1b}[31m title", "inputSchema": {"type": "object"}}),
        tool("over_the_item_limit"),
    ];
    let prompts: Vec<Value> = (0..5).map(|i| json!({"name": format!("p{i}")})).collect();
    let (factory, _rec) = scripted_all(move |wire, req| match req.method.as_str() {
        "initialize" => {
            let mut init = initialize_result();
            init["capabilities"] = json!({"tools": {}, "prompts": {}});
            wire.reply(&id_of(req), init);
        }
        "tools/list" => serve_page(wire, req, "tools", &tools, 4),
        "prompts/list" => serve_page(wire, req, "prompts", &prompts, 2),
        _ => {}
    });
    let mut def = Definition::new("bounds", factory);
    let limits = def.limits().with_max_schema_depth(8);
    def = def.with_limits(limits);
    let limits = def.limits().with_max_schema_bytes(4096);
    def = def.with_limits(limits);
    let limits = def.limits().with_max_catalog_items(11);
    def = def.with_limits(limits);
    let limits = def.limits().with_max_prompt_count(3);
    def = def.with_limits(limits);
    let binding = Binding::connect(def, Handlers::default()).await.unwrap();
    let c = binding.catalog();
    let names: Vec<&str> = c.tools.iter().map(|t| t.raw_name.as_str()).collect();
    assert_eq!(names, ["ctl_title", "ok", "same"]);
    let w = c.warnings.join("\n");
    for expected in [
        "\"deep\": catalog_over_limit: its input schema nests",
        "\"big\": catalog_over_limit: its input schema is",
        "\"no_schema\": it has no input schema",
        "\"string_args\": its input schema is not \"type\": \"object\"",
        "\"dup\" listed 2 times with different content",
        "\"same\" listed 2 times; kept once",
        "without a string name",
        "kept the first 11 entries",
        "prompts/list: kept the first 3 entries",
    ] {
        assert!(w.contains(expected), "missing {expected:?} in\n{w}");
    }
    // default/v1 normalizes a title with control characters.
    assert_eq!(c.tool("ctl_title").unwrap().title.as_deref(), Some("Bad [31m title"));
    assert_eq!(c.applied_tolerances, [Tolerance::DisplayNameNormalization]);
    assert_eq!(c.prompts.len(), 3);
    binding.close().await;
}

#[tokio::test]
async fn a_lone_surrogate_costs_the_page_that_carries_it() {
    let (factory, _rec) = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            let id = id_of(req);
            if req.params.as_ref().and_then(|p| p["cursor"].as_str()).is_none() {
                wire.reply(&id, json!({"tools": [tool("first")], "nextCursor": "2"}));
            } else {
                // A JSON string with a lone surrogate cannot become a String.
                wire.raw(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"bad\ud800","inputSchema":{{"type":"object"}}}},{{"name":"second","inputSchema":{{"type":"object"}}}}]}}}}"#
                ));
            }
        }
    });
    let binding = Binding::connect(Definition::new("u", factory), Handlers::default()).await.unwrap();
    let c = binding.catalog();
    let names: Vec<&str> = c.tools.iter().map(|t| t.raw_name.as_str()).collect();
    assert_eq!(names, ["first"]);
    assert!(c.warnings.iter().any(|w| w.contains("page 1 failed (server_protocol")), "{:?}", c.warnings);
    binding.close().await;
}

#[tokio::test]
async fn a_family_the_server_does_not_serve_is_empty_with_a_warning() {
    let (factory, _rec) = scripted_all(|wire, req| match req.method.as_str() {
        "initialize" => {
            let mut init = initialize_result();
            init["capabilities"] = json!({"tools": {}, "resources": {}});
            wire.reply(&id_of(req), init);
        }
        "tools/list" => wire.reply(&id_of(req), json!({"tools": [tool("t")]})),
        "resources/list" => wire.reply(&id_of(req), json!({"resources": [{"uri": "x://1", "name": "one"}]})),
        _ => {
            let id = id_of(req);
            wire.raw(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}).to_string(),
            );
        }
    });
    let binding = Binding::connect(Definition::new("f", factory), Handlers::default()).await.unwrap();
    let c = binding.catalog();
    assert_eq!(c.resources.len(), 1);
    assert!(c.resource_templates.is_empty());
    assert!(c.warnings.iter().any(|w| w.contains("resources/templates/list: the server does not serve it")));
    // A refresh sees the same: nothing changed.
    assert_eq!(binding.refresh_catalog().await.unwrap(), RefreshOutcome::Unchanged);
    binding.close().await;
}

#[tokio::test]
async fn the_tool_filter_shapes_the_tools_but_not_the_digest_or_the_names() {
    let tools = Arc::new(Mutex::new(vec![tool("search"), tool("Search"), tool("read")]));
    let all = Binding::connect(Definition::new("f", tool_server(tools.clone(), 10)), Handlers::default())
        .await
        .unwrap();
    let mut def = Definition::new("f", tool_server(tools, 10));
    let tool_filter = def.tool_filter().clone().with_denied(["Search"]);
    def = def.with_tool_filter(tool_filter);
    let filtered = Binding::connect(def, Handlers::default()).await.unwrap();
    let (a, f) = (all.catalog(), filtered.catalog());
    assert_eq!(a.digest, f.digest);
    assert_eq!(f.tools.len(), 2);
    assert_eq!(f.tool("search").unwrap().model_name, a.tool("search").unwrap().model_name);
    all.close().await;
    filtered.close().await;
}

#[tokio::test]
async fn listing_a_family_the_server_does_not_advertise_sends_nothing_and_does_not_warn() {
    // initialize_result() advertises tools only.
    let (factory, rec) = scripted(|wire, req| {
        let id = id_of(req);
        wire.raw(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}).to_string());
    });
    let binding = Binding::connect(Definition::new("f", factory), Handlers::default()).await.unwrap();
    let before = rec.methods().len();
    let prompts = binding.list_prompts().await.unwrap();
    let resources = binding.list_resources().await.unwrap();
    let templates = binding.list_resource_templates().await.unwrap();
    assert!(prompts.items.is_empty() && prompts.warnings.is_empty(), "{prompts:?}");
    assert!(resources.items.is_empty() && resources.warnings.is_empty(), "{resources:?}");
    assert!(templates.items.is_empty() && templates.warnings.is_empty(), "{templates:?}");
    let after = rec.methods();
    assert_eq!(after.len(), before, "sent {:?}", &after[before..]);
    assert!(!after.iter().any(|m| m.starts_with("prompts/") || m.starts_with("resources/")), "{after:?}");
    binding.close().await;
}

/// Issue 22, item 7: declaration sets registered on the definition are read
/// when each generation is built; what passed is on the tool; a bad known
/// field is dropped and reported once (a catalog warning, an event) across
/// three refreshes that build new generations; unknown fields are silent.
#[tokio::test]
async fn registered_declarations_are_read_at_ingest_and_a_bad_field_warns_once() {
    use mcp_stack::catalog::meta::DeclarationSet;
    let declared = |extra: &str| {
        json!({"name": "forecast", "inputSchema": {"type": "object"}, "description": extra,
               "_meta": {"agentfootprint": {"resultKind": "weather", "gates": "maybe", "futureField": 1}}})
    };
    let tools = Arc::new(Mutex::new(vec![declared("v0"), tool("plain")]));
    let factory = tool_server(tools.clone(), 10);
    let (handlers, events) = recorder();
    let mut definition = Definition::new("decl", factory);
    definition =
        definition.with_declarations(DeclarationSet::default().with::<ToolExtras>().with::<ToolExtras>());
    let binding = Binding::connect(definition, handlers).await.unwrap();

    let catalog = binding.catalog();
    let forecast = catalog.tool("forecast").unwrap();
    let extras = forecast.declared.get::<ToolExtras>().expect("read at ingest");
    assert_eq!(extras.result_kind.as_deref(), Some("weather"));
    assert_eq!(extras.gates, None, "the bad field is dropped");
    let plain = catalog.tool("plain").unwrap().declared.get::<ToolExtras>().cloned();
    assert_eq!(plain, Some(ToolExtras::default()), "no bag: the empty set, silently");
    let gates_warnings =
        |c: &mcp_stack::catalog::Catalog| c.warnings.iter().filter(|w| w.contains("gates")).count();
    assert_eq!(gates_warnings(&catalog), 1, "{:?}", catalog.warnings);
    assert!(!catalog.warnings.iter().any(|w| w.contains("futureField")), "unknown fields are silent");

    // Three refreshes, each a new generation with the same bad field.
    for n in 1..=3 {
        tools.lock().unwrap()[0] = declared(&format!("v{n}"));
        match binding.refresh_catalog().await.unwrap() {
            RefreshOutcome::Candidate(c) => {
                let adopted = binding.adopt(c.generation).unwrap();
                assert_eq!(gates_warnings(&adopted), 0, "refresh {n}: warned again: {:?}", adopted.warnings);
                let extras = adopted.tool("forecast").unwrap().declared.get::<ToolExtras>().unwrap().clone();
                assert_eq!(extras.result_kind.as_deref(), Some("weather"));
            }
            other => panic!("refresh {n}: {other:?}"),
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let warned = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, Event::Warning { text, .. } if text.contains("gates")))
        .count();
    assert_eq!(warned, 1, "one event across four builds");
    binding.close().await;
}

/// Issue 22, item 6 (seed 001's `ListToolsWithCursor`): one page at a time,
/// with the cursor of the next, the tool filter applied; a cursor over its
/// bound is refused before anything is sent.
#[tokio::test]
async fn tools_are_listed_one_page_at_a_time_with_the_next_cursor() {
    let tools = Arc::new(Mutex::new((0..5).map(|i| tool(&format!("t{i}"))).collect::<Vec<_>>()));
    let mut definition = Definition::new("paged", tool_server(tools, 2));
    definition = definition.with_tool_filter(mcp_stack::ToolFilter::default().with_denied(["t3"]));
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let page = binding.list_tools_page(cursor.as_deref()).await.unwrap();
        pages.push(page.items.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, [vec!["t0", "t1"], vec!["t2"], vec!["t4"]], "t3 is filtered out");
    let e = binding.list_tools_page(Some(&"c".repeat(5000))).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidArguments);
    assert!(binding.list_tools().await.unwrap().next_cursor.is_none(), "a whole list has no cursor");
    binding.close().await;
}

/// The same for prompts and resources: one page each, with the next
/// cursor; a server that does not advertise them is not asked.
#[tokio::test]
async fn prompts_and_resources_are_listed_one_page_at_a_time() {
    let prompts: Vec<Value> = (0..3).map(|i| json!({"name": format!("p{i}")})).collect();
    let resources: Vec<Value> =
        (0..3).map(|i| json!({"uri": format!("demo://r{i}"), "name": format!("r{i}")})).collect();
    let (factory, _) = scripted_all(move |wire, req| match req.method.as_str() {
        "initialize" => {
            let mut result = initialize_result();
            result["capabilities"] = json!({"tools": {}, "prompts": {}, "resources": {}});
            wire.reply(&id_of(req), result);
        }
        "server/discover" => wire.refuse_discover(req),
        "tools/list" => wire.reply(&id_of(req), json!({"tools": []})),
        "prompts/list" => serve_page(wire, req, "prompts", &prompts, 2),
        "resources/list" => serve_page(wire, req, "resources", &resources, 2),
        "resources/templates/list" => wire.reply(&id_of(req), json!({"resourceTemplates": []})),
        _ => {}
    });
    let binding = Binding::connect(Definition::new("paged", factory), Handlers::default()).await.unwrap();
    let first = binding.list_prompts_page(None).await.unwrap();
    assert_eq!(first.items.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["p0", "p1"]);
    let second = binding.list_prompts_page(first.next_cursor.as_deref()).await.unwrap();
    assert_eq!((second.items.len(), second.next_cursor), (1, None));
    let first = binding.list_resources_page(None).await.unwrap();
    assert_eq!(first.items.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["demo://r0", "demo://r1"]);
    assert_eq!(first.next_cursor.as_deref(), Some("2"));
    binding.close().await;

    // Not advertised: empty, without asking.
    let (factory, recorder) = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            wire.reply(&id_of(req), json!({"tools": []}));
        }
    });
    let binding = Binding::connect(Definition::new("bare", factory), Handlers::default()).await.unwrap();
    assert!(binding.list_prompts_page(None).await.unwrap().items.is_empty());
    assert!(binding.list_resources_page(None).await.unwrap().items.is_empty());
    let asked = recorder.seen.lock().unwrap().iter().filter(|m| m["method"] == "prompts/list").count();
    assert_eq!(asked, 0);
    binding.close().await;
}
