//! Response caching (SEP-2549) through real bindings to scripted
//! 2026-07-28 servers, with the paused clock: a fresh list served without
//! a request, fetched again after its TTL, after a change notification and
//! when the host asks for a fresh catalog; a reconnect whose lists are
//! still fresh lists nothing; public lists shared by two bindings to one
//! server, private ones never.

use mcp_stack::cache::{Caching, MemoryCache};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, ProtocolChoice};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::modern::{server_per_connection, Seen};

const TTL_MS: u64 = 60_000;

fn discover(list_changed: bool) -> Value {
    json!({ "result": {
        "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": { "listChanged": list_changed }, "resources": {} },
        "serverInfo": { "name": "cached", "version": "1.0" }
    }})
}

/// A server whose lists say they are fresh for [`TTL_MS`] in `scope`;
/// after each `tools/list` it lists one more tool. Connection 0 goes away
/// on its first `tools/call` when `die_once`.
fn cached_server(
    scope: &'static str,
    list_changed: bool,
    die_once: bool,
) -> (Arc<mcp_stack::transport::memory::MemoryFactory>, Seen) {
    let listed = Arc::new(AtomicUsize::new(0));
    let (factory, seen) = server_per_connection(move |connection, method, _| match method {
        "server/discover" => Some(discover(list_changed)),
        "tools/list" => {
            let n = listed.fetch_add(1, Ordering::SeqCst) + 1;
            let tools: Vec<Value> = (0..n)
                .map(|i| json!({ "name": format!("t{i}"), "inputSchema": { "type": "object" } }))
                .collect();
            Some(json!({ "result": { "tools": tools, "ttlMs": TTL_MS, "cacheScope": scope } }))
        }
        "resources/list" => {
            Some(json!({ "result": { "resources": [], "ttlMs": TTL_MS, "cacheScope": scope } }))
        }
        "resources/templates/list" => {
            Some(json!({ "result": { "resourceTemplates": [], "ttlMs": TTL_MS, "cacheScope": scope } }))
        }
        "tools/call" if die_once && connection == 0 => Some(json!({ "die": true })),
        "tools/call" => Some(json!({ "result": { "content": [] } })),
        "subscriptions/listen" => Some(json!({ "notify": [
            { "method": "notifications/subscriptions/acknowledged",
              "params": { "notifications": { "toolsListChanged": true } } },
            { "method": "notifications/tools/list_changed", "params": {}, "_afterMs": 10_000 }
        ]})),
        _ => Some(json!({ "result": {} })),
    });
    (Arc::new(factory), seen)
}

fn definition(factory: Arc<mcp_stack::transport::memory::MemoryFactory>, caching: Caching) -> Definition {
    let mut definition = Definition::with_factory("cached", factory);
    definition = definition.with_protocol(ProtocolChoice::Modern);
    definition = definition.with_caching(caching);
    definition
}

/// A shared cache of the test's own, so that tests do not meet in the
/// process-wide one.
fn own_cache() -> Caching {
    Caching::default().with_shared(Arc::new(MemoryCache::default()))
}

#[tokio::test(start_paused = true)]
async fn a_fresh_list_is_served_without_a_request_and_fetched_again_after_its_ttl() {
    let (factory, seen) = cached_server("private", false, false);
    let binding = Binding::connect(definition(factory, own_cache()), Handlers::default()).await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 1, "discovery listed the tools");
    tokio::time::advance(Duration::from_millis(TTL_MS - 1)).await;
    let listed = binding.list_tools().await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(seen.requests("tools/list").len(), 1, "fresh: served from the cache");
    tokio::time::advance(Duration::from_millis(1)).await;
    let listed = binding.list_tools().await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 2, "stale after its TTL: asked again");
    assert_eq!(listed.items.len(), 2, "and the new list is what the host gets");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_change_notification_makes_the_catalog_list_again_within_the_ttl() {
    let (factory, seen) = cached_server("public", true, false);
    let binding = Binding::connect(definition(factory, own_cache()), Handlers::default()).await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 1);
    // The list_changed comes 10 s in, well within the 60 s TTL.
    let mut waited = 0;
    while binding.candidate().is_none() {
        assert!(waited < 200, "no candidate after the list_changed");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(seen.requests("tools/list").len(), 2, "the cached page was not served after the change");
    assert!(binding.candidate().unwrap().tool("t1").is_some());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn refreshing_the_catalog_asks_the_server_even_when_its_lists_are_fresh() {
    let (factory, seen) = cached_server("public", false, false);
    let binding = Binding::connect(definition(factory, own_cache()), Handlers::default()).await.unwrap();
    binding.refresh_catalog().await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 2);
    assert!(binding.candidate().unwrap().tool("t1").is_some());
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn reconnecting_to_a_server_whose_lists_are_fresh_does_not_list_them_again() {
    let (factory, seen) = cached_server("private", false, true);
    let binding = Binding::connect(definition(factory, own_cache()), Handlers::default()).await.unwrap();
    let mut events = binding.events();
    binding.call_tool("t0", json!({}), CallOpts::default()).await.unwrap_err();
    let restored = tokio::time::timeout(Duration::from_secs(60), async {
        use tokio_stream::StreamExt as _;
        while let Some(item) = events.next().await {
            if let mcp_stack::EventItem::Event(mcp_stack::Event::ConnectionRestored { generation, .. }) = item
            {
                return generation;
            }
        }
        panic!("the event stream ended");
    })
    .await
    .expect("the connection was restored");
    assert_eq!(seen.requests("server/discover").len(), 2, "a second connection");
    assert_eq!(seen.requests("tools/list").len(), 1, "the fresh list came from the cache");
    assert_eq!(restored, binding.catalog().generation, "the offering is unchanged");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn public_lists_are_shared_by_bindings_to_one_server_and_private_ones_are_not() {
    for (scope, lists) in [("public", 1), ("private", 2)] {
        let (factory, seen) = cached_server(scope, false, false);
        let caching = own_cache();
        let first = Binding::connect(definition(factory.clone(), caching.clone()), Handlers::default())
            .await
            .unwrap();
        let second = Binding::connect(definition(factory, caching), Handlers::default()).await.unwrap();
        assert_eq!(seen.requests("tools/list").len(), lists, "{scope}");
        assert_eq!(seen.requests("resources/list").len(), lists, "{scope}");
        // The server lists one more tool each time it is asked: shared,
        // both bindings have the first list.
        assert_eq!(first.catalog().digest == second.catalog().digest, scope == "public");
        first.close().await;
        second.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn with_caching_off_every_list_goes_to_the_server() {
    let (factory, seen) = cached_server("public", false, false);
    let binding = Binding::connect(definition(factory, Caching::off()), Handlers::default()).await.unwrap();
    binding.list_tools().await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 2);
    binding.close().await;
}
