//! `mcp inspect`: a local web inspector of the command's host (see
//! `docs/inspect.md` for the views, the API and the security rules).
//!
//! Two listeners on the loopback address `--listen` names: the page
//! (its HTML, scripts and JSON API, every request behind the token the
//! command prints) and the apps' sandbox origin (another port, so
//! another origin; each app's documents behind a key of its own). Both
//! pass [`guard::guard`] first. The page's assets are compiled in
//! (`assets/`): no build step, nothing fetched.
//!
//! The page sees the host the command built from its flags and config,
//! and nothing else: no route adds a server, changes a definition or
//! starts a process. Elicitations are answered on the page
//! ([`hub::Hub::elicit`]); every binding's JSON-RPC traffic is copied to
//! the page by a transport wrapper ([`tap::Tapped`]), scrubbed of secrets.

mod api;
mod apps;
mod guard;
mod hub;
mod tap;

use axum::extract::{DefaultBodyLimit, FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Json, Router};
use mcp_stack::handlers::{ElicitRequest, Handlers};
use mcp_stack::host::Host;
use mcp_stack::{Binding, Definition, Error, FailureClass};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;

pub(crate) use hub::Hub;

use crate::commands::Output;
use crate::{failure, usage, Failure, EXIT_CONNECT};

pub(crate) const INDEX_HTML: &str = include_str!("assets/index.html");
const INSPECTOR_JS: &str = include_str!("assets/inspector.js");
const INSPECTOR_CSS: &str = include_str!("assets/inspector.css");
pub(crate) const SANDBOX_HTML: &str = include_str!("assets/sandbox.html");

/// The largest message an app may post, as the page relays it: above the
/// bridge's own bound (1 MiB), so that the bridge is the one that refuses
/// and the app is told why; beyond this the request is refused unread.
const MAX_APP_MESSAGE_BODY: usize = 16 * 1024 * 1024;

/// What the routes share.
pub(crate) struct Inspector {
    host: Host,
    hub: Hub,
    apps: apps::Apps,
    /// The page's origin, `http://127.0.0.1:PORT`.
    origin: String,
    /// The sandbox's origin, `http://127.0.0.1:PORT2`.
    sandbox_origin: String,
}

impl Inspector {
    /// A server the command holds, by name.
    fn binding(&self, name: &str) -> Result<Binding, Error> {
        self.host
            .binding(name)
            .ok_or_else(|| Error::new(FailureClass::NotFound, "no server of that name").with_binding(name))
    }
}

/// The handlers and definitions of an inspected host: elicitations go to
/// the page, and every transport's traffic is copied to it.
pub(crate) fn attach(
    hub: &Hub,
    handlers: Handlers,
    definitions: Vec<Definition>,
) -> (Handlers, Vec<Definition>) {
    let asking = hub.clone();
    let handlers = handlers.elicitation(move |request: ElicitRequest| {
        let hub = asking.clone();
        async move { hub.elicit(request).await }
    });
    let definitions = definitions
        .into_iter()
        .map(|d| {
            let tapped = tap::Tapped { inner: d.transport().clone(), hub: hub.clone() };
            d.with_transport(Arc::new(tapped))
        })
        .collect();
    (handlers, definitions)
}

/// `--listen`: a loopback address only.
pub(crate) fn check_listen(addr: SocketAddr) -> Result<SocketAddr, Failure> {
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(usage(format!(
            "--listen {addr}: the inspector listens on a loopback address only (127.0.0.1, ::1)"
        )))
    }
}

/// Serves the page until Ctrl-C or SIGTERM; prints its URL first.
pub(crate) async fn serve(
    host: &Host,
    hub: Hub,
    listen: SocketAddr,
    open_browser: bool,
) -> Result<Output, Failure> {
    let listen = check_listen(listen)?;
    let bind = |addr: SocketAddr| async move {
        tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            failure(
                EXIT_CONNECT,
                &Error::new(FailureClass::InvalidConfig, format!("cannot listen on {addr}: {e}")),
            )
        })
    };
    let page_listener = bind(listen).await?;
    let sandbox_listener = bind(SocketAddr::new(listen.ip(), 0)).await?;
    let page_addr = page_listener.local_addr().map_err(|e| usage(e.to_string()))?;
    let sandbox_addr = sandbox_listener.local_addr().map_err(|e| usage(e.to_string()))?;
    let token = guard::random_secret();
    let page_gate = Arc::new(guard::Gate { addr: page_addr, secret: guard::Secret::Token(token.clone()) });
    let sandbox_gate = Arc::new(guard::Gate { addr: sandbox_addr, secret: guard::Secret::PerApp });
    let inspector = Arc::new(Inspector {
        host: host.clone(),
        hub,
        apps: apps::Apps::default(),
        origin: page_gate.origin(),
        sandbox_origin: sandbox_gate.origin(),
    });
    let url = format!("{}/?token={token}", inspector.origin);
    if crate::terminal::out_line(&url).is_err() {
        return Ok(Output::ok(json!({}), Vec::new()));
    }
    crate::terminal::err_line("serving the inspector; Ctrl-C to stop");
    if open_browser {
        open_in_browser(&url);
    }
    let forward = tokio::spawn(api::forward_events(inspector.clone()));
    let page =
        page_router(inspector.clone(), token).layer(middleware::from_fn_with_state(page_gate, guard::guard));
    let sandbox = sandbox_router(inspector).layer(middleware::from_fn_with_state(sandbox_gate, guard::guard));
    let (stop, _) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let page_server = axum::serve(page_listener, page).with_graceful_shutdown(stopped(stop.subscribe()));
    let sandbox_server =
        axum::serve(sandbox_listener, sandbox).with_graceful_shutdown(stopped(stop.subscribe()));
    let servers = tokio::spawn(async move {
        let (a, b) = tokio::join!(page_server, sandbox_server);
        a.and(b)
    });
    interrupted().await;
    let _ = stop.send(true);
    // Open event streams never end by themselves: the servers get a
    // moment to finish what is in flight, then are dropped.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), servers).await;
    forward.abort();
    Ok(Output::ok(json!({}), Vec::new()))
}

/// Ctrl-C or SIGTERM.
async fn interrupted() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}

fn page_router(inspector: Arc<Inspector>, token: String) -> Router {
    let index = INDEX_HTML.replace("__TOKEN__", &token);
    let page_csp = format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; \
         connect-src 'self'; frame-src {}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        inspector.sandbox_origin
    );
    let index = move || {
        let (index, csp) = (index.clone(), page_csp.clone());
        async move { with_csp(Html(index).into_response(), &csp) }
    };
    Router::new()
        .route("/", get(index))
        .route(
            "/assets/inspector.js",
            get(|| async { asset("text/javascript; charset=utf-8", INSPECTOR_JS) }),
        )
        .route("/assets/inspector.css", get(|| async { asset("text/css; charset=utf-8", INSPECTOR_CSS) }))
        .route("/api/servers", get(api::servers))
        .route("/api/catalog", get(api::catalog))
        .route("/api/model-tools", get(api::model_tools))
        .route("/api/call", post(api::call))
        .route("/api/prompt", post(api::prompt))
        .route("/api/prompts", get(api::prompts))
        .route("/api/resources", get(api::resources))
        .route("/api/read", post(api::read))
        .route("/api/tasks", get(api::tasks))
        .route("/api/tasks/status", post(api::task_status))
        .route("/api/tasks/result", post(api::task_result))
        .route("/api/tasks/cancel", post(api::task_cancel))
        .route("/api/elicitations/answer", post(api::elicitation_answer))
        .route("/api/stream", get(api::stream))
        .route("/api/apps", post(apps::open))
        .route("/api/apps/message", post(apps::message).layer(DefaultBodyLimit::max(MAX_APP_MESSAGE_BODY)))
        .route("/api/apps/teardown", post(apps::teardown))
        .with_state(inspector)
}

fn sandbox_router(inspector: Arc<Inspector>) -> Router {
    Router::new().route("/sandbox", get(apps::proxy)).route("/app", get(apps::document)).with_state(inspector)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn with_csp(mut response: Response, csp: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(csp) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    response.headers_mut().insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// A JSON request body. One that cannot be read (not JSON, a field
/// missing or of the wrong type) is answered like every other failure:
/// `{error}` with `invalid_arguments`, 400.
pub(crate) struct Body<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(Body(value)),
            Err(rejection) => Err(bad_request(rejection.body_text())),
        }
    }
}

/// Query parameters, refused as [`Body`] refuses a body.
pub(crate) struct Params<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(Params(value)),
            Err(rejection) => Err(bad_request(rejection.body_text())),
        }
    }
}

fn bad_request(why: String) -> Response {
    error_response(&Error::new(FailureClass::InvalidArguments, why))
}

/// A failure as the API answers it: its report, with a status that says
/// whose fault it was.
pub(crate) fn error_response(e: &Error) -> Response {
    let status = match e.class() {
        FailureClass::NotFound => StatusCode::NOT_FOUND,
        FailureClass::InvalidArguments | FailureClass::InvalidConfig | FailureClass::ElicitationInvalid => {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::BAD_GATEWAY,
    };
    (status, Json(json!({ "error": e.report() }))).into_response()
}

/// Best effort: the URL is printed either way.
fn open_in_browser(url: &str) {
    let program = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let _ = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
