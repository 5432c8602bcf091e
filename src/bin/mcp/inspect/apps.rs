//! Apps rendered by the page: one [`AppBridge`] per rendered app, and the
//! sandbox origin that serves the app's documents.
//!
//! The double iframe: the page frames the sandbox proxy
//! (`assets/sandbox.html`) from the second listener, another origin; the
//! proxy frames the app's HTML from that origin too, with the
//! `Content-Security-Policy` and `Permissions-Policy` headers and the
//! `sandbox`/`allow` attributes that [`app_sandbox`] gives for the app's
//! `_meta.ui` (no `allow-same-origin`: the app runs in an opaque origin,
//! and cannot navigate the top frame or open windows). The HTML is served by
//! URL rather than as `srcdoc`, so its policy is a header it cannot drop.
//! Each app has its own random key; its documents answer `401` without it.
//!
//! Every message the app posts reaches [`AppBridge::handle`] (bounded,
//! checked, classified: an app calls only its own server's tools that are
//! visible to apps). What the app asks of the host (`ui/open-link`,
//! `ui/message`, `ui/update-model-context`) and its log entries are shown
//! to the person on the page; the inspector never opens a link itself (the
//! person may, from the page) and answers the app `{}`: handled.

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use mcp_stack::catalog::apps::{app_sandbox, AppSandbox};
use mcp_stack::host::app_bridge::{AppBridge, AppHostContext};
use mcp_stack::{CallOpts, Error, FailureClass};
use serde::Deserialize;
use serde_json::{json, value::RawValue, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::guard::secret_eq;
use super::hub::Hub;
use super::{error_response, Body, Inspector, Params};

/// Apps rendered at once; a new one beyond tears the oldest down.
pub(crate) const MAX_LIVE_APPS: usize = 16;

/// One rendered app.
pub(crate) struct AppSession {
    id: String,
    binding: String,
    key: String,
    bridge: AppBridge,
    html: String,
    sandbox: AppSandbox,
}

/// The rendered apps, oldest first.
#[derive(Default)]
pub(crate) struct Apps {
    live: Mutex<VecDeque<Arc<AppSession>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Apps {
    fn get(&self, id: &str) -> Option<Arc<AppSession>> {
        self.live.lock().expect("apps").iter().find(|a| a.id == id).cloned()
    }

    /// Tells every app of `binding` that its server's lists changed.
    pub(crate) fn catalog_changed(&self, hub: &Hub, binding: &str) {
        let live: Vec<Arc<AppSession>> =
            self.live.lock().expect("apps").iter().filter(|a| a.binding == binding).cloned().collect();
        for app in live {
            let mut messages = app.bridge.tools_changed();
            messages.extend(app.bridge.resources_changed());
            push(hub, &app.id, messages);
        }
    }

    fn remove(&self, id: &str) -> Option<Arc<AppSession>> {
        let mut live = self.live.lock().expect("apps");
        let at = live.iter().position(|a| a.id == id)?;
        live.remove(at)
    }
}

#[derive(Deserialize)]
pub(crate) struct Open {
    server: String,
    tool: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// `POST /api/apps`: renders the app of `tool` of `server`, and calls the
/// tool with `arguments`; its input and result reach the app through the
/// stream once the app initialized.
pub(crate) async fn open(State(inspector): State<Arc<Inspector>>, Body(open): Body<Open>) -> Response {
    match open_app(&inspector, open).await {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(e) => error_response(&e),
    }
}

async fn open_app(inspector: &Arc<Inspector>, open: Open) -> Result<Value, Error> {
    let binding = inspector.binding(&open.server)?;
    let arguments = match open.arguments {
        None | Some(Value::Null) => json!({}),
        Some(a @ Value::Object(_)) => a,
        Some(_) => return Err(Error::new(FailureClass::InvalidArguments, "arguments is not an object")),
    };
    let catalog = binding.catalog();
    let uri = catalog
        .tool(&open.tool)
        .and_then(|t| t.app.as_ref())
        .and_then(|a| a.resource_uri.clone())
        .ok_or_else(|| Error::new(FailureClass::NotFound, "the server lists no such tool with an app"))?;
    let hub = inspector.hub.clone();
    let id = format!("a{}", inspector.apps.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
    let bridge = AppBridge::new(binding.clone(), &open.tool, AppHostContext::default())?
        .with_open_link(decision(&hub, &id, "open-link"))
        .with_message(decision(&hub, &id, "message"))
        .with_model_context(decision(&hub, &id, "model-context"));
    let resource = binding.read_app(&uri, CallOpts::default()).await?;
    let sandbox = app_sandbox(&resource.meta)?;
    let bridge = bridge.with_sandbox(&resource.meta);
    let session = Arc::new(AppSession {
        id: id.clone(),
        binding: open.server.clone(),
        key: super::guard::random_secret(),
        bridge,
        html: resource.html,
        sandbox,
    });
    let evicted = {
        let mut live = inspector.apps.live.lock().expect("apps");
        live.push_back(session.clone());
        (live.len() > MAX_LIVE_APPS).then(|| live.pop_front()).flatten()
    };
    if let Some(old) = evicted {
        push(&hub, &old.id, old.bridge.teardown("the inspector renders too many apps"));
    }
    push(&hub, &id, session.bridge.tool_input(arguments.clone()));
    let caller = session.clone();
    let tool = open.tool.clone();
    tokio::spawn(async move {
        let messages = match binding.call_tool(&tool, arguments, CallOpts::default()).await {
            Ok(result) => caller.bridge.tool_result(&result),
            Err(e) => caller.bridge.tool_cancelled(&format!("{}: {}", e.class(), e.message())),
        };
        push(&hub, &caller.id, messages);
    });
    Ok(json!({
        "app": id,
        "sandboxUrl": format!("{}/sandbox?app={id}&key={}", inspector.sandbox_origin, session.key),
        "sandbox": session.sandbox.sandbox,
        "allow": session.sandbox.allow,
        "uri": uri,
        "fingerprint": resource.fingerprint,
        "csp": session.sandbox.content_security_policy,
        "warnings": resource.warnings,
    }))
}

/// A host handler that shows what the app asked on the page and answers
/// that it was handled.
fn decision(
    hub: &Hub,
    app: &str,
    kind: &'static str,
) -> tower::util::BoxCloneSyncService<Value, Value, Error> {
    let (hub, app) = (hub.clone(), app.to_string());
    tower::util::BoxCloneSyncService::new(tower::service_fn(move |params: Value| {
        hub.publish(json!({ "type": "app-decision", "app": app, "kind": kind, "detail": params }));
        async { Ok::<_, Error>(json!({})) }
    }))
}

/// Sends `messages` to app `app` through the stream (nothing when empty).
fn push(hub: &Hub, app: &str, messages: Vec<Value>) {
    if !messages.is_empty() {
        hub.publish(json!({ "type": "app", "app": app, "messages": messages }));
    }
}

#[derive(Deserialize)]
pub(crate) struct Message<'a> {
    app: String,
    #[serde(borrow)]
    message: &'a RawValue,
}

/// `POST /api/apps/message`: one message the app posted, as it came (its
/// bytes go to the bridge unparsed, so the bridge's size bound holds for
/// what the app sent). Answered at once with `{messages: []}`: the bridge
/// handles it in a task of its own and its answers reach the app through
/// the stream. A slow call of the app's then holds none of the page's
/// connections (a browser keeps six per origin), and a flood reaches the
/// bridge's bound on requests in flight and is refused there, instead of
/// queueing in the browser.
pub(crate) async fn message(State(inspector): State<Arc<Inspector>>, body: axum::body::Bytes) -> Response {
    let Ok(message) = serde_json::from_slice::<Message<'_>>(&body) else {
        let e = Error::new(FailureClass::InvalidArguments, "the body is not {app, message}");
        return error_response(&e);
    };
    let Some(session) = inspector.apps.get(&message.app) else {
        return error_response(&Error::new(FailureClass::NotFound, "no such app (torn down?)"));
    };
    let raw = message.message.get().as_bytes().to_vec();
    let hub = inspector.hub.clone();
    tokio::spawn(async move {
        let asked_before = session.bridge.is_teardown_requested();
        let messages = session.bridge.handle(&raw).await;
        push(&hub, &session.id, messages);
        if !asked_before && session.bridge.is_teardown_requested() {
            // The person decides, with the page's Tear down button.
            hub.publish(json!({
                "type": "app-decision", "app": session.id, "kind": "teardown-request", "detail": {},
            }));
        }
        let (logs, _dropped) = session.bridge.take_logs();
        for entry in logs {
            hub.publish(json!({
                "type": "app-decision", "app": session.id, "kind": "log",
                "detail": { "level": entry.level, "logger": entry.logger, "data": entry.data },
            }));
        }
    });
    axum::Json(json!({ "messages": [] })).into_response()
}

#[derive(Deserialize)]
pub(crate) struct Teardown {
    app: String,
}

/// `POST /api/apps/teardown`: the app is told to tear down and forgotten.
pub(crate) async fn teardown(
    State(inspector): State<Arc<Inspector>>,
    Body(body): Body<Teardown>,
) -> Response {
    match inspector.apps.remove(&body.app) {
        Some(session) => {
            axum::Json(json!({ "messages": session.bridge.teardown("the person closed it") })).into_response()
        }
        None => error_response(&Error::new(FailureClass::NotFound, "no such app")),
    }
}

#[derive(Deserialize)]
pub(crate) struct Document {
    app: String,
    key: String,
}

/// The app named by the query, when its key is right.
/// Why an app's document is not served.
type Refused = (StatusCode, &'static str);

fn session_for(inspector: &Inspector, doc: &Document) -> Result<Arc<AppSession>, Refused> {
    let session = inspector.apps.get(&doc.app).ok_or((StatusCode::NOT_FOUND, "no such app"))?;
    if !secret_eq(&doc.key, &session.key) {
        return Err((StatusCode::UNAUTHORIZED, "the app's key is missing or wrong"));
    }
    Ok(session)
}

/// `GET /sandbox?app=&key=` on the sandbox origin: the proxy page.
pub(crate) async fn proxy(
    State(inspector): State<Arc<Inspector>>,
    Params(doc): Params<Document>,
) -> Result<Response, Refused> {
    let session = session_for(&inspector, &doc)?;
    let nonce = super::guard::random_secret();
    let app_url = format!("/app?app={}&key={}", session.id, session.key);
    let page = super::SANDBOX_HTML
        .replace("__NONCE__", &nonce)
        .replace("__HOST_ORIGIN__", &attr(&inspector.origin))
        .replace("__APP_URL__", &attr(&app_url))
        .replace("__SANDBOX__", &attr(&session.sandbox.sandbox))
        .replace("__ALLOW__", &attr(&session.sandbox.allow));
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; frame-src {own}; \
         frame-ancestors {page}; base-uri 'none'; form-action 'none'",
        own = inspector.sandbox_origin,
        page = inspector.origin,
    );
    Ok(with_headers(Html(page).into_response(), &csp, None))
}

/// `GET /app?app=&key=` on the sandbox origin: the app's HTML, under the
/// policy its `_meta.ui` asked for, framed only by the proxy.
pub(crate) async fn document(
    State(inspector): State<Arc<Inspector>>,
    Params(doc): Params<Document>,
) -> Result<Response, Refused> {
    let session = session_for(&inspector, &doc)?;
    let csp = format!(
        "{}; frame-ancestors {} {}",
        session.sandbox.content_security_policy, inspector.sandbox_origin, inspector.origin
    );
    Ok(with_headers(
        Html(session.html.clone()).into_response(),
        &csp,
        Some(&session.sandbox.permissions_policy),
    ))
}

fn with_headers(mut response: Response, csp: &str, permissions: Option<&str>) -> Response {
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    if let Some(v) = permissions.and_then(|p| HeaderValue::from_str(p).ok()) {
        headers.insert("permissions-policy", v);
    }
    response
}

/// `text` safe inside a double-quoted HTML attribute.
pub(crate) fn attr(text: &str) -> String {
    text.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}
