//! OAuth against a real authorization server written by others: the
//! certified `oidc-provider` 9.x (tests/fixtures/oidc_provider.mjs, with
//! dynamic registration, resource indicators, PKCE and refresh tokens) in
//! front of a Python SDK `mcp` 2.3.0 resource server
//! (tests/fixtures/py_oauth_server.py) that checks every token by
//! introspection at that authorization server.
//!
//! One binding, with no client id: discovery from the server's 401, dynamic
//! registration, the code flow with PKCE through the headless handler
//! (which walks oidc-provider's login and consent redirects, keeping its
//! cookies), a tool call with the token. A second binding of the same
//! definition then finds a stored access token the server no longer accepts
//! and a valid refresh token: it refreshes (no new authorization, no new
//! registration) and the call succeeds.
//!
//! The `mcp` command with `--oauth`, the same way: it prints the
//! authorization URL, the test plays the browser (walking the redirects
//! with the authorization server's cookies, then delivering the last one to
//! the command's loopback listener), the call prints its result, the tokens
//! land in one private file, and a second run needs no browser.
//!
//! Run through `scripts/interop.sh`, which installs the pinned peers and sets
//! `MCP_NODE`, `MCP_OIDC_PROVIDER_JS`, `MCP_PYTHON` and `MCP_CLI`. Never skips: a
//! missing peer is a failure. Both servers listen on free loopback ports and
//! are killed when the test ends.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::peers::{free_port, peer, start_listening, Server};
use mcp_stack::auth::{
    AuthorizationHandler, AuthorizationRequest, FileStore, OAuth, Secret, TokenStore, Tokens,
};
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition};
use serde_json::json;

/// The bound on every wait.
pub(crate) const LIMIT: Duration = Duration::from_secs(60);
const RS_CLIENT: &str = "mcp-resource-server";
const RS_SECRET: &str = "rs-introspection-secret";

/// Starts `command`, its stderr shown, and waits (bounded) until `port` accepts connections.
async fn start(mut command: Command, port: u16, what: &str) -> Server {
    command.stderr(Stdio::inherit());
    start_listening(command, port, what, LIMIT).await
}

/// The authorization server and the MCP server it protects.
pub(crate) async fn servers() -> (Server, Server, String, String) {
    servers_with(None).await
}

/// [`servers`], the authorization server also knowing `machine`, a
/// `private_key_jwt` client of the `client_credentials` grant
/// (`{"client_id", "jwks"}`, see tests/fixtures/oidc_provider.mjs).
async fn servers_with(machine: Option<serde_json::Value>) -> (Server, Server, String, String) {
    let (as_port, rs_port) = (free_port(), free_port());
    let resource = format!("http://127.0.0.1:{rs_port}/mcp");
    let issuer = format!("http://127.0.0.1:{as_port}");
    let mut oidc = Command::new(peer("MCP_NODE"));
    oidc.arg(peer("MCP_OIDC_PROVIDER_JS")).args([&as_port.to_string(), &resource, RS_CLIENT, RS_SECRET]);
    if let Some(machine) = machine {
        oidc.arg(machine.to_string());
    }
    let oidc = start(oidc, as_port, "oidc-provider").await;
    let mut python = Command::new(peer("MCP_PYTHON"));
    python.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_oauth_server.py")).args([
        &rs_port.to_string(),
        &issuer,
        RS_CLIENT,
        RS_SECRET,
    ]);
    let python = start(python, rs_port, "the Python resource server").await;
    (oidc, python, resource, issuer)
}

/// The headless handler, counting the authorizations it ran.
pub(crate) fn counting_handler(count: Arc<AtomicUsize>) -> AuthorizationHandler {
    let redirect = format!("http://127.0.0.1:{}/callback", free_port());
    let headless = AuthorizationHandler::headless(redirect.clone(), Duration::from_secs(10)).unwrap();
    AuthorizationHandler::from_fn(redirect, move |request: AuthorizationRequest| {
        let (headless, count) = (headless.clone(), count.clone());
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            headless.authorize(request).await
        }
    })
}

async fn add(binding: &Binding, a: i64, b: i64) -> String {
    let result =
        tokio::time::timeout(LIMIT, binding.call_tool("add", json!({"a": a, "b": b}), CallOpts::default()))
            .await
            .expect("the call ends in time")
            .expect("the call succeeds");
    assert!(!result.is_error, "{result:?}");
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_registration_code_flow_and_refresh_against_oidc_provider() {
    let (_oidc, _python, resource, _issuer) = servers().await;
    let dir = tempfile::tempdir().unwrap();
    let authorizations = Arc::new(AtomicUsize::new(0));
    let oauth = OAuth::new()
        .client_name("mcp-stack interop")
        .handler(counting_handler(authorizations.clone()))
        .store(FileStore::new(dir.path()));
    let definition = |oauth: OAuth| {
        let factory = HttpBuilder::new(resource.clone()).listen(false).oauth(oauth).build().unwrap();
        Definition::new("protected", factory)
    };

    // 1. From nothing: 401, discovery, registration, the code flow, a call.
    let binding =
        tokio::time::timeout(LIMIT, Binding::connect(definition(oauth.clone()), Handlers::default()))
            .await
            .expect("connect ends in time")
            .expect("the binding connects once authorized");
    assert_eq!(authorizations.load(Ordering::SeqCst), 1, "one authorization");
    assert!(binding.catalog().tool("add").is_some(), "{:?}", binding.catalog());
    assert_eq!(add(&binding, 2, 3).await, "5");
    binding.close().await;

    // The tokens were kept per origin, with a refresh token.
    let store = FileStore::new(dir.path());
    let server = url::Url::parse(&resource).unwrap();
    let stored = store.load(&server).await.unwrap().expect("tokens stored for the server");
    assert!(stored.refresh_token.is_some(), "oidc-provider issued a refresh token");
    let first_access = stored.access_token.expose().to_string();

    // 2. The access token goes bad; the refresh token still works.
    let spoiled = Tokens { access_token: Secret::new("not-a-token-the-server-knows"), ..stored.clone() };
    store.save(&server, &spoiled).await.unwrap();
    let binding =
        tokio::time::timeout(LIMIT, Binding::connect(definition(oauth.clone()), Handlers::default()))
            .await
            .expect("connect ends in time")
            .expect("the binding connects after a refresh");
    assert_eq!(add(&binding, 20, 22).await, "42");
    assert_eq!(authorizations.load(Ordering::SeqCst), 1, "a refresh, not a new authorization");
    let refreshed = store.load(&server).await.unwrap().expect("tokens still stored");
    assert_ne!(refreshed.access_token.expose(), first_access, "a new access token");
    assert_ne!(refreshed.access_token.expose(), "not-a-token-the-server-knows");
    binding.close().await;
}

/// Plays the browser for the `mcp` command: opens the authorization URL,
/// walks the authorization server's redirects with its cookies, and
/// delivers the final redirect to the command's loopback listener.
async fn browse(url: &str, issuer_origin: &str) {
    mcp_stack::transport::http::install_crypto_provider();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_store(true)
        .build()
        .unwrap();
    let mut url = url::Url::parse(url).unwrap();
    for _ in 0..10 {
        let response = browser.get(url.as_str()).send().await.expect("the browser's request");
        if url.origin().ascii_serialization() != issuer_origin {
            // The command's listener answered the redirect.
            assert!(response.status().is_success(), "the listener answered {}", response.status());
            return;
        }
        let location = response.headers().get("location").expect("the authorization server redirects");
        url = url.join(location.to_str().unwrap()).unwrap();
    }
    panic!("too many redirects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_command_authorizes_in_a_browser_and_keeps_its_tokens() {
    use tokio::io::AsyncBufReadExt as _;
    let (_oidc, _python, resource, issuer) = servers().await;
    let tokens = tempfile::tempdir().unwrap();
    let mcp = |args: &[&str]| {
        let mut command = tokio::process::Command::new(peer("MCP_CLI"));
        command
            .args(["--http", &resource, "--oauth", "--token-dir"])
            .arg(tokens.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    };

    // First run: the URL on stderr, the browser's round trip, the call.
    let mut child = mcp(&["call", "add", r#"{"a": 4, "b": 5}"#]).spawn().unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(LIMIT, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if let Some(url) =
                line.trim().strip_prefix(&format!("{issuer}/")).map(|rest| format!("{issuer}/{rest}"))
            {
                return url;
            }
        }
        panic!("mcp printed no authorization URL");
    })
    .await
    .expect("the URL is printed in time");
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    browse(&url, &issuer).await;
    let output = tokio::time::timeout(LIMIT, child.wait_with_output()).await.unwrap().unwrap();
    assert!(output.status.success(), "mcp call failed: {output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().next(), Some("9"), "{output:?}");

    // The tokens are in a private file; the second run needs no browser.
    let files: Vec<_> = std::fs::read_dir(tokens.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one token file per server origin: {files:?}");
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let output = tokio::time::timeout(LIMIT, mcp(&["tools"]).output()).await.unwrap().unwrap();
    assert!(output.status.success(), "mcp tools failed: {output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(&issuer), "a second authorization was asked for: {stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("mcp__server__add"), "{output:?}");
}

/// The `mcp` command as a machine client: `--client-credentials` with a
/// `private_key_jwt` key (RSA, which oidc-provider takes) registered at the
/// provider; no browser, no listener; the provider judges the assertion and
/// the Python server the token. A `--dpop-key` of an algorithm the
/// provider's `dpop_signing_alg_values_supported` leaves out (RSA: it lists
/// ES256 and EdDSA) fails before any token request, naming both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_command_as_a_machine_client_with_private_key_jwt() {
    use mcp_stack::auth::SigningKey;
    let rsa = concat!(env!("CARGO_MANIFEST_DIR"), "/src/auth/testdata/rsa-2048.pem");
    let key = SigningKey::from_pem(&Secret::new(std::fs::read_to_string(rsa).unwrap()), None).unwrap();
    let machine = json!({"client_id": "reporting-bot", "jwks": {"keys": [key.public_jwk()]}});
    let (_oidc, _python, resource, issuer) = servers_with(Some(machine)).await;
    let (tokens, fresh) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mcp = |tokens: &std::path::Path, args: &[&str]| {
        let mut command = tokio::process::Command::new(peer("MCP_CLI"));
        command
            .args(["--http", &resource, "--oauth", "--client-credentials", "--client-id", "reporting-bot"])
            .args(["--private-key", rsa, "--token-dir"])
            .arg(tokens)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    };

    let output = tokio::time::timeout(LIMIT, mcp(tokens.path(), &["call", "whoami", "{}"]).output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "mcp call failed: {output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("via reporting-bot"), "the token is the machine client's: {stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(&format!("{issuer}/auth")), "no authorization URL for a machine: {stderr}");
    // The token is kept, and so is the pre-registered client's binding to
    // the issuer that granted it (its own file, which outlives the tokens).
    let mut files: Vec<String> = std::fs::read_dir(tokens.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "the token and the client's binding: {files:?}");
    let binding = files.iter().find(|f| f.starts_with("client-")).expect("the client's binding is kept");
    let binding = std::fs::read_to_string(tokens.path().join(binding)).unwrap();
    assert!(binding.contains(&issuer) && binding.contains("reporting-bot"), "{binding}");

    let output = tokio::time::timeout(LIMIT, mcp(fresh.path(), &["--dpop-key", rsa, "tools"]).output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "a connect failure: {output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("DPoP proofs signed with ES256"), "{stderr}");
    assert!(stderr.contains("signs with RS256"), "{stderr}");
}
