//! `mcp inspect` (docs/inspect.md) against the built-in demo server, over
//! plain HTTP with reqwest: no browser, no peers (the browser tests are in
//! tests/interop/inspect.rs).
//!
//! The URL on the first line of stdout, and nothing else there; the token
//! on every request (401 without it); the headers of every response; the
//! `Host` checked (DNS rebinding) and the `Origin` and `Content-Type` of
//! every write (403); no CORS; the API calling a tool, streaming its
//! traffic, and answering an elicitation through the stream; an app
//! served on a second loopback origin with its own policy; `--listen`
//! refusing any address but 127.0.0.1; SIGTERM ending it.

use super::MCP;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The bound on every wait.
const LIMIT: Duration = Duration::from_secs(60);

/// `mcp inspect --listen 127.0.0.1:0` serving the demo server; killed when
/// dropped.
struct Inspect {
    child: Child,
    /// The first line of its stdout.
    url: String,
    /// `http://127.0.0.1:PORT`.
    origin: String,
    port: u16,
    token: String,
    stdout_rest: Option<JoinHandle<Vec<String>>>,
}

impl Inspect {
    fn start() -> Inspect {
        let mut child = Command::new(MCP)
            .args(["inspect", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start mcp inspect");
        let stdout = child.stdout.take().unwrap();
        let (first, first_line) = mpsc::channel();
        let stdout_rest = std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = first.send(lines.next().and_then(Result::ok));
            lines.map_while(Result::ok).collect::<Vec<_>>()
        });
        let mut inspect = Inspect {
            child,
            url: String::new(),
            origin: String::new(),
            port: 0,
            token: String::new(),
            stdout_rest: Some(stdout_rest),
        };
        let url = match first_line.recv_timeout(LIMIT) {
            Ok(Some(line)) => line,
            other => panic!("mcp inspect printed no first line in {LIMIT:?}: {other:?}"),
        };
        // http://127.0.0.1:PORT/?token=<64 hex>
        let (port, token) = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.split_once("/?token="))
            .unwrap_or_else(|| panic!("not the page's URL: {url:?}"));
        assert!(
            token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
            "the token is 32 bytes in hex: {url:?}"
        );
        inspect.port = port.parse().unwrap_or_else(|_| panic!("no port in {url:?}"));
        assert_ne!(inspect.port, 0, "{url}");
        inspect.origin = format!("http://127.0.0.1:{port}");
        inspect.token = token.to_string();
        inspect.url = url.clone();
        inspect
    }

    fn at(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// A token of the right shape that is not this one.
    fn wrong_token(&self) -> String {
        let first = if self.token.starts_with('0') { "1" } else { "0" };
        format!("{first}{}", &self.token[1..])
    }

    /// A POST of `body` to `path` as the page sends it: the token, its
    /// own Origin, JSON.
    fn post(&self, client: &reqwest::Client, path: &str, body: &Value) -> reqwest::RequestBuilder {
        client
            .post(self.at(path))
            .header("x-mcp-inspect-token", &self.token)
            .header("origin", &self.origin)
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    /// SIGTERM: it exits in time, having printed nothing after the URL.
    fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "mcp inspect still runs 20 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        let rest = self.stdout_rest.take().unwrap().join().unwrap();
        assert!(rest.is_empty(), "stdout holds the URL alone: {rest:?}");
    }
}

impl Drop for Inspect {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> reqwest::Client {
    // The crate's reqwest has no crypto provider of its own (rustls on
    // ring, installed by the library); plain HTTP here, but a client needs one.
    mcp_stack::transport::http::install_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(LIMIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response.headers().get(name).map(|v| v.to_str().unwrap_or("(not text)")).unwrap_or("")
}

/// No response carries CORS headers.
fn assert_no_cors(response: &reqwest::Response, what: &str) {
    let cors: Vec<_> =
        response.headers().keys().filter(|k| k.as_str().starts_with("access-control-")).collect();
    assert!(cors.is_empty(), "{what}: CORS headers {cors:?}");
}

/// The JSON body of a response (panics, with the text, when it is not).
async fn json_of(response: reqwest::Response) -> Value {
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The demo server's row of /api/servers once it is ready (bounded).
async fn ready_server(inspect: &Inspect, client: &reqwest::Client) -> Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        let response =
            client.get(inspect.at("/api/servers")).header("x-mcp-inspect-token", &inspect.token).send().await;
        let response = response.unwrap();
        assert_eq!(response.status(), 200);
        assert!(header(&response, "content-type").starts_with("application/json"), "{response:?}");
        let document = json_of(response).await;
        let servers = document["servers"].as_array().unwrap_or_else(|| panic!("{document}"));
        assert_eq!(servers.len(), 1, "the demo server alone: {document}");
        if servers[0]["state"] == "ready" {
            return servers[0].clone();
        }
        assert!(Instant::now() < deadline, "the demo server is not ready: {document}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_page_needs_its_token_and_is_served_with_safe_headers() {
    let inspect = Inspect::start();
    let client = client();

    for (what, url) in [
        ("no token", inspect.at("/")),
        ("a wrong token", inspect.at(&format!("/?token={}", inspect.wrong_token()))),
        ("an empty token", inspect.at("/?token=")),
        ("no token on the API", inspect.at("/api/servers")),
    ] {
        let response = client.get(&url).send().await.unwrap();
        assert_eq!(response.status(), 401, "{what}");
        assert_no_cors(&response, what);
    }
    let response = client
        .get(inspect.at("/api/servers"))
        .header("x-mcp-inspect-token", inspect.wrong_token())
        .send()
        .await;
    assert_eq!(response.unwrap().status(), 401, "a wrong token header");

    let page = client.get(&inspect.url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(header(&page, "content-type").starts_with("text/html"), "{page:?}");
    assert_eq!(header(&page, "cache-control"), "no-store");
    assert_eq!(header(&page, "referrer-policy"), "no-referrer");
    assert_eq!(header(&page, "x-content-type-options"), "nosniff");
    assert_no_cors(&page, "the page");
    let csp = header(&page, "content-security-policy").to_string();
    assert!(csp.contains("frame-ancestors 'none'"), "never framed: {csp}");
    assert!(!csp.contains("unsafe-eval"), "{csp}");
    // Frames only from the sandbox: another loopback port.
    let frames = csp
        .split(';')
        .map(str::trim)
        .find_map(|d| d.strip_prefix("frame-src "))
        .unwrap_or_else(|| panic!("no frame-src: {csp}"));
    let sandbox = frames
        .split_whitespace()
        .find_map(|s| s.strip_prefix("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("frame-src names no loopback origin: {csp}"));
    assert_ne!(
        sandbox.trim_end_matches('/'),
        inspect.port.to_string(),
        "the sandbox is another origin: {csp}"
    );
    let html = page.text().await.unwrap();
    assert!(html.to_ascii_lowercase().contains("<!doctype html>"), "{html}");

    // The API, with the token header.
    let server = ready_server(&inspect, &client).await;
    assert_eq!(server["binding"], "server", "{server}");
    assert!(server["toolCount"].as_u64() > Some(5), "{server}");
    let response =
        client.get(inspect.at("/api/servers")).header("x-mcp-inspect-token", &inspect.token).send().await;
    let response = response.unwrap();
    assert_eq!(header(&response, "cache-control"), "no-store");
    assert_no_cors(&response, "/api/servers");

    inspect.stop();
}

#[tokio::test]
async fn other_hosts_and_cross_origin_writes_are_refused() {
    let inspect = Inspect::start();
    let client = client();
    ready_server(&inspect, &client).await;
    let call = json!({ "server": "server", "tool": "echo", "arguments": { "message": "kept" } });

    // DNS rebinding: a name of the attacker's that points at 127.0.0.1.
    for host in [format!("evil.example:{}", inspect.port), format!("localhost.attacker:{}", inspect.port)] {
        let response = client.get(&inspect.url).header("host", &host).send().await.unwrap();
        assert_eq!(response.status(), 403, "Host: {host}");
        let response = inspect.post(&client, "/api/call", &call).header("host", &host).send().await.unwrap();
        assert_eq!(response.status(), 403, "POST with Host: {host}");
    }

    // Writes: another Origin, none, or not JSON.
    let token = &inspect.token;
    let bare = |origin: Option<&str>, content_type: &str| {
        let mut request = client
            .post(inspect.at("/api/call"))
            .header("x-mcp-inspect-token", token)
            .header("content-type", content_type)
            .body(call.to_string());
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request
    };
    for (what, request) in [
        ("another origin", bare(Some("http://evil.example"), "application/json")),
        ("the sandbox's port", bare(Some("http://127.0.0.1:1"), "application/json")),
        ("no origin", bare(None, "application/json")),
        ("the null origin", bare(Some("null"), "application/json")),
        ("text/plain", bare(Some(&inspect.origin), "text/plain")),
        ("a form", bare(Some(&inspect.origin), "application/x-www-form-urlencoded")),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 403, "{what}");
        assert_no_cors(&response, what);
    }

    // A preflight gets no CORS headers, and no success.
    let preflight = client
        .request(reqwest::Method::OPTIONS, inspect.at("/api/call"))
        .header("origin", "http://evil.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type, x-mcp-inspect-token")
        .send()
        .await
        .unwrap();
    assert!(!preflight.status().is_success(), "{preflight:?}");
    assert_no_cors(&preflight, "the preflight");

    // The page's own request: served.
    let response = inspect.post(&client, "/api/call", &call).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_no_cors(&response, "the call");
    let result = json_of(response).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "kept", "{result}");

    inspect.stop();
}

/// A failure is `{"error": {"class", "message", ...}}` with 404 for what
/// does not exist (server, tool, app, elicitation) and 400 for a bad request.
#[tokio::test]
async fn api_failures_say_their_class_with_their_status() {
    let inspect = Inspect::start();
    let client = client();
    ready_server(&inspect, &client).await;
    let mut wrong = Vec::new();
    for (what, path, body, status) in [
        ("no such server", "/api/call", json!({ "server": "nosuch", "tool": "echo", "arguments": {} }), 404),
        ("no such app", "/api/apps/message", json!({ "app": "nosuch", "message": {} }), 404),
        (
            "no such elicitation",
            "/api/elicitations/answer",
            json!({ "id": 999_999, "action": "cancel" }),
            404,
        ),
        ("not an object", "/api/call", json!("not an object"), 400),
        ("no tool named", "/api/call", json!({ "server": "server" }), 400),
        ("an id of another type", "/api/elicitations/answer", json!({ "id": "x", "action": "cancel" }), 400),
        ("no such tool", "/api/call", json!({ "server": "server", "tool": "nosuch", "arguments": {} }), 404),
    ] {
        let response = inspect.post(&client, path, &body).send().await.unwrap();
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        let error: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if got != status || !error["error"]["class"].is_string() || !error["error"]["message"].is_string() {
            wrong.push(format!(
                "{what}: {got} {text} (expected {status} and {{\"error\": {{class, message}}}})"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    inspect.stop();
}

/// A reader of `/api/stream`'s events.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(inspect: &Inspect, client: &reqwest::Client) -> Events {
        let response =
            client.get(inspect.at(&format!("/api/stream?token={}", inspect.token))).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(header(&response, "content-type").starts_with("text/event-stream"), "{response:?}");
        assert_eq!(header(&response, "cache-control"), "no-store");
        Events { response, buffer: String::new() }
    }

    /// The next event whose `data` matches, within [`LIMIT`].
    async fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.strip_prefix(' ').unwrap_or(d))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                let event: Value = serde_json::from_str(&data.join("\n"))
                    .unwrap_or_else(|e| panic!("an event's data is not JSON ({e}): {block}"));
                if matches(&event) {
                    return event;
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .unwrap_or_else(|_| panic!("no event {what} in {LIMIT:?}"))
                .unwrap()
                .unwrap_or_else(|| panic!("the stream ended before {what}"));
            self.buffer.push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

#[tokio::test]
async fn the_api_calls_tools_streams_their_traffic_and_answers_an_elicitation() {
    let inspect = Inspect::start();
    let client = client();
    ready_server(&inspect, &client).await;
    let mut events = Events::open(&inspect, &client).await;

    // The catalog and the model-facing list (the app-only tool absent).
    let response = client
        .get(inspect.at("/api/catalog?server=server"))
        .header("x-mcp-inspect-token", &inspect.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let catalog = json_of(response).await.to_string();
    assert!(catalog.contains("\"echo\"") && catalog.contains("clock_refresh"), "{catalog}");
    let response =
        client.get(inspect.at("/api/model-tools")).header("x-mcp-inspect-token", &inspect.token).send().await;
    let tools = json_of(response.unwrap()).await;
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().filter_map(|t| t["modelName"].as_str()).collect();
    assert!(names.contains(&"mcp__server__echo") && names.contains(&"mcp__server__clock"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("clock_refresh")), "an app-only tool offered: {names:?}");

    // A call, and its messages on the stream.
    let call = json!({ "server": "server", "tool": "add", "arguments": { "a": 2, "b": 40 } });
    let result = json_of(inspect.post(&client, "/api/call", &call).send().await.unwrap()).await;
    assert!(result["content"][0]["text"].as_str().unwrap_or_default().contains("42"), "{result}");
    let out = events
        .until("the call going out", |e| {
            e["type"] == "traffic"
                && e["direction"] == "out"
                && e["message"].as_str().is_some_and(|m| m.contains("tools/call") && m.contains("\"add\""))
        })
        .await;
    assert_eq!(out["binding"], "server", "{out}");
    events
        .until("its answer coming in", |e| {
            e["type"] == "traffic"
                && e["direction"] == "in"
                && e["message"].as_str().is_some_and(|m| m.contains("42"))
        })
        .await;

    // An elicitation: asked on the stream, answered by the API, its
    // answer in the call's result.
    let request = inspect.post(
        &client,
        "/api/call",
        &json!({ "server": "server", "tool": "elicit", "arguments": { "message": "Who are you?" } }),
    );
    let asking = tokio::spawn(async move { request.send().await });
    let asked = events.until("the elicitation", |e| e["type"] == "elicitation").await;
    assert_eq!(asked["binding"], "server", "{asked}");
    assert_eq!(asked["message"], "Who are you?", "{asked}");
    assert!(asked["schema"]["properties"]["name"].is_object(), "{asked}");
    let id = asked["id"].clone();
    let answer = json!({ "id": id, "action": "accept", "content": { "name": "Ada" } });
    let response = inspect.post(&client, "/api/elicitations/answer", &answer).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let response = tokio::time::timeout(LIMIT, asking).await.expect("the call ended").unwrap().unwrap();
    assert_eq!(response.status(), 200);
    let result = json_of(response).await;
    assert!(result.to_string().contains("Ada"), "the answer reached the server: {result}");
    events.until("the elicitation done", |e| e["type"] == "elicitation-done" && e["id"] == id).await;
    // Answered once only.
    let response = inspect.post(&client, "/api/elicitations/answer", &answer).send().await.unwrap();
    assert_eq!(response.status(), 404);

    inspect.stop();
}

#[tokio::test]
async fn an_app_is_served_on_another_loopback_origin_with_its_policy() {
    let inspect = Inspect::start();
    let client = client();
    ready_server(&inspect, &client).await;
    let body = json!({ "server": "server", "tool": "clock", "arguments": {} });
    let response = inspect.post(&client, "/api/apps", &body).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let app = json_of(response).await;
    let sandbox_url = app["sandboxUrl"].as_str().unwrap_or_else(|| panic!("{app}"));
    let rest = sandbox_url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{sandbox_url}"));
    let (port, path) = rest.split_once('/').unwrap();
    assert_ne!(port, inspect.port.to_string(), "another origin: {sandbox_url}");
    assert!(path.starts_with("sandbox?") && path.contains("app=") && path.contains("key="), "{sandbox_url}");
    assert_eq!(app["uri"], "ui://demo/clock.html", "{app}");
    assert!(app["app"].is_string() || app["app"].is_number(), "{app}");

    // The proxy page, then the app's HTML under the app's own policy.
    let proxy = client.get(sandbox_url).send().await.unwrap();
    assert_eq!(proxy.status(), 200);
    assert!(header(&proxy, "content-type").starts_with("text/html"), "{proxy:?}");
    assert_no_cors(&proxy, "the sandbox proxy");
    let app_url = sandbox_url.replacen("/sandbox?", "/app?", 1);
    let html = client.get(&app_url).send().await.unwrap();
    assert_eq!(html.status(), 200, "{app_url}");
    let csp = header(&html, "content-security-policy").to_string();
    assert!(csp.starts_with("default-src 'none'"), "the app's policy: {csp}");
    assert!(html.text().await.unwrap().to_ascii_lowercase().starts_with("<!doctype html>"));

    // Another key: nothing.
    let key = sandbox_url.split("key=").nth(1).unwrap().split('&').next().unwrap();
    let other = format!("{}{}", if key.starts_with('0') { '1' } else { '0' }, &key[1..]);
    for url in [sandbox_url.replacen(key, &other, 1), app_url.replacen(key, &other, 1)] {
        let response = client.get(&url).send().await.unwrap();
        assert!(response.status().is_client_error(), "{url}: {}", response.status());
    }

    let teardown = inspect.post(&client, "/api/apps/teardown", &json!({ "app": app["app"] })).send().await;
    let teardown = teardown.unwrap();
    assert_eq!(teardown.status(), 200);
    assert!(json_of(teardown).await["messages"].is_array());

    inspect.stop();
}

#[test]
fn listen_refuses_any_address_but_loopback() {
    for address in ["0.0.0.0:0", "192.168.1.1:0", "[::]:0"] {
        let mut child = Command::new(MCP)
            .args(["inspect", "--listen", address])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + LIMIT;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("inspect --listen {address} still runs after {LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{address}: {err}");
        assert!(out.stdout.is_empty(), "{address}: no URL: {}", String::from_utf8_lossy(&out.stdout));
        assert!(err.contains("--listen") || err.contains("127.0.0.1"), "{address}: says why: {err}");
    }
}
