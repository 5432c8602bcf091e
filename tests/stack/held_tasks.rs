//! The receiver side of 2025-11-25 tasks: a server asks the client to run
//! its `elicitation/create` as a task. With tasks allowed, `initialize`
//! declares which requests the client runs as tasks; a task-augmented
//! request is answered at once with a task, served by the same handler, and
//! the server's `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel` reach it; the client holds at most 64 at once.

use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
use mcp_stack::{AllowedCapabilities, Binding, Definition};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

use crate::support::scripted::{id_of, initialize_result, scripted_all, Recorder, Wire};

/// A legacy server that keeps its wire for the test to send requests on.
fn server() -> (mcp_stack::transport::memory::MemoryFactory, Recorder, Arc<Mutex<Option<Wire>>>) {
    let slot: Arc<Mutex<Option<Wire>>> = Arc::default();
    let keep = slot.clone();
    let (factory, rec) = scripted_all(move |wire, req| match req.method.as_str() {
        "initialize" => {
            *keep.lock().unwrap() = Some(wire.clone());
            wire.reply(&id_of(req), initialize_result());
        }
        "server/discover" => wire.refuse_discover(req),
        "tools/list" => wire.reply(&id_of(req), json!({ "tools": [] })),
        _ => {}
    });
    (factory, rec, slot)
}

fn elicit(id: u64, task: bool) -> String {
    let mut params = json!({
        "mode": "form", "message": "Your name?",
        "requestedSchema": { "type": "object", "properties": { "name": { "type": "string", "default": "Ada" } } }
    });
    if task {
        params["task"] = json!({ "ttl": 60_000 });
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params }).to_string()
}

fn ask(id: u64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

#[tokio::test(start_paused = true)]
async fn a_task_augmented_elicitation_runs_as_a_task_the_server_can_follow() {
    let (factory, rec, slot) = server();
    let mut definition = Definition::new("held", factory);
    definition =
        definition.with_capabilities(AllowedCapabilities::default().with_elicitation(true).with_tasks(true));
    // The person answers when the test says so.
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let gate = release.clone();
    let handlers = Handlers::default().elicitation(move |req: ElicitRequest| {
        let gate = gate.clone();
        async move {
            gate.acquire().await.unwrap().forget();
            Ok(ElicitResult::accept(req.defaults()))
        }
    });
    let binding = Binding::connect(definition, handlers).await.unwrap();
    let declared = &rec.find("initialize")[0]["params"]["capabilities"]["tasks"];
    assert_eq!(
        declared,
        &json!({ "list": {}, "cancel": {}, "requests": { "elicitation": { "create": {} } } })
    );
    let wire = slot.lock().unwrap().clone().unwrap();

    wire.raw(elicit(1, true));
    let created = rec.reply_to(1).await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60_000);
    let id = task["taskId"].as_str().unwrap().to_string();

    wire.raw(ask(2, "tasks/get", json!({ "taskId": id })));
    assert_eq!(rec.reply_to(2).await["result"]["status"], "working");
    wire.raw(ask(3, "tasks/list", json!({})));
    assert_eq!(rec.reply_to(3).await["result"]["tasks"][0]["taskId"], id.as_str());

    // tasks/result waits for the person.
    wire.raw(ask(4, "tasks/result", json!({ "taskId": id })));
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert!(rec.seen.lock().unwrap().iter().all(|m| m["id"] != 4), "tasks/result waits");
    release.add_permits(1);
    let result = rec.reply_to(4).await;
    assert_eq!(result["result"]["action"], "accept", "{result}");
    assert_eq!(result["result"]["content"]["name"], "Ada");
    assert_eq!(result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id.as_str());
    wire.raw(ask(5, "tasks/get", json!({ "taskId": id })));
    assert_eq!(rec.reply_to(5).await["result"]["status"], "completed");
    wire.raw(ask(6, "tasks/cancel", json!({ "taskId": id })));
    assert_eq!(rec.reply_to(6).await["error"]["code"], -32602, "an ended task is not cancelled");

    // Cancelled while the person has not answered.
    wire.raw(elicit(7, true));
    let other = rec.reply_to(7).await["result"]["task"]["taskId"].as_str().unwrap().to_string();
    wire.raw(ask(8, "tasks/cancel", json!({ "taskId": other })));
    assert_eq!(rec.reply_to(8).await["result"]["status"], "cancelled");
    wire.raw(ask(9, "tasks/result", json!({ "taskId": other })));
    assert!(rec.reply_to(9).await.get("error").is_some());
    wire.raw(ask(10, "tasks/get", json!({ "taskId": "never-given" })));
    assert_eq!(rec.reply_to(10).await["error"]["code"], -32602);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn the_client_holds_at_most_64_tasks_and_declares_none_unless_allowed() {
    let (factory, rec, slot) = server();
    let mut definition = Definition::new("held", factory);
    definition =
        definition.with_capabilities(AllowedCapabilities::default().with_elicitation(true).with_tasks(true));
    // Never answers: every task stays working.
    let handlers = Handlers::default().elicitation(|_req: ElicitRequest| async move {
        std::future::pending::<()>().await;
        Ok(ElicitResult::decline())
    });
    let binding = Binding::connect(definition, handlers).await.unwrap();
    let wire = slot.lock().unwrap().clone().unwrap();
    // One after the other: the connection bounds the server's requests in
    // flight at once on its own.
    for id in 100..164 {
        wire.raw(elicit(id, true));
        let reply = rec.reply_to(id).await;
        assert!(reply["result"]["task"].is_object(), "task {id}: {reply}");
    }
    wire.raw(elicit(164, true));
    let refused = rec.reply_to(164).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    binding.close().await;

    // Not allowed: nothing declared, and the request is served as itself.
    let (factory, rec, slot) = server();
    let mut definition = Definition::new("plain", factory);
    definition = definition.with_capabilities(AllowedCapabilities::default().with_elicitation(true));
    let handlers = Handlers::default()
        .elicitation(|req: ElicitRequest| async move { Ok(ElicitResult::accept(req.defaults())) });
    let binding = Binding::connect(definition, handlers).await.unwrap();
    assert!(rec.find("initialize")[0]["params"]["capabilities"].get("tasks").is_none());
    slot.lock().unwrap().clone().unwrap().raw(elicit(1, true));
    assert_eq!(rec.reply_to(1).await["result"]["action"], "accept");
    binding.close().await;
}
