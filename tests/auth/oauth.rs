//! OAuth authorization end to end: a binding over streamable HTTP against a
//! fake MCP server that is its own authorization server (axum, loopback),
//! with the headless handler.

use crate::support::http_server::serve;
use crate::support::recorded_events::Events;
use crate::support::trace_capture;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use mcp_stack::auth::{AuthorizationHandler, MemoryStore, OAuth, Secret, TokenStore, Tokens};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::State as BindingState;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Event, FailureClass};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};

const LIMIT: Duration = Duration::from_secs(20);
const SENTINEL: &str = "SENTINEL-7f3a";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(LIMIT, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {LIMIT:?}"))
}

#[derive(Default)]
struct Inner {
    base: String,
    issued: u32,
    valid: Vec<String>,
    /// Every secret value the client sent or was given.
    secrets: Vec<String>,
    authorize_requests: u32,
    refreshes: u32,
    /// Tokens presented on tools/call, in order.
    call_tokens: Vec<Option<String>>,
    prm_resource: Option<String>,
    issuer: Option<String>,
    /// Held while a refresh is answered (released by the test).
    refresh_gate: Option<Arc<Semaphore>>,
    refresh_arrived: Arc<Notify>,
    /// Where `redirect` tool calls are sent (307).
    redirect_to: Option<String>,
    /// Authorization headers the other origin saw.
    foreign_auth: Vec<Option<String>>,
    /// Refuse every refresh with `invalid_grant`.
    refuse_refresh: bool,
    /// Tokens presented on `GET /mcp` (the listening stream).
    get_tokens: Vec<Option<String>>,
    /// The person clicks Deny: `/authorize` redirects with `access_denied`.
    deny: bool,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<Inner>>);

impl Fake {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap()
    }

    fn issue(&self) -> (String, String) {
        let mut s = self.lock();
        s.issued += 1;
        let access = format!("{SENTINEL}-access-{}", s.issued);
        let refresh = format!("{SENTINEL}-refresh-{}", s.issued);
        s.valid.push(access.clone());
        s.secrets.push(access.clone());
        s.secrets.push(refresh.clone());
        (access, refresh)
    }

    /// The server no longer accepts any token issued so far.
    fn revoke_all(&self) {
        self.lock().valid.clear();
    }
}

fn rpc_result(id: &Value, result: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response()
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers.get(header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ").map(str::to_owned)
}

async fn mcp(State(fake): State<Fake>, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    if method == Method::GET {
        // The listening stream needs the token too; with it, this server
        // has no stream to offer.
        let token = bearer(&headers);
        fake.lock().get_tokens.push(token.clone());
        let valid = token.is_some_and(|t| fake.lock().valid.contains(&t));
        if !valid {
            let base = fake.lock().base.clone();
            let challenge =
                format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
            return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
        }
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rpc = body["method"].as_str().unwrap_or("").to_owned();
    let token = bearer(&headers);
    let base = fake.lock().base.clone();
    if rpc == "tools/call" {
        fake.lock().call_tokens.push(token.clone());
    }
    let valid = token.as_ref().is_some_and(|t| fake.lock().valid.contains(t));
    if !valid {
        let error = if token.is_some() { ", error=\"invalid_token\"" } else { "" };
        let challenge =
            format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"{error}");
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let id = body["id"].clone();
    match rpc.as_str() {
        "initialize" => rpc_result(
            &id,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}}),
        ),
        _ if id.is_null() => StatusCode::ACCEPTED.into_response(),
        "tools/list" => rpc_result(
            &id,
            json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "admin", "inputSchema": {"type": "object"}},
                {"name": "redirect", "inputSchema": {"type": "object"}},
            ]}),
        ),
        "tools/call" => match body["params"]["name"].as_str() {
            Some("admin") => {
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"admin\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                );
                (StatusCode::FORBIDDEN, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
            }
            Some("redirect") => {
                let to = fake.lock().redirect_to.clone().unwrap_or_default();
                (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]).into_response()
            }
            _ => rpc_result(&id, json!({"content": [{"type": "text", "text": "ok"}]})),
        },
        _ => rpc_result(&id, json!({})),
    }
}

async fn prm(State(fake): State<Fake>) -> Response {
    let s = fake.lock();
    let resource = s.prm_resource.clone().unwrap_or(format!("{}/mcp", s.base));
    axum::Json(json!({"resource": resource, "authorization_servers": [s.base]})).into_response()
}

async fn as_metadata(State(fake): State<Fake>) -> Response {
    let s = fake.lock();
    let base = &s.base;
    axum::Json(json!({
        "issuer": s.issuer.clone().unwrap_or(base.clone()),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": ["read", "admin", "offline_access"],
    }))
    .into_response()
}

async fn authorize(State(fake): State<Fake>, uri: axum::http::Uri) -> Response {
    let q: HashMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect();
    let code = format!("{SENTINEL}-code");
    let mut s = fake.lock();
    s.authorize_requests += 1;
    s.secrets.push(code.clone());
    s.secrets.push(q["state"].clone());
    if s.deny {
        let iss = url::form_urlencoded::byte_serialize(s.base.as_bytes()).collect::<String>();
        let location = format!("{}?error=access_denied&state={}&iss={iss}", q["redirect_uri"], q["state"]);
        return (StatusCode::FOUND, [(header::LOCATION, location)]).into_response();
    }
    let location = format!(
        "{}?code={code}&state={}&iss={}",
        q["redirect_uri"],
        q["state"],
        url::form_urlencoded::byte_serialize(s.base.as_bytes()).collect::<String>()
    );
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn token(State(fake): State<Fake>, body: Bytes) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    {
        let mut s = fake.lock();
        for key in ["code_verifier", "client_secret"] {
            if let Some(v) = form.get(key) {
                s.secrets.push(v.clone());
            }
        }
    }
    if form.get("client_secret").map(String::as_str) != Some(&format!("{SENTINEL}-client-secret")) {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"}))).into_response();
    }
    if form["grant_type"] == "refresh_token" {
        if fake.lock().refuse_refresh {
            return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"}))).into_response();
        }
        let (gate, arrived) = {
            let mut s = fake.lock();
            s.refreshes += 1;
            (s.refresh_gate.clone(), s.refresh_arrived.clone())
        };
        arrived.notify_one();
        if let Some(gate) = gate {
            let _permit = gate.acquire().await.unwrap();
        }
    }
    let (access, refresh) = fake.issue();
    axum::Json(
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh}),
    )
    .into_response()
}

async fn fake_server() -> (Fake, String) {
    let fake = Fake::default();
    let router = Router::new()
        .route("/mcp", any(mcp))
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(fake.clone());
    let addr = serve(router).await;
    fake.lock().base = format!("http://{addr}");
    (fake, format!("http://{addr}/mcp"))
}

/// Another origin: records the Authorization header of what reaches it.
async fn other_origin(fake: Fake) -> String {
    let router = Router::new()
        .route(
            "/mcp",
            any(|State(fake): State<Fake>, headers: HeaderMap, body: Bytes| async move {
                let auth = headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("?").to_owned());
                fake.lock().foreign_auth.push(auth);
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                rpc_result(&body["id"], json!({"content": [{"type": "text", "text": "elsewhere"}]}))
            }),
        )
        .with_state(fake);
    format!("http://{}/mcp", serve(router).await)
}

fn oauth() -> OAuth {
    let handler = AuthorizationHandler::headless(REDIRECT, LIMIT).unwrap();
    OAuth::new().client_id("client-1").client_secret(format!("{SENTINEL}-client-secret")).handler(handler)
}

async fn connect(url: &str, oauth: OAuth, events: &Events) -> Result<Binding, mcp_stack::Error> {
    let factory = HttpBuilder::new(url).listen(false).allow_redirects(true).oauth(oauth).build().unwrap();
    within("connect", Binding::connect(Definition::new("oauth", factory), events.handlers())).await
}

/// The whole flow, a refresh on `invalid_token`, the step-up bound, and no
/// secret (client secret, access and refresh tokens, code, verifier,
/// state) in Debug of the binding or its status, in errors, events or
/// tracing (the binary's process-wide subscriber, which sees every test's
/// events: none may show a sentinel).
#[tokio::test]
async fn the_flow_refreshes_bounds_step_up_and_leaks_no_secret() {
    let capture = trace_capture::global();

    let (fake, url) = fake_server().await;
    let events = Events::default();
    let binding = connect(&url, oauth(), &events).await.unwrap();
    let mut shown = vec![format!("{binding:?}"), format!("{:?}", binding.status())];
    assert_eq!(fake.lock().authorize_requests, 1);
    let result = within("call", binding.call_tool("echo", json!({}), CallOpts::default())).await.unwrap();
    assert!(!result.is_error);

    // The server forgets the token: the call is answered after a refresh.
    fake.revoke_all();
    let result = within("call", binding.call_tool("echo", json!({}), CallOpts::default())).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(fake.lock().refreshes, 1);
    assert_eq!(fake.lock().authorize_requests, 1, "a refresh, not a new authorization");

    // A scope the server never grants: two step-ups, then auth_denied.
    let e = within("admin", binding.call_tool("admin", json!({}), CallOpts::default())).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthDenied, "{e}");
    assert_eq!(fake.lock().authorize_requests, 3, "the first authorization and two step-ups");
    shown.push(format!("{e:?} {e}"));

    let states: Vec<(BindingState, BindingState)> = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::StateChanged { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .collect();
    assert!(states.contains(&(BindingState::Starting, BindingState::Authenticating)), "{states:?}");
    assert!(states.contains(&(BindingState::Authenticating, BindingState::Starting)), "{states:?}");
    assert!(states.contains(&(BindingState::Ready, BindingState::Authenticating)), "{states:?}");

    shown.push(format!("{binding:?}"));
    shown.push(format!("{:?}", binding.status()));
    binding.close().await;
    shown.push(format!("{:?}", events.0.lock().unwrap()));
    let traced = capture.text();
    assert!(traced.contains("step_up=true"), "the flow ran under the subscriber: {traced}");
    shown.push(traced);
    let secrets = fake.lock().secrets.clone();
    assert!(secrets.len() >= 8, "{} secrets recorded", secrets.len());
    for text in &shown {
        assert!(!text.contains(SENTINEL), "a sentinel leaked into: {text}");
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "a secret leaked into: {text}");
        }
    }
}

/// A call made while a refresh runs waits for it and is sent once, with
/// the new token; the refresh runs once for both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_during_a_refresh_waits_for_it() {
    let (fake, url) = fake_server().await;
    let binding = connect(&url, oauth(), &Events::default()).await.unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let arrived = fake.lock().refresh_arrived.clone();
    fake.lock().refresh_gate = Some(gate.clone());
    fake.revoke_all();
    let binding = Arc::new(binding);
    let first = tokio::spawn({
        let b = binding.clone();
        async move { b.call_tool("echo", json!({}), CallOpts::default()).await }
    });
    within("the refresh to arrive", arrived.notified()).await;
    let second = tokio::spawn({
        let b = binding.clone();
        async move { b.call_tool("echo", json!({}), CallOpts::default()).await }
    });
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    gate.add_permits(10);
    assert!(!within("first", first).await.unwrap().unwrap().is_error);
    assert!(!within("second", second).await.unwrap().unwrap().is_error);
    let s = fake.lock();
    assert_eq!(s.refreshes, 1);
    let fresh = s.valid.last().cloned();
    // The first call's refused try, then both with the refreshed token.
    assert_eq!(s.call_tokens.len(), 3, "{:?}", s.call_tokens.len());
    assert!(s.call_tokens[1..].iter().all(|t| *t == fresh));
}

/// A redirect to another origin carries no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_never_follows_a_redirect_to_another_origin() {
    let (fake, url) = fake_server().await;
    let elsewhere = other_origin(fake.clone()).await;
    fake.lock().redirect_to = Some(elsewhere);
    let binding = connect(&url, oauth(), &Events::default()).await.unwrap();
    let result = within("call", binding.call_tool("redirect", json!({}), CallOpts::default())).await.unwrap();
    assert!(!result.is_error);
    let seen = fake.lock().foreign_auth.clone();
    assert_eq!(seen, vec![None], "the other origin saw an Authorization header");
    // The same request did carry the token on the server's own origin.
    assert!(fake.lock().call_tokens.last().unwrap().is_some());
}

/// A PRM for another resource, or AS metadata naming another issuer, ends
/// the connect with auth_failed before any authorization request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_resource_or_a_wrong_issuer_is_refused() {
    let (fake, url) = fake_server().await;
    fake.lock().prm_resource = Some("https://evil.example.com/mcp".into());
    let e = connect(&url, oauth(), &Events::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthFailed, "{e}");
    assert!(e.to_string().contains("evil.example.com"), "{e}");

    let (fake, url) = fake_server().await;
    fake.lock().issuer = Some("https://attacker.example.com".into());
    let e = connect(&url, oauth(), &Events::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthFailed, "{e}");
    assert!(e.to_string().contains("attacker.example.com"), "{e}");
    assert_eq!(fake.lock().authorize_requests, 0);
}

/// Without a handler there is no way to a token: auth_required.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_handler_the_connect_needs_authorization() {
    let (fake, url) = fake_server().await;
    let e = connect(&url, OAuth::new().client_id("client-1"), &Events::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthRequired, "{e}");
    assert_eq!(fake.lock().authorize_requests, 0);
}

/// HTTP+SSE (2024-11-05): the `GET` event stream and the `POST`s both
/// carry the token; the stream's 401 starts the flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sse_streams_and_posts_with_the_token() {
    type Tx = tokio::sync::mpsc::UnboundedSender<Result<Bytes, std::io::Error>>;
    #[derive(Clone)]
    struct Legacy {
        fake: Fake,
        stream: Arc<Mutex<Option<Tx>>>,
        posts_with_token: Arc<Mutex<u32>>,
    }
    fn refused(fake: &Fake, headers: &HeaderMap) -> Option<Response> {
        let base = fake.lock().base.clone();
        let ok = bearer(headers).is_some_and(|t| fake.lock().valid.contains(&t));
        (!ok).then(|| {
            let challenge =
                format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
            (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response()
        })
    }
    async fn sse(State(l): State<Legacy>, headers: HeaderMap) -> Response {
        if let Some(r) = refused(&l.fake, &headers) {
            return r;
        }
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tx.send(Ok(Bytes::from("event: endpoint\ndata: /message\n\n"))).unwrap();
        *l.stream.lock().unwrap() = Some(tx);
        let stream =
            futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|i| (i, rx)) });
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(axum::body::Body::from_stream(stream))
            .unwrap()
    }
    async fn message(State(l): State<Legacy>, headers: HeaderMap, body: Bytes) -> Response {
        if let Some(r) = refused(&l.fake, &headers) {
            return r;
        }
        *l.posts_with_token.lock().unwrap() += 1;
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let id = body["id"].clone();
        let result = match body["method"].as_str() {
            _ if id.is_null() => return StatusCode::ACCEPTED.into_response(),
            Some("initialize") => {
                json!({"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy", "version": "1"}})
            }
            Some("tools/list") => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
            Some("tools/call") => json!({"content": [{"type": "text", "text": "ok"}]}),
            _ => json!({}),
        };
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if let Some(tx) = l.stream.lock().unwrap().as_ref() {
            let _ = tx.send(Ok(Bytes::from(format!("event: message\ndata: {reply}\n\n"))));
        }
        StatusCode::ACCEPTED.into_response()
    }

    let fake = Fake::default();
    let legacy = Legacy { fake: fake.clone(), stream: Arc::default(), posts_with_token: Arc::default() };
    let auth = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(fake.clone());
    let router = Router::new()
        .route("/sse", get(sse))
        .route("/message", post(message))
        .with_state(legacy.clone())
        .merge(auth);
    let addr = serve(router).await;
    fake.lock().base = format!("http://{addr}");
    // The PRM names the MCP endpoint as resource; for HTTP+SSE that is /sse.
    fake.lock().prm_resource = Some(format!("http://{addr}/sse"));
    let factory = HttpBuilder::new(format!("http://{addr}/sse")).oauth(oauth()).build_sse().unwrap();
    let binding = within("connect", Binding::connect(Definition::new("sse", factory), Handlers::default()))
        .await
        .unwrap();
    let result = within("call", binding.call_tool("echo", json!({}), CallOpts::default())).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(fake.lock().authorize_requests, 1);
    assert!(*legacy.posts_with_token.lock().unwrap() >= 3, "initialize, tools/list and tools/call");
    binding.close().await;
}

/// Stored tokens that expire within the margin are refreshed before the
/// first request; a refused refresh with no way to ask the user again is
/// auth_expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_tokens_are_refreshed_early_and_a_refused_refresh_expires() {
    let (fake, url) = fake_server().await;
    let (access, refresh) = fake.issue();
    let seeded = |access: &str, refresh: &str| Tokens {
        access_token: Secret::new(access),
        token_type: "Bearer".into(),
        refresh_token: Some(Secret::new(refresh)),
        expires_at: Some(std::time::SystemTime::now() + Duration::from_secs(5)),
        scope: None,
        issuer: Some(fake.lock().base.clone()),
    };
    let store = MemoryStore::new();
    let server = url::Url::parse(&url).unwrap();
    store.save(&server, &seeded(&access, &refresh)).await.unwrap();
    let binding = connect(&url, oauth().store(store.clone()), &Events::default()).await.unwrap();
    assert_eq!(fake.lock().refreshes, 1, "refreshed before the first request");
    assert_eq!(fake.lock().authorize_requests, 0);
    // The store holds the refreshed tokens.
    let kept = store.load(&server).await.unwrap().unwrap();
    assert_ne!(kept.access_token.expose(), access);
    binding.close().await;

    // Revoked, refresh refused, no handler: auth_expired.
    fake.revoke_all();
    fake.lock().refuse_refresh = true;
    let store = MemoryStore::new();
    store.save(&server, &seeded("revoked", "stale-refresh")).await.unwrap();
    let oauth =
        OAuth::new().client_id("client-1").client_secret(format!("{SENTINEL}-client-secret")).store(store);
    let e = connect(&url, oauth, &Events::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthExpired, "{e}");
}

/// Streamable HTTP's listening `GET` carries the token as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listening_stream_carries_the_token() {
    let (fake, url) = fake_server().await;
    let factory = HttpBuilder::new(&url).listen(true).oauth(oauth()).build().unwrap();
    let binding =
        within("connect", Binding::connect(Definition::new("listen", factory), Handlers::default()))
            .await
            .unwrap();
    let result = within("call", binding.call_tool("echo", json!({}), CallOpts::default())).await.unwrap();
    assert!(!result.is_error);
    let gets = fake.lock().get_tokens.clone();
    assert!(!gets.is_empty(), "no GET was made");
    assert!(gets.iter().all(Option::is_some), "a GET went without the token: {gets:?}");
    assert_eq!(fake.lock().authorize_requests, 1);
    binding.close().await;
}

/// With the automatic protocol choice, a denial while `server/discover`
/// probes ends the dial `auth_denied`: it says nothing about the era, and
/// `initialize` must not ask the person again.
#[tokio::test]
async fn a_denial_while_probing_the_era_ends_the_dial_and_asks_once() {
    let (fake, url) = fake_server().await;
    fake.lock().deny = true;
    let e = connect(&url, oauth(), &Events::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthDenied, "{e}");
    assert_eq!(fake.lock().authorize_requests, 1, "the person was asked once");
}

/// A person slower than the probe's own timeout (`Timeouts::discover`) is
/// waited for, within the startup timeout: the probe does not fall back to
/// `initialize` (which would drop the flow and ask again), whether the
/// person then approves or declines.
#[tokio::test]
async fn a_person_slower_than_the_probe_is_asked_once() {
    for approve in [true, false] {
        let (fake, url) = fake_server().await;
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = asked.clone();
        let headless = AuthorizationHandler::headless(REDIRECT, LIMIT).unwrap();
        let slow = AuthorizationHandler::from_fn(REDIRECT, move |request| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let headless = headless.clone();
            async move {
                // Several times the probe's timeout below: the person reads.
                tokio::time::sleep(Duration::from_millis(1200)).await;
                if approve {
                    headless.authorize(request).await
                } else {
                    Err(mcp_stack::Error::new(FailureClass::AuthDenied, "the person declined"))
                }
            }
        });
        let oauth = OAuth::new()
            .client_id("client-1")
            .client_secret(format!("{SENTINEL}-client-secret"))
            .handler(slow);
        let factory = HttpBuilder::new(&url).listen(false).oauth(oauth).build().unwrap();
        let mut definition = Definition::new("slow", factory);
        let timeouts = definition.timeouts().with_discover(Duration::from_millis(200));
        definition = definition.with_timeouts(timeouts);
        let connected = within("connect", Binding::connect(definition, Handlers::default())).await;
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1, "approve={approve}: asked once");
        match connected {
            Ok(binding) => {
                assert!(approve);
                assert_eq!(binding.status().protocol_version, "2025-11-25");
                binding.close().await;
            }
            Err(e) => {
                assert!(!approve, "{e}");
                assert_eq!(e.class(), FailureClass::AuthDenied, "{e}");
            }
        }
        assert_eq!(fake.lock().authorize_requests, u32::from(approve));
    }
}
