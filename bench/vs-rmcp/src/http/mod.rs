//! The HTTP bench (`run.sh --transport http`): mcp-stack's streamable
//! HTTP client side by side with rmcp's and two floors, against one small
//! streamable-HTTP echo server (`src/bin/http_echo_server.rs`, hyper 1 on
//! loopback), in one run, in both eras: 2025-11-25 (`initialize`, a
//! session in `Mcp-Session-Id`) and 2026-07-28 (stateless,
//! `server/discover`, `_meta` on every request).
//!
//! ```text
//! bench/vs-rmcp/run.sh --transport http              # pinned to one CPU
//! bench/vs-rmcp/run.sh --unpinned --transport http   # both CPUs
//! bench/vs-rmcp/run.sh --transport http --json       # JSON records (src/table.rs)
//! bench/vs-rmcp/run.sh --transport http --only inflight stack legacy   # for a profiler
//! ```
//!
//! # What is compared
//!
//! - `mcp-stack`: a `Binding` over `StreamableHttpFactory`, every default
//!   layer on; `rmcp`: its `StreamableHttpClientTransport` on reqwest;
//!   the **reqwest floor** and the **hyper floor**: `POST`, read the body,
//!   parse the JSON (cutting an SSE body into its `data:` events first),
//!   match the id, and nothing else. See [`session`] and [`floor`] for how
//!   each is set up.
//!
//! The cases (one server process for the whole run; the query of its URL
//! picks JSON or SSE replies and the catalog's size):
//!
//! - `tools/call` one at a time, answered as a JSON body and as an SSE
//!   stream; 32 in flight (32 callers sharing one client; the floors' own
//!   connections: reqwest's pool, one hyper connection per caller); 1 MiB
//!   text results one at a time (JSON);
//! - a call whose SSE reply carries 100 `notifications/progress` before
//!   its result (mcp-stack and rmcp ask for progress with a token;
//!   mcp-stack's sink counts them, rmcp's handler ignores them, the floors
//!   parse and count them);
//! - a 50 MB text result, as one SSE event and as one JSON body: the time
//!   of a call and the peak memory it added, each client in a process of
//!   its own ([`memory`] says what exactly is measured);
//! - connect to ready (a new client: handshake and first `tools/list`;
//!   the server is already up, so this is TCP connects and round trips,
//!   not a process start as over stdio); a 1,024-tool catalog to ready.
//!
//! # How the figures are kept honest
//!
//! As the stdio bench: interleaved rounds (the order of clients rotates),
//! medians, ratios of medians of the same run, and the range of
//! mcp-stack's ratio round by round, to rmcp and to the reqwest floor. No
//! figure is asserted anywhere.
//!
//! Pinned (`run.sh`, the default) the bench, the server and every child
//! share one CPU: no wakeup crosses CPUs, so the figures measure CPU work
//! per call (client and server together) and are steadier; they cannot
//! show what a client gains from running beside its server (the server
//! parsing while the client waits), nor its own parallelism. Unpinned
//! (`--unpinned`) shows that, and the latency of cross-CPU wakeups, but
//! on this shared VM it also shows the other tenants: its ranges are
//! wider.
//!
//! # Figures
//!
//! See the end of this file's docs, filled from the run of 2026-12-05.

use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Child as Process, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

mod floor;
mod memory;
mod session;

use crate::table::{self, Layout, Results, Row};
use crate::{Era, Sizes};
use session::{Session, DEPTH};

/// Who talks to the server.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Client {
    Stack,
    Rmcp,
    Reqwest,
    Hyper,
}

impl Client {
    pub(crate) const ALL: [Client; 4] = [Client::Stack, Client::Rmcp, Client::Reqwest, Client::Hyper];

    pub(crate) fn key(self) -> &'static str {
        match self {
            Client::Stack => "stack",
            Client::Rmcp => "rmcp",
            Client::Reqwest => "reqwest",
            Client::Hyper => "hyper",
        }
    }

    fn index(self) -> usize {
        Client::ALL.iter().position(|c| *c == self).expect("a client")
    }
}

/// The rows of the table. The peaks are measured with the 50 MB times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Case {
    Sequential,
    SequentialSse,
    InFlight,
    Large,
    Progress,
    HugeSse,
    HugeJson,
    PeakSse,
    PeakJson,
    Connect,
    Catalog,
}

impl Case {
    pub(crate) const ALL: [Case; 11] = [
        Case::Sequential,
        Case::SequentialSse,
        Case::InFlight,
        Case::Large,
        Case::Progress,
        Case::HugeSse,
        Case::HugeJson,
        Case::PeakSse,
        Case::PeakJson,
        Case::Connect,
        Case::Catalog,
    ];

    pub(crate) fn key(self) -> &'static str {
        self.row().key
    }

    fn index(self) -> usize {
        Case::ALL.iter().position(|c| *c == self).expect("a case")
    }

    fn row(self) -> Row {
        let (key, name, unit, scale, decimals) = match self {
            Case::Sequential => ("sequential", "sequential tools/call (JSON)", "calls/s", 1.0, 0),
            Case::SequentialSse => ("sequential-sse", "sequential tools/call (SSE)", "calls/s", 1.0, 0),
            Case::InFlight => ("inflight", "32 in flight (JSON)", "calls/s", 1.0, 0),
            Case::Large => ("large", "1 MiB text results (JSON)", "calls/s", 1.0, 0),
            Case::Progress => ("progress", "100 progress + result (SSE)", "calls/s", 1.0, 0),
            Case::HugeSse => ("huge-sse", "50 MB result, one SSE event", "ms", 1e3, 1),
            Case::HugeJson => ("huge-json", "50 MB result, JSON body", "ms", 1e3, 1),
            Case::PeakSse => ("peak-sse", "  peak memory, 50 MB SSE", "MiB", 1.0 / 1048576.0, 1),
            Case::PeakJson => ("peak-json", "  peak memory, 50 MB JSON", "MiB", 1.0 / 1048576.0, 1),
            Case::Connect => ("connect", "connect to ready", "ms", 1e3, 2),
            Case::Catalog => ("catalog", "1,024-tool catalog to ready", "ms", 1e3, 2),
        };
        Row { key, name, unit, scale, decimals }
    }
}

pub(crate) fn case_of(name: &str) -> Result<Case, String> {
    Case::ALL
        .into_iter()
        .find(|c| c.key() == name && !matches!(c, Case::PeakSse | Case::PeakJson))
        .ok_or_else(|| format!("unknown case {name:?}"))
}

pub(crate) fn client_of(name: &str) -> Result<Client, String> {
    Client::ALL.into_iter().find(|c| c.key() == name).ok_or_else(|| format!("unknown client {name:?}"))
}

/// 50 MB (decimal), the size of the large result.
pub(crate) const HUGE_BYTES: u64 = 50_000_000;
const LARGE_BYTES: u64 = 1 << 20;
const CATALOG_TOOLS: usize = 1024;
const PROGRESS: u64 = 100;

/// The server's endpoint with the reply form and catalog asked for.
pub(crate) fn url(base: &str, sse: bool, tools: usize) -> String {
    format!("{base}?sse={}&tools={tools}", u8::from(sse))
}

/// The echo server, running until dropped (its stdin closes).
struct Server {
    process: Process,
    url: String,
}

impl Server {
    fn start() -> Server {
        let path = std::env::current_exe().expect("the bench's path").with_file_name("http-echo-server");
        let mut process = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start http-echo-server");
        let mut line = String::new();
        BufReader::new(process.stdout.take().expect("stdout")).read_line(&mut line).expect("its URL");
        Server { process, url: line.trim().to_string() }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.process.stdin.take());
        let _ = self.process.wait();
    }
}

/// The table of every case, every client, both eras.
pub(crate) fn table(runtime: &Runtime, rounds: usize, sizes: Sizes, json: bool) {
    mcp_stack::transport::http::install_crypto_provider();
    let server = Server::start();
    if !json {
        println!("CPUs allowed: {}", crate::cpus_allowed());
        println!("{rounds} rounds; medians; ratios of medians of this run; server at {}\n", server.url);
    }
    for era in [Era::Legacy, Era::Modern] {
        let mut results = Results::default();
        for round in 0..rounds {
            let mut order = Client::ALL.to_vec();
            order.rotate_left(round % Client::ALL.len());
            for case in Case::ALL {
                for &client in &order {
                    for (case, figure) in measure(runtime, client, era, case, sizes, &server.url) {
                        results.add(case.index(), client.index(), figure);
                    }
                }
            }
            eprintln!("http {} round {} of {rounds} done", era.arg(), round + 1);
        }
        let layout = Layout {
            transport: "http",
            era: era.version(),
            title: match era {
                Era::Legacy => "2025-11-25 (initialize, Mcp-Session-Id)",
                Era::Modern => "2026-07-28 (stateless, server/discover)",
            },
            rows: Case::ALL.into_iter().map(Case::row).collect(),
            clients: vec![
                ("mcp-stack", "mcp-stack"),
                ("rmcp", "rmcp"),
                ("reqwest-floor", "reqwest floor"),
                ("hyper-floor", "hyper floor"),
            ],
            floor_by_round: true,
        };
        table::print(&layout, &results, json);
    }
}

/// One case for one client, with a profiler's sizes.
pub(crate) fn only(runtime: &Runtime, case: Case, client: Client, era: Era) {
    mcp_stack::transport::http::install_crypto_provider();
    let server = Server::start();
    let sizes = Sizes { sequential: 5000, in_flight: 10000, large: 40, connects: 20, catalogs: 10, huge: 3 };
    if matches!(case, Case::HugeSse | Case::HugeJson) {
        // In this process, for a profiler.
        println!("{}", runtime.block_on(memory::child(case, client, era, &server.url, sizes.huge)));
        return;
    }
    println!("{:?}", measure(runtime, client, era, case, sizes, &server.url));
}

/// The 50 MB child (see [`memory`]).
pub(crate) fn child(runtime: &Runtime, case: Case, client: Client, era: Era, url: &str, calls: usize) {
    mcp_stack::transport::http::install_crypto_provider();
    println!("{}", runtime.block_on(memory::child(case, client, era, url, calls)));
}

/// The figures one case gives for one client: calls a second, seconds, or
/// bytes, in the rows they go to.
fn measure(
    runtime: &Runtime,
    client: Client,
    era: Era,
    case: Case,
    sizes: Sizes,
    base: &str,
) -> Vec<(Case, f64)> {
    let rate = |sse: bool, calls: usize, depth: usize, arguments: serde_json::Value| {
        let url = url(base, sse, 1);
        runtime.block_on(calls_per_second(client, era, &url, calls, depth, arguments))
    };
    let text = json!({ "text": "hi" });
    match case {
        Case::Sequential => vec![(case, rate(false, sizes.sequential, 1, text))],
        Case::SequentialSse => vec![(case, rate(true, sizes.sequential, 1, text))],
        Case::InFlight => vec![(case, rate(false, sizes.in_flight, DEPTH, text))],
        Case::Large => vec![(case, rate(false, sizes.large, 1, json!({ "bytes": LARGE_BYTES })))],
        Case::Progress => vec![(case, rate(true, sizes.large, 1, json!({ "progress": PROGRESS })))],
        Case::HugeSse | Case::HugeJson => {
            let (seconds, peak) = memory::in_own_process(case, client, era, base, sizes.huge);
            let peak_case = if case == Case::HugeSse { Case::PeakSse } else { Case::PeakJson };
            vec![(case, seconds), (peak_case, peak)]
        }
        Case::PeakSse | Case::PeakJson => Vec::new(),
        Case::Connect => {
            vec![(
                case,
                runtime.block_on(seconds_to_ready(client, era, &url(base, false, 1), 1, sizes.connects)),
            )]
        }
        Case::Catalog => {
            let url = url(base, false, CATALOG_TOOLS);
            vec![(case, runtime.block_on(seconds_to_ready(client, era, &url, CATALOG_TOOLS, sizes.catalogs)))]
        }
    }
}

async fn seconds_to_ready(client: Client, era: Era, url: &str, tools: usize, times: usize) -> f64 {
    let mut total = Duration::ZERO;
    for _ in 0..times {
        let begun = Instant::now();
        let session = Session::open(client, era, url, tools).await;
        total += begun.elapsed();
        session.close().await;
    }
    total.as_secs_f64() / times as f64
}

async fn calls_per_second(
    client: Client,
    era: Era,
    url: &str,
    calls: usize,
    depth: usize,
    arguments: serde_json::Value,
) -> f64 {
    let session = Session::open(client, era, url, 1).await;
    let arguments = arguments.as_object().expect("an object").clone();
    // A few calls first (as many callers as will be measured, so that the
    // connections are open): what is set up lazily is not measured.
    let warm = if arguments.contains_key("text") { 50.max(depth) } else { 2 };
    session.calls(warm, depth.min(warm), &arguments).await;
    let begun = Instant::now();
    session.calls(calls, depth, &arguments).await;
    let rate = calls as f64 / begun.elapsed().as_secs_f64();
    session.close().await;
    rate
}
