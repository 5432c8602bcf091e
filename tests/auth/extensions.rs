//! The OAuth extensions end to end through the public API: an
//! [`AuthLayer`] over a fake MCP server (a tower service) and a fake
//! [`Fetch`] standing for the authorization server and the enterprise IdP.
//!
//! - `private_key_jwt` with `client_credentials`: a signed client assertion
//!   the server verifies with the client's public key;
//! - DPoP: proofs on the token and resource requests, the `DPoP` scheme for
//!   a `DPoP` token, server nonces on both (one more send each), and a
//!   server that keeps asking is not asked forever;
//! - workload identity: the JWT bearer grant, and a refusal surfaces as
//!   `auth_denied` after exactly one token request, no other grant tried;
//! - enterprise-managed authorization: the RFC 8693 exchange at the IdP,
//!   then the ID-JAG in the JWT bearer grant with the client's secret; an
//!   IdP known by its issuer has its token endpoint discovered, the
//!   issuer checked;
//! - a sentinel in every extension secret never reaches `Debug` or errors;
//! - a key whose algorithm the server does not list fails before any token
//!   request; dynamic registration with a key asks for `private_key_jwt`.

use crate::support::trace_capture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
use mcp_stack::auth::{
    AuthLayer, EnterpriseIdp, Fetch, FetchError, Fetched, Grant, OAuth, Secret, SigningKey, TokenSource,
};
use mcp_stack::transport::http::{HttpRequest, HttpResponse};
use mcp_stack::{Error, FailureClass};
use serde_json::{json, Value};
use tower::{Service, ServiceBuilder, ServiceExt as _};
use url::Url;

const MCP: &str = "http://127.0.0.1:9001/mcp";
const PRM: &str = "http://127.0.0.1:9001/.well-known/oauth-protected-resource/mcp";
const ISSUER: &str = "http://127.0.0.1:9002";
const TOKEN: &str = "http://127.0.0.1:9002/token";
const IDP: &str = "http://127.0.0.1:9003";
const IDP_TOKEN: &str = "http://127.0.0.1:9003/token";
const SENTINEL: &str = "SENTINEL-0c7e";

/// What the fake authorization server received.
#[derive(Debug, Clone)]
struct Sent {
    url: String,
    headers: HeaderMap,
    form: HashMap<String, String>,
    body: Vec<u8>,
}

type TokenHandler = Box<dyn Fn(&Sent, usize) -> Fetched + Send + Sync>;

/// The authorization server (metadata and token endpoint) and the IdP.
struct FakeAs {
    metadata: Value,
    token: TokenHandler,
    posts: Mutex<Vec<Sent>>,
}

impl FakeAs {
    fn new(extra: Value, token: impl Fn(&Sent, usize) -> Fetched + Send + Sync + 'static) -> Arc<Self> {
        let mut metadata = json!({
            "issuer": ISSUER,
            "authorization_endpoint": format!("{ISSUER}/authorize"),
            "token_endpoint": TOKEN,
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        });
        for (k, v) in extra.as_object().unwrap() {
            metadata[k] = v.clone();
        }
        Arc::new(Self { metadata, token: Box::new(token), posts: Mutex::new(Vec::new()) })
    }

    fn posts(&self) -> Vec<Sent> {
        self.posts.lock().unwrap().clone()
    }
}

fn json_response(status: u16, body: Value) -> Fetched {
    Fetched::new(status, serde_json::to_vec(&body).unwrap())
}

#[async_trait]
impl Fetch for FakeAs {
    async fn get(&self, url: &Url, _limit: usize) -> Result<Fetched, FetchError> {
        Ok(match url.as_str() {
            PRM => json_response(
                200,
                json!({"resource": MCP, "authorization_servers": [ISSUER], "scopes_supported": ["mcp:tools"]}),
            ),
            u if u == format!("{ISSUER}/.well-known/oauth-authorization-server") => {
                json_response(200, self.metadata.clone())
            }
            // The IdP's own metadata; at `/evil`, a document naming the
            // IdP's issuer instead of the one asked for.
            u if u == format!("{IDP}/.well-known/oauth-authorization-server") => {
                json_response(200, json!({"issuer": IDP, "token_endpoint": IDP_TOKEN}))
            }
            u if u == format!("{IDP}/.well-known/oauth-authorization-server/evil") => {
                json_response(200, json!({"issuer": IDP, "token_endpoint": format!("{IDP}/evil/token")}))
            }
            _ => Fetched::new(404, Vec::new()),
        })
    }

    async fn post(
        &self,
        url: &Url,
        headers: &HeaderMap,
        body: Vec<u8>,
        _limit: usize,
    ) -> Result<Fetched, FetchError> {
        let form = url::form_urlencoded::parse(&body).into_owned().collect();
        let sent = Sent { url: url.to_string(), headers: headers.clone(), form, body };
        let n = {
            let mut posts = self.posts.lock().unwrap();
            posts.push(sent.clone());
            posts.len()
        };
        Ok((self.token)(&sent, n))
    }
}

/// What the fake MCP server saw: the headers of each request.
type Seen = Arc<Mutex<Vec<HeaderMap>>>;

/// An MCP server that challenges with `scheme` until it gets a token, and
/// (with `nonce`) asks once for a DPoP nonce.
fn mcp_server(
    scheme: &'static str,
    nonce: Option<&'static str>,
) -> (
    impl Service<HttpRequest, Response = HttpResponse, Error = Error, Future: Send> + Clone + Send + 'static,
    Seen,
) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let service = tower::service_fn(move |request: HttpRequest| {
        let log = log.clone();
        async move {
            let headers = request.headers().clone();
            log.lock().unwrap().push(headers.clone());
            let mut response = http::Response::new(reqwest::Body::from("{}"));
            let authorization = headers.get(http::header::AUTHORIZATION);
            if authorization.is_none() {
                *response.status_mut() = StatusCode::UNAUTHORIZED;
                let challenge = format!(r#"{scheme} resource_metadata="{PRM}""#);
                response.headers_mut().insert(http::header::WWW_AUTHENTICATE, challenge.parse().unwrap());
                return Ok(response);
            }
            if let Some(nonce) = nonce {
                let has_nonce = headers
                    .get("dpop")
                    .and_then(|p| claims_unverified(p.to_str().unwrap()).get("nonce").cloned())
                    .is_some_and(|n| n == nonce);
                if !has_nonce {
                    *response.status_mut() = StatusCode::UNAUTHORIZED;
                    response.headers_mut().insert(
                        http::header::WWW_AUTHENTICATE,
                        HeaderValue::from_static(r#"DPoP error="use_dpop_nonce", error_description="nonce""#),
                    );
                    response.headers_mut().insert("dpop-nonce", HeaderValue::from_static(nonce));
                }
            }
            Ok::<_, Error>(response)
        }
    });
    (service, seen)
}

async fn call(
    layer: AuthLayer,
    inner: impl Service<HttpRequest, Response = HttpResponse, Error = Error, Future: Send>
        + Clone
        + Send
        + 'static,
) -> Result<StatusCode, Error> {
    let mut service = ServiceBuilder::new().layer(layer).service(inner);
    let mut request = http::Request::new(Some(Bytes::from_static(b"{}")));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = MCP.parse().unwrap();
    let response = service.ready().await?.call(request).await?;
    Ok(response.status())
}

fn layer(oauth: OAuth, fake: &Arc<FakeAs>) -> AuthLayer {
    AuthLayer::with_fetch(Url::parse(MCP).unwrap(), oauth, fake.clone())
}

/// A JWT's claims, not verified (what a test server peeks at).
fn claims_unverified(jwt: &str) -> Value {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap())
        .unwrap()
}

/// Verifies a DPoP proof with the key in its own `jwk` header (as a server
/// does) and returns its claims.
fn verify_proof(proof: &str) -> Value {
    let header = decode_header(proof).unwrap();
    assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
    let jwk = header.jwk.expect("a jwk header");
    let mut validation = Validation::new(header.alg);
    validation.validate_exp = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    decode::<Value>(proof, &DecodingKey::from_jwk(&jwk).unwrap(), &validation).unwrap().claims
}

fn token_ok(token_type: &str) -> Fetched {
    json_response(200, json!({"access_token": "at-1", "token_type": token_type, "expires_in": 3600}))
}

fn ec_key() -> (SigningKey, Value) {
    let key = SigningKey::generate_es256().unwrap();
    let jwk = key.public_jwk();
    (key, jwk)
}

#[tokio::test]
async fn client_credentials_with_private_key_jwt() {
    let _one_at_a_time = one_at_a_time().await;
    let (key, jwk) = ec_key();
    let fake = FakeAs::new(
        json!({
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "scopes_supported": ["mcp:tools", "offline_access"],
        }),
        |_, _| token_ok("Bearer"),
    );
    let oauth = OAuth::new().client_id("machine-1").private_key(key).grant(Grant::ClientCredentials);
    let (mcp, seen) = mcp_server("Bearer", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);

    let posts = fake.posts();
    assert_eq!(posts.len(), 1);
    let form = &posts[0].form;
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(form["resource"], MCP);
    // The PRM's scope; no offline_access for a machine client, though the AS lists it.
    assert_eq!(form["scope"], "mcp:tools");
    assert_eq!(form["client_assertion_type"], "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    assert!(!posts[0].headers.contains_key(http::header::AUTHORIZATION));
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk).unwrap();
    let mut validation = Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[ISSUER]);
    validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    let claims =
        decode::<Value>(&form["client_assertion"], &DecodingKey::from_jwk(&jwk).unwrap(), &validation)
            .unwrap()
            .claims;
    assert_eq!((claims["iss"].as_str(), claims["sub"].as_str()), (Some("machine-1"), Some("machine-1")));
    assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.last().unwrap()[http::header::AUTHORIZATION], "Bearer at-1");
}

#[tokio::test]
async fn dpop_proofs_and_nonces_on_the_token_and_resource_requests() {
    let _one_at_a_time = one_at_a_time().await;
    let (key, _) = ec_key();
    let thumbprint = key.thumbprint();
    let fake = FakeAs::new(
        json!({"grant_types_supported": ["client_credentials"], "dpop_signing_alg_values_supported": ["ES256"]}),
        |sent, _| {
            let proof = sent.headers.get("dpop").expect("a proof on every token request").to_str().unwrap();
            if verify_proof(proof).get("nonce").and_then(Value::as_str) != Some("as-nonce") {
                let mut answer = json_response(400, json!({"error": "use_dpop_nonce"}));
                answer.headers.insert("dpop-nonce", HeaderValue::from_static("as-nonce"));
                return answer;
            }
            token_ok("DPoP")
        },
    );
    let oauth =
        OAuth::new().client_id("machine-1").client_secret("s").grant(Grant::ClientCredentials).dpop(key);
    let (mcp, seen) = mcp_server("DPoP", Some("rs-nonce"));
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);

    // The token endpoint: challenged once, then the nonce; fresh proofs.
    let posts = fake.posts();
    assert_eq!(posts.len(), 2);
    let proofs: Vec<Value> =
        posts.iter().map(|p| verify_proof(p.headers["dpop"].to_str().unwrap())).collect();
    for p in &proofs {
        assert_eq!((p["htm"].as_str(), p["htu"].as_str()), (Some("POST"), Some(TOKEN)));
        assert!(p.get("ath").is_none());
    }
    assert!(proofs[0].get("nonce").is_none());
    assert_eq!(proofs[1]["nonce"], "as-nonce");
    assert_ne!(proofs[0]["jti"], proofs[1]["jti"]);

    // The resource: no token, then the DPoP token challenged for a nonce, then the nonce.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[0].get(http::header::AUTHORIZATION).is_none());
    let mut jtis = Vec::new();
    for headers in &seen[1..] {
        assert_eq!(headers[http::header::AUTHORIZATION], "DPoP at-1");
        let proof = headers["dpop"].to_str().unwrap();
        let jwk = decode_header(proof).unwrap().jwk.unwrap();
        assert_eq!(jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256), thumbprint);
        let claims = verify_proof(proof);
        assert_eq!((claims["htm"].as_str(), claims["htu"].as_str()), (Some("POST"), Some(MCP)));
        assert_eq!(claims["ath"], "R8PYaIQdcYEdkSc9TeGyiUqSAedmCQuOQImPRh1E3HI"); // base64url(SHA-256("at-1"))
        jtis.push(claims["jti"].clone());
    }
    assert!(verify_proof(seen[1]["dpop"].to_str().unwrap()).get("nonce").is_none());
    assert_eq!(verify_proof(seen[2]["dpop"].to_str().unwrap())["nonce"], "rs-nonce");
    assert_ne!(jtis[0], jtis[1]);
}

#[tokio::test]
async fn a_token_endpoint_that_keeps_asking_for_a_nonce_is_asked_twice() {
    let _one_at_a_time = one_at_a_time().await;
    let (key, _) = ec_key();
    let fake = FakeAs::new(json!({}), |_, n| {
        let mut answer = json_response(400, json!({"error": "use_dpop_nonce"}));
        answer.headers.insert("dpop-nonce", format!("nonce-{n}").parse().unwrap());
        answer
    });
    let oauth =
        OAuth::new().client_id("machine-1").client_secret("s").grant(Grant::ClientCredentials).dpop(key);
    let (mcp, _) = mcp_server("DPoP", None);
    let err = call(layer(oauth, &fake), mcp).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::AuthDenied, "{err}");
    assert_eq!(fake.posts().len(), 2);
}

#[tokio::test]
async fn a_bearer_answer_stays_a_bearer_token_even_with_dpop_on() {
    let _one_at_a_time = one_at_a_time().await;
    let (key, _) = ec_key();
    let fake = FakeAs::new(json!({}), |_, _| token_ok("Bearer"));
    let oauth =
        OAuth::new().client_id("machine-1").client_secret("s").grant(Grant::ClientCredentials).dpop(key);
    let (mcp, seen) = mcp_server("Bearer", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);
    assert!(fake.posts()[0].headers.contains_key("dpop"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.last().unwrap()[http::header::AUTHORIZATION], "Bearer at-1");
    assert!(!seen.last().unwrap().contains_key("dpop"));
}

#[tokio::test]
async fn workload_identity_sends_the_token_as_a_jwt_bearer_assertion() {
    let _one_at_a_time = one_at_a_time().await;
    let fake =
        FakeAs::new(json!({"token_endpoint_auth_methods_supported": ["none"]}), |_, _| token_ok("Bearer"));
    let oauth = OAuth::new()
        .client_id("workload-1")
        .workload_identity(TokenSource::Static(Secret::new("workload.jwt.value")));
    let (mcp, _) = mcp_server("Bearer", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);
    let posts = fake.posts();
    assert_eq!(posts.len(), 1);
    let form = &posts[0].form;
    assert_eq!(form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(form["assertion"], "workload.jwt.value");
    assert_eq!(form["client_id"], "workload-1");
    assert_eq!(form["resource"], MCP);
}

#[tokio::test]
async fn a_refused_workload_token_surfaces_after_one_request_and_no_other_grant() {
    let _one_at_a_time = one_at_a_time().await;
    for error in ["invalid_grant", "invalid_scope", "unauthorized_client"] {
        let fake = FakeAs::new(json!({}), move |_, _| json_response(400, json!({"error": error})));
        let oauth = OAuth::new()
            .client_id("workload-1")
            .workload_identity(TokenSource::Static(Secret::new(format!("{SENTINEL}-workload"))));
        let (mcp, seen) = mcp_server("Bearer", None);
        let err = call(layer(oauth, &fake), mcp).await.unwrap_err();
        assert_eq!(err.class(), FailureClass::AuthDenied, "{err}");
        assert!(err.message().contains(error), "{err}");
        assert!(!format!("{err} {err:?}").contains(SENTINEL));
        let posts = fake.posts();
        assert_eq!(posts.len(), 1, "{error}: no retry");
        assert_eq!(posts[0].form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
        assert_eq!(seen.lock().unwrap().len(), 1, "the request is not sent again");
    }
}

/// The IdP's token endpoint answers the exchange with the ID-JAG
/// `id-jag-value`; the authorization server's, with a bearer token.
fn id_jag_then_bearer(sent: &Sent, _: usize) -> Fetched {
    if sent.url == IDP_TOKEN {
        return json_response(
            200,
            json!({"access_token": "id-jag-value", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
        );
    }
    token_ok("Bearer")
}

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_then_presents_the_id_jag() {
    let _one_at_a_time = one_at_a_time().await;
    let fake = FakeAs::new(
        json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
        id_jag_then_bearer,
    );
    let idp = EnterpriseIdp::new(IDP_TOKEN, TokenSource::Static(Secret::new("user.id.token")))
        .client_id("idp-client");
    let oauth = OAuth::new().client_id("mcp-client").client_secret("mcp-secret").enterprise(idp);
    let (mcp, seen) = mcp_server("Bearer", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);

    let posts = fake.posts();
    assert_eq!(posts.iter().map(|p| p.url.as_str()).collect::<Vec<_>>(), [IDP_TOKEN, TOKEN]);
    let exchange = &posts[0].form;
    assert_eq!(exchange["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
    assert_eq!(exchange["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
    assert_eq!(exchange["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
    assert_eq!(exchange["subject_token"], "user.id.token");
    assert_eq!(exchange["audience"], ISSUER);
    assert_eq!(exchange["resource"], MCP);
    assert_eq!(exchange["client_id"], "idp-client");
    assert!(!posts[0].headers.contains_key(http::header::AUTHORIZATION), "the AS secret stays off the IdP");
    let grant = &posts[1].form;
    assert_eq!(grant["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(grant["assertion"], "id-jag-value");
    assert!(!grant.contains_key("client_id"), "client_secret_basic: the id is in the header");
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode("mcp-client:mcp-secret");
    assert_eq!(posts[1].headers[http::header::AUTHORIZATION], format!("Basic {basic}").as_str());
    assert_eq!(seen.lock().unwrap().last().unwrap()[http::header::AUTHORIZATION], "Bearer at-1");
}

#[tokio::test]
async fn an_idp_that_refuses_the_exchange_is_auth_denied_without_a_grant_at_the_as() {
    let _one_at_a_time = one_at_a_time().await;
    let fake = FakeAs::new(json!({}), |_, _| json_response(400, json!({"error": "invalid_grant"})));
    let idp = EnterpriseIdp::new(IDP_TOKEN, TokenSource::Static(Secret::new(format!("{SENTINEL}-id-token"))));
    let oauth = OAuth::new().client_id("mcp-client").enterprise(idp);
    let (mcp, _) = mcp_server("Bearer", None);
    let err = call(layer(oauth, &fake), mcp).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::AuthDenied, "{err}");
    assert_eq!(fake.posts().len(), 1);
    assert!(!format!("{err} {err:?}").contains(SENTINEL));
}

#[test]
fn no_extension_secret_reaches_debug() {
    let _one_at_a_time = TURN.blocking_lock();
    let pem = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjpsQnnGQmL+YBIff
H1136cspYG6+0iY7X1fCE9+E9LKhRANCAAR/zc4ncPbEXUGDy+5v20t7WAczNXvp
7xO6z248e9FURcfxRM0bvZt+hyzf7bnuufSzaV1uqQskrYpGIyiFiOWt
-----END PRIVATE KEY-----
";
    let key = SigningKey::from_pem(&Secret::new(pem), None).unwrap();
    let oauth = OAuth::new()
        .client_id("c")
        .client_secret(format!("{SENTINEL}-secret"))
        .private_key(key.clone())
        .dpop(key)
        .workload_identity(TokenSource::Static(Secret::new(format!("{SENTINEL}-workload"))))
        .enterprise(
            EnterpriseIdp::new(IDP_TOKEN, TokenSource::Static(Secret::new(format!("{SENTINEL}-id-token"))))
                .client_secret(Secret::new(format!("{SENTINEL}-idp-secret"))),
        );
    let shown = format!("{oauth:?} {oauth:#?}");
    assert!(
        !shown.contains(SENTINEL) && !shown.contains("MIGHAgEA") && !shown.contains("jpsQnnGQ"),
        "{shown}"
    );
    let bad = SigningKey::from_pem(
        &Secret::new(format!("-----BEGIN PRIVATE KEY-----\n{SENTINEL}\n-----END PRIVATE KEY-----\n")),
        None,
    )
    .unwrap_err();
    assert!(!format!("{bad} {bad:?}").contains(SENTINEL));
}

/// The tests of this file run one at a time. One of them captures tracing
/// output with a thread-local subscriber and checks that the flow's lines
/// are there; with other tests hitting the same callsites on parallel
/// threads without a subscriber, tracing's process-wide callsite cache can
/// drop those lines (seen in tests/observability/spans.rs: about one run in
/// three). The fakes are fast; the file takes a few seconds either way.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    TURN.lock().await
}

/// The enterprise exchange with DPoP and sentinels in the ID token, the
/// ID-JAG, the client secret and the access token: none shows in tracing
/// (at TRACE), while the flow did run (the trace says so). One thread, so
/// the subscriber sees the flow's task.
#[tokio::test]
async fn no_extension_secret_reaches_tracing() {
    let _one_at_a_time = one_at_a_time().await;
    let (capture, _guard) = trace_capture::capture("trace");

    let fake = FakeAs::new(json!({}), |sent, _| {
        if sent.url == IDP_TOKEN {
            return json_response(
                200,
                json!({"access_token": format!("{SENTINEL}-jag"), "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
            );
        }
        json_response(200, json!({"access_token": format!("{SENTINEL}-at"), "token_type": "DPoP"}))
    });
    let idp = EnterpriseIdp::new(IDP_TOKEN, TokenSource::Static(Secret::new(format!("{SENTINEL}-id-token"))))
        .client_id("idp-client");
    let oauth = OAuth::new()
        .client_id("mcp-client")
        .client_secret(format!("{SENTINEL}-secret"))
        .enterprise(idp)
        .dpop(SigningKey::generate_es256().unwrap());
    let (mcp, seen) = mcp_server("Bearer", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);
    let last = seen.lock().unwrap().last().unwrap().clone();
    assert_eq!(last[http::header::AUTHORIZATION], format!("DPoP {SENTINEL}-at").as_str());
    let traced = capture.text();
    assert!(traced.contains("ID-JAG"), "the flow ran under the subscriber: {traced}");
    assert!(!traced.contains(SENTINEL), "{traced}");
}

/// A nonce retry at the token endpoint signs a new client assertion too:
/// an assertion is for one use (its `jti`), like the proof.
#[tokio::test]
async fn a_nonce_retry_sends_a_fresh_client_assertion() {
    let _one_at_a_time = one_at_a_time().await;
    let (key, _) = ec_key();
    let fake = FakeAs::new(json!({"token_endpoint_auth_methods_supported": ["private_key_jwt"]}), |_, n| {
        if n == 1 {
            let mut answer = json_response(400, json!({"error": "use_dpop_nonce"}));
            answer.headers.insert("dpop-nonce", HeaderValue::from_static("n1"));
            return answer;
        }
        token_ok("DPoP")
    });
    let oauth = OAuth::new()
        .client_id("machine-1")
        .private_key(key)
        .grant(Grant::ClientCredentials)
        .dpop(SigningKey::generate_es256().unwrap());
    let (mcp, _) = mcp_server("DPoP", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);
    let posts = fake.posts();
    assert_eq!(posts.len(), 2);
    let jti = |p: &Sent| claims_unverified(&p.form["client_assertion"])["jti"].clone();
    assert_ne!(jti(&posts[0]), jti(&posts[1]));
    assert_eq!(verify_proof(posts[1].headers["dpop"].to_str().unwrap())["nonce"], "n1");
}

/// A server that lists the DPoP algorithms it takes, none of them the
/// key's: `auth_failed` naming both, and no token request at all (the
/// server would refuse the proof without saying why).
#[tokio::test]
async fn a_dpop_key_of_an_algorithm_the_server_does_not_list_fails_before_any_token_request() {
    let _one_at_a_time = one_at_a_time().await;
    // A machine client with an ES256 DPoP key, at a server that lists `algs`.
    let attempt = |algs: Value| async move {
        let fake = FakeAs::new(json!({"dpop_signing_alg_values_supported": algs}), |_, _| token_ok("DPoP"));
        let oauth = OAuth::new()
            .client_id("machine-1")
            .client_secret("s3cret")
            .grant(Grant::ClientCredentials)
            .dpop(SigningKey::generate_es256().unwrap());
        let (mcp, _) = mcp_server("DPoP", None);
        (call(layer(oauth, &fake), mcp).await, fake.posts())
    };

    let (outcome, posts) = attempt(json!(["RS256", "PS256"])).await;
    let e = outcome.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthFailed, "{e}");
    let message = e.to_string();
    assert!(message.contains("DPoP proofs signed with RS256, PS256"), "{message}");
    assert!(message.contains("signs with ES256"), "{message}");
    assert!(posts.is_empty(), "no token request: {posts:?}");

    // Listed: the same kind of key works.
    let (outcome, posts) = attempt(json!(["RS256", "ES256"])).await;
    assert_eq!(outcome.unwrap(), StatusCode::OK);
    assert_eq!(posts.len(), 1);
}

/// The same for `private_key_jwt`: the token endpoint's assertion
/// algorithms leave out the key's.
#[tokio::test]
async fn a_client_assertion_key_of_an_algorithm_the_server_does_not_list_fails_before_any_token_request() {
    let _one_at_a_time = one_at_a_time().await;
    let fake = FakeAs::new(
        json!({
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
        }),
        |_, _| token_ok("Bearer"),
    );
    let (key, _) = ec_key();
    let oauth = OAuth::new().client_id("machine-1").private_key(key).grant(Grant::ClientCredentials);
    let (mcp, _) = mcp_server("Bearer", None);
    let e = call(layer(oauth, &fake), mcp).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthFailed, "{e}");
    assert!(e.to_string().contains("private_key_jwt client assertions signed with RS256"), "{e}");
    assert!(fake.posts().is_empty(), "no token request: {:?}", fake.posts());
}

/// With a private key and no `client_id`, dynamic registration asks for
/// `private_key_jwt` and sends the public key as `jwks`; the token request
/// then carries an assertion that verifies with the registered key.
#[tokio::test]
async fn dynamic_registration_with_a_private_key_registers_private_key_jwt_with_its_jwks() {
    let _one_at_a_time = one_at_a_time().await;
    let register = format!("{ISSUER}/register");
    let fake = FakeAs::new(
        json!({
            "registration_endpoint": register,
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"],
            "grant_types_supported": ["client_credentials"],
        }),
        move |sent, _| {
            if sent.url.ends_with("/register") {
                let asked: Value = serde_json::from_slice(&sent.body).unwrap();
                return json_response(
                    201,
                    json!({
                        "client_id": "dcr-1",
                        "token_endpoint_auth_method": asked["token_endpoint_auth_method"],
                    }),
                );
            }
            token_ok("Bearer")
        },
    );
    let (key, jwk) = ec_key();
    let oauth = OAuth::new().private_key(key).grant(Grant::ClientCredentials);
    let (mcp, _) = mcp_server("Bearer", None);
    assert_eq!(call(layer(oauth, &fake), mcp).await.unwrap(), StatusCode::OK);

    let posts = fake.posts();
    assert_eq!(posts.len(), 2, "{posts:?}");
    let asked: Value = serde_json::from_slice(&posts[0].body).unwrap();
    assert_eq!(asked["token_endpoint_auth_method"], "private_key_jwt");
    assert_eq!(asked["grant_types"], json!(["client_credentials"]));
    let registered = &asked["jwks"]["keys"][0];
    assert_eq!(registered, &jwk, "the public key, and nothing private");
    assert!(registered.get("d").is_none());

    let token = &posts[1].form;
    assert_eq!(token["client_assertion_type"], "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    let assertion = &token["client_assertion"];
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(registered.clone()).unwrap();
    let mut validation = Validation::new(decode_header(assertion).unwrap().alg);
    validation.set_audience(&[ISSUER, TOKEN]);
    let claims =
        decode::<Value>(assertion, &DecodingKey::from_jwk(&jwk).unwrap(), &validation).unwrap().claims;
    assert_eq!(claims["iss"], "dcr-1");
    assert_eq!(claims["sub"], "dcr-1");
}

/// An IdP known only by its issuer: its metadata names the token endpoint
/// the exchange goes to. Metadata that names another issuer is refused
/// before any exchange (a document at the wrong place must not redirect
/// the user's ID token).
#[tokio::test]
async fn an_idp_known_by_its_issuer_is_discovered_with_its_issuer_checked() {
    let _one_at_a_time = one_at_a_time().await;
    let attempt = |issuer: String| async move {
        let fake = FakeAs::new(json!({}), id_jag_then_bearer);
        let idp = EnterpriseIdp::from_issuer(issuer, TokenSource::Static(Secret::new("user.id.token")))
            .client_id("idp-client");
        let oauth = OAuth::new().client_id("mcp-client").client_secret("mcp-secret").enterprise(idp);
        let (mcp, _) = mcp_server("Bearer", None);
        (call(layer(oauth, &fake), mcp).await, fake.posts())
    };

    let (outcome, posts) = attempt(IDP.to_owned()).await;
    assert_eq!(outcome.unwrap(), StatusCode::OK);
    assert_eq!(posts.iter().map(|p| p.url.as_str()).collect::<Vec<_>>(), [IDP_TOKEN, TOKEN]);
    assert_eq!(posts[0].form["subject_token"], "user.id.token");
    assert_eq!(posts[1].form["assertion"], "id-jag-value");

    let (outcome, posts) = attempt(format!("{IDP}/evil")).await;
    let e = outcome.unwrap_err();
    assert_eq!(e.class(), FailureClass::AuthFailed, "{e}");
    assert!(
        e.to_string().contains("names issuer http://127.0.0.1:9003, not http://127.0.0.1:9003/evil"),
        "{e}"
    );
    assert!(posts.is_empty(), "the ID token went nowhere: {posts:?}");
}
