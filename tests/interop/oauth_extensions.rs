//! The OAuth extensions against a real authorization server written by
//! others: `oidc-provider` 9.x (tests/fixtures/oidc_provider.mjs, given a
//! machine client) judges this client's `private_key_jwt` assertion and its
//! DPoP proofs, and demands a server nonce in every proof.
//!
//! A machine client (the `client_credentials` grant) with its own P-256 key
//! registered at the provider, and DPoP with another key: the first token
//! request is answered `use_dpop_nonce`, the second (a new proof with the
//! nonce, a new assertion) gets a `DPoP` token. The provider's own
//! introspection then says the token is active, for this client and this
//! resource, and bound (`cnf.jkt`) to the DPoP key. The MCP server is a
//! tower service in the test (it only needs to see `Authorization: DPoP`
//! and a proof bound to the token): the resource metadata that names the
//! provider is served by the test's [`Fetch`], everything else goes to the
//! provider over loopback HTTP.
//!
//! Run through `scripts/interop.sh` (`MCP_NODE`, `MCP_OIDC_PROVIDER_JS`).
//! Never skips; the provider listens on a free loopback port and is killed
//! when the test ends.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::peers::{free_port, peer, start_listening};
use async_trait::async_trait;
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use mcp_stack::auth::{AuthLayer, Fetch, FetchError, Fetched, Grant, HttpFetch, OAuth, SigningKey};
use mcp_stack::transport::http::HttpRequest;
use mcp_stack::Error;
use serde_json::{json, Value};
use tower::{Service as _, ServiceBuilder, ServiceExt as _};
use url::Url;

const LIMIT: Duration = Duration::from_secs(60);
const RS_CLIENT: &str = "mcp-resource-server";
const RS_SECRET: &str = "rs-introspection-secret";
const MACHINE: &str = "reporting-bot";

/// Serves the MCP server's Protected Resource Metadata; the provider's
/// documents and endpoints are fetched for real.
struct Network {
    prm_url: String,
    prm: Value,
    http: HttpFetch,
    /// Each POST's URL and status.
    posts: Mutex<Vec<(String, u16)>>,
}

#[async_trait]
impl Fetch for Network {
    async fn get(&self, url: &Url, limit: usize) -> Result<Fetched, FetchError> {
        if url.as_str() == self.prm_url {
            return Ok(Fetched::new(200, serde_json::to_vec(&self.prm).unwrap()));
        }
        self.http.get(url, limit).await
    }

    async fn post(
        &self,
        url: &Url,
        headers: &HeaderMap,
        body: Vec<u8>,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        let answer = self.http.post(url, headers, body, limit).await?;
        self.posts.lock().unwrap().push((url.to_string(), answer.status));
        Ok(answer)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_key_jwt_and_dpop_with_nonces_at_oidc_provider() {
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let mcp_port = free_port();
    let resource = format!("http://127.0.0.1:{mcp_port}/mcp");
    let prm_url = format!("http://127.0.0.1:{mcp_port}/.well-known/oauth-protected-resource/mcp");

    let client_key = SigningKey::generate_es256().unwrap();
    let dpop_key = SigningKey::generate_es256().unwrap();
    let machine = json!({"client_id": MACHINE, "jwks": {"keys": [client_key.public_jwk()]}});
    let mut command = Command::new(peer("MCP_NODE"));
    command.arg(peer("MCP_OIDC_PROVIDER_JS")).args([
        &port.to_string(),
        &resource,
        RS_CLIENT,
        RS_SECRET,
        &machine.to_string(),
    ]);
    command.stderr(Stdio::inherit());
    let _provider = start_listening(command, port, "oidc-provider", LIMIT).await;

    let network = Network {
        prm_url: prm_url.clone(),
        prm: json!({"resource": resource, "authorization_servers": [issuer], "scopes_supported": ["mcp:tools"]}),
        http: HttpFetch::new(Duration::from_secs(20)).unwrap(),
        posts: Mutex::default(),
    };
    let network = Arc::new(network);
    let oauth = OAuth::new()
        .client_id(MACHINE)
        .private_key(client_key)
        .grant(Grant::ClientCredentials)
        .dpop(dpop_key.clone());
    let layer = AuthLayer::with_fetch(Url::parse(&resource).unwrap(), oauth, network.clone());

    // The MCP server: a DPoP challenge naming the metadata, then 200 for a
    // DPoP token with a proof.
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let log = seen.clone();
    let challenge = format!(r#"DPoP resource_metadata="{prm_url}""#);
    let mcp = tower::service_fn(move |request: HttpRequest| {
        let (log, challenge) = (log.clone(), challenge.clone());
        async move {
            log.lock().unwrap().push(request.headers().clone());
            let mut response = http::Response::new(reqwest::Body::from("{}"));
            let authorized = request.headers().get(http::header::AUTHORIZATION).is_some_and(|v| {
                v.to_str().unwrap().starts_with("DPoP ") && request.headers().contains_key("dpop")
            });
            if !authorized {
                *response.status_mut() = StatusCode::UNAUTHORIZED;
                response.headers_mut().insert(http::header::WWW_AUTHENTICATE, challenge.parse().unwrap());
            }
            Ok::<_, Error>(response)
        }
    });
    let mut service = ServiceBuilder::new().layer(layer).service(mcp);
    let mut request = http::Request::new(Some(Bytes::from_static(b"{}")));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = resource.parse().unwrap();
    let response = tokio::time::timeout(LIMIT, async { service.ready().await?.call(request).await })
        .await
        .expect("the request ends in time")
        .expect("the request is authorized");
    assert_eq!(response.status(), StatusCode::OK);

    // Asked for a nonce once, then the token.
    let token_endpoint = format!("{issuer}/token");
    assert_eq!(
        *network.posts.lock().unwrap(),
        [(token_endpoint.clone(), 400), (token_endpoint, 200)],
        "the provider demands a nonce, the retry carries it"
    );

    // The token the MCP server saw, as the provider judges it.
    let authorization =
        seen.lock().unwrap().last().unwrap()[http::header::AUTHORIZATION].to_str().unwrap().to_owned();
    let token = authorization.strip_prefix("DPoP ").unwrap();
    mcp_stack::transport::http::install_crypto_provider();
    let introspection = reqwest::Client::new()
        .post(format!("{issuer}/token/introspection"))
        .basic_auth(RS_CLIENT, Some(RS_SECRET))
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(url::form_urlencoded::Serializer::new(String::new()).append_pair("token", token).finish())
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(introspection["active"], true, "{introspection}");
    assert_eq!(introspection["client_id"], MACHINE, "{introspection}");
    assert_eq!(introspection["cnf"]["jkt"], dpop_key.thumbprint(), "{introspection}");
    assert_eq!(introspection["token_type"], "DPoP", "{introspection}");
}
