//! Pre-registered client credentials stay with the authorization server
//! they belong to (the 2026-07-28 authorization specification's
//! "Authorization Server Binding"): bound by configuration or on their
//! first successful use, kept in the token store, and never shown to a
//! different authorization server, whatever a protected resource's
//! metadata names later. Against a fake MCP server and two fake
//! authorization servers (axum, loopback), each recording what reaches it.

use crate::support::http_server::serve;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use mcp_stack::auth::{AuthorizationHandler, Grant, MemoryStore, OAuth, SigningKey, TokenStore};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);
const CLIENT_ID: &str = "pre-registered-client";
const CLIENT_SECRET: &str = "client-secret-SENTINEL-91d2";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// One fake authorization server: what it was sent, and its settings.
#[derive(Default)]
struct AsInner {
    issuer: String,
    /// Every request that reached it, but for its metadata: method, path,
    /// the Authorization header and the body.
    received: Vec<(String, Option<String>, String)>,
    auth_methods: Vec<&'static str>,
    refuse_refresh: bool,
    issued: u32,
    /// Tokens it issued, shared with the MCP server that accepts them.
    valid: Arc<Mutex<Vec<String>>>,
}

#[derive(Clone, Default)]
struct AuthServer(Arc<Mutex<AsInner>>);

impl AuthServer {
    fn lock(&self) -> std::sync::MutexGuard<'_, AsInner> {
        self.0.lock().unwrap()
    }

    fn received(&self) -> Vec<(String, Option<String>, String)> {
        self.lock().received.clone()
    }

    fn issuer(&self) -> String {
        self.lock().issuer.clone()
    }
}

async fn as_metadata(State(server): State<AuthServer>) -> Response {
    let s = server.lock();
    let base = &s.issuer;
    axum::Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": s.auth_methods,
        "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

async fn as_record(
    State(server): State<AuthServer>,
    method: Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let auth = headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("?").to_owned());
    let text = String::from_utf8_lossy(&body).into_owned();
    let mut s = server.lock();
    s.received.push((
        format!("{method} {}", uri.path()),
        auth,
        format!("{} {text}", uri.query().unwrap_or("")),
    ));
    match uri.path() {
        "/authorize" => {
            let q: HashMap<String, String> =
                url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect();
            let iss = url::form_urlencoded::byte_serialize(s.issuer.as_bytes()).collect::<String>();
            let location = format!("{}?code=the-code-0001&state={}&iss={iss}", q["redirect_uri"], q["state"]);
            (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
        }
        _ => {
            let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
            if form.get("grant_type").map(String::as_str) == Some("refresh_token") && s.refuse_refresh {
                return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_grant"})))
                    .into_response();
            }
            s.issued += 1;
            let access = format!("access-{}-{}", s.issuer.len(), s.issued);
            s.valid.lock().unwrap().push(access.clone());
            axum::Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": format!("refresh-{}", s.issued)}))
                .into_response()
        }
    }
}

async fn auth_server(valid: Arc<Mutex<Vec<String>>>, auth_methods: Vec<&'static str>) -> AuthServer {
    let server = AuthServer::default();
    server.lock().valid = valid;
    server.lock().auth_methods = auth_methods;
    let router = Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/authorize", get(as_record))
        .route("/token", post(as_record))
        .with_state(server.clone());
    server.lock().issuer = format!("http://{}", serve(router).await);
    server
}

/// The MCP server: its resource metadata names `names` (switchable); it
/// takes any token the authorization servers issued and still valid.
#[derive(Clone)]
struct Mcp {
    base: Arc<Mutex<String>>,
    names: Arc<Mutex<Option<String>>>,
    valid: Arc<Mutex<Vec<String>>>,
}

async fn mcp(State(m): State<Mcp>, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    if !token.is_some_and(|t| m.valid.lock().unwrap().contains(&t)) {
        let base = m.base.lock().unwrap().clone();
        let challenge =
            format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    if id.is_null() {
        return StatusCode::ACCEPTED.into_response();
    }
    let reply = match body["method"].as_str().unwrap_or_default() {
        "server/discover" => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
        "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "bound", "version": "1"}}}),
        "tools/list" => {
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}})
        }
        "tools/call" => {
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}})
        }
        _ => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
    };
    ([(header::CONTENT_TYPE, "application/json")], reply.to_string()).into_response()
}

async fn prm(State(m): State<Mcp>) -> Response {
    let Some(names) = m.names.lock().unwrap().clone() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let base = m.base.lock().unwrap().clone();
    axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [names]})).into_response()
}

/// The MCP server, with `extra` routes at its own origin (for the
/// 2025-03-26 fallback, where the authorization server is the MCP origin).
async fn mcp_server(
    valid: Arc<Mutex<Vec<String>>>,
    names: Option<String>,
    extra: Option<Router>,
) -> (Mcp, String) {
    let m = Mcp { base: Arc::default(), names: Arc::new(Mutex::new(names)), valid };
    let mut router = Router::new()
        .route("/mcp", any(mcp))
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .with_state(m.clone());
    if let Some(extra) = extra {
        router = router.merge(extra);
    }
    let addr = serve(router).await;
    *m.base.lock().unwrap() = format!("http://{addr}");
    (m, format!("http://{addr}/mcp"))
}

fn oauth(store: &MemoryStore) -> OAuth {
    OAuth::new()
        .client_id(CLIENT_ID)
        .client_secret(CLIENT_SECRET)
        .handler(AuthorizationHandler::headless(REDIRECT, LIMIT).unwrap())
        .store(store.clone())
}

async fn connect(url: &str, oauth: OAuth) -> Result<Binding, mcp_stack::Error> {
    let factory = HttpBuilder::new(url).listen(false).oauth(oauth).build().unwrap();
    tokio::time::timeout(LIMIT, Binding::connect(Definition::new("bound", factory), Handlers::default()))
        .await
        .expect("connect finished in time")
}

/// The refusal names both issuers and shows nothing secret.
fn assert_mismatch(e: &mcp_stack::Error, bound: &str, other: &str) {
    assert_eq!(e.class(), FailureClass::AuthFailed, "{e}");
    let shown = format!("{e} {e:?} {}", serde_json::to_string(&e.report()).unwrap());
    assert!(shown.contains(bound) && shown.contains(other), "both issuers named: {shown}");
    assert!(!shown.contains(CLIENT_SECRET), "{shown}");
}

/// Bound on first use and kept in the store: when the resource's metadata
/// later names another authorization server, neither this binding nor a
/// new one with the same store (another process, as it were) sends that
/// server anything, and the refusal names both issuers.
#[tokio::test]
async fn credentials_bound_on_first_use_never_reach_another_authorization_server() {
    let valid = Arc::new(Mutex::new(Vec::new()));
    let first = auth_server(valid.clone(), vec!["client_secret_basic"]).await;
    let second = auth_server(valid.clone(), vec!["client_secret_basic"]).await;
    let (mcp, url) = mcp_server(valid.clone(), Some(first.issuer()), None).await;
    let store = MemoryStore::new();

    let binding = connect(&url, oauth(&store)).await.unwrap();
    let server = url::Url::parse(&url).unwrap();
    assert_eq!(store.load_client_issuer(&server, CLIENT_ID).await.unwrap(), Some(first.issuer()));
    let basic = first
        .received()
        .iter()
        .filter(|(_, auth, _)| auth.as_deref().is_some_and(|a| a.starts_with("Basic ")))
        .count();
    assert_eq!(basic, 1, "the secret went to the first server, once: {:?}", first.received());

    // The resource now names the second server, every token is refused
    // and the first server refuses the refresh: a new authorization runs,
    // and stops before the second server is sent anything.
    *mcp.names.lock().unwrap() = Some(second.issuer());
    valid.lock().unwrap().clear();
    first.lock().refuse_refresh = true;
    let e = tokio::time::timeout(LIMIT, binding.call_tool("echo", json!({}), CallOpts::default()))
        .await
        .unwrap()
        .unwrap_err();
    assert_mismatch(&e, &first.issuer(), &second.issuer());
    assert!(second.received().is_empty(), "the second server was sent {:?}", second.received());
    binding.close().await;

    // A new binding with the same store knows the binding from it.
    let e = connect(&url, oauth(&store)).await.unwrap_err();
    assert_mismatch(&e, &first.issuer(), &second.issuer());
    assert!(second.received().is_empty(), "the second server was sent {:?}", second.received());
}

/// A configured issuer (`OAuth::client_issuer`) binds from the start.
#[tokio::test]
async fn a_configured_issuer_refuses_any_other_before_anything_is_sent() {
    let valid = Arc::new(Mutex::new(Vec::new()));
    let configured = auth_server(valid.clone(), vec!["client_secret_basic"]).await;
    let named = auth_server(valid.clone(), vec!["client_secret_basic"]).await;
    let (_mcp, url) = mcp_server(valid, Some(named.issuer()), None).await;
    let store = MemoryStore::new();
    let e = connect(&url, oauth(&store).client_issuer(configured.issuer())).await.unwrap_err();
    assert_mismatch(&e, &configured.issuer(), &named.issuer());
    assert!(named.received().is_empty(), "{:?}", named.received());
    assert!(configured.received().is_empty(), "{:?}", configured.received());
}

/// The same rule for a `private_key_jwt` client: no assertion signed for
/// (or sent to) an authorization server the client is not bound to.
#[tokio::test]
async fn a_private_key_client_sends_no_assertion_to_another_authorization_server() {
    let valid = Arc::new(Mutex::new(Vec::new()));
    let first = auth_server(valid.clone(), vec!["private_key_jwt"]).await;
    let second = auth_server(valid.clone(), vec!["private_key_jwt"]).await;
    let (mcp, url) = mcp_server(valid.clone(), Some(first.issuer()), None).await;
    let store = MemoryStore::new();
    let key = SigningKey::generate_es256().unwrap();
    let machine = || {
        OAuth::new()
            .client_id(CLIENT_ID)
            .grant(Grant::ClientCredentials)
            .private_key(key.clone())
            .store(store.clone())
    };
    let binding = connect(&url, machine()).await.unwrap();
    let sent = first.received();
    assert!(sent.iter().any(|(_, _, body)| body.contains("client_assertion=")), "{sent:?}");
    binding.close().await;

    *mcp.names.lock().unwrap() = Some(second.issuer());
    valid.lock().unwrap().clear();
    let e = connect(&url, machine()).await.unwrap_err();
    assert_mismatch(&e, &first.issuer(), &second.issuer());
    assert!(second.received().is_empty(), "the second server was sent {:?}", second.received());
}

/// The 2025-03-26 fallback (no resource metadata: the MCP server's origin
/// is the authorization server): a secret bound elsewhere is never posted
/// to that origin.
#[tokio::test]
async fn the_2025_03_26_fallback_posts_no_secret_to_an_origin_it_is_not_bound_to() {
    let valid = Arc::new(Mutex::new(Vec::new()));
    let bound = auth_server(valid.clone(), vec!["client_secret_basic"]).await;
    // The MCP origin's own authorization endpoints, recording what they get.
    let own = AuthServer::default();
    own.lock().auth_methods = vec!["client_secret_basic"];
    own.lock().valid = valid.clone();
    let extra = Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/authorize", get(as_record))
        .route("/token", post(as_record))
        .with_state(own.clone());
    let (mcp, url) = mcp_server(valid, None, Some(extra)).await;
    own.lock().issuer = mcp.base.lock().unwrap().clone();

    let store = MemoryStore::new();
    let e = connect(&url, oauth(&store).client_issuer(bound.issuer())).await.unwrap_err();
    assert_mismatch(&e, &bound.issuer(), &own.issuer());
    assert!(own.received().is_empty(), "the MCP origin was sent {:?}", own.received());
}
