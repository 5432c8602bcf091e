//! [`AuthLayer`]: OAuth authorization as a layer on the HTTP transport's

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::SystemTime;

use futures_util::future::{FutureExt as _, Shared};
use http::StatusCode;
use tower_layer::Layer;
use tower_service::Service;
use url::Url;

use super::dpop::{is_nonce_challenge, DpopEndpoint};
use super::flow::{Authorizer, Outgoing, Trigger};
use super::{BearerChallenge, Fetch, HttpFetch, OAuth, Tokens};
use crate::error::{Error, FailureClass};
use crate::transport::http::service::{BoxHttpLayer, ConnectionLayer};
use crate::transport::http::{HttpBuilder, HttpRequest, HttpResponse};

/// How many flows one request may run before it fails (a server that
/// refuses every new token must not loop).
const MAX_FLOWS_PER_REQUEST: usize = 2;

/// Told `true` when a flow starts and `false` when it ends.
pub type AuthenticatingHook = Arc<dyn Fn(bool) + Send + Sync>;

/// [`AuthLayer`]: OAuth authorization as a layer on the HTTP transport's
/// per-hop service ([`HttpService`](crate::transport::http::HttpService)),
/// and [`HttpBuilder::oauth`], which puts it on every connection of a
/// factory (defined here, not in the transport: authorization builds on the
/// transport, never the other way round).
///
/// Per request to the server's own origin (scheme, host, port; any other
/// hop, such as an off-origin redirect, passes through untouched and never
/// carries the token):
///
/// 1. It waits for a flow that is running (a request made while a token is
///    obtained or refreshed waits for it, inside its own deadline, since
///    the caller's deadline drops the wait), refreshes a token that expires
///    within the margin, and sends the request with the token.
/// 2. On `401` with a `Bearer` challenge (or a `DPoP` one, from a server
///    that takes DPoP-bound tokens only) it runs one flow (refresh when the
///    token has a refresh token, else the full authorization) and sends the
///    request again; at most twice per request.
/// 3. With DPoP, a `401` whose `DPoP` challenge says `use_dpop_nonce`
///    (RFC 9449 §9) is answered by sending the request once more with a new
///    proof carrying the server's `DPoP-Nonce`; no flow runs for it. Every
///    response's `DPoP-Nonce` is kept for the next proof.
/// 4. On `403` with `error="insufficient_scope"` it runs a step-up with the
///    challenge's scopes added; at most `max_step_ups` in a row (reset by a
///    successful response), then the request fails with `auth_denied`.
///
/// Flows are single-flight: the first request that needs one starts it on a
/// task of its own; every other waits for that task's outcome. A caller that
/// gives up does not cancel the flow for the others.
///
/// ```
/// use mcp_stack::auth::{AuthLayer, OAuth};
/// use mcp_stack::transport::http::{HttpRequest, HttpResponse};
/// use mcp_stack::{Error, FailureClass};
/// use tower::ServiceBuilder;
/// # fn main() -> Result<(), Error> {
/// // Any per-hop service: here one that is offline.
/// let inner = tower::service_fn(|_request: HttpRequest| async {
///     Err::<HttpResponse, _>(Error::new(FailureClass::TransportClosed, "offline"))
/// });
/// let server = url::Url::parse("https://mcp.example.com/mcp").unwrap();
/// let service = ServiceBuilder::new().layer(AuthLayer::new(server, OAuth::new())?).service(inner);
/// # let _ = service;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AuthLayer {
    shared: Arc<AuthShared>,
}

impl fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthLayer").field("authorizer", &self.shared.authorizer).finish_non_exhaustive()
    }
}

impl AuthLayer {
    /// Authorization for the MCP server at `server` as `oauth` describes,
    /// talking to authorization servers over its own HTTP client.
    pub fn new(server: Url, oauth: OAuth) -> Result<Self, Error> {
        let fetch = HttpFetch::new(oauth.fetch_timeout).map_err(|e| {
            Error::new(FailureClass::InvalidConfig, format!("could not build the OAuth client: {e}"))
        })?;
        Ok(Self::with_fetch(server, oauth, Arc::new(fetch)))
    }

    /// The same over another [`Fetch`] (a proxy-aware client, or a fake).
    pub fn with_fetch(server: Url, oauth: OAuth, fetch: Arc<dyn Fetch>) -> Self {
        let authorizer = Authorizer::new(server, oauth, fetch);
        Self {
            shared: Arc::new(AuthShared {
                authorizer,
                state: Mutex::new(TokenState::default()),
                hook: Mutex::new(None),
            }),
        }
    }

    /// Calls `hook` when a flow starts and ends (the binding shows
    /// `authenticating` meanwhile). Shared by the layer's clones.
    pub fn on_authenticating(self, hook: Option<AuthenticatingHook>) -> Self {
        *self.shared.hook.lock().unwrap_or_else(|e| e.into_inner()) = hook;
        self
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService { inner, shared: self.shared.clone() }
    }
}

impl HttpBuilder {
    /// Authorizes requests with OAuth 2.1 (feature `oauth`): on the
    /// server's `401`, the flow [`OAuth`] describes runs and the request is
    /// sent again with the token (see [`AuthLayer`], which every connection
    /// of the factory gets afresh, for the builder's URL, and which tells
    /// the connection's [`authenticating`] hook when a flow runs).
    ///
    /// [`authenticating`]: crate::transport::ConnectConfig::authenticating
    pub fn oauth(self, oauth: OAuth) -> Self {
        self.connection_layer(ConnectionLayer::new("oauth", move |server, config, client| {
            // The authorization servers are reached like the MCP server:
            // through the same proxy, trusting the same roots.
            let fetch = HttpFetch::with_client(client.clone(), oauth.fetch_timeout);
            let layer = AuthLayer::with_fetch(server.clone(), oauth.clone(), Arc::new(fetch))
                .on_authenticating(config.authenticating.clone());
            Ok(BoxHttpLayer::new(layer))
        }))
    }
}

/// The service [`AuthLayer`] makes.
#[derive(Clone)]
pub struct AuthService<S> {
    inner: S,
    shared: Arc<AuthShared>,
}

impl<S> fmt::Debug for AuthService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthService").field("authorizer", &self.shared.authorizer).finish_non_exhaustive()
    }
}

impl<S> AuthService<S> {
    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<HttpRequest> for AuthService<S>
where
    S: Service<HttpRequest, Response = HttpResponse, Error = Error> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = HttpResponse;
    type Error = Error;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: HttpRequest) -> Self::Future {
        // The ready inner service takes this request; a clone serves re-sends.
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        let shared = self.shared.clone();
        Box::pin(async move { shared.send(ready, request).await })
    }
}

type FlowOutcome = Result<u64, (FailureClass, String)>;
type Flight = Shared<Pin<Box<dyn Future<Output = FlowOutcome> + Send>>>;

#[derive(Default)]
struct TokenState {
    /// Loaded from the store once.
    loaded: bool,
    tokens: Option<Arc<Tokens>>,
    /// Bumped whenever the tokens change: a request that saw an older
    /// generation fail retries with the new tokens rather than running
    /// another flow.
    generation: u64,
    flight: Option<Flight>,
    step_ups: u32,
}

struct AuthShared {
    authorizer: Authorizer,
    state: Mutex<TokenState>,
    hook: Mutex<Option<AuthenticatingHook>>,
}

impl AuthShared {
    fn notify(&self, authenticating: bool) {
        let hook = self.hook.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(hook) = hook {
            hook(authenticating);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TokenState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn on_origin(&self, request: &HttpRequest) -> bool {
        Url::parse(&request.uri().to_string()).is_ok_and(|u| u.origin() == self.authorizer.server.origin())
    }

    async fn send<S>(self: Arc<Self>, inner: S, request: HttpRequest) -> Result<HttpResponse, Error>
    where
        S: Service<HttpRequest, Response = HttpResponse, Error = Error> + Clone + Send + 'static,
        S::Future: Send + 'static,
    {
        if !self.on_origin(&request) {
            // Never the token off the server's origin (a redirect hop).
            let mut inner = inner;
            return inner.call(request).await;
        }
        let url = Url::parse(&request.uri().to_string())
            .map_err(|_| Error::new(FailureClass::InvalidConfig, "bad request URL"))?;
        let (parts, body) = request.into_parts();
        let mut flows = 0;
        let mut nonce_retried = false;
        let spare = inner.clone();
        let mut ready = Some(inner);
        // Bounded: every turn runs a flow (at most MAX_FLOWS_PER_REQUEST,
        // plus the step-ups, themselves bounded) or returns.
        loop {
            let (tokens, generation) = self.current().await?;
            let mut hop = http::Request::from_parts(parts.clone(), body.clone());
            if let Some(tokens) = &tokens {
                let method = hop.method().clone();
                let outgoing = Outgoing::Resource { method: &method, url: &url, tokens };
                let mut headers = std::mem::take(hop.headers_mut());
                self.authorizer.decorate(outgoing, &mut headers)?;
                *hop.headers_mut() = headers;
            }
            let mut service = match ready.take() {
                Some(service) => service,
                None => {
                    let mut service = spare.clone();
                    tower::ServiceExt::<HttpRequest>::ready(&mut service).await?;
                    service
                }
            };
            let response = service.call(hop).await?;
            let status = response.status();
            if let Some(dpop) = &self.authorizer.oauth.dpop {
                dpop.observe(&url, response.headers());
                let challenged = tokens.as_ref().is_some_and(|t| t.is_dpop())
                    && is_nonce_challenge(DpopEndpoint::Resource, status.as_u16(), response.headers(), b"");
                if challenged && !nonce_retried {
                    nonce_retried = true;
                    tracing::debug!(target: "mcp_stack::auth", "the server asked for a DPoP nonce; sending again");
                    continue;
                }
            }
            let challenge = || {
                BearerChallenge::from_headers(
                    response.headers().get_all(http::header::WWW_AUTHENTICATE).iter(),
                )
            };
            let trigger = if status == StatusCode::UNAUTHORIZED {
                match challenge() {
                    Ok(Some(challenge)) => {
                        Trigger::Unauthorized { challenge: Some(challenge), had_token: tokens.is_some() }
                    }
                    // No Bearer challenge: not ours to answer.
                    Ok(None) => return Ok(response),
                    Err(e) => return Err(super::flow::classify(e.into())),
                }
            } else if status == StatusCode::FORBIDDEN {
                match challenge() {
                    Ok(Some(c)) if c.error.as_deref() == Some("insufficient_scope") && tokens.is_some() => {
                        Trigger::StepUp { challenge: c }
                    }
                    _ => return Ok(response),
                }
            } else {
                if tokens.is_some() && status.is_success() {
                    self.lock().step_ups = 0;
                }
                return Ok(response);
            };
            let step_up = matches!(trigger, Trigger::StepUp { .. });
            if !step_up {
                if flows >= MAX_FLOWS_PER_REQUEST {
                    return Err(Error::new(
                        FailureClass::AuthFailed,
                        "the server refused the access token it had just been issued",
                    ));
                }
                flows += 1;
            }
            drop(response);
            self.ensure(trigger, generation).await?;
        }
    }

    /// The tokens to send now and their generation: waits for a running
    /// flow, loads the store once, refreshes a token about to expire.
    async fn current(self: &Arc<Self>) -> Result<(Option<Arc<Tokens>>, u64), Error> {
        let flight = self.lock().flight.clone();
        if let Some(flight) = flight {
            let _ = flight.await;
        }
        let loaded = self.lock().loaded;
        if !loaded {
            let stored = match self.authorizer.oauth.store.load(&self.authorizer.server).await {
                Ok(stored) => stored,
                Err(e) => {
                    // Unreadable tokens are as good as none: the server's
                    // 401 starts a flow.
                    tracing::warn!(target: "mcp_stack::auth", "could not read the stored tokens: {e}");
                    None
                }
            };
            let mut state = self.lock();
            if !state.loaded {
                state.loaded = true;
                if state.tokens.is_none() {
                    state.tokens = stored.map(Arc::new);
                }
            }
        }
        let (tokens, generation) = {
            let state = self.lock();
            (state.tokens.clone(), state.generation)
        };
        let margin = self.authorizer.oauth.refresh_margin;
        if let Some(t) = &tokens {
            if t.refresh_token.is_some() && t.expires_within(margin, SystemTime::now()) {
                // A failed early refresh is not fatal: the server judges the
                // old token, and a 401 starts the full flow.
                if self.ensure(Trigger::Expiring, generation).await.is_ok() {
                    let state = self.lock();
                    return Ok((state.tokens.clone(), state.generation));
                }
            }
        }
        Ok((tokens, generation))
    }

    /// Runs (or joins) the flow `trigger` asks for, unless the tokens
    /// changed since `seen` (another request's flow already replaced them).
    async fn ensure(self: &Arc<Self>, trigger: Trigger, seen: u64) -> Result<(), Error> {
        let flight = {
            let mut state = self.lock();
            if state.generation != seen && state.flight.is_none() {
                return Ok(());
            }
            match &state.flight {
                Some(flight) => flight.clone(),
                None => {
                    if matches!(trigger, Trigger::StepUp { .. }) {
                        if state.step_ups >= self.authorizer.oauth.max_step_ups {
                            return Err(Error::new(
                                FailureClass::AuthDenied,
                                format!(
                                    "the server still requires more scope after {} step-up authorizations",
                                    state.step_ups
                                ),
                            ));
                        }
                        state.step_ups += 1;
                    }
                    let current = state.tokens.clone();
                    let this = self.clone();
                    let task = tokio::spawn(async move { this.fly(trigger, current).await });
                    let flight: Pin<Box<dyn Future<Output = FlowOutcome> + Send>> =
                        Box::pin(task.map(|joined| {
                            joined.unwrap_or_else(|_| {
                                Err((FailureClass::AuthFailed, "the authorization flow panicked".into()))
                            })
                        }));
                    let flight = flight.shared();
                    state.flight = Some(flight.clone());
                    flight
                }
            }
        };
        flight.await.map(|_| ()).map_err(|(class, message)| Error::new(class, message))
    }

    /// One flow, on its own task.
    async fn fly(self: Arc<Self>, trigger: Trigger, current: Option<Arc<Tokens>>) -> FlowOutcome {
        self.notify(true);
        let timeout = self.authorizer.oauth.flow_timeout;
        let outcome =
            match tokio::time::timeout(timeout, self.authorizer.run(trigger, current.as_deref())).await {
                Ok(outcome) => outcome,
                Err(_) => Err(Error::new(
                    FailureClass::AuthFailed,
                    format!("authorization did not finish within {}", crate::error::for_people(timeout)),
                )),
            };
        let outcome = match outcome {
            Ok((tokens, kept)) => {
                // Kept: saved under the refresh lock, or another replica's.
                if !kept {
                    if let Err(e) = self.authorizer.oauth.store.save(&self.authorizer.server, &tokens).await {
                        tracing::warn!(target: "mcp_stack::auth", "could not keep the tokens: {e}");
                    }
                }
                let mut state = self.lock();
                state.tokens = Some(Arc::new(tokens));
                state.generation += 1;
                state.flight = None;
                Ok(state.generation)
            }
            Err(e) => {
                tracing::debug!(target: "mcp_stack::auth", class = %e.class(), "authorization failed");
                self.lock().flight = None;
                Err((e.class(), e.message().to_owned()))
            }
        };
        self.notify(false);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use tokio_test::{assert_pending, assert_ready_ok};
    use tower_test::mock;

    fn request(url: &str) -> HttpRequest {
        http::Request::builder().method("POST").uri(url).body(Some(Bytes::from_static(b"{}"))).unwrap()
    }

    fn response(status: u16, challenge: Option<&str>) -> HttpResponse {
        let mut builder = http::Response::builder().status(status);
        if let Some(c) = challenge {
            builder = builder.header(http::header::WWW_AUTHENTICATE, c);
        }
        builder.body(reqwest::Body::from("")).unwrap()
    }

    type Inner = tower::util::MapErr<mock::Mock<HttpRequest, HttpResponse>, fn(tower::BoxError) -> Error>;

    fn to_error(e: tower::BoxError) -> Error {
        Error::new(FailureClass::TransportClosed, e.to_string())
    }

    /// The layer over a mock inner service (its errors as the crate's).
    fn spawn() -> (mock::Spawn<AuthService<Inner>>, mock::Handle<HttpRequest, HttpResponse>) {
        let server = Url::parse("https://mcp.example.com/mcp").unwrap();
        let layer = AuthLayer::new(server, OAuth::new()).unwrap();
        let (inner, handle) = mock::pair();
        let inner: Inner = tower::util::MapErr::new(inner, to_error as fn(tower::BoxError) -> Error);
        (mock::Spawn::new(layer.layer(inner)), handle)
    }

    #[tokio::test]
    async fn another_origin_passes_untouched() {
        let (mut service, mut handle) = spawn();
        assert_ready_ok!(service.poll_ready());
        let call = tokio::spawn(service.call(request("https://elsewhere.example.com/mcp")));
        let (seen, reply) = handle.next_request().await.unwrap();
        assert!(seen.headers().get(http::header::AUTHORIZATION).is_none());
        assert_eq!(seen.uri(), "https://elsewhere.example.com/mcp");
        // Even a 401 from there is not answered with a flow.
        reply.send_response(response(401, Some("Bearer")));
        assert_eq!(call.await.unwrap().unwrap().status(), 401);
    }

    #[tokio::test]
    async fn a_401_without_a_bearer_challenge_is_the_callers() {
        let (mut service, mut handle) = spawn();
        assert_ready_ok!(service.poll_ready());
        let call = tokio::spawn(service.call(request("https://mcp.example.com/mcp")));
        let (_, reply) = handle.next_request().await.unwrap();
        reply.send_response(response(401, Some("Basic realm=\"x\"")));
        assert_eq!(call.await.unwrap().unwrap().status(), 401);
    }

    #[tokio::test]
    async fn a_bearer_401_without_a_handler_is_auth_required() {
        let (mut service, mut handle) = spawn();
        assert_ready_ok!(service.poll_ready());
        let call = tokio::spawn(service.call(request("https://mcp.example.com/mcp")));
        let (_, reply) = handle.next_request().await.unwrap();
        reply.send_response(response(401, Some("Bearer")));
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.class(), FailureClass::AuthRequired, "{e}");
    }

    #[tokio::test]
    async fn readiness_is_the_inner_services() {
        let (mut service, mut handle) = spawn();
        handle.allow(0);
        assert_pending!(service.poll_ready());
        handle.allow(1);
        assert_ready_ok!(service.poll_ready());
    }
}
