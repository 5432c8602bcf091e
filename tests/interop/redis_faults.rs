//! Issue 43, item 18: the Redis stores (tokens, task records, the shared
//! cache) under faults, against a real `redis-server` (Debian's 7.0):
//!
//! - restarted mid-run (killed, started again on the same port, empty);
//! - paused (`DEBUG SLEEP`, `CLIENT PAUSE … ALL`) longer than a call's bound;
//! - full (`maxmemory 1mb`, `noeviction`, filled);
//! - holding a record of a newer format version, garbage, bare JSON or a
//!   value of another Redis type under our keys;
//! - tokens sealed at rest (AES-256-GCM): misses without the key, under
//!   another key, moved to another key or tampered with;
//! - two processes refreshing the same tokens at once against an
//!   authorization server that revokes a refresh token on its second use:
//!   one refresh, both end with a valid token.
//!
//! The host keeps serving throughout (the cache degrades to misses), a
//! write that fails is a classified error of that call, nothing takes
//! longer than its bound, and no error or warning quotes a stored value.
//! The fault tests start redis-servers of their own (`$MCP_REDIS_SERVER`,
//! loopback, no persistence, stopped at the end); the others use a
//! database of the shared one (`$MCP_REDIS_URL`). A missing server is a
//! failure, never a skip.

use std::collections::HashMap;
use std::io;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use mcp_stack::auth::{AuthError, OAuth, RedisTokenStore, Secret, TokenStore, Tokens};
use mcp_stack::cache::RedisCache;
use mcp_stack::tasks::{RedisTaskStore, TaskRecord, TaskStore};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition, FailureClass, TaskStatus};
use serde_json::{json, Value};
use url::Url;

use crate::redis::{definition, raw, server, shared_redis};
use crate::support::http_server::serve;
use crate::support::peers::{free_port, peer, start_listening, Server};
use crate::support::trace_capture;

/// The longest any one store call may take here: the stores' 1 s bound
/// and some slack for a loaded machine.
const BOUND: Duration = Duration::from_millis(1_800);

/// A redis-server of this test's own on `port` (loopback, no persistence,
/// `DEBUG` allowed from loopback).
async fn own_redis(port: u16) -> Server {
    let mut command = Command::new(peer("MCP_REDIS_SERVER"));
    command.args([
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--enable-debug-command",
        "local",
    ]);
    start_listening(command, port, "redis-server", Duration::from_secs(30)).await
}

/// One raw command that may fail (`raw` panics on an error reply).
async fn try_raw(url: String, args: Vec<Vec<u8>>) -> redis::RedisResult<redis::Value> {
    let client = redis::Client::open(url.as_str())?;
    let mut connection = client.get_multiplexed_async_connection().await?;
    let mut cmd = redis::cmd(std::str::from_utf8(&args[0]).unwrap());
    for arg in &args[1..] {
        cmd.arg(arg.as_slice());
    }
    cmd.query_async(&mut connection).await
}

fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

async fn set_raw(url: &str, key: &str, value: &[u8]) {
    try_raw(url.into(), vec![b"SET".to_vec(), key.as_bytes().to_vec(), value.to_vec()]).await.unwrap();
}

async fn get_raw(url: &str, key: &str) -> Vec<u8> {
    match raw(url, &["GET", key]).await {
        redis::Value::BulkString(b) => b,
        other => panic!("{other:?}"),
    }
}

/// The one key matching `pattern`.
async fn only_key(url: &str, pattern: &str) -> String {
    match raw(url, &["KEYS", pattern]).await {
        redis::Value::Array(keys) => match &keys[..] {
            [redis::Value::BulkString(k)] => String::from_utf8(k.clone()).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

fn origin() -> Url {
    Url::parse("https://mcp.example.com/mcp").unwrap()
}

fn tokens(access: &str) -> Tokens {
    Tokens {
        access_token: Secret::new(access),
        token_type: "Bearer".into(),
        refresh_token: Some(Secret::new(format!("{access}-refresh"))),
        expires_at: Some(SystemTime::now() + Duration::from_secs(600)),
        scope: None,
        issuer: Some("https://as.example.com".into()),
    }
}

fn record(id: &str) -> TaskRecord {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    TaskRecord {
        binding: "gateway".into(),
        id: id.into(),
        tool: "research".into(),
        created: UNIX_EPOCH + Duration::from_millis(now),
        ttl: Some(Duration::from_secs(600)),
        status: TaskStatus::Working,
    }
}

/// `what` finished within [`BOUND`].
async fn timed<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    let begun = Instant::now();
    let out =
        tokio::time::timeout(Duration::from_secs(10), fut).await.unwrap_or_else(|_| panic!("{what} hung"));
    assert!(begun.elapsed() < BOUND, "{what} took {:?}", begun.elapsed());
    out
}

/// A token store failure: `AuthError::Store` of one of `kinds`, quoting
/// nothing stored.
fn token_store_failure(e: AuthError, kinds: &[io::ErrorKind]) {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    match e {
        AuthError::Store(io) => assert!(kinds.contains(&io.kind()), "{:?}: {shown}", io.kind()),
        other => panic!("not a store error: {other}"),
    }
}

/// Retries `op` until it succeeds, at most 10 s (a reconnection).
async fn eventually<T, E: std::fmt::Display, F: std::future::Future<Output = Result<T, E>>>(
    what: &str,
    mut op: impl FnMut() -> F,
) -> T {
    let begun = Instant::now();
    loop {
        match op().await {
            Ok(value) => return value,
            Err(e) if begun.elapsed() < Duration::from_secs(10) => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("{what} still fails after 10 s: {e}"),
        }
    }
}

/// The shared cache serves the binding's tools list again: a list that
/// reaches the server is followed by one that does not.
async fn cache_serves_again(binding: &Binding, seen: &crate::support::modern::Seen) {
    let begun = Instant::now();
    loop {
        binding.list_tools().await.expect("the list is answered");
        let before = seen.requests("tools/list").len();
        binding.list_tools().await.expect("the list is answered");
        if seen.requests("tools/list").len() == before {
            return;
        }
        assert!(begun.elapsed() < Duration::from_secs(10), "the cache never served again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_fails_calls_in_time_and_serves_again() {
    let port = free_port();
    let redis = own_redis(port).await;
    let url = format!("redis://127.0.0.1:{port}");
    let token_store = RedisTokenStore::connect(&url).await.unwrap();
    let tasks = RedisTaskStore::connect(&url).await.unwrap();
    token_store.save(&origin(), &tokens("access-SECRET-1")).await.unwrap();
    tasks.save(&record("task-1")).await.unwrap();
    let (factory, seen) = server(false);
    let binding =
        Binding::connect(definition(factory, RedisCache::connect(&url).await.unwrap()), Handlers::default())
            .await
            .unwrap();
    binding.list_tools().await.unwrap();
    assert_eq!(seen.requests("tools/list").len(), 1, "served from Redis");

    drop(redis);
    // Down: every call fails within its bound, classified; the host serves.
    let e = timed("a token save", token_store.save(&origin(), &tokens("access-SECRET-2"))).await.unwrap_err();
    token_store_failure(e, &[io::ErrorKind::ConnectionAborted, io::ErrorKind::TimedOut]);
    let e = timed("a token load", token_store.load(&origin())).await.unwrap_err();
    token_store_failure(e, &[io::ErrorKind::ConnectionAborted, io::ErrorKind::TimedOut]);
    let e = timed("a task save", tasks.save(&record("task-2"))).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::TransportClosed, "{e}");
    let e = timed("a task list", tasks.list()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::TransportClosed, "{e}");
    timed("a list without the cache", binding.list_tools()).await.expect("a lost cache is a miss");
    assert_eq!(seen.requests("tools/list").len(), 2);

    // Started again on the same port, empty: the stores reconnect.
    let _redis = own_redis(port).await;
    eventually("a token save after the restart", || async {
        token_store.save(&origin(), &tokens("access-SECRET-3")).await
    })
    .await;
    let loaded = timed("a token load", token_store.load(&origin())).await.unwrap().unwrap();
    assert_eq!(loaded.access_token.expose(), "access-SECRET-3");
    assert_eq!(
        timed("a task load", tasks.load("gateway", "task-1")).await.unwrap(),
        None,
        "lost with the server"
    );
    eventually("a task save after the restart", || async { tasks.save(&record("task-3")).await }).await;
    assert_eq!(tasks.list().await.unwrap().len(), 1);
    cache_serves_again(&binding, &seen).await;
    binding.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_server_never_holds_a_call_past_its_bound() {
    let port = free_port();
    let _redis = own_redis(port).await;
    let url = format!("redis://127.0.0.1:{port}");
    let token_store = RedisTokenStore::connect(&url).await.unwrap();
    let tasks = RedisTaskStore::connect(&url).await.unwrap();
    let (factory, seen) = server(false);
    let binding =
        Binding::connect(definition(factory, RedisCache::connect(&url).await.unwrap()), Handlers::default())
            .await
            .unwrap();
    for pause in [&["DEBUG", "SLEEP", "3"][..], &["CLIENT", "PAUSE", "3000", "ALL"][..]] {
        token_store.save(&origin(), &tokens("access-SECRET")).await.unwrap();
        let paused_at = Instant::now();
        let pauser = tokio::spawn(try_raw(url.clone(), args(pause)));
        tokio::time::sleep(Duration::from_millis(200)).await;
        let e = timed("a token load", token_store.load(&origin())).await.unwrap_err();
        token_store_failure(e, &[io::ErrorKind::TimedOut]);
        let e =
            timed("a token save", token_store.save(&origin(), &tokens("access-SECRET-2"))).await.unwrap_err();
        token_store_failure(e, &[io::ErrorKind::TimedOut]);
        let e = timed("a task save", tasks.save(&record("task-1"))).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::TransportClosed, "{e}");
        assert!(e.to_string().contains("did not answer"), "{e}");
        let listed = seen.requests("tools/list").len();
        timed("a list while paused", binding.list_tools()).await.expect("a paused cache is a miss");
        assert_eq!(seen.requests("tools/list").len(), listed + 1, "answered by the server");
        assert!(paused_at.elapsed() < Duration::from_secs(3), "all of it while {pause:?} held");
        // The pauser's own reply may come after its client's timeout.
        let _ = pauser.await.unwrap();
        tokio::time::sleep(Duration::from_millis(3_300).saturating_sub(paused_at.elapsed())).await;
        // Awake: the stores answer again.
        eventually("a task save after the pause", || async { tasks.save(&record("task-1")).await }).await;
        eventually("a token save after the pause", || async {
            token_store.save(&origin(), &tokens("access-SECRET-3")).await
        })
        .await;
        assert_eq!(
            token_store.load(&origin()).await.unwrap().unwrap().access_token.expose(),
            "access-SECRET-3"
        );
        cache_serves_again(&binding, &seen).await;
    }
    binding.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_fails_writes_classified_and_keeps_serving_reads() {
    let port = free_port();
    let _redis = own_redis(port).await;
    let url = format!("redis://127.0.0.1:{port}");
    let token_store = RedisTokenStore::connect(&url).await.unwrap();
    let tasks = RedisTaskStore::connect(&url).await.unwrap();
    token_store.save(&origin(), &tokens("access-SECRET-1")).await.unwrap();
    tasks.save(&record("task-1")).await.unwrap();

    raw(&url, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]).await;
    raw(&url, &["CONFIG", "SET", "maxmemory", "1mb"]).await;
    let filler = vec![b'x'; 64 * 1024];
    let mut full = false;
    for i in 0..1_000 {
        let set = vec![b"SET".to_vec(), format!("filler:{i}").into_bytes(), filler.clone()];
        match try_raw(url.clone(), set).await {
            Ok(_) => {}
            Err(e) if e.code() == Some("OOM") => {
                full = true;
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(full, "Redis never refused a write at maxmemory");

    // Writes: a classified error of that call, quoting nothing.
    let e = timed("a token save", token_store.save(&origin(), &tokens("access-SECRET-2"))).await.unwrap_err();
    assert!(e.to_string().contains("full"), "{e}");
    token_store_failure(e, &[io::ErrorKind::StorageFull]);
    let e = timed("a task save", tasks.save(&record("task-2"))).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::LimitExceeded, "{e}");
    // Reads go on.
    let loaded = timed("a token load", token_store.load(&origin())).await.unwrap().unwrap();
    assert_eq!(loaded.access_token.expose(), "access-SECRET-1");
    assert!(timed("a task load", tasks.load("gateway", "task-1")).await.unwrap().is_some());
    // The cache: nothing stored, every list answered by the server.
    let (factory, seen) = server(false);
    let binding =
        Binding::connect(definition(factory, RedisCache::connect(&url).await.unwrap()), Handlers::default())
            .await
            .unwrap();
    timed("a list", binding.list_tools()).await.expect("a full cache is a miss");
    assert_eq!(seen.requests("tools/list").len(), 2, "nothing could be cached");

    // Room again: writes pass.
    raw(&url, &["CONFIG", "SET", "maxmemory", "0"]).await;
    token_store.save(&origin(), &tokens("access-SECRET-3")).await.unwrap();
    tasks.save(&record("task-2")).await.unwrap();
    cache_serves_again(&binding, &seen).await;
    binding.close().await;
}

#[tokio::test]
async fn records_of_a_newer_version_or_garbage_are_misses_that_quote_nothing() {
    let (capture, _guard) = trace_capture::capture("mcp_stack=warn");
    let url = shared_redis(12).await;
    let token_store = RedisTokenStore::connect(&url).await.unwrap();
    let tasks = RedisTaskStore::connect(&url).await.unwrap();
    token_store.save(&origin(), &tokens("access-SECRET")).await.unwrap();
    tasks.save(&record("task-SECRET")).await.unwrap();
    let token_key = only_key(&url, "mcp-stack:tokens:*").await;
    let task_key = only_key(&url, "mcp-stack:task:*").await;
    let (good_tokens, good_task) = (get_raw(&url, &token_key).await, get_raw(&url, &task_key).await);
    assert_eq!(&good_tokens[..5], b"mcs\x01t", "a format tag first");

    let newer = |good: &[u8]| {
        let mut v = good.to_vec();
        v[3] = 2;
        v
    };
    let bare_json = |good: &[u8]| good[5..].to_vec();
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("a newer version", newer(&good_tokens), newer(&good_task)),
        ("garbage", b"\xff\x00SECRET garbage".to_vec(), b"SECRET\x00\x01\x02".to_vec()),
        ("bare JSON", bare_json(&good_tokens), bare_json(&good_task)),
        (
            "truncated",
            good_tokens[..good_tokens.len() / 2].to_vec(),
            good_task[..good_task.len() / 2].to_vec(),
        ),
    ];
    for (what, token_value, task_value) in cases {
        set_raw(&url, &token_key, &token_value).await;
        set_raw(&url, &task_key, &task_value).await;
        assert_eq!(token_store.load(&origin()).await.unwrap(), None, "{what}");
        assert_eq!(tasks.load("gateway", "task-SECRET").await.unwrap(), None, "{what}");
        assert_eq!(tasks.list().await.unwrap(), vec![], "{what}");
    }
    // Another Redis type under the keys.
    raw(&url, &["DEL", &token_key, &task_key]).await;
    raw(&url, &["HSET", &token_key, "f", "SECRET"]).await;
    raw(&url, &["HSET", &task_key, "f", "SECRET"]).await;
    assert_eq!(token_store.load(&origin()).await.unwrap(), None);
    assert_eq!(tasks.load("gateway", "task-SECRET").await.unwrap(), None);
    // A good value again is read.
    raw(&url, &["DEL", &token_key, &task_key]).await;
    set_raw(&url, &token_key, &good_tokens).await;
    set_raw(&url, &task_key, &good_task).await;
    assert!(token_store.load(&origin()).await.unwrap().is_some());
    assert!(tasks.load("gateway", "task-SECRET").await.unwrap().is_some());

    // The cache: a garbage field, then a newer one, are misses (and gone).
    let (factory, seen) = server(false);
    let cache = RedisCache::connect(&url).await.unwrap();
    let first =
        Binding::connect(definition(factory.clone(), cache.clone()), Handlers::default()).await.unwrap();
    let hash = only_key(&url, "mcp-stack:*:list:tools").await;
    let field = match raw(&url, &["HKEYS", &hash]).await {
        redis::Value::Array(mut f) => match f.pop() {
            Some(redis::Value::BulkString(b)) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    let good_field = match raw(&url, &["HGET", &hash, &field]).await {
        redis::Value::BulkString(b) => b,
        other => panic!("{other:?}"),
    };
    for bad in [b"\x00\x00\x01\x00\x00\x00\x00\x00{\"tools\":[\"SECRET\"]}".to_vec(), newer(&good_field)] {
        let set = vec![b"HSET".to_vec(), hash.as_bytes().to_vec(), field.as_bytes().to_vec(), bad];
        try_raw(url.clone(), set).await.unwrap();
        let listed = seen.requests("tools/list").len();
        first.list_tools().await.unwrap();
        assert_eq!(seen.requests("tools/list").len(), listed + 1, "not served from the bad field");
    }
    first.close().await;

    let warnings = capture.lines_with("not used");
    assert!(warnings.len() >= 8, "a warning per value skipped: {}", capture.text());
    let text = capture.text();
    assert!(!text.contains("SECRET") && !text.contains("garbage"), "{text}");
}

#[tokio::test]
async fn tokens_sealed_at_rest_open_only_with_their_key_under_their_name() {
    let (capture, _guard) = trace_capture::capture("mcp_stack=warn");
    let url = shared_redis(13).await;
    let sealed = RedisTokenStore::connect(&url).await.unwrap().encrypt_with(&[0x11; 32]);
    let plain = RedisTokenStore::connect(&url).await.unwrap();
    let other_key = RedisTokenStore::connect(&url).await.unwrap().encrypt_with(&[0x22; 32]);
    sealed.save(&origin(), &tokens("access-SECRET")).await.unwrap();
    let key = only_key(&url, "mcp-stack:tokens:*").await;
    let value = get_raw(&url, &key).await;
    assert_eq!(&value[..5], b"mcs\x01T");
    assert!(!value.windows(6).any(|w| w == b"SECRET") && !value.windows(6).any(|w| w == b"origin"));
    assert_eq!(sealed.load(&origin()).await.unwrap().unwrap().access_token.expose(), "access-SECRET");
    assert_eq!(plain.load(&origin()).await.unwrap(), None, "no key: a miss");
    assert_eq!(other_key.load(&origin()).await.unwrap(), None, "another key: a miss");

    // Moved under another origin's key: does not open there.
    let elsewhere = Url::parse("https://other.example.com/mcp").unwrap();
    sealed.save(&elsewhere, &tokens("access-OTHER")).await.unwrap();
    let other_name = match raw(&url, &["KEYS", "mcp-stack:tokens:*"]).await {
        redis::Value::Array(keys) => keys
            .into_iter()
            .map(|k| match k {
                redis::Value::BulkString(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .find(|k| *k != key)
            .unwrap(),
        other => panic!("{other:?}"),
    };
    set_raw(&url, &other_name, &value).await;
    assert_eq!(sealed.load(&elsewhere).await.unwrap(), None, "moved: a miss");
    // Tampered with: a miss.
    let mut tampered = value.clone();
    *tampered.last_mut().unwrap() ^= 1;
    set_raw(&url, &key, &tampered).await;
    assert_eq!(sealed.load(&origin()).await.unwrap(), None, "tampered: a miss");
    // Written without the key: an encrypting store does not trust it.
    plain.save(&origin(), &tokens("access-SECRET-PLAIN")).await.unwrap();
    assert_eq!(sealed.load(&origin()).await.unwrap(), None, "not sealed: a miss");
    assert!(plain.load(&origin()).await.unwrap().is_some());

    // The client issuer binding is sealed too, and fails closed.
    sealed.save_client_issuer(&origin(), "client-1", "https://as.example.com").await.unwrap();
    assert_eq!(
        sealed.load_client_issuer(&origin(), "client-1").await.unwrap().as_deref(),
        Some("https://as.example.com")
    );
    let e = plain.load_client_issuer(&origin(), "client-1").await.unwrap_err().to_string();
    assert!(e.contains("encrypted") && !e.contains("as.example.com"), "{e}");
    assert!(format!("{sealed:?}").contains("encrypted: true"), "{sealed:?}");

    let text = capture.text();
    assert!(capture.lines_with("not used").len() >= 4, "{text}");
    assert!(!text.contains("SECRET") && !text.contains("OTHER"), "{text}");
}

// ---- refreshing once across replicas -----------------------------------

/// The tiny authorization server (and MCP server) both replicas refresh
/// at: refresh tokens rotate, and one used a second time is refused and
/// revokes everything issued from it (RFC 9700 §4.14.2), as real servers
/// do. Counts the token endpoint's hits.
#[derive(Default)]
struct Issuer {
    base: String,
    issued: u32,
    /// Access tokens the MCP endpoint accepts.
    valid: Vec<String>,
    /// Refresh tokens not yet used.
    unused: Vec<String>,
    /// Refresh tokens used once.
    used: Vec<String>,
    token_hits: u32,
    reuses: u32,
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Issuer>>);

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Issuer> {
        self.0.lock().unwrap()
    }

    fn issue(&self) -> (String, String) {
        let mut s = self.lock();
        s.issued += 1;
        let (access, refresh) = (format!("access-{}", s.issued), format!("refresh-{}", s.issued));
        s.valid.push(access.clone());
        s.unused.push(refresh.clone());
        (access, refresh)
    }
}

const CLIENT_SECRET: &str = "client-SECRET";

async fn issuer_mcp(
    State(shared): State<Shared>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let base = shared.lock().base.clone();
    if !token.as_ref().is_some_and(|t| shared.lock().valid.contains(t)) {
        let challenge = format!(
            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", error=\"invalid_token\""
        );
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    let result = match body["method"].as_str().unwrap_or("") {
        "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "issuer", "version": "1"}}),
        _ if id.is_null() => return StatusCode::ACCEPTED.into_response(),
        "tools/list" => json!({"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": token.unwrap_or_default()}]}),
        _ => json!({}),
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response()
}

async fn issuer_token(State(shared): State<Shared>, body: Bytes) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    shared.lock().token_hits += 1;
    if form.get("client_secret").map(String::as_str) != Some(CLIENT_SECRET)
        || form.get("grant_type").map(String::as_str) != Some("refresh_token")
    {
        return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_client"}))).into_response();
    }
    let presented = form.get("refresh_token").cloned().unwrap_or_default();
    {
        let mut s = shared.lock();
        if let Some(at) = s.unused.iter().position(|r| *r == presented) {
            s.unused.remove(at);
            s.used.push(presented);
        } else {
            // Reused (or unknown): everything is revoked.
            s.reuses += 1;
            s.valid.clear();
            s.unused.clear();
            return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"}))).into_response();
        }
    }
    // Slow enough that a second replica's refresh would overlap this one.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (access, refresh) = shared.issue();
    axum::Json(
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh}),
    )
    .into_response()
}

async fn issuer_server() -> (Shared, String) {
    let shared = Shared::default();
    let prm = |State(shared): State<Shared>| async move {
        let base = shared.lock().base.clone();
        axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
    };
    let metadata = |State(shared): State<Shared>| async move {
        let base = shared.lock().base.clone();
        axum::Json(json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
            "authorization_response_iss_parameter_supported": true,
        }))
    };
    let router = Router::new()
        .route("/mcp", any(issuer_mcp))
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/token", post(issuer_token))
        .with_state(shared.clone());
    let addr = serve(router).await;
    shared.lock().base = format!("http://{addr}");
    (shared, format!("http://{addr}/mcp"))
}

/// A replica: the pre-registered client, the shared token store, no way
/// to authorize again (a failed refresh fails the connect).
async fn refreshing_replica(resource: &str, redis_url: &str) -> Result<Binding, mcp_stack::Error> {
    let store = RedisTokenStore::connect(redis_url).await.unwrap().encrypt_with(&[0x33; 32]);
    let oauth = OAuth::new().client_id("client-1").client_secret(CLIENT_SECRET).store(store);
    let factory = HttpBuilder::new(resource).listen(false).oauth(oauth).build().unwrap();
    Binding::connect(Definition::new("refreshing", factory), Handlers::default()).await
}

async fn whoami(binding: &Binding) -> String {
    let result = tokio::time::timeout(
        Duration::from_secs(20),
        binding.call_tool("whoami", json!({}), CallOpts::default()),
    )
    .await
    .expect("the call ends in time")
    .expect("the call succeeds with a valid token");
    result.content.iter().filter_map(Content::as_text).collect()
}

fn epoch_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Waits until `at` (ms since the epoch); fails if that is already past,
/// so the two replicas truly start together.
async fn start_at(at: u64) {
    let now = epoch_ms();
    assert!(now < at, "this replica was ready {} ms after the common start", now - at);
    tokio::time::sleep(Duration::from_millis(at - now)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_refreshing_at_once_refresh_once() {
    let redis_url = shared_redis(14).await;
    let (shared, resource) = issuer_server().await;
    // Tokens both replicas find in Redis, expiring within the refresh
    // margin: each one's first request refreshes them.
    let (access, refresh) = shared.issue();
    let seeded = Tokens {
        access_token: Secret::new(access),
        token_type: "Bearer".into(),
        refresh_token: Some(Secret::new(refresh)),
        expires_at: Some(SystemTime::now() + Duration::from_secs(5)),
        scope: None,
        issuer: Some(shared.lock().base.clone()),
    };
    let store = RedisTokenStore::connect(&redis_url).await.unwrap().encrypt_with(&[0x33; 32]);
    store.save(&Url::parse(&resource).unwrap(), &seeded).await.unwrap();

    let at = epoch_ms() + 3_000;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["redis_faults::refresh_replica", "--exact", "--ignored", "--test-threads", "1", "--nocapture"])
        .env("MCP_REPLICA_RESOURCE", &resource)
        .env("MCP_REPLICA_REDIS", &redis_url)
        .env("MCP_REPLICA_START_MS", at.to_string());
    let second =
        tokio::spawn(async move { tokio::time::timeout(Duration::from_secs(60), child.output()).await });

    start_at(at).await;
    let first = tokio::time::timeout(Duration::from_secs(30), refreshing_replica(&resource, &redis_url))
        .await
        .expect("connect ends in time")
        .expect("the first replica connects with the refreshed tokens");
    let mine = whoami(&first).await;

    let out = second.await.unwrap().expect("the second replica finished").expect("run the test binary again");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the second replica failed: {printed}");
    assert!(printed.contains("1 passed"), "the second replica ran no test: {printed}");
    let theirs = printed
        .lines()
        .find_map(|l| l.split("replica token: ").nth(1)?.split_whitespace().next())
        .unwrap_or_else(|| panic!("the second replica named no token: {printed}"))
        .to_owned();

    let (hits, reuses, valid) = {
        let s = shared.lock();
        (s.token_hits, s.reuses, s.valid.contains(&mine))
    };
    assert_eq!(hits, 1, "exactly one refresh at the token endpoint");
    assert_eq!(reuses, 0, "no refresh token was sent twice");
    assert_eq!(mine, "access-2", "the refreshed token");
    assert_eq!(theirs, mine, "both replicas hold the one refreshed token");
    assert!(valid, "and it is valid");
    assert_eq!(whoami(&first).await, mine);
    first.close().await;
}

/// The second replica of the test above, in a process of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by two_processes_refreshing_at_once_refresh_once, in a second process"]
async fn refresh_replica() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set by the parent"));
    let (resource, redis_url, at) =
        (var("MCP_REPLICA_RESOURCE"), var("MCP_REPLICA_REDIS"), var("MCP_REPLICA_START_MS"));
    // Connected to Redis before the start, as the first replica is.
    RedisTokenStore::connect(&redis_url).await.unwrap();
    start_at(at.parse().unwrap()).await;
    let second = tokio::time::timeout(Duration::from_secs(30), refreshing_replica(&resource, &redis_url))
        .await
        .expect("connect ends in time")
        .expect("the second replica connects with the refreshed tokens");
    println!("replica token: {}", whoami(&second).await);
    second.close().await;
}
