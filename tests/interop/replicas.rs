//! Issue 23, item 5: a host run as two replicas in two processes shares its
//! OAuth tokens and its started tasks through a real `redis-server`
//! (`RedisTokenStore`, `RedisTaskStore`). The first replica (this test)
//! authorizes at `oidc-provider` through the headless handler, calls the
//! Python resource server and starts a task there (the 2026-07-28 Tasks
//! extension); the second, this test binary run again on the ignored
//! `second_replica`, connects with the same stores and a handler that
//! refuses to authorize, is served as the same subject and client, finds
//! the task among the started ones and polls it to its result: one
//! authorization for both.
//!
//! The store's own layout (expiry from the token's lifetime, a value for
//! another origin a miss, the client binding) is checked here too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_stack::auth::{AuthorizationHandler, OAuth, RedisTokenStore, Secret, TokenStore, Tokens};
use mcp_stack::tasks::{RedisTaskStore, TaskStore};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{
    handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Content, Definition, Error, FailureClass,
};
use mcp_stack::{TaskStart, TaskStatus};
use serde_json::json;

use crate::oauth::{counting_handler, servers, LIMIT};
use crate::redis::{raw, shared_redis};

async fn whoami(binding: &Binding) -> String {
    let result = tokio::time::timeout(LIMIT, binding.call_tool("whoami", json!({}), CallOpts::default()))
        .await
        .expect("the call ends in time")
        .expect("the call succeeds");
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

/// A replica's binding: its own connection, the shared task store, and
/// the Tasks extension declared.
fn definition(resource: &str, oauth: OAuth, tasks: Arc<dyn TaskStore>) -> Definition {
    let factory = HttpBuilder::new(resource).listen(false).oauth(oauth).build().unwrap();
    let mut definition = Definition::new("protected", factory);
    definition = definition.with_capabilities(AllowedCapabilities::default().with_tasks(true));
    definition = definition.with_task_store(tasks);
    definition
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_one_authorization_through_redis() {
    let redis_url = shared_redis(10).await;
    let (_oidc, _python, resource, _issuer) = servers().await;
    let authorizations = Arc::new(AtomicUsize::new(0));
    let store = RedisTokenStore::connect(&redis_url).await.unwrap();
    let oauth = OAuth::new()
        .client_name("mcp-stack replica one")
        .handler(counting_handler(authorizations.clone()))
        .store(store.clone());
    let tasks: Arc<dyn TaskStore> = Arc::new(RedisTaskStore::connect(&redis_url).await.unwrap());
    let first = tokio::time::timeout(
        LIMIT,
        Binding::connect(definition(&resource, oauth, tasks), Handlers::default()),
    )
    .await
    .expect("connect ends in time")
    .expect("the first replica connects once authorized");
    let subject = whoami(&first).await;
    assert!(subject.contains(" via "), "{subject}");
    assert_eq!(authorizations.load(Ordering::SeqCst), 1);
    let server = url::Url::parse(&resource).unwrap();
    let stored = store.load(&server).await.unwrap().expect("the tokens are in Redis");
    assert!(stored.refresh_token.is_some());
    // A task the second replica will finish waiting for.
    let started = first.call_tool_task(
        "research",
        json!({ "topic": "replicas", "steps": 10 }),
        None,
        CallOpts::default(),
    );
    let TaskStart::Task(task) = started.await.expect("the task starts") else {
        panic!("the server makes a task")
    };
    assert_eq!(first.started_tasks().await.unwrap().len(), 1);

    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["replicas::second_replica", "--exact", "--ignored", "--test-threads", "1", "--nocapture"])
        .env("MCP_REPLICA_RESOURCE", &resource)
        .env("MCP_REPLICA_REDIS", &redis_url)
        .env("MCP_REPLICA_SUBJECT", &subject)
        .env("MCP_REPLICA_TASK", task.id());
    let out = tokio::time::timeout(Duration::from_secs(120), child.output())
        .await
        .expect("the second replica finished")
        .expect("run the test binary again");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the second replica failed: {printed}");
    assert!(printed.contains("1 passed"), "the second replica ran no test: {printed}");
    assert_eq!(authorizations.load(Ordering::SeqCst), 1, "no second authorization");
    // The first replica still works with what both share.
    assert_eq!(whoami(&first).await, subject);
    let record = first.started_tasks().await.unwrap().pop().unwrap();
    assert_eq!(record.status, TaskStatus::Completed, "the second replica's wait updated the shared record");
    first.close().await;
}

/// The second replica of the test above, in a process of its own: the
/// same Redis, no way to authorize, the same subject served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by two_processes_share_one_authorization_through_redis, in a second process"]
async fn second_replica() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set by the parent"));
    let (resource, redis_url, subject, task_id) = (
        var("MCP_REPLICA_RESOURCE"),
        var("MCP_REPLICA_REDIS"),
        var("MCP_REPLICA_SUBJECT"),
        var("MCP_REPLICA_TASK"),
    );
    let refuse = AuthorizationHandler::from_fn("http://127.0.0.1:9/callback", |_| async {
        Err::<Secret, _>(Error::new(FailureClass::AuthDenied, "the second replica must not authorize"))
    });
    let oauth = OAuth::new()
        .client_name("mcp-stack replica two")
        .handler(refuse)
        .store(RedisTokenStore::connect(&redis_url).await.unwrap());
    let tasks: Arc<dyn TaskStore> = Arc::new(RedisTaskStore::connect(&redis_url).await.unwrap());
    let second = tokio::time::timeout(
        LIMIT,
        Binding::connect(definition(&resource, oauth, tasks), Handlers::default()),
    )
    .await
    .expect("connect ends in time")
    .expect("the second replica connects with the shared tokens");
    assert_eq!(whoami(&second).await, subject);
    // The task the first replica started, found in the shared store.
    let started = second.started_tasks().await.unwrap();
    assert_eq!(
        started.iter().map(|r| (r.id.as_str(), r.tool.as_str())).collect::<Vec<_>>(),
        [(task_id.as_str(), "research")]
    );
    let result = second.task(&task_id).result(CallOpts::default().with_timeout(LIMIT)).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("report on replicas"));
    second.close().await;
}

/// What the store keeps: tokens without a refresh token expire with the
/// access token, with one after the refresh lifetime; a value for another
/// origin is a miss (never quoted); tokens already expired are not
/// kept; a pre-registered client's issuer binding is kept per client.
#[tokio::test]
async fn the_token_store_expires_with_the_tokens_and_keeps_origins_apart() {
    let url = shared_redis(11).await;
    let store =
        RedisTokenStore::connect(&url).await.unwrap().with_refresh_lifetime(Duration::from_secs(3600));
    let server = url::Url::parse("https://mcp.example.com/mcp").unwrap();
    let other = url::Url::parse("https://other.example.com/mcp").unwrap();
    let in_ten_minutes = SystemTime::now() + Duration::from_secs(600);
    let tokens = Tokens {
        access_token: Secret::new("access-SECRET"),
        token_type: "Bearer".into(),
        refresh_token: None,
        expires_at: Some(in_ten_minutes),
        scope: Some("mcp:tools".into()),
        issuer: Some("https://as.example.com".into()),
    };
    store.save(&server, &tokens).await.unwrap();
    let loaded = store.load(&server).await.unwrap().unwrap();
    assert_eq!(loaded.access_token.expose(), "access-SECRET");
    assert_eq!(store.load(&other).await.unwrap(), None);
    let key = match raw(&url, &["KEYS", "mcp-stack:tokens:*"]).await {
        redis::Value::Array(keys) => match &keys[..] {
            [redis::Value::BulkString(key)] => String::from_utf8(key.clone()).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    let ttl = |value: redis::Value| match value {
        redis::Value::Int(ms) => ms,
        other => panic!("{other:?}"),
    };
    let left = ttl(raw(&url, &["PTTL", &key]).await);
    assert!((590_000..=600_000).contains(&left), "expires with the access token: {left} ms");

    let refreshable = Tokens { refresh_token: Some(Secret::new("refresh-SECRET")), ..tokens.clone() };
    store.save(&server, &refreshable).await.unwrap();
    let left = ttl(raw(&url, &["PTTL", &key]).await);
    assert!((3_590_000..=3_600_000).contains(&left), "kept for the refresh lifetime: {left} ms");

    // The value for another origin, copied under this origin's key.
    let other_store = RedisTokenStore::connect(&url).await.unwrap().with_prefix("elsewhere");
    other_store.save(&other, &refreshable).await.unwrap();
    let copied = match raw(&url, &["KEYS", "elsewhere:tokens:*"]).await {
        redis::Value::Array(keys) => match &keys[..] {
            [redis::Value::BulkString(k)] => String::from_utf8(k.clone()).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    raw(&url, &["COPY", &copied, &key, "REPLACE"]).await;
    assert_eq!(store.load(&server).await.unwrap(), None, "another origin's tokens are a miss");

    let expired = Tokens { expires_at: Some(SystemTime::now() - Duration::from_secs(1)), ..tokens };
    store.save(&server, &expired).await.unwrap();
    assert_eq!(store.load(&server).await.unwrap(), None, "expired tokens are not kept");

    store.save_client_issuer(&server, "client-a", "https://as.example.com").await.unwrap();
    assert_eq!(
        store.load_client_issuer(&server, "client-a").await.unwrap().as_deref(),
        Some("https://as.example.com")
    );
    assert_eq!(store.load_client_issuer(&server, "client-b").await.unwrap(), None);
}
