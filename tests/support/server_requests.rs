//! Requests a 2026-07-28 server sends on its own, which the client must
//! neither serve nor answer: what the scripted servers send, handlers that
//! record whether they were asked, and the check of what the client did.

use mcp_stack::handlers::ElicitResult;
use mcp_stack::protocol::Root;
use mcp_stack::{handlers::Handlers, AllowedCapabilities, Definition, Event};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use super::recorded_events::Events;

/// How many requests [`server_requests`] are (and
/// `tests/fixtures/modern_asking_server.sh` sends).
pub const ASKED: usize = 21;
/// The warnings they give: for the 1st, 2nd, 4th, 8th and 16th.
pub const ASKED_WARNINGS: usize = ASKED.ilog2() as usize + 1;

/// An elicitation (a password prompt), `roots/list` and `ping`, each with
/// an id of the server's: [`ASKED`] requests.
pub fn server_requests() -> Vec<Value> {
    let mut requests = Vec::new();
    for i in 0..10 {
        requests.push(json!({ "jsonrpc": "2.0", "id": format!("e{i}"), "method": "elicitation/create",
            "params": { "mode": "form", "message": "Your password?", "requestedSchema": { "type": "object",
            "properties": { "password": { "type": "string" } } } } }));
        requests.push(json!({ "jsonrpc": "2.0", "id": format!("r{i}"), "method": "roots/list" }));
    }
    requests.push(json!({ "jsonrpc": "2.0", "id": "p", "method": "ping" }));
    requests
}

/// What a host's handlers were asked, to show they never were.
#[derive(Clone, Default)]
pub struct Asked(Arc<Mutex<Vec<&'static str>>>);

impl Asked {
    /// Elicitation and roots handlers that record each call and would give
    /// the server what it asks, recording events into `events`; `definition`
    /// is made to allow both.
    pub fn handlers(&self, events: &Events, definition: &mut Definition) -> Handlers {
        *definition = definition
            .clone()
            .with_capabilities(AllowedCapabilities::default().with_elicitation(true).with_roots(true));
        let (elicited, listed) = (self.0.clone(), self.0.clone());
        events.install(
            Handlers::default()
                .elicitation(move |_req| {
                    elicited.lock().unwrap().push("elicitation");
                    let answer = json!({ "password": "hunter2" }).as_object().cloned().unwrap_or_default();
                    async { Ok(ElicitResult::accept(answer)) }
                })
                .roots(move |_| {
                    listed.lock().unwrap().push("roots");
                    async { Ok(vec![Root::new("file:///home/user/secret")]) }
                }),
        )
    }

    /// How many times a handler was asked.
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }

    /// Checks what a 2026-07-28 binding did with the [`ASKED`] requests: the
    /// warnings say they were dropped (waited for up to `within`), a bounded
    /// number of them; no handler was asked; and among `sent()` (every
    /// message the server got, read once the warnings came) is no response.
    pub async fn check_nothing_served(
        &self,
        events: &Events,
        within: Duration,
        sent: impl FnOnce() -> Vec<Value>,
    ) {
        let dropped = || {
            events.matching(|e| match e {
                Event::Warning { text, .. } if text.contains("unanswered") => Some(text.clone()),
                _ => None,
            })
        };
        // Until the last warning came, or a handler was asked.
        let last = format!("({} such requests dropped so far)", 1 << (ASKED_WARNINGS - 1));
        let deadline = Instant::now() + within;
        while !dropped().iter().any(|w| w.contains(&last)) && self.0.lock().unwrap().is_empty() {
            assert!(Instant::now() < deadline, "the dropped requests were never reported: {:?}", dropped());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let asked = self.0.lock().unwrap().clone();
        assert!(asked.is_empty(), "no handler was asked: {asked:?}");
        let responses: Vec<Value> = sent().into_iter().filter(|m| m.get("method").is_none()).collect();
        assert!(responses.is_empty(), "the client sent no JSON-RPC response: {responses:?}");
        let dropped = dropped();
        assert_eq!(
            dropped.len(),
            ASKED_WARNINGS,
            "{ASKED} requests, a bounded number of warnings: {dropped:?}"
        );
        assert!(
            dropped[0].contains("\"elicitation/create\"") && dropped[0].contains("2026-07-28"),
            "{dropped:?}"
        );
    }
}
