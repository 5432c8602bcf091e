//! Issue 22, item 4: public cached results in a real Redis server
//! (Debian's `redis-server` 7.0, the one `scripts/interop.sh` starts on a
//! free loopback port without persistence, `$MCP_REDIS_URL`; each test has
//! a database of its own, emptied first), through `RedisCache`:
//!
//! - the store's layout: one hash per group, expiring with its entry; an
//!   expired entry skipped, an oversized one never stored;
//! - two bindings standing for two replicas of a host (each with its own
//!   connection to Redis) to one server: the second lists nothing, a change
//!   notification that reaches only the first makes the second list again;
//! - Redis going away mid-life: every list still answers, from the server
//!   (a `redis-server` of that test's own, `$MCP_REDIS_SERVER`, which it
//!   stops).

use mcp_stack::cache::{Caching, RedisCache, ResponseCache};
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::{handlers::Handlers, Binding, Definition, ProtocolChoice};
use serde_json::{json, Value};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::modern::{server_per_connection, Seen};
use crate::support::peers::{free_port, peer, start_listening, Server};

/// The URL of database `db` (1 to 15, one per test) of the Redis server
/// the interop script started (`$MCP_REDIS_URL`), emptied: tests share the
/// server, never a database. A missing variable or server is a failure.
pub(crate) async fn shared_redis(db: u8) -> String {
    let base = std::env::var("MCP_REDIS_URL").unwrap_or_else(|_| {
        panic!(
            "MCP_REDIS_URL is not set: run the interop tests through scripts/interop.sh, which starts Redis"
        )
    });
    let url = format!("{}/{db}", base.trim_end_matches('/'));
    assert_eq!(raw(&url, &["FLUSHDB"]).await, redis::Value::Okay, "database {db} emptied");
    url
}

/// A redis-server of this test's own, for a test that stops it: no
/// persistence, loopback only.
pub(crate) async fn redis() -> (Server, String) {
    let port = free_port();
    let mut command = Command::new(peer("MCP_REDIS_SERVER"));
    command.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
    let server = start_listening(command, port, "redis-server", Duration::from_secs(30)).await;
    (server, format!("redis://127.0.0.1:{port}"))
}

/// Runs one raw Redis command, for what the store's API does not show.
pub(crate) async fn raw(url: &str, args: &[&str]) -> redis::Value {
    let client = redis::Client::open(url).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query_async(&mut connection).await.unwrap()
}

/// The keys under the store's prefix.
async fn keys(url: &str) -> Vec<String> {
    match raw(url, &["KEYS", "mcp-stack:*"]).await {
        redis::Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                redis::Value::BulkString(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// A 2026-07-28 server whose tools list is public for a minute and grows
/// by one tool each time it is asked. When `announce`, connection 0's
/// listen stream announces a change 1 s after it opens.
pub(crate) fn server(announce: bool) -> (Arc<MemoryFactory>, Seen) {
    let listed = Arc::new(AtomicUsize::new(0));
    let (factory, seen) = server_per_connection(move |connection, method, _| match method {
        "server/discover" => Some(json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": { "listChanged": true } },
            "serverInfo": { "name": "replicated", "version": "1.0" }
        }})),
        "tools/list" => {
            let n = listed.fetch_add(1, Ordering::SeqCst) + 1;
            let tools: Vec<Value> = (0..n)
                .map(|i| json!({ "name": format!("t{i}"), "inputSchema": { "type": "object" } }))
                .collect();
            Some(json!({ "result": { "tools": tools, "ttlMs": 60_000, "cacheScope": "public" } }))
        }
        "subscriptions/listen" if announce && connection == 0 => Some(json!({ "notify": [
            { "method": "notifications/subscriptions/acknowledged",
              "params": { "notifications": { "toolsListChanged": true } } },
            { "method": "notifications/tools/list_changed", "params": {}, "_afterMs": 1_000 }
        ]})),
        "subscriptions/listen" => Some(json!({ "notify": [
            { "method": "notifications/subscriptions/acknowledged",
              "params": { "notifications": { "toolsListChanged": true } } }
        ]})),
        _ => Some(json!({ "result": {} })),
    });
    (Arc::new(factory), seen)
}

pub(crate) fn definition(factory: Arc<MemoryFactory>, store: RedisCache) -> Definition {
    let mut definition = Definition::with_factory("replica", factory);
    definition = definition.with_protocol(ProtocolChoice::Modern);
    definition = definition.with_caching(Caching::default().with_shared(Arc::new(store)));
    definition
}

#[tokio::test]
async fn the_store_keeps_one_hash_per_group_that_expires_with_its_entry() {
    let url = shared_redis(1).await;
    let store = RedisCache::connect(&url).await.unwrap();
    let (factory, seen) = server(false);
    let binding =
        Binding::connect(definition(factory.clone(), store.clone()), Handlers::default()).await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 1);
    let stored = keys(&url).await;
    assert_eq!(stored.len(), 1, "one group: {stored:?}");
    assert!(stored[0].ends_with(":list:tools"), "{stored:?}");
    let pttl = raw(&url, &["PTTL", &stored[0]]).await;
    match pttl {
        redis::Value::Int(ms) => {
            assert!(ms > 50_000 && ms <= 60_000, "the hash expires with its entry: {ms}")
        }
        other => panic!("{other:?}"),
    }
    binding.close().await;
}

#[tokio::test]
async fn a_second_replica_is_served_what_the_first_listed_until_a_change_reaches_the_first() {
    let url = shared_redis(2).await;
    let (factory, seen) = server(true);
    let first = Binding::connect(
        definition(factory.clone(), RedisCache::connect(&url).await.unwrap()),
        Handlers::default(),
    )
    .await
    .unwrap();
    let second =
        Binding::connect(definition(factory, RedisCache::connect(&url).await.unwrap()), Handlers::default())
            .await
            .unwrap();
    assert_eq!(seen.requests("tools/list").len(), 1, "the second replica's discovery came from Redis");
    assert_eq!(first.catalog().digest, second.catalog().digest);

    // The change reaches the first replica alone (1 s in); its refetch
    // drops the group in Redis, so the second one's next list asks the
    // server.
    let begun = std::time::Instant::now();
    while first.candidate().is_none() {
        assert!(begun.elapsed() < Duration::from_secs(20), "no candidate after the list_changed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen.requests("tools/list").len(), 2);
    let listed = second.list_tools().await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 2, "the first replica's new page, from Redis");
    assert_eq!(listed.items.len(), 2);
    first.close().await;
    second.close().await;
}

#[tokio::test]
async fn redis_going_away_costs_nothing_but_the_cache() {
    let (redis, url) = redis().await;
    let (factory, seen) = server(false);
    let binding =
        Binding::connect(definition(factory, RedisCache::connect(&url).await.unwrap()), Handlers::default())
            .await
            .unwrap();
    binding.list_tools().await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 1, "served from Redis");
    drop(redis);
    for n in 2..=3 {
        let begun = std::time::Instant::now();
        binding.list_tools().await.expect("a lost store is a miss, never a failure");
        assert!(begun.elapsed() < Duration::from_secs(2), "bounded by the store's timeout");
        assert_eq!(seen.requests("tools/list").len(), n);
    }
    binding.close().await;
}

#[tokio::test]
async fn an_expired_or_oversized_entry_is_never_served() {
    let url = shared_redis(3).await;
    let store = RedisCache::connect(&url).await.unwrap().with_max_entry_bytes(64);
    let (factory, seen) = server(false);
    // The tools page is more than 64 bytes: not stored, so each replica
    // asks the server.
    let a = Binding::connect(definition(factory.clone(), store.clone()), Handlers::default()).await.unwrap();
    let b = Binding::connect(definition(factory, store.clone()), Handlers::default()).await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 2);
    assert!(keys(&url).await.is_empty());
    a.close().await;
    b.close().await;

    // An entry whose stamp is past: skipped and deleted.
    let (factory, seen) = server(false);
    let store = RedisCache::connect(&url).await.unwrap();
    let a = Binding::connect(definition(factory.clone(), store.clone()), Handlers::default()).await.unwrap();
    let hash = keys(&url).await.pop().expect("stored");
    let field = match raw(&url, &["HKEYS", &hash]).await {
        redis::Value::Array(mut f) => match f.pop() {
            Some(redis::Value::BulkString(b)) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    // The format tag (`mcs`, version 1, a cached entry), then the stamp.
    let mut stale = b"mcs\x01c".to_vec();
    stale.extend_from_slice(&1u64.to_be_bytes());
    stale.extend_from_slice(br#"{"tools":[]}"#);
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let () = redis::cmd("HSET").arg(&hash).arg(&field).arg(stale).query_async(&mut connection).await.unwrap();
    let b = Binding::connect(definition(factory, store), Handlers::default()).await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 2, "the expired entry was not served");
    assert_eq!(b.catalog().tools.len(), 2);
    a.close().await;
    b.close().await;
}

/// What a host sees of the store itself.
#[tokio::test]
async fn a_bad_url_or_an_absent_server_is_a_classified_error_that_never_quotes_the_url() {
    let e = RedisCache::connect("not a url :secret@").await.unwrap_err();
    assert_eq!(e.class(), mcp_stack::FailureClass::InvalidConfig);
    assert!(!e.to_string().contains("secret"), "{e}");
    let port = free_port();
    let e = RedisCache::connect(&format!("redis://:hunter2@127.0.0.1:{port}")).await.unwrap_err();
    assert_eq!(e.class(), mcp_stack::FailureClass::TransportClosed);
    assert!(!e.to_string().contains("hunter2"), "{e}");
    let _: fn(&RedisCache) -> &dyn ResponseCache = |s| s;
}

/// Issue 23: the records of started tasks in Redis (`RedisTaskStore`), as
/// two replicas see them: what one saves the other loads, lists and
/// updates; each record is a key Redis expires with the task's TTL, listed
/// through one sorted set; an expired record is not stored, a value that is
/// not the record its key names is not believed, and removing leaves
/// nothing behind.
#[tokio::test]
async fn task_records_are_shared_by_replicas_and_expire_with_the_task() {
    use mcp_stack::tasks::{RedisTaskStore, TaskRecord, TaskStore};
    use mcp_stack::TaskStatus;
    use std::time::{SystemTime, UNIX_EPOCH};

    let url = shared_redis(4).await;
    let one = RedisTaskStore::connect(&url).await.unwrap();
    let two = RedisTaskStore::connect(&url).await.unwrap();
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let record = TaskRecord {
        binding: "gateway".into(),
        id: "task-1".into(),
        tool: "research".into(),
        created: UNIX_EPOCH + Duration::from_millis(now_ms),
        ttl: Some(Duration::from_secs(600)),
        status: TaskStatus::Working,
    };
    one.save(&record).await.unwrap();
    assert_eq!(two.load("gateway", "task-1").await.unwrap(), Some(record.clone()));
    assert_eq!(two.list().await.unwrap(), vec![record.clone()]);

    let mut stored = keys(&url).await;
    stored.sort();
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(stored[1], "mcp-stack:tasks");
    assert!(stored[0].starts_with("mcp-stack:task:") && stored[0].len() == "mcp-stack:task:".len() + 64);
    let expires = raw(&url, &["PEXPIRETIME", &stored[0]]).await;
    assert_eq!(expires, redis::Value::Int((now_ms + 600_000) as i64), "Redis expires it with the task");

    two.save(&TaskRecord { status: TaskStatus::Completed, ..record.clone() }).await.unwrap();
    assert_eq!(one.load("gateway", "task-1").await.unwrap().unwrap().status, TaskStatus::Completed);

    let hour = Duration::from_secs(3600);
    let old = TaskRecord {
        id: "task-0".into(),
        created: record.created - 2 * hour,
        ttl: Some(hour),
        ..record.clone()
    };
    one.save(&old).await.unwrap();
    assert_eq!(two.load("gateway", "task-0").await.unwrap(), None);
    assert_eq!(two.list().await.unwrap().len(), 1);

    // Another task's record written under task-1's key is not task-1's.
    let forged = serde_json::to_string(&TaskRecord { id: "task-9".into(), ..record.clone() }).unwrap();
    raw(&url, &["SET", &stored[0], &forged]).await;
    assert_eq!(one.load("gateway", "task-1").await.unwrap(), None);
    assert_eq!(one.list().await.unwrap(), vec![]);

    one.remove("gateway", "task-1").await.unwrap();
    assert_eq!(keys(&url).await, Vec::<String>::new());
}
