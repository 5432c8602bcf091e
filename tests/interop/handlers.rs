//! Interop of the host's handlers with the reference server "everything"
//! over stdio: elicitation (form and URL), sampling, roots, logging,
//! resource subscriptions, completion, and the CLI answering elicitation.
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers and sets
//! `MCP_NODE`, `MCP_EVERYTHING_JS` and `MCP_CLI`. These tests never skip: a
//! missing peer is a failure.

use crate::support::peers::{everything, peer};
use crate::support::recorded_events::Events;
use mcp_stack::handlers::{
    ElicitAction, ElicitRequest, ElicitResult, ElicitationMode, ElicitationModes, LogMessage, SampleRequest,
    SampleResult,
};
use mcp_stack::protocol::CompletionReference;
use mcp_stack::protocol::LoggingLevel;
use mcp_stack::protocol::Root;
use mcp_stack::{
    handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Content, Definition, Event, Limits,
    ToolResult,
};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

fn definition(capabilities: AllowedCapabilities) -> Definition {
    let mut def = Definition::new("everything", everything());
    def = def.with_capabilities(capabilities);
    def
}

async fn connect(def: Definition, handlers: Handlers) -> Binding {
    Binding::connect(def, handlers).await.expect("connect")
}

fn text_of(result: &ToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

const ELICITATION: AllowedCapabilities = AllowedCapabilities::none().with_elicitation(true);

#[tokio::test]
async fn everything_elicitation_is_answered_through_a_handler() {
    let seen = Arc::new(Mutex::new(None::<ElicitRequest>));
    let slot = seen.clone();
    let events = Events::default();
    let handlers = events.install(Handlers::default().elicitation(move |req: ElicitRequest| {
        *slot.lock().unwrap() = Some(req.clone());
        async move {
            let mut answer = req.defaults();
            answer.insert("name".into(), json!("Ada Lovelace"));
            answer.insert("email".into(), json!("ada@example.com"));
            answer.insert("check".into(), json!(true));
            req.validate(&answer)?;
            Ok(ElicitResult::accept(answer))
        }
    }));
    let b = connect(definition(ELICITATION), handlers).await;
    let r = b.call_tool("trigger-elicitation-request", json!({}), CallOpts::default()).await.unwrap();
    let text = text_of(&r);
    assert!(text.contains("User provided the requested information"), "{text}");
    assert!(text.contains("- Name: Ada Lovelace") && text.contains("- Email: ada@example.com"), "{text}");
    assert!(text.contains("- Favorite Integer: 42"), "defaults were sent: {text}");

    let req = seen.lock().unwrap().clone().expect("the handler was asked");
    assert_eq!(req.mode, ElicitationMode::Form);
    assert_eq!(req.message, "Please provide inputs for the following fields:");
    let schema = req.schema.expect("a schema");
    assert_eq!(schema["required"], json!(["name"]));
    assert!(schema["properties"].as_object().unwrap().len() >= 10);
    events
        .wait_for(Duration::from_secs(5), |e| match e {
            Event::ElicitationResolved { action: Some(ElicitAction::Accept), class: None, .. } => Some(()),
            _ => None,
        })
        .await;
    b.close().await;
}

#[tokio::test]
async fn everything_an_invalid_answer_is_not_sent() {
    let handlers = Handlers::default().elicitation(|_req| async {
        // `name` is required; an answer without it breaks the schema.
        Ok(ElicitResult::accept(Map::from_iter([("email".to_string(), json!("not an email"))])))
    });
    let b = connect(definition(ELICITATION), handlers).await;
    let r = b.call_tool("trigger-elicitation-request", json!({}), CallOpts::default()).await.unwrap();
    let text = text_of(&r);
    assert!(r.is_error, "{r:?}");
    assert!(text.contains("elicitation_invalid"), "{text}");
    assert!(!text.contains("not an email"), "{text}");
    b.close().await;
}

#[tokio::test]
async fn everything_url_elicitation_shows_the_url_as_data() {
    let seen = Arc::new(Mutex::new(None::<ElicitRequest>));
    let slot = seen.clone();
    let handlers = Handlers::default()
        .elicitation(move |req: ElicitRequest| {
            *slot.lock().unwrap() = Some(req);
            async { Ok(ElicitResult::accept_url()) }
        })
        .elicitation_modes(ElicitationModes { form: true, url: true });
    let b = connect(definition(ELICITATION), handlers).await;
    let url = "https://example.com/connect?step=1";
    let r = b
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": url, "message": "Connect your account"}),
            CallOpts::default(),
        )
        .await
        .unwrap();
    let text = text_of(&r);
    assert!(text.contains("User completed the URL elicitation flow"), "{text}");
    let req = seen.lock().unwrap().clone().expect("the handler was asked");
    assert_eq!(req.mode, ElicitationMode::Url);
    assert_eq!(req.url.as_deref(), Some(url));
    assert_eq!(req.message, "Connect your account");
    let id = req.elicitation_id.expect("an elicitation id");
    assert!(text.contains(&id), "{text}");
    b.close().await;
}

#[tokio::test]
async fn everything_sampling_is_served_with_the_token_cap_applied() {
    let seen = Arc::new(Mutex::new(None::<SampleRequest>));
    let slot = seen.clone();
    let events = Events::default();
    let handlers = events.install(Handlers::default().sampling(move |req: SampleRequest| {
        let reply = format!("granted {} of {} tokens", req.max_tokens, req.requested_max_tokens);
        *slot.lock().unwrap() = Some(req);
        async move { Ok(SampleResult::text("interop-model", reply)) }
    }));
    let mut def = definition(AllowedCapabilities::default().with_sampling(true));
    def = def.with_limits(Limits::default().with_max_sampling_tokens(64));
    let b = connect(def, handlers).await;
    let r = b
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt": "Say hi", "maxTokens": 5000}),
            CallOpts::default(),
        )
        .await
        .unwrap();
    let text = text_of(&r);
    assert!(text.contains("granted 64 of 5000 tokens") && text.contains("interop-model"), "{text}");
    let req = seen.lock().unwrap().clone().expect("the handler was asked");
    assert_eq!((req.max_tokens, req.requested_max_tokens, req.depth), (64, 5000, 1));
    assert_eq!(req.system_prompt.as_deref(), Some("You are a helpful test server."));
    assert!(req.text().contains("Say hi"), "{}", req.text());
    assert!(req.tools.is_none());
    let granted = events
        .wait_for(Duration::from_secs(5), |e| match e {
            Event::SamplingResolved { max_tokens, model: Some(m), .. } if m == "interop-model" => {
                Some(*max_tokens)
            }
            _ => None,
        })
        .await;
    assert_eq!(granted, 64);
    b.close().await;
}

#[tokio::test]
async fn everything_roots_list_returns_the_given_roots_and_follows_changes() {
    let roots =
        Arc::new(Mutex::new(vec![Root { uri: "file:///tmp".into(), name: Some("tmp".into()), meta: None }]));
    let current = roots.clone();
    let handlers = Handlers::default().roots(move |_| {
        let roots = current.lock().unwrap().clone();
        async move { Ok(roots) }
    });
    let b = connect(definition(AllowedCapabilities::default().with_roots(true)), handlers).await;
    let r = b.call_tool("get-roots-list", json!({}), CallOpts::default()).await.unwrap();
    let text = text_of(&r);
    assert!(text.contains("Current MCP Roots (1 total)") && text.contains("URI: file:///tmp"), "{text}");

    *roots.lock().unwrap() = vec![
        Root { uri: "file:///var/data".into(), name: Some("data".into()), meta: None },
        Root::new("file:///srv"),
    ];
    b.notify_roots_changed().await.unwrap();
    // The server asks again on its own time; poll, bounded.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = b.call_tool("get-roots-list", json!({}), CallOpts::default()).await.unwrap();
        let text = text_of(&r);
        if text.contains("(2 total)") {
            assert!(text.contains("URI: file:///var/data") && text.contains("URI: file:///srv"), "{text}");
            break;
        }
        assert!(Instant::now() < deadline, "the server never saw the new roots: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    b.close().await;
}

#[tokio::test]
async fn everything_simulated_logging_delivers_bounded_records_at_the_requested_level() {
    const BOUND: usize = 20;
    let records = Arc::new(Mutex::new(Vec::<LogMessage>::new()));
    let sink = records.clone();
    let events = Events::default();
    let handlers = events.install(Handlers::default().log(move |m: LogMessage| {
        sink.lock().unwrap().push(m);
        async { Ok(()) }
    }));
    let mut def = definition(AllowedCapabilities::default());
    def = def.with_log_level(LoggingLevel::Notice);
    def = def.with_limits(Limits::default().with_max_log_message_bytes(BOUND));
    let b = connect(def, handlers).await;
    b.call_tool("toggle-simulated-logging", json!({}), CallOpts::default()).await.unwrap();
    // One random-level record at once, then one every 5 s; 3 of 8 levels are
    // below notice and are not sent. Wait for two (bounded).
    let deadline = Instant::now() + Duration::from_secs(45);
    while records.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "no log records arrived: {:?}", records.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    b.call_tool("toggle-simulated-logging", json!({}), CallOpts::default()).await.unwrap();
    for m in records.lock().unwrap().iter() {
        assert!(m.level >= LoggingLevel::Notice, "{m:?}");
        assert!(m.text.len() <= BOUND, "{m:?}");
        assert!(m.text.contains("message") || m.truncated, "{m:?}");
        assert_eq!(m.binding, "everything");
    }
    // The server itself honoured the level: every record it sent, as the
    // unfiltered events show, was at notice or above.
    let levels = events.matching(|e| match e {
        Event::ServerLog { level, .. } => Some(level.clone()),
        _ => None,
    });
    assert!(!levels.is_empty());
    for level in levels {
        assert!(level.parse::<LoggingLevel>().unwrap() >= LoggingLevel::Notice, "{level}");
    }
    assert_eq!(b.dropped_logs(), 0);
    b.close().await;
}

#[tokio::test]
async fn everything_subscriber_updates_deliver_resource_updated() {
    const URI: &str = "demo://resource/static/document/architecture.md";
    let events = Events::default();
    let b = connect(definition(AllowedCapabilities::default()), events.install(Handlers::default())).await;
    assert!(b.session().capabilities.resources_subscribe());
    b.subscribe(URI).await.unwrap();
    assert_eq!(b.subscriptions(), [URI]);
    b.call_tool("toggle-subscriber-updates", json!({}), CallOpts::default()).await.unwrap();
    let uri = events
        .wait_for(Duration::from_secs(15), |e| match e {
            Event::ResourceUpdated { uri, binding, .. } if binding == "everything" => Some(uri.clone()),
            _ => None,
        })
        .await;
    assert_eq!(uri, URI);
    b.call_tool("toggle-subscriber-updates", json!({}), CallOpts::default()).await.unwrap();
    assert!(b.resubscribe_all().await.is_empty());
    b.unsubscribe(URI).await.unwrap();
    assert!(b.subscriptions().is_empty());
    b.close().await;
}

#[tokio::test]
async fn everything_completable_prompt_completion_works() {
    let b = connect(definition(AllowedCapabilities::default()), Handlers::default()).await;
    let prompt = CompletionReference::Prompt { name: "completable-prompt".into(), title: None };
    let c = b
        .complete(prompt.clone(), "department", "", Map::new(), mcp_stack::CallOpts::default())
        .await
        .unwrap();
    assert_eq!(c.completion.values, ["Engineering", "Sales", "Marketing", "Support"]);
    assert_eq!(c.completion.has_more, Some(false));
    let c = b
        .complete(prompt.clone(), "department", "S", Map::new(), mcp_stack::CallOpts::default())
        .await
        .unwrap();
    assert_eq!(c.completion.values, ["Sales", "Support"]);
    let context = Map::from_iter([("department".to_string(), Value::from("Engineering"))]);
    let c = b.complete(prompt, "name", "", context, mcp_stack::CallOpts::default()).await.unwrap();
    assert_eq!(c.completion.values, ["Alice", "Bob", "Charlie"]);
    b.close().await;
}

/// Runs the CLI with `args`, `stdin` as its input; returns (status, stdout,
/// stderr).
pub(crate) fn cli(args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    let server = format!("{} {} stdio", peer("MCP_NODE"), peer("MCP_EVERYTHING_JS"));
    let mut child = std::process::Command::new(peer("MCP_CLI"))
        .arg("--stdio")
        .arg(server)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the CLI");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_answers_elicitation_on_the_terminal_and_with_defaults() {
    // Field by field: the required name first, then Enter for every default
    // and optional field, then Enter to send.
    let answers = format!("Grace Hopper\n{}", "\n".repeat(20));
    let (code, out, err) = cli(&["--json", "call", "trigger-elicitation-request"], &answers);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("asks: Please provide inputs"), "{err}");
    assert!(out.contains("- Name: Grace Hopper") && out.contains("- Favorite Integer: 42"), "{out}");

    // --accept-defaults cannot fill the required name: it cancels, unprompted.
    let (code, out, err) = cli(&["--accept-defaults", "call", "trigger-elicitation-request"], "");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("User cancelled"), "{out}");

    // A URL is shown in full and accepted with --accept-defaults, never opened.
    let url = "https://example.com/authorize?client=cli";
    let (code, out, err) =
        cli(&["--accept-defaults", "call", "trigger-url-elicitation", &json!({"url": url}).to_string()], "");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains(&format!("URL:  {url}")) && err.contains("host: example.com"), "{err}");
    assert!(out.contains("User completed the URL elicitation flow"), "{out}");

    // --root and --log-level.
    let (code, out, err) = cli(&["--root", "/tmp", "--log-level", "info", "call", "get-roots-list"], "");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("URI: file:///tmp"), "{out}");
}
