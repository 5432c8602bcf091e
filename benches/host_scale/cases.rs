//! The measurements, one per run of the bench binary with `--run CASE …`:
//! each runs in a fresh process (so memory figures start from the same
//! allocator state and a peak is this case's own) and prints its figures
//! as one JSON object on stdout.

use mcp_stack::host::Host;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{CallOpts, Definition, ProtocolChoice, State, Timeouts};
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::probe;
use crate::servers::tools_response;

/// What a run prints: named figures.
pub type Figures = Map<String, Value>;

/// Long enough for 1,000 children on a busy 2-core machine; a bound, not a
/// figure (the default is 30 s).
const STARTUP: Duration = Duration::from_secs(120);

fn exe() -> PathBuf {
    std::env::current_exe().expect("the bench binary")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn stdio(name: String, tools: usize, protocol: &ProtocolChoice) -> Definition {
    let factory = StdioFactory::new(exe()).arg("--serve-stdio").arg(tools.to_string());
    Definition::new(name, factory)
        .with_protocol(protocol.clone())
        .with_timeouts(Timeouts::default().with_startup(STARTUP))
}

fn http(name: String, port: u16, path: usize) -> Definition {
    let url = format!("http://127.0.0.1:{port}/s/{path}");
    let factory = HttpBuilder::new(url).no_proxy().build().expect("an HTTP factory");
    Definition::new(name, factory).with_timeouts(Timeouts::default().with_startup(STARTUP))
}

fn ready_count(host: &Host) -> usize {
    host.status().iter().filter(|s| s.state == State::Ready).count()
}

/// The HTTP server process, ended when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start(tools: usize, close: bool) -> HttpServer {
        let mut child = Command::new(exe())
            .args(["--serve-http", &tools.to_string()])
            .args(close.then_some("close"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the HTTP server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout")).read_line(&mut line).expect("its port");
        HttpServer { port: line.trim().parse().expect("a port"), child }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Adds every definition at once and waits for all; then closes the host.
/// Time to ready, time to close, and what was left.
async fn ready_and_close(host: Host, defs: Vec<Definition>, server: Option<u32>) -> Figures {
    let n = defs.len();
    let started = Instant::now();
    let refused = host.add_all(defs).await;
    let ready_ms = ms(started.elapsed());
    assert!(refused.is_empty(), "refused: {:?}", refused.first());
    let ready = ready_count(&host);
    let started = Instant::now();
    let report = host.close().await;
    let close_ms = ms(started.elapsed());
    let (alive, zombies) = probe::children(server);
    let mut f = Figures::new();
    f.insert("ready_ms".into(), json!(ready_ms));
    f.insert("ready".into(), json!(ready));
    f.insert("failed".into(), json!(n - ready));
    f.insert("close_ms".into(), json!(close_ms));
    f.insert("closed".into(), json!(report.closed.len()));
    f.insert("timed_out".into(), json!(report.timed_out.len()));
    f.insert("children_alive".into(), json!(alive));
    f.insert("children_zombie".into(), json!(zombies));
    f
}

/// `n` stdio servers as processes, through a `Host`.
pub async fn ready_stdio(n: usize, protocol: ProtocolChoice) -> Figures {
    let defs = (0..n).map(|i| stdio(format!("s{i}"), 1, &protocol)).collect();
    ready_and_close(Host::new(), defs, None).await
}

/// `n` HTTP bindings to `n` paths of one server process, through a `Host`.
pub async fn ready_http(n: usize, per_origin: Option<usize>) -> Figures {
    let server = HttpServer::start(1, false);
    let defs = (0..n).map(|i| http(format!("h{i}"), server.port, i)).collect();
    ready_and_close(host_connecting(per_origin), defs, Some(server.child.id())).await
}

/// A host with the default bounds, or connecting `per_origin` bindings to
/// one origin at a time.
fn host_connecting(per_origin: Option<usize>) -> Host {
    match per_origin {
        Some(n) => Host::builder().max_concurrent_connects_per_origin(n).build(),
        None => Host::new(),
    }
}

const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}"#,
    "\n"
);
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// The floor: `n` spawns of the same server and `initialize` handshakes in
/// parallel with plain tokio (a task each: spawn, write `initialize`, read
/// the answer's line, write `initialized`); then each is ended by closing
/// its stdin and waiting for it.
pub async fn floor_stdio(n: usize) -> Figures {
    let exe = exe();
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let exe = exe.clone();
        set.spawn(async move {
            let mut child = tokio::process::Command::new(exe)
                .args(["--serve-stdio", "1"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("a server");
            let mut stdin = child.stdin.take().expect("its stdin");
            let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("its stdout"));
            stdin.write_all(INITIALIZE.as_bytes()).await.expect("initialize");
            let mut line = String::new();
            stdout.read_line(&mut line).await.expect("the answer");
            assert!(line.contains("protocolVersion"), "an initialize result");
            stdin.write_all(INITIALIZED.as_bytes()).await.expect("initialized");
            (child, stdin, stdout)
        });
    }
    let mut children = Vec::with_capacity(n);
    while let Some(done) = set.join_next().await {
        children.push(done.expect("a handshake"));
    }
    let ready_ms = ms(started.elapsed());
    let started = Instant::now();
    let mut waits = tokio::task::JoinSet::new();
    for (mut child, stdin, stdout) in children {
        drop((stdin, stdout));
        waits.spawn(async move { child.wait().await });
    }
    while waits.join_next().await.is_some() {}
    let close_ms = ms(started.elapsed());
    let (alive, zombies) = probe::children(None);
    let mut f = Figures::new();
    f.insert("ready_ms".into(), json!(ready_ms));
    f.insert("close_ms".into(), json!(close_ms));
    f.insert("children_alive".into(), json!(alive));
    f.insert("children_zombie".into(), json!(zombies));
    f
}

/// Resident memory per idle binding: one binding first (the runtime's, the
/// allocator's and the transport's first-use costs, in the baseline), then
/// `n` more; the difference in `VmRSS` once they are idle, over `n`.
/// `transport` is `stdio`, `http`, `http-close` (the server closes every
/// connection) or `http-N` (the host connects N bindings to one origin at
/// a time, not 4).
pub async fn memory(n: usize, transport: &str) -> Figures {
    let server = transport.starts_with("http").then(|| HttpServer::start(1, transport == "http-close"));
    let def = |i: usize| match &server {
        Some(s) => http(format!("h{i}"), s.port, i),
        None => stdio(format!("s{i}"), 1, &ProtocolChoice::default()),
    };
    let host = host_connecting(transport.strip_prefix("http-").and_then(|n| n.parse().ok()));
    host.add_all([def(n)]).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = probe::rss_trimmed();
    let started = Instant::now();
    host.add_all((0..n).map(def)).await;
    let ready_ms = ms(started.elapsed());
    let ready = ready_count(&host);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = probe::rss();
    let trimmed = probe::rss_trimmed();
    let (sockets, pipes) = probe::sockets_and_pipes();
    let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    let threads = probe::threads();
    if std::env::var_os("HOST_SCALE_EXIT_IDLE").is_some() {
        // For a heap profiler: end here, while the bindings are idle, so
        // that what they hold shows as never freed (see main.rs).
        std::process::exit(0);
    }
    host.close().await;
    let mut f = Figures::new();
    f.insert("sockets".into(), json!(sockets));
    f.insert("pipes".into(), json!(pipes));
    f.insert("tasks".into(), json!(tasks));
    f.insert("threads".into(), json!(threads));
    f.insert("kib_per_binding".into(), json!((after as f64 - before as f64) / n as f64 / 1024.0));
    f.insert("kib_per_binding_trimmed".into(), json!((trimmed as f64 - before as f64) / n as f64 / 1024.0));
    f.insert("rss_before_mib".into(), json!(before as f64 / 1048576.0));
    f.insert("rss_after_mib".into(), json!(after as f64 / 1048576.0));
    f.insert("ready".into(), json!(ready - 1));
    f.insert("ready_ms".into(), json!(ready_ms));
    f
}

/// The bytes of the `tools/list` answers of `servers` servers of `tools`
/// tools each, as they cross the pipes.
fn catalog_bytes(servers: usize, tools: usize) -> usize {
    (0..servers).map(|i| tools_response(&json!(i + 2), tools, 0).len()).sum()
}

/// `servers` stdio servers of `tools` tools each, through a `Host`: time,
/// process CPU and peak memory until the merged catalog has every tool;
/// the cost of resolving a model name in it; then one server changes one
/// tool, and the time until the new merged catalog is adopted.
pub async fn catalog(servers: usize, tools: usize) -> Figures {
    let host = Host::new();
    probe::reset_peak();
    let base = probe::rss();
    let (cpu, started) = (probe::cpu(), Instant::now());
    let refused =
        host.add_all((0..servers).map(|i| stdio(format!("s{i}"), tools, &ProtocolChoice::default()))).await;
    assert!(refused.is_empty(), "refused: {:?}", refused.first());
    let merged = host.catalog();
    let listed = merged.tools().count();
    let (wall, cpu) = (started.elapsed(), probe::cpu() - cpu);
    let peak = probe::peak().saturating_sub(base);
    let retained = probe::rss().saturating_sub(base);
    assert_eq!(listed, servers * tools, "every tool in the merged catalog");
    drop(merged);

    // A model name's route (no I/O), the last server's last tool.
    let name = format!("mcp__s{}__tool_{}", servers - 1, tools - 1);
    let routes = 200;
    let started = Instant::now();
    for _ in 0..routes {
        host.route(&name).expect("a route");
    }
    let route_us = started.elapsed().as_secs_f64() * 1e6 / routes as f64;

    // Refresh: the call makes server s0 change tool_0 and say so.
    let started = Instant::now();
    host.call_tool("mcp__s0__tool_0", json!({"id": "a"}), CallOpts::default()).await.expect("the call");
    let s0 = host.binding("s0").expect("s0");
    let candidate = loop {
        if let Some(c) = s0.candidate() {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let listed_at = Instant::now();
    host.adopt("s0", candidate.generation).expect("adopted");
    let merged = host.catalog();
    let done = Instant::now();
    let tool = merged.catalog("s0").and_then(|c| c.tool("tool_0")).expect("tool_0");
    assert!(tool.description.as_deref().unwrap_or("").contains("revision 1"), "the new tool_0");
    assert_eq!(merged.tools().count(), servers * tools);
    drop(merged);
    host.close().await;

    let mut f = Figures::new();
    f.insert("wall_ms".into(), json!(ms(wall)));
    f.insert("cpu_ms".into(), json!(ms(cpu)));
    f.insert("peak_mib".into(), json!(peak as f64 / 1048576.0));
    f.insert("retained_mib".into(), json!(retained as f64 / 1048576.0));
    f.insert("json_mib".into(), json!(catalog_bytes(servers, tools) as f64 / 1048576.0));
    f.insert("route_us".into(), json!(route_us));
    f.insert("refresh_ms".into(), json!(ms(done - started)));
    f.insert("adopt_merge_ms".into(), json!(ms(done - listed_at)));
    f
}

/// The floor of [`catalog`]: `serde_json::from_str::<Value>` of the same
/// `tools/list` answers, every one kept (as a merged catalog keeps them).
pub fn catalog_floor(servers: usize, tools: usize) -> Figures {
    let lines: Vec<String> = (0..servers).map(|i| tools_response(&json!(i + 2), tools, 0)).collect();
    probe::reset_peak();
    let base = probe::rss();
    let (cpu, started) = (probe::cpu(), Instant::now());
    let parsed: Vec<Value> =
        lines.iter().map(|l| serde_json::from_str::<Value>(l).expect("a page")).collect();
    let (wall, cpu) = (started.elapsed(), probe::cpu() - cpu);
    let peak = probe::peak().saturating_sub(base);
    let listed: usize = parsed.iter().map(|p| p["result"]["tools"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(listed, servers * tools);
    let mut f = Figures::new();
    f.insert("wall_ms".into(), json!(ms(wall)));
    f.insert("cpu_ms".into(), json!(ms(cpu)));
    f.insert("peak_mib".into(), json!(peak as f64 / 1048576.0));
    f
}
