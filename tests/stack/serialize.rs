//! The JSON form of the domain types: what a host that reports in JSON (a
//! gateway, a CLI's `--json`, a log) gets from `serde`.

use mcp_stack::catalog::{
    Catalog, Family, PromptArg, PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec,
};
use mcp_stack::compat::Tolerance;
use mcp_stack::protocol::{Annotations, Role, ServerCapabilities};
use mcp_stack::session::{ServerIdentity, SessionInfo};
use mcp_stack::ProgressUpdate;
use mcp_stack::{handlers::ElicitationMode, SampleOutcome};
use mcp_stack::{Content, Error, Event, Failure, FailureClass, State, Status, ToolResult};
use mcp_stack::{PromptMessage, PromptResult, ResourceContent, ResourceResult};
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn to_json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

/// 2023-11-14T22:13:20.123Z.
fn at() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_700_000_000_123)
}

const AT: &str = "2023-11-14T22:13:20.123Z";

fn server() -> ServerIdentity {
    ServerIdentity { name: "demo".into(), version: "1.0".into(), ..ServerIdentity::default() }
}

#[test]
fn a_catalog_and_its_entries_serialize_with_camel_case_names() {
    let tool = ToolSpec {
        raw_name: "echo".into(),
        model_name: "mcp__demo__echo".into(),
        title: Some("Echo".into()),
        description: None,
        input_schema: json!({"type": "object"}).into(),
        output_schema: None,
        input_schema_digest: "ab".into(),
        output_schema_digest: None,
        annotations: None,
        task_support: mcp_stack::protocol::TaskSupport::Forbidden,
        meta: None,
        declared: Default::default(),
        app: None,
        always_load: false,
        warnings: vec![],
    };
    let catalog = Catalog {
        binding: "demo".into(),
        generation: 2,
        digest: "cd".into(),
        protocol_version: "2025-06-18".into(),
        server: server(),
        capabilities: ServerCapabilities::default(),
        instructions: None,
        tools: vec![tool],
        prompts: vec![PromptSpec {
            name: "greeting".into(),
            title: None,
            description: Some("Says hello".into()),
            arguments: vec![PromptArg {
                name: "name".into(),
                title: None,
                description: None,
                required: true,
            }],
        }],
        resources: vec![ResourceSpec {
            uri: "demo://readme".into(),
            name: "readme".into(),
            title: None,
            description: None,
            mime_type: Some("text/plain".into()),
            size: Some(12),
            app: None,
        }],
        resource_templates: vec![ResourceTemplateSpec {
            uri_template: "demo://notes/{id}".into(),
            name: "notes".into(),
            title: None,
            description: None,
            mime_type: None,
        }],
        warnings: vec!["dropped a tool".into()],
        applied_tolerances: vec![Tolerance::LegacySse],
    };
    assert_eq!(
        to_json(&catalog),
        json!({
            "binding": "demo",
            "generation": 2,
            "digest": "cd",
            "protocolVersion": "2025-06-18",
            "server": {"name": "demo", "version": "1.0", "title": ""},
            "capabilities": {},
            "instructions": null,
            "tools": [{
                "rawName": "echo",
                "modelName": "mcp__demo__echo",
                "title": "Echo",
                "description": null,
                "inputSchema": {"type": "object"},
                "outputSchema": null,
                "inputSchemaDigest": "ab",
                "outputSchemaDigest": null,
                "annotations": null,
                "taskSupport": "forbidden",
                "meta": null,
                "warnings": [],
            }],
            "prompts": [{
                "name": "greeting",
                "title": null,
                "description": "Says hello",
                "arguments": [{"name": "name", "title": null, "description": null, "required": true}],
            }],
            "resources": [{
                "uri": "demo://readme",
                "name": "readme",
                "title": null,
                "description": null,
                "mimeType": "text/plain",
                "size": 12,
            }],
            "resourceTemplates": [{
                "uriTemplate": "demo://notes/{id}",
                "name": "notes",
                "title": null,
                "description": null,
                "mimeType": null,
            }],
            "warnings": ["dropped a tool"],
            "appliedTolerances": ["legacy_sse"],
        })
    );
}

#[test]
fn results_and_content_serialize_as_on_the_wire_with_base64_bytes() {
    let result = ToolResult {
        is_error: false,
        content: vec![
            Content::Text {
                text: "hi".into(),
                truncated: true,
                annotations: Some(Annotations {
                    audience: Some(vec![Role::User]),
                    priority: Some(0.5),
                    last_modified: None,
                }),
                meta: Some(json!({"x-trace": 1}).as_object().unwrap().clone()),
            },
            Content::Image {
                data: b"png".to_vec(),
                mime_type: "image/png".into(),
                annotations: None,
                meta: None,
            },
            Content::Audio {
                data: vec![0, 255],
                mime_type: "audio/wav".into(),
                annotations: None,
                meta: None,
            },
            Content::Resource {
                resource: ResourceContent {
                    uri: "demo://readme".into(),
                    mime_type: Some("text/plain".into()),
                    text: Some("read me".into()),
                    data: None,
                    truncated: false,
                    meta: Some(json!({"x-item": true}).as_object().unwrap().clone()),
                },
                annotations: None,
                meta: Some(json!({"x-block": true}).as_object().unwrap().clone()),
            },
            Content::Resource {
                resource: ResourceContent {
                    uri: "demo://blob".into(),
                    mime_type: None,
                    text: None,
                    data: Some(b"hi!".to_vec()),
                    truncated: false,
                    meta: None,
                },
                annotations: None,
                meta: None,
            },
            Content::ResourceLink {
                uri: "demo://readme".into(),
                name: "readme".into(),
                mime_type: None,
                description: Some("the readme".into()),
                title: Some("Read me".into()),
                size: Some(42),
                annotations: None,
                meta: Some(json!({"x-owner": "docs"}).as_object().unwrap().clone()),
            },
            Content::Unsupported { kind: "video".into(), bytes: 123 },
        ],
        structured: Some(json!({"sum": 5})),
        warnings: vec!["cut a text".into()],
    };
    assert_eq!(
        to_json(&result),
        json!({
            "isError": false,
            "content": [
                {"type": "text", "text": "hi", "truncated": true,
                 "annotations": {"audience": ["user"], "priority": 0.5}, "_meta": {"x-trace": 1}},
                {"type": "image", "data": "cG5n", "mimeType": "image/png"},
                {"type": "audio", "data": "AP8=", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "demo://readme", "mimeType": "text/plain", "text": "read me",
                 "truncated": false, "_meta": {"x-item": true}}, "_meta": {"x-block": true}},
                {"type": "resource", "resource": {"uri": "demo://blob", "mimeType": null, "data": "aGkh", "truncated": false}},
                {"type": "resource_link", "uri": "demo://readme", "name": "readme", "mimeType": null, "description": "the readme",
                 "title": "Read me", "size": 42, "_meta": {"x-owner": "docs"}},
                {"type": "unsupported", "kind": "video", "bytes": 123},
            ],
            "structuredContent": {"sum": 5},
            "warnings": ["cut a text"],
        })
    );

    let prompt = PromptResult {
        description: Some("a greeting".into()),
        messages: vec![PromptMessage {
            role: "user".into(),
            content: Content::Text { text: "Hello".into(), truncated: false, annotations: None, meta: None },
        }],
        warnings: vec![],
    };
    assert_eq!(
        to_json(&prompt),
        json!({
            "description": "a greeting",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hello", "truncated": false}}],
            "warnings": [],
        })
    );

    // A blob whose bytes a limit dropped has neither text nor data.
    let read = ResourceResult {
        contents: vec![ResourceContent {
            uri: "demo://big".into(),
            mime_type: Some("application/octet-stream".into()),
            text: None,
            data: None,
            truncated: true,
            meta: None,
        }],
        warnings: vec!["dropped the bytes".into()],
    };
    assert_eq!(
        to_json(&read),
        json!({
            "contents": [{"uri": "demo://big", "mimeType": "application/octet-stream", "truncated": true}],
            "warnings": ["dropped the bytes"],
        })
    );
}

#[test]
fn events_are_tagged_snake_case_with_rfc3339_times_and_millisecond_durations() {
    let state =
        Event::StateChanged { binding: "demo".into(), from: State::Ready, to: State::Reconnecting, at: at() };
    assert_eq!(
        to_json(&state),
        json!({"type": "state_changed", "binding": "demo", "from": "ready", "to": "reconnecting", "at": AT})
    );

    let lost = Event::ConnectionLost {
        binding: "demo".into(),
        class: FailureClass::TransportClosed,
        message: "eof".into(),
        adopted: 1,
        retrying: true,
        attempt: 0,
        retry_in: Some(Duration::from_micros(250_900)),
        at: at(),
    };
    assert_eq!(
        to_json(&lost),
        json!({
            "type": "connection_lost", "binding": "demo", "class": "transport_closed", "message": "eof",
            "adopted": 1, "retrying": true, "attempt": 0, "retryInMs": 250, "at": AT,
        })
    );

    let sampled = Event::SamplingResolved {
        binding: "demo".into(),
        depth: 1,
        outcome: SampleOutcome::OverBudget,
        class: Some(FailureClass::SamplingOverBudget),
        model: None,
        max_tokens: 100,
        message: Some("too many tokens".into()),
        duration: Duration::from_millis(1500),
        at: at(),
    };
    assert_eq!(
        to_json(&sampled),
        json!({
            "type": "sampling_resolved", "binding": "demo", "depth": 1, "outcome": "over_budget",
            "class": "sampling_over_budget", "model": null, "maxTokens": 100, "message": "too many tokens",
            "durationMs": 1500, "at": AT,
        })
    );

    let progress = Event::RequestProgress {
        progress: ProgressUpdate { binding: "demo".into(), progress: 2.0, total: Some(5.0), message: None },
        at: at(),
    };
    assert_eq!(
        to_json(&progress),
        json!({
            "type": "request_progress",
            "progress": {"binding": "demo", "progress": 2.0, "total": 5.0, "message": null},
            "at": AT,
        })
    );

    let stale = Event::CatalogStale { binding: "demo".into(), family: Family::Prompts, at: at() };
    assert_eq!(
        to_json(&stale),
        json!({"type": "catalog_stale", "binding": "demo", "family": "prompts", "at": AT})
    );

    let asked = Event::ElicitationRequested { binding: "demo".into(), mode: ElicitationMode::Url, at: at() };
    assert_eq!(
        to_json(&asked),
        json!({"type": "elicitation_requested", "binding": "demo", "mode": "url", "at": AT})
    );
}

#[test]
fn a_status_serializes_with_its_state_failure_and_times() {
    let status = Status {
        binding: "demo".into(),
        state: State::Degraded,
        protocol_version: "2025-06-18".into(),
        server: server(),
        transport_kind: "memory".into(),
        redacted_origin: "memory:demo".into(),
        failure: Some(Failure {
            class: FailureClass::CatalogInvalid,
            message: "bad page".into(),
            http_status: None,
        }),
        last_change: at(),
        reconnect_attempt: 0,
        dropped_events: 3,
        catalog_generation: 1,
        catalog_digest: "ab".into(),
        candidate_generation: 0,
        candidate_digest: String::new(),
        stale_families: vec!["tools".into()],
        compat_profile: "default/v1".into(),
        dropped_logs: 0,
        progress_routes: 2,
        dropped_progress: 1,
    };
    assert_eq!(
        to_json(&status),
        json!({
            "binding": "demo",
            "state": "degraded",
            "protocolVersion": "2025-06-18",
            "server": {"name": "demo", "version": "1.0", "title": ""},
            "transportKind": "memory",
            "redactedOrigin": "memory:demo",
            "failure": {"class": "catalog_invalid", "message": "bad page"},
            "lastChange": AT,
            "reconnectAttempt": 0,
            "droppedEvents": 3,
            "catalogGeneration": 1,
            "catalogDigest": "ab",
            "candidateGeneration": 0,
            "candidateDigest": "",
            "staleFamilies": ["tools"],
            "compatProfile": "default/v1",
            "droppedLogs": 0,
            "progressRoutes": 2,
            "droppedProgress": 1,
        })
    );

    let session = SessionInfo {
        protocol_version: "2024-11-05".into(),
        server: server(),
        capabilities: ServerCapabilities::default(),
        instructions: Some("be nice".into()),
        transport_tolerances: vec![Tolerance::LegacySse],
    };
    assert_eq!(
        to_json(&session),
        json!({
            "protocolVersion": "2024-11-05",
            "server": {"name": "demo", "version": "1.0", "title": ""},
            "capabilities": {},
            "instructions": "be nice",
            "transportTolerances": ["legacy_sse"],
        })
    );
}

#[test]
fn stable_ids_serialize_as_themselves() {
    for class in FailureClass::ALL {
        assert_eq!(to_json(class), json!(class.as_str()));
    }
    for tolerance in Tolerance::ALL {
        assert_eq!(to_json(tolerance), json!(tolerance.as_str()));
    }
    for family in Family::ALL {
        assert_eq!(to_json(family), json!(family.as_str()));
    }
    for state in [State::Configured, State::Authenticating, State::Closed] {
        assert_eq!(to_json(state), json!(state.as_str()));
    }
    assert_eq!(to_json(SampleOutcome::Completed), json!("completed"));
}

#[test]
fn an_error_report_holds_class_message_binding_and_op_never_the_source() {
    let e = Error::new(FailureClass::Deadline, "no reply within 5 s")
        .with_binding("files")
        .with_op("call_tool")
        .with_source(std::io::Error::other("token=s3cret"));
    let json = to_json(e.report());
    assert_eq!(
        json,
        json!({"class": "deadline", "message": "no reply within 5 s", "binding": "files", "op": "call_tool"})
    );
    assert!(!json.to_string().contains("s3cret"));

    let bare = Error::new(FailureClass::InvalidConfig, "bad");
    assert_eq!(
        to_json(bare.report()),
        json!({"class": "invalid_config", "message": "bad", "binding": null, "op": null})
    );
}
