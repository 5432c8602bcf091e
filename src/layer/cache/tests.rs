//! The layer over a counting service, with the paused clock: what is kept,
//! for how long, where, and what a notification or a store failure does.

use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower::ServiceExt;

use super::*;
use crate::cache::{CacheBounds, Caching};
use crate::error::BoxError;
use crate::session::ServerIdentity;

/// Answers each request with `result`, counting the requests.
#[derive(Clone)]
struct Server {
    calls: Arc<AtomicUsize>,
    result: Arc<Mutex<Value>>,
}

impl Server {
    fn new(result: Value) -> Self {
        Server { calls: Arc::default(), result: Arc::new(Mutex::new(result)) }
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Service<McpRequest> for Server {
    type Response = McpResponse;
    type Error = Error;
    type Future = std::future::Ready<Result<McpResponse, Error>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: McpRequest) -> Self::Future {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let result = self.result.lock().unwrap().clone();
        std::future::ready(match result.get("fail") {
            Some(_) => Err(Error::new(crate::FailureClass::NotFound, "no such cursor")),
            None => Ok(McpResponse::new(result)),
        })
    }
}

fn session() -> SessionInfo {
    SessionInfo {
        protocol_version: "2026-07-28".into(),
        server: ServerIdentity { name: "s".into(), version: "1".into(), ..Default::default() },
        capabilities: Default::default(),
        instructions: None,
        transport_tolerances: Vec::new(),
    }
}

fn state(caching: &Caching, endpoint: Option<[u8; 32]>) -> Arc<CacheState> {
    let state = CacheState::new(caching, endpoint, &json!({}));
    state.set_session(&session());
    state
}

async fn send(svc: &ResponseCaching<Server>, method: &str, params: Value) -> Result<McpResponse, Error> {
    svc.clone().oneshot(McpRequest::with_value(method, params)).await
}

fn tools(ttl: Value, scope: &str) -> Value {
    json!({ "tools": [{ "name": "a", "inputSchema": { "type": "object" } }], "ttlMs": ttl, "cacheScope": scope })
}

#[tokio::test(start_paused = true)]
async fn a_list_is_served_from_the_cache_within_its_ttl_then_fetched_again() {
    let server = Server::new(tools(json!(5_000), "private"));
    let svc = CacheLayer::new(state(&Caching::default(), None)).layer(server.clone());
    let first = send(&svc, "tools/list", json!({})).await.unwrap();
    assert!(first.extensions.get::<FromCache>().is_none());
    tokio::time::advance(Duration::from_millis(4_999)).await;
    let second = send(&svc, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 1, "fresh: not asked again");
    assert!(second.extensions.get::<FromCache>().is_some());
    assert_eq!(second.result["tools"][0]["name"], "a");
    tokio::time::advance(Duration::from_millis(1)).await;
    send(&svc, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 2, "stale after its TTL");
}

#[tokio::test(start_paused = true)]
async fn no_ttl_zero_negative_or_fractional_is_never_kept() {
    for ttl in [Value::Null, json!(0), json!(-5), json!(1.5), json!("100")] {
        let server = Server::new(tools(ttl.clone(), "private"));
        let svc = CacheLayer::new(state(&Caching::default(), None)).layer(server.clone());
        send(&svc, "tools/list", json!({})).await.unwrap();
        send(&svc, "tools/list", json!({})).await.unwrap();
        assert_eq!(server.calls(), 2, "ttlMs {ttl} is no caching");
    }
}

#[tokio::test(start_paused = true)]
async fn each_page_and_each_uri_is_its_own_entry_and_meta_is_not_part_of_the_key() {
    let server = Server::new(json!({ "contents": [], "ttlMs": 60_000 }));
    let svc = CacheLayer::new(state(&Caching::default(), None)).layer(server.clone());
    send(&svc, "resources/read", json!({ "uri": "file:///a" })).await.unwrap();
    send(&svc, "resources/read", json!({ "uri": "file:///a", "_meta": { "x": 1 } })).await.unwrap();
    assert_eq!(server.calls(), 1);
    send(&svc, "resources/read", json!({ "uri": "file:///b" })).await.unwrap();
    send(&svc, "resources/list", json!({ "cursor": "2" })).await.unwrap();
    send(&svc, "resources/list", json!({})).await.unwrap();
    send(&svc, "resources/templates/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 5, "another uri, page or method is another entry");
}

#[tokio::test(start_paused = true)]
async fn a_change_notification_drops_its_family_and_an_update_its_resource() {
    let server = Server::new(json!({ "tools": [], "prompts": [], "contents": [], "ttlMs": 60_000 }));
    let state = state(&Caching::default(), None);
    let svc = CacheLayer::new(state.clone()).layer(server.clone());
    for (method, params) in [
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/read", json!({ "uri": "a" })),
        ("resources/read", json!({ "uri": "b" })),
    ] {
        send(&svc, method, params).await.unwrap();
    }
    state.list_changed(Family::Tools);
    state.resource_updated("a");
    send(&svc, "tools/list", json!({})).await.unwrap();
    send(&svc, "prompts/list", json!({})).await.unwrap();
    send(&svc, "resources/read", json!({ "uri": "a" })).await.unwrap();
    send(&svc, "resources/read", json!({ "uri": "b" })).await.unwrap();
    assert_eq!(server.calls(), 6, "tools and resource a again; prompts and b from the cache");
}

#[tokio::test(start_paused = true)]
async fn an_answer_fetched_while_a_change_arrived_is_not_kept() {
    let server = Server::new(json!({ "tools": [], "ttlMs": 60_000 }));
    let state = state(&Caching::default(), None);
    let svc = CacheLayer::new(state.clone()).layer(server.clone());
    let plan = state.plan(&McpRequest::with_value("tools/list", json!({}))).unwrap();
    state.list_changed(Family::Tools);
    state.keep(&plan, &McpResponse::new(json!({ "tools": [], "ttlMs": 60_000 }))).await;
    send(&svc, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 1, "the answer that raced the notification was not served");
}

#[tokio::test(start_paused = true)]
async fn results_given_input_or_carrying_input_are_never_kept() {
    let server = Server::new(json!({ "contents": [], "ttlMs": 60_000 }));
    let state = state(&Caching::default(), None);
    let svc = CacheLayer::new(state.clone()).layer(server.clone());
    let plan = state.plan(&McpRequest::with_value("resources/read", json!({ "uri": "a" }))).unwrap();
    let mut answered = McpResponse::new(json!({ "contents": [], "ttlMs": 60_000 }));
    answered.extensions.insert(InputGiven);
    state.keep(&plan, &answered).await;
    send(&svc, "resources/read", json!({ "uri": "a" })).await.unwrap();
    assert_eq!(server.calls(), 1, "the result reached with input was not kept");
    let round = json!({ "uri": "a", "requestState": "s", "inputResponses": {} });
    send(&svc, "resources/read", round.clone()).await.unwrap();
    send(&svc, "resources/read", round).await.unwrap();
    assert_eq!(server.calls(), 3, "a request carrying input is never served from the cache");
}

#[tokio::test(start_paused = true)]
async fn other_methods_pass_through_untouched() {
    let server = Server::new(json!({ "content": [], "ttlMs": 60_000 }));
    let svc = CacheLayer::new(state(&Caching::default(), None)).layer(server.clone());
    for _ in 0..2 {
        send(&svc, "tools/call", json!({ "name": "a" })).await.unwrap();
        send(&svc, "prompts/get", json!({ "name": "a" })).await.unwrap();
    }
    assert_eq!(server.calls(), 4);
}

#[tokio::test(start_paused = true)]
async fn caching_off_asks_the_server_every_time() {
    let server = Server::new(tools(json!(60_000), "public"));
    let svc = CacheLayer::new(state(&Caching::off(), Some([1; 32]))).layer(server.clone());
    send(&svc, "tools/list", json!({})).await.unwrap();
    send(&svc, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 2);
}

#[tokio::test(start_paused = true)]
async fn public_results_are_shared_by_bindings_to_the_same_server_and_private_ones_never() {
    let shared: Arc<MemoryCache> = Arc::new(MemoryCache::new(CacheBounds::default()));
    let caching = Caching::default().with_shared(shared.clone());
    let server = Server::new(tools(json!(60_000), "public"));
    let a = CacheLayer::new(state(&caching, Some([7; 32]))).layer(server.clone());
    let b = CacheLayer::new(state(&caching, Some([7; 32]))).layer(server.clone());
    let elsewhere = CacheLayer::new(state(&caching, Some([8; 32]))).layer(server.clone());
    send(&a, "tools/list", json!({})).await.unwrap();
    assert_eq!(shared.len(), 1);
    let from_b = send(&b, "tools/list", json!({})).await.unwrap();
    assert!(from_b.extensions.get::<FromCache>().is_some());
    assert_eq!(server.calls(), 1, "b was served what a fetched");
    send(&elsewhere, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 2, "another endpoint is another server");

    *server.result.lock().unwrap() = tools(json!(60_000), "private");
    send(&a, "prompts/list", json!({})).await.unwrap();
    send(&b, "prompts/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 4, "private results stay with their binding");
    assert_eq!(shared.len(), 2, "the private ones never reached the shared cache");
    send(&a, "prompts/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 4, "but serve the binding that fetched them");
}

#[tokio::test(start_paused = true)]
async fn a_result_without_a_scope_is_private() {
    let shared: Arc<MemoryCache> = Arc::new(MemoryCache::new(CacheBounds::default()));
    let server = Server::new(json!({ "tools": [], "ttlMs": 60_000 }));
    let a = CacheLayer::new(state(&Caching::default().with_shared(shared.clone()), Some([7; 32])))
        .layer(server.clone());
    send(&a, "tools/list", json!({})).await.unwrap();
    assert!(shared.is_empty());
}

#[tokio::test(start_paused = true)]
async fn another_server_version_or_protocol_version_shares_nothing() {
    let shared: Arc<MemoryCache> = Arc::new(MemoryCache::new(CacheBounds::default()));
    let caching = Caching::default().with_shared(shared.clone());
    let server = Server::new(tools(json!(60_000), "public"));
    let a = CacheLayer::new(state(&caching, Some([7; 32]))).layer(server.clone());
    let upgraded = CacheState::new(&caching, Some([7; 32]), &json!({}));
    let mut newer = session();
    newer.server.version = "2".into();
    upgraded.set_session(&newer);
    let b = CacheLayer::new(upgraded).layer(server.clone());
    send(&a, "tools/list", json!({})).await.unwrap();
    send(&b, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 2);
}

/// A shared store that fails whatever it is asked while `down`, counting
/// invalidations.
#[derive(Default)]
struct Flaky {
    inner: MemoryCache,
    down: std::sync::atomic::AtomicBool,
    invalidations: AtomicUsize,
}

impl Flaky {
    fn check(&self) -> Result<(), BoxError> {
        match self.down.load(Ordering::SeqCst) {
            true => Err("store down".into()),
            false => Ok(()),
        }
    }
}

#[async_trait]
impl ResponseCache for Flaky {
    async fn get(&self, key: &CacheKey) -> Result<Option<Vec<u8>>, BoxError> {
        self.check()?;
        Ok(self.inner.lookup(key))
    }
    async fn put(&self, key: &CacheKey, body: Vec<u8>, ttl: Duration) -> Result<(), BoxError> {
        self.check()?;
        self.inner.store(key, body, ttl);
        Ok(())
    }
    async fn invalidate(&self, group: &CacheGroup) -> Result<(), BoxError> {
        self.check()?;
        self.invalidations.fetch_add(1, Ordering::SeqCst);
        self.inner.drop_group(group);
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_shared_store_is_a_miss_and_a_pending_invalidation_keeps_it_out_until_made() {
    let flaky = Arc::new(Flaky::default());
    let caching = Caching::default().with_shared(flaky.clone());
    let server = Server::new(tools(json!(60_000), "public"));
    let a_state = state(&caching, Some([7; 32]));
    let a = CacheLayer::new(a_state.clone()).layer(server.clone());
    let b = CacheLayer::new(state(&caching, Some([7; 32]))).layer(server.clone());
    send(&a, "tools/list", json!({})).await.unwrap();
    assert_eq!(flaky.inner.len(), 1);

    flaky.down.store(true, Ordering::SeqCst);
    a_state.list_changed(Family::Tools);
    send(&a, "tools/list", json!({})).await.expect("a store that fails never fails the request");
    assert_eq!(server.calls(), 2);
    flaky.down.store(false, Ordering::SeqCst);
    // b never heard of the change, and the store still has the old page:
    // it serves it. a does not, and its next request makes the
    // invalidation, which b then sees.
    send(&b, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 2);
    send(&a, "tools/list", json!({})).await.unwrap();
    assert_eq!(flaky.invalidations.load(Ordering::SeqCst), 1);
    assert_eq!(server.calls(), 3, "a fetched after invalidating");
    send(&b, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 3, "b is served a's new page");
}

#[tokio::test(start_paused = true)]
async fn a_refused_cursor_drops_the_whole_list() {
    let server = Server::new(tools(json!(60_000), "private"));
    let state = state(&Caching::default(), None);
    let svc = CacheLayer::new(state.clone()).layer(server.clone());
    send(&svc, "tools/list", json!({})).await.unwrap();
    *server.result.lock().unwrap() = json!({ "fail": true });
    send(&svc, "tools/list", json!({ "cursor": "old" })).await.unwrap_err();
    *server.result.lock().unwrap() = tools(json!(60_000), "private");
    send(&svc, "tools/list", json!({})).await.unwrap();
    assert_eq!(server.calls(), 3, "the first page was dropped with the cursor");
}

#[tokio::test(start_paused = true)]
async fn what_a_store_returns_that_is_not_a_result_object_is_a_miss() {
    let shared: Arc<MemoryCache> = Arc::new(MemoryCache::new(CacheBounds::default()));
    let caching = Caching::default().with_shared(shared.clone());
    let server = Server::new(tools(json!(60_000), "public"));
    let state = state(&caching, Some([7; 32]));
    let svc = CacheLayer::new(state.clone()).layer(server.clone());
    let plan = state.plan(&McpRequest::with_value("tools/list", json!({}))).unwrap();
    shared.store(&plan.key, b"[1, 2]".to_vec(), Duration::from_secs(60));
    let response = send(&svc, "tools/list", json!({})).await.unwrap();
    assert!(response.extensions.get::<FromCache>().is_none());
    assert_eq!(server.calls(), 1);
}
