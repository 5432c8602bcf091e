//! Issue 44, item 1: `Host::search_tools` over the merged catalog: it
//! follows the catalog's generations (a changed server re-indexed, a
//! removed one gone at once), never returns what a model may not be
//! offered, takes a host's own ranker, and bounds hostile input.

use crate::support::tool_server::ToolServer;
use mcp_stack::catalog::RefreshOutcome;
use mcp_stack::host::Host;
use mcp_stack::search::{Hit, ToolDocument, ToolRanker};
use mcp_stack::Definition;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

fn tool(name: &str, description: &str) -> Value {
    json!({ "name": name, "description": description, "inputSchema": { "type": "object" } })
}

fn models(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.model_name.as_str()).collect()
}

async fn host_with(servers: Vec<(&str, ToolServer)>) -> Host {
    let host = Host::new();
    let definitions = servers.iter().map(|(name, server)| Definition::new(*name, server.factory("search")));
    assert!(host.add_all(definitions.collect::<Vec<_>>()).await.is_empty());
    host
}

#[tokio::test]
async fn search_follows_adopted_generations_and_removals() {
    let repos = ToolServer::with_tools(vec![
        tool("star_repository", "Stars a repository for the authenticated user"),
        tool("list_issues", "Lists the issues of a repository"),
    ]);
    let mail = ToolServer::with_tools(vec![tool("send_email", "Sends an email message to recipients")]);
    let host = host_with(vec![("repos", repos.clone()), ("mail", mail.clone())]).await;

    let hits = host.search_tools("star a repository", 5);
    assert_eq!(hits[0].model_name, "mcp__repos__star_repository", "{hits:?}");
    assert_eq!((hits[0].server.as_str(), hits[0].name.as_str()), ("repos", "star_repository"));
    assert!(hits[0].score > 0.0 && !hits[0].why().is_empty());
    assert_eq!(models(&host.search_tools("send an email", 1)), ["mcp__mail__send_email"]);

    // A snapshot answers alike, without the host's index.
    let snapshot = host.catalog();
    assert_eq!(models(&snapshot.search_tools("star a repository", 1)), ["mcp__repos__star_repository"]);

    // The server's tools change: the candidate is not searched until adopted.
    repos.set_tools(vec![
        tool("create_pull_request", "Opens a pull request"),
        tool("list_issues", "Lists issues"),
    ]);
    let binding = host.binding("repos").unwrap();
    let RefreshOutcome::Candidate(candidate) = binding.refresh_catalog().await.unwrap() else {
        panic!("the offering changed")
    };
    assert!(models(&host.search_tools("star a repository", 5)).contains(&"mcp__repos__star_repository"));
    host.adopt("repos", candidate.generation).unwrap();
    let after = host.search_tools("star a repository", 5);
    assert!(!models(&after).contains(&"mcp__repos__star_repository"), "{after:?}");
    assert_eq!(models(&host.search_tools("open a pull request", 1)), ["mcp__repos__create_pull_request"]);

    // A removed server's tools are gone from the next search.
    assert!(host.remove("mail").await);
    assert!(host.search_tools("send an email", 5).iter().all(|h| h.server != "mail"));
    host.close().await;
}

#[tokio::test]
async fn app_only_tools_and_colliding_names_are_never_hits() {
    let apps = ToolServer::with_tools(vec![
        json!({ "name": "refresh_dashboard", "description": "Refreshes the dashboard", "inputSchema": { "type": "object" },
                "_meta": { "ui": { "resourceUri": "ui://d/app.html", "visibility": ["app"] } } }),
        tool("show_dashboard", "Shows the dashboard"),
    ]);
    let host = host_with(vec![("apps", apps)]).await;
    let hits = host.search_tools("refresh the dashboard", 10);
    assert!(!models(&hits).contains(&"mcp__apps__refresh_dashboard"), "{hits:?}");
    assert!(models(&hits).contains(&"mcp__apps__show_dashboard"), "{hits:?}");
    host.close().await;
}

/// A ranker of the host's own, recording what it is fed: one server's tools
/// at a time, and only when that server's catalog changed.
#[derive(Debug, Default, Clone)]
struct Recording {
    fed: Arc<Mutex<Vec<(String, usize)>>>,
    removed: Arc<Mutex<Vec<String>>>,
    tools: Arc<Mutex<Vec<ToolDocument>>>,
}

impl ToolRanker for Recording {
    fn replace_server(&mut self, server: &str, tools: Vec<ToolDocument>) {
        self.fed.lock().unwrap().push((server.to_string(), tools.len()));
        let mut all = self.tools.lock().unwrap();
        all.retain(|t| t.server != server);
        all.extend(tools);
    }

    fn remove_server(&mut self, server: &str) -> bool {
        self.removed.lock().unwrap().push(server.to_string());
        let mut all = self.tools.lock().unwrap();
        let before = all.len();
        all.retain(|t| t.server != server);
        before != all.len()
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        // Exact name match only: enough to see what the host routes here.
        self.tools
            .lock()
            .unwrap()
            .iter()
            .filter(|t| t.name == query)
            .take(k)
            .map(|t| Hit {
                server: t.server.clone(),
                name: t.name.clone(),
                model_name: t.model_name.clone(),
                score: 1.0,
                matched: Vec::new(),
                server_named: false,
            })
            .collect()
    }

    fn len(&self) -> usize {
        self.tools.lock().unwrap().len()
    }
}

#[tokio::test]
async fn a_hosts_own_ranker_is_fed_per_server_and_only_what_changed() {
    let ranker = Recording::default();
    let host = Host::builder().tool_ranker(ranker.clone()).build();
    let a = ToolServer::named(&["alpha", "beta"]);
    let b = ToolServer::named(&["gamma"]);
    let added =
        host.add_all([Definition::new("a", a.factory("a")), Definition::new("b", b.factory("b"))]).await;
    assert!(added.is_empty());
    assert_eq!(models(&host.search_tools("gamma", 3)), ["mcp__b__gamma"]);
    let mut fed = ranker.fed.lock().unwrap().clone();
    fed.sort();
    assert_eq!(fed, [("a".to_string(), 2), ("b".to_string(), 1)]);
    // Nothing changed: nothing is fed again.
    host.search_tools("alpha", 3);
    assert_eq!(ranker.fed.lock().unwrap().len(), 2);
    // One server changes: only it is fed.
    b.set(&["gamma", "delta"]);
    let binding = host.binding("b").unwrap();
    let RefreshOutcome::Candidate(c) = binding.refresh_catalog().await.unwrap() else { panic!("changed") };
    host.adopt("b", c.generation).unwrap();
    assert_eq!(models(&host.search_tools("delta", 3)), ["mcp__b__delta"]);
    assert_eq!(ranker.fed.lock().unwrap().last().unwrap(), &("b".to_string(), 2));
    assert_eq!(ranker.fed.lock().unwrap().len(), 3);
    assert!(host.remove("a").await);
    assert!(host.search_tools("alpha", 3).is_empty());
    assert_eq!(*ranker.removed.lock().unwrap(), ["a"]);
    host.close().await;
}

#[tokio::test]
async fn hostile_queries_and_tools_are_bounded() {
    let huge = "x".repeat(1 << 20);
    let escapes = format!("\u{1b}[31m{}\u{1b}[0m", "hint ".repeat(200_000));
    let server = ToolServer::with_tools(vec![
        json!({ "name": "big", "description": huge.clone(), "inputSchema": { "type": "object" },
                "_meta": { "anthropic/searchHint": escapes } }),
        tool("get_item", "Gets an item"),
        tool("get-item", "Gets an item too"),
        tool("getItem", "Gets an item as well"),
    ]);
    let host = host_with(vec![("hostile", server)]).await;
    assert!(host.search_tools("", 10).is_empty(), "an empty query finds nothing");
    assert!(host.search_tools("   \t ", 10).is_empty());
    let started = std::time::Instant::now();
    let hits = host.search_tools(&huge, 10);
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "a 1 MB query is cut, not read whole");
    assert!(hits.len() <= 10);
    assert_eq!(host.search_tools("get item", 0).len(), 0, "k = 0: nothing");
    assert!(host.search_tools("get item", 1_000_000).len() <= 100, "k is bounded");
    // Names that collide after splitting are three hits, each its own.
    let hits = host.search_tools("get item", 10);
    let mut names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["get-item", "getItem", "get_item"]);
    for hit in &hits {
        assert!(!hit.why().contains('\u{1b}'), "no escape reaches an explanation: {}", hit.why());
    }
    host.close().await;
}
