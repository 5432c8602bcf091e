//! Issue 13, item 10: network faults between the client and a streamable
//! HTTP server, injected by a TCP proxy of ours on loopback (this kernel has
//! no `netem`): latency, a bandwidth cap, a reset in the middle of a reply
//! stream, a connection that goes silent half-way (half-open), and a
//! blackhole. Calls finish within their deadlines under latency and the
//! cap; a reset or a silent connection ends the affected call with a
//! classified error by its deadline, and the next call works.
//!
//! Real time (the sockets are real); every test is bounded by [`LIMIT`].
//! The partition tests in network namespaces are `tests/http/netns.rs`, run by
//! `scripts/netfaults.sh`.

use crate::support::http_server;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass};
use serde_json::{json, Value};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The bound on every test.
const LIMIT: Duration = Duration::from_secs(30);
/// How long past its deadline a call may take to be seen ending, on a
/// shared, loaded machine.
const SLACK: Duration = Duration::from_millis(1000);

async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(LIMIT, fut).await.unwrap_or_else(|_| panic!("not within {LIMIT:?}: {what}"))
}

// ---------------------------------------------------------------------------
// The fault-injecting proxy.
// ---------------------------------------------------------------------------

/// What the proxy does to the bytes it carries, from the moment it is set.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Forwards everything at once.
    Pass,
    /// Holds every chunk, each way, this long before forwarding it.
    Latency(Duration),
    /// Forwards at most this many bytes per second, each way.
    Bandwidth(u64),
    /// Resets (RST) the connection that next carries a byte from the server.
    Reset,
    /// Keeps every connection open and forwards nothing more, either way,
    /// until the mode changes: a peer that went silent (half-open). What
    /// was held is then delivered late, as TCP would after a partition.
    Silent,
    /// As `Silent`, and new connections are accepted but reach the server
    /// only once the mode changes.
    Blackhole,
}

#[derive(Debug)]
struct Proxy {
    addr: SocketAddr,
    mode: tokio::sync::watch::Sender<Mode>,
    resets: AtomicUsize,
    connections: AtomicUsize,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Arc<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Arc::new(Proxy {
            addr: listener.local_addr().unwrap(),
            mode: tokio::sync::watch::Sender::new(Mode::Pass),
            resets: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
        });
        let p = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                p.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(p.clone().carry(client, upstream));
            }
        });
        proxy
    }

    fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }

    fn mode(&self) -> Mode {
        *self.mode.borrow()
    }

    /// Waits while the proxy is silent or a blackhole.
    async fn hold(&self) {
        let mut mode = self.mode.subscribe();
        let _ = mode.wait_for(|m| !matches!(m, Mode::Silent | Mode::Blackhole)).await;
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    async fn carry(self: Arc<Self>, mut client: TcpStream, upstream: SocketAddr) {
        if self.mode() == Mode::Blackhole {
            // Accepted, and not carried on until the blackhole ends.
            self.hold().await;
        }
        let Ok(mut server) = TcpStream::connect(upstream).await else { return };
        let end = {
            let (mut cr, mut cw) = client.split();
            let (mut sr, mut sw) = server.split();
            tokio::select! {
                end = self.pump(&mut cr, &mut sw, false) => end,
                end = self.pump(&mut sr, &mut cw, true) => end,
            }
        };
        if end == End::Reset {
            self.resets.fetch_add(1, Ordering::SeqCst);
            // SO_LINGER 0: closing sends RST, not FIN.
            let _ = client.set_zero_linger();
            let _ = server.set_zero_linger();
        }
    }

    /// Carries one direction; `down` is server to client.
    async fn pump<R, W>(&self, from: &mut R, to: &mut W, down: bool) -> End
    where
        R: AsyncReadExt + Unpin,
        W: AsyncWriteExt + Unpin,
    {
        let mut buf = vec![0u8; 16 << 10];
        loop {
            let cap = match self.mode() {
                // Small reads, so that the cap holds over short spans.
                Mode::Bandwidth(rate) => (rate as usize / 20).clamp(1, buf.len()),
                _ => buf.len(),
            };
            let n = match from.read(&mut buf[..cap]).await {
                Ok(0) | Err(_) => return End::Closed,
                Ok(n) => n,
            };
            match self.mode() {
                Mode::Pass => {}
                Mode::Latency(d) => tokio::time::sleep(d).await,
                Mode::Bandwidth(rate) => {
                    tokio::time::sleep(Duration::from_secs_f64(n as f64 / rate as f64)).await
                }
                Mode::Reset if down => return End::Reset,
                Mode::Reset => {}
                Mode::Silent | Mode::Blackhole => self.hold().await,
            }
            if to.write_all(&buf[..n]).await.is_err() {
                return End::Closed;
            }
        }
    }
}

#[derive(Debug, PartialEq)]
enum End {
    Closed,
    Reset,
}

// ---------------------------------------------------------------------------
// The MCP server: streamable HTTP, in process.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Server {
    next_session: AtomicU64,
    calls: AtomicUsize,
}

/// `tools/call` of `work`: `{"size": n}` answers `n` bytes of text;
/// `{"stream_ms": t}` answers on an SSE stream, a progress notification at
/// once and the result `t` ms later.
async fn endpoint(State(s): State<Arc<Server>>, _headers: HeaderMap, body: Bytes) -> Response {
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let id = msg["id"].clone();
    if id.is_null() {
        return StatusCode::ACCEPTED.into_response();
    }
    let envelope = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    let json_reply =
        |value: Value| ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response();
    match msg["method"].as_str().unwrap_or("") {
        "initialize" => {
            let n = s.next_session.fetch_add(1, Ordering::SeqCst);
            let mut rsp = json_reply(envelope(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "netfaults", "version": "1"},
            })));
            rsp.headers_mut().insert("mcp-session-id", HeaderValue::from_str(&format!("nf-{n}")).unwrap());
            rsp
        }
        "tools/list" => {
            json_reply(envelope(json!({"tools": [{"name": "work", "inputSchema": {"type": "object"}}]})))
        }
        "tools/call" => {
            s.calls.fetch_add(1, Ordering::SeqCst);
            let args = &msg["params"]["arguments"];
            let size = args["size"].as_u64().unwrap_or(2) as usize;
            let answer = envelope(json!({"content": [{"type": "text", "text": "x".repeat(size)}]}));
            match args["stream_ms"].as_u64() {
                None => json_reply(answer),
                Some(ms) => {
                    let token = msg["params"]["_meta"]["progressToken"].clone();
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                                      "params": {"progressToken": token, "progress": 1}});
                    let first = futures_util::stream::once(async move {
                        Ok::<_, std::io::Error>(Bytes::from(format!("event: message\ndata: {note}\n\n")))
                    });
                    let last = futures_util::stream::once(async move {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        Ok(Bytes::from(format!("event: message\ndata: {answer}\n\n")))
                    });
                    let body = Body::from_stream(futures_util::StreamExt::chain(first, last));
                    Response::builder().header(header::CONTENT_TYPE, "text/event-stream").body(body).unwrap()
                }
            }
        }
        _ => json_reply(envelope(json!({}))),
    }
}

/// A server, the proxy in front of it, and a binding through the proxy.
struct Setup {
    server: Arc<Server>,
    proxy: Arc<Proxy>,
    binding: Binding,
}

async fn setup() -> Setup {
    let server = Arc::new(Server::default());
    let upstream =
        http_server::serve(Router::new().route("/mcp", any(endpoint)).with_state(server.clone())).await;
    let proxy = Proxy::start(upstream).await;
    let binding = within("connect", connect(&proxy.url(), Duration::from_secs(10))).await.unwrap();
    Setup { server, proxy, binding }
}

async fn connect(url: &str, startup: Duration) -> Result<Binding, mcp_stack::Error> {
    let factory = HttpBuilder::new(url).listen(false).build().unwrap();
    let mut def = Definition::new("netfaults", factory);
    let timeouts = def.timeouts().with_startup(startup);
    def = def.with_timeouts(timeouts);
    Binding::connect(def, Handlers::default()).await
}

fn opts(timeout: Duration) -> CallOpts {
    CallOpts::default().with_timeout(timeout)
}

async fn call(b: &Binding, args: Value, timeout: Duration) -> (Result<usize, mcp_stack::Error>, Duration) {
    let start = Instant::now();
    let r = b.call_tool("work", args, opts(timeout)).await;
    let r = r.map(|r| r.content[0].as_text().map_or(0, str::len));
    (r, start.elapsed())
}

/// Sets `mode` on the proxy once the call's first progress arrived, that
/// is, in the middle of its reply stream.
async fn fault_mid_stream(
    s: &Setup,
    mode: Mode,
    timeout: Duration,
) -> (Result<mcp_stack::ToolResult, mcp_stack::Error>, Duration) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = Mutex::new(Some(tx));
    let opts = opts(timeout).with_progress(move |_| {
        if let Some(tx) = tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
    });
    let start = Instant::now();
    let call = s.binding.call_tool("work", json!({"stream_ms": 1500}), opts);
    let proxy = s.proxy.clone();
    let flip = async move {
        if rx.await.is_ok() {
            proxy.set(mode);
        }
        std::future::pending::<()>().await
    };
    let r = tokio::select! {
        r = call => r,
        _ = flip => unreachable!(),
    };
    (r, start.elapsed())
}

#[tokio::test]
async fn calls_finish_within_their_deadlines_under_latency_and_a_bandwidth_cap() {
    within("test", async {
        let s = setup().await;
        let deadline = Duration::from_secs(5);

        s.proxy.set(Mode::Latency(Duration::from_millis(100)));
        let (r, took) = call(&s.binding, json!({"size": 10}), deadline).await;
        assert_eq!(r.unwrap(), 10);
        // The request and its reply each waited in the proxy.
        assert!(took >= Duration::from_millis(200) && took < deadline, "{took:?}");

        // 256 KiB at 512 KiB/s: half a second at least.
        s.proxy.set(Mode::Bandwidth(512 << 10));
        let (r, took) = call(&s.binding, json!({"size": 256 << 10}), deadline).await;
        assert_eq!(r.unwrap(), 256 << 10);
        assert!(took >= Duration::from_millis(400) && took < deadline, "{took:?}");

        s.proxy.set(Mode::Pass);
        let (r, _) = call(&s.binding, json!({"size": 3}), deadline).await;
        assert_eq!(r.unwrap(), 3);
        s.binding.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_reset_in_the_middle_of_a_reply_ends_the_call_indeterminate_and_the_next_call_works() {
    within("test", async {
        let s = setup().await;
        let deadline = Duration::from_secs(5);
        let (r, took) = fault_mid_stream(&s, Mode::Reset, deadline).await;
        let err = r.unwrap_err();
        assert_eq!(s.proxy.resets.load(Ordering::SeqCst), 1);
        // The request was sent and its reply lost: nobody knows whether the
        // tool ran, and the call ends at once, not at its deadline.
        assert_eq!(err.class(), FailureClass::Indeterminate, "{err}");
        // The reset comes with the server's next bytes, the result, at 1.5 s.
        assert!(took < Duration::from_millis(2000), "ended at the reset, not at its deadline: {took:?}");

        s.proxy.set(Mode::Pass);
        let (r, _) = call(&s.binding, json!({"size": 4}), deadline).await;
        assert_eq!(r.unwrap(), 4, "the next call works");
        assert_eq!(s.server.calls.load(Ordering::SeqCst), 2, "the lost call was not replayed");
        s.binding.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_connection_gone_silent_mid_reply_ends_the_call_by_its_deadline() {
    within("test", async {
        let s = setup().await;
        let deadline = Duration::from_millis(800);
        let (r, took) = fault_mid_stream(&s, Mode::Silent, deadline).await;
        let err = r.unwrap_err();
        assert_eq!(err.class(), FailureClass::Deadline, "{err}");
        assert!(took >= deadline && took < deadline + SLACK, "{took:?}");

        // The silent connection stays open and useless; a new one works.
        s.proxy.set(Mode::Pass);
        let (r, _) = call(&s.binding, json!({"size": 5}), Duration::from_secs(5)).await;
        assert_eq!(r.unwrap(), 5, "the next call works");
        s.binding.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_blackhole_ends_calls_and_connects_by_their_deadlines() {
    within("test", async {
        let s = setup().await;
        s.proxy.set(Mode::Blackhole);
        let deadline = Duration::from_millis(600);
        for size in [1, 2] {
            let (r, took) = call(&s.binding, json!({"size": size}), deadline).await;
            let err = r.unwrap_err();
            assert_eq!(err.class(), FailureClass::Deadline, "{err}");
            assert!(took >= deadline && took < deadline + SLACK, "{took:?}");
        }

        let startup = Duration::from_millis(700);
        let start = Instant::now();
        let err = connect(&s.proxy.url(), startup).await.expect_err("no server behind a blackhole");
        let took = start.elapsed();
        assert_eq!(err.class(), FailureClass::StartupTimeout, "{err}");
        assert!(took >= startup && took < startup + SLACK, "{took:?}");

        s.proxy.set(Mode::Pass);
        let (r, _) = call(&s.binding, json!({"size": 6}), Duration::from_secs(5)).await;
        assert_eq!(r.unwrap(), 6, "the next call works");
        s.binding.close().await;
    })
    .await;
}
