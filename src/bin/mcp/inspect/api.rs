//! The page's JSON API over the command's [`Host`](mcp_stack::host::Host):
//! each route reads or calls through the same library calls as the other
//! commands, and answers the crate's serde form of what it got (the
//! documents of `--json`), or `{error}` with the failure's class.

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use mcp_stack::host::HostEvent;
use mcp_stack::{CallOpts, Error, Event, FailureClass, TaskStart};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::convert::Infallible;
use std::sync::Arc;
use tokio_stream::wrappers::{errors::BroadcastStreamRecvError, BroadcastStream};
use tokio_stream::StreamExt as _;

use super::{error_response, Body, Inspector, Params};

#[derive(Deserialize)]
pub(crate) struct ServerQuery {
    server: String,
}

/// `GET /api/servers`: each binding's status, tool count, capabilities
/// and instructions.
pub(crate) async fn servers(State(inspector): State<Arc<Inspector>>) -> Response {
    let catalog = inspector.host.catalog();
    let servers: Vec<Value> = inspector
        .host
        .status()
        .into_iter()
        .map(|status| {
            let adopted = catalog.catalog(&status.binding);
            let mut row = serde_json::to_value(&status).unwrap_or_default();
            if let Some(row) = row.as_object_mut() {
                row.insert("toolCount".into(), adopted.map_or(0, |c| c.tools.len()).into());
                row.insert("capabilities".into(), json!(adopted.map(|c| &c.capabilities)));
                row.insert("instructions".into(), json!(adopted.and_then(|c| c.instructions.as_deref())));
            }
            row
        })
        .collect();
    Json(json!({ "servers": servers })).into_response()
}

/// `GET /api/catalog?server=S`: S's adopted catalog.
pub(crate) async fn catalog(
    State(inspector): State<Arc<Inspector>>,
    Params(q): Params<ServerQuery>,
) -> Response {
    match inspector.host.catalog().catalog(&q.server) {
        Some(catalog) => Json(json!(**catalog)).into_response(),
        None => error_response(&Error::new(FailureClass::NotFound, "no adopted catalog for that server")),
    }
}

/// `GET /api/model-tools`: the tools as a model is offered them (a tool
/// for apps only is not among them).
pub(crate) async fn model_tools(State(inspector): State<Arc<Inspector>>) -> Response {
    let catalog = inspector.host.catalog();
    // Each catalog with its own tools: the binding is known without a
    // search per tool, and a name listed by two bindings is left out as
    // `HostCatalog::tools` leaves it out.
    let collisions: std::collections::HashSet<&str> = catalog.collisions().collect();
    let tools: Vec<Value> = catalog
        .catalogs()
        .iter()
        .flat_map(|c| c.tools.iter().map(move |t| (c.binding.as_str(), t)))
        .filter(|(_, t)| {
            t.visible_to_model() && !collisions.contains(t.model_name.to_ascii_lowercase().as_str())
        })
        .map(|(binding, t)| {
            json!({
                "modelName": t.model_name, "rawName": t.raw_name,
                "binding": binding, "description": t.description,
            })
        })
        .collect();
    Json(json!({ "tools": tools })).into_response()
}

#[derive(Deserialize)]
pub(crate) struct Call {
    server: String,
    tool: String,
    #[serde(default)]
    arguments: Option<Value>,
    /// Run it as a task, where the server offers that for the tool.
    #[serde(default)]
    task: bool,
}

/// `POST /api/call`: calls a tool as the person (the page), by its raw
/// name on one server; with `task`, as a task: `{task: TaskInfo}` when the
/// server made one (follow it on the tasks view), else its result.
pub(crate) async fn call(State(inspector): State<Arc<Inspector>>, Body(call): Body<Call>) -> Response {
    let run = async {
        let binding = inspector.binding(&call.server)?;
        let arguments = object(call.arguments)?;
        // The page's forms come from the catalog: a name it does not list
        // is refused before anything is sent.
        if binding.catalog().tool(&call.tool).is_none() {
            return Err(Error::new(FailureClass::NotFound, "the server's catalog lists no such tool")
                .with_binding(&call.server));
        }
        if !call.task {
            return binding
                .call_tool(&call.tool, Value::Object(arguments), CallOpts::default())
                .await
                .map(|r| json!(r));
        }
        match binding.call_tool_task(&call.tool, Value::Object(arguments), None, CallOpts::default()).await? {
            TaskStart::Done(result) => Ok(json!(result)),
            TaskStart::Task(handle) => Ok(json!({ "task": handle.latest() })),
        }
    };
    answer(run.await)
}

#[derive(Deserialize)]
pub(crate) struct GetPrompt {
    server: String,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// `POST /api/prompt`.
pub(crate) async fn prompt(State(inspector): State<Arc<Inspector>>, Body(get): Body<GetPrompt>) -> Response {
    let run = async {
        let binding = inspector.binding(&get.server)?;
        binding.get_prompt(&get.name, object(get.arguments)?, CallOpts::default()).await
    };
    answer(run.await.map(|r| json!(r)))
}

/// `GET /api/prompts?server=S`.
pub(crate) async fn prompts(
    State(inspector): State<Arc<Inspector>>,
    Params(q): Params<ServerQuery>,
) -> Response {
    let run = async {
        let binding = inspector.binding(&q.server)?;
        if binding.catalog().capabilities.prompts.is_none() {
            return Ok(json!({ "prompts": [], "warnings": [] }));
        }
        let listing = binding.list_prompts().await?;
        Ok(json!({ "prompts": listing.items, "warnings": listing.warnings }))
    };
    answer(run.await)
}

/// `GET /api/resources?server=S`: resources and templates.
pub(crate) async fn resources(
    State(inspector): State<Arc<Inspector>>,
    Params(q): Params<ServerQuery>,
) -> Response {
    let run = async {
        let binding = inspector.binding(&q.server)?;
        if binding.catalog().capabilities.resources.is_none() {
            return Ok(json!({ "resources": [], "resourceTemplates": [], "warnings": [] }));
        }
        let resources = binding.list_resources().await?;
        let templates = binding.list_resource_templates().await?;
        let warnings: Vec<&String> = resources.warnings.iter().chain(&templates.warnings).collect();
        Ok(
            json!({ "resources": resources.items, "resourceTemplates": templates.items, "warnings": warnings }),
        )
    };
    answer(run.await)
}

#[derive(Deserialize)]
pub(crate) struct Read {
    server: String,
    uri: String,
}

/// `POST /api/read`.
pub(crate) async fn read(State(inspector): State<Arc<Inspector>>, Body(read): Body<Read>) -> Response {
    let run = async { inspector.binding(&read.server)?.read_resource(&read.uri, CallOpts::default()).await };
    answer(run.await.map(|r| json!(r)))
}

/// `GET /api/tasks?server=S`.
pub(crate) async fn tasks(
    State(inspector): State<Arc<Inspector>>,
    Params(q): Params<ServerQuery>,
) -> Response {
    let run = async {
        let listing = inspector.binding(&q.server)?.list_tasks().await?;
        Ok(json!({ "tasks": listing.items, "warnings": listing.warnings }))
    };
    answer(run.await)
}

#[derive(Deserialize)]
pub(crate) struct TaskRef {
    server: String,
    id: String,
}

/// `POST /api/tasks/status`.
pub(crate) async fn task_status(State(inspector): State<Arc<Inspector>>, Body(t): Body<TaskRef>) -> Response {
    let run = async { inspector.binding(&t.server)?.task(&t.id).status(CallOpts::default()).await };
    answer(run.await.map(|info| json!({ "task": info })))
}

/// `POST /api/tasks/result`: waits for the task's result (within the
/// request deadline).
pub(crate) async fn task_result(State(inspector): State<Arc<Inspector>>, Body(t): Body<TaskRef>) -> Response {
    let run = async { inspector.binding(&t.server)?.task(&t.id).result(CallOpts::default()).await };
    answer(run.await.map(|r| json!(r)))
}

/// `POST /api/tasks/cancel`.
pub(crate) async fn task_cancel(State(inspector): State<Arc<Inspector>>, Body(t): Body<TaskRef>) -> Response {
    let run = async { inspector.binding(&t.server)?.task(&t.id).cancel().await };
    answer(run.await.map(|info| json!({ "task": info })))
}

#[derive(Deserialize)]
pub(crate) struct Answer {
    id: u64,
    action: String,
    #[serde(default)]
    content: Option<Value>,
}

/// `POST /api/elicitations/answer`.
pub(crate) async fn elicitation_answer(
    State(inspector): State<Arc<Inspector>>,
    Body(a): Body<Answer>,
) -> Response {
    answer(inspector.hub.answer(a.id, &a.action, a.content).map(|()| json!({})))
}

/// `GET /api/stream`: the hub's entries as Server-Sent Events.
pub(crate) async fn stream(State(inspector): State<Arc<Inspector>>) -> Response {
    let (waiting, rx) = inspector.hub.subscribe();
    let first = tokio_stream::iter(waiting);
    let live = BroadcastStream::new(rx).map(|item| match item {
        Ok(entry) => entry,
        Err(BroadcastStreamRecvError::Lagged(count)) => {
            json!({ "type": "missed", "count": count }).to_string().into()
        }
    });
    let events = first.chain(live).map(|entry| Ok::<_, Infallible>(SseEvent::default().data(&*entry)));
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
}

/// Copies the host's events onto the stream until the host is gone, and
/// tells each rendered app when its server's catalog changed.
pub(crate) async fn forward_events(inspector: Arc<Inspector>) {
    let mut events = inspector.host.events();
    while let Some(event) = events.recv().await {
        let entry = match &event {
            HostEvent::Binding(e) => {
                if let Event::CatalogAdopted { binding, previous, .. } = e {
                    if *previous > 0 {
                        inspector.apps.catalog_changed(&inspector.hub, binding);
                    }
                }
                // The crate's serde form: `type` names the event, and
                // every text in it was scrubbed and bounded when it was made.
                serde_json::to_value(e).unwrap_or_default()
            }
            other => {
                let text = format!("{other:?}");
                let kind: String = text.chars().take_while(|c| c.is_alphanumeric()).collect();
                let text = super::hub::cut(&text, super::tap::MAX_SHOWN_BYTES);
                json!({ "type": kind, "text": mcp_stack::redact::scrub(text) })
            }
        };
        let binding = entry.get("binding").cloned().unwrap_or(Value::Null);
        inspector.hub.publish(json!({ "type": "event", "binding": binding, "event": entry }));
    }
}

/// The arguments of a call: an object, or nothing.
fn object(arguments: Option<Value>) -> Result<Map<String, Value>, Error> {
    match arguments {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(Error::new(FailureClass::InvalidArguments, "arguments is not an object")),
    }
}

fn answer(result: Result<Value, Error>) -> Response {
    match result {
        Ok(document) => Json(document).into_response(),
        Err(e) => error_response(&e),
    }
}
