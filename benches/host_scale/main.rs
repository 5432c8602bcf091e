//! A host at scale (issue 46, item 2): what a [`mcp_stack::host::Host`]
//! costs as it holds hundreds of servers and tens of thousands of tools,
//! measured at two sizes each so that what grows faster than the count
//! shows as a per-item cost that grows, and beside a floor where there is
//! one (the work any client must do, done with nothing but tokio or
//! serde_json).
//!
//! ```text
//! cargo bench --bench host_scale                       # the table (about 10 min on 2 cores)
//! cargo bench --bench host_scale -- --json             # one JSON record per case
//! cargo bench --bench host_scale -- --rounds 3 --only catalog
//! ```
//!
//! Every measurement runs in a fresh process (the bench binary re-executed
//! with `--run …`, see `cases.rs`), in rounds, the cases of a round in
//! reverse order every other round so that the shared machine's noise falls
//! on a case and its floor alike. Each figure is the median over the
//! rounds with its range; a ratio is taken round by round, then its median.
//!
//! - **Ready**: `Host::add_all` of 100 and 500 stdio servers (each a real
//!   process: this binary with `--serve-stdio`, a small echo server on
//!   blocking std I/O) until every binding is ready (connected, catalog
//!   listed), and of 100 and 500 HTTP bindings to as many paths of one
//!   server process (axum, `--serve-http`). The stdio floor spawns the same
//!   server the same number of times in parallel with plain tokio and
//!   does the `initialize` handshake (write it, read the answer's line,
//!   write `initialized`). mcp-stack does more per server than the floor:
//!   the handshake with the `initialize` era pinned, plus `tools/list`
//!   (one more round trip), plus, by default (`auto`), a `server/discover`
//!   probe before `initialize` (one more again).
//! - **How the host dials**: `Host::add_all` calls `Host::add` for each
//!   definition, and `add` spawns the binding's connect on a task of its
//!   own at once. It is unbounded: 500 definitions are 500 concurrent
//!   spawns and handshakes, bounded only by the host's 1,024 bindings (and
//!   the open-file limit: three pipes per stdio child). See the table for
//!   whether that needs a bound.
//! - **Close**: `Host::close` after the ready case, and then every process
//!   whose parent is the bench is counted from `/proc` (alive or zombie):
//!   none must be left.
//! - **Memory per idle binding**: `VmRSS` before and after adding 100 and
//!   1,000 bindings to a host that already has one (the runtime's and the
//!   transport's first-use costs stay in the baseline), over the count. The
//!   servers are other processes (for HTTP, the server is a child process
//!   of its own); all HTTP bindings reach one origin, so they share one
//!   connection pool (the library's default).
//! - **Catalog adoption**: 100 stdio servers of 100 and 500 tools (a
//!   merged catalog of 10k and 50k tools, about 360 bytes of JSON each, one
//!   `tools/list` page per server): the wall time until `Host::catalog`
//!   lists every tool, and the client's CPU time and peak memory
//!   (`VmHWM`) beyond the same host with 1-tool servers, the catalog's own
//!   share. Its floor is `serde_json::from_str::<Value>` of the very same
//!   `tools/list` answers, all kept.
//! - **Route**: `Host::route` of a model name in that merged catalog (what
//!   every `Host::call_tool` does first), per call.
//! - **Refresh**: server `s0` changes one tool and sends `list_changed`;
//!   the time from that until the new merged catalog is adopted (250 ms of
//!   it is the library's debounce of change notifications), and of that
//!   the `Host::adopt` and the rebuild of the merged catalog.
//!
//! The open-file limit: 1,000 children and 1,000 HTTP connections need
//! more than the usual soft limit of 1,024, so the bench raises its soft
//! limit to the hard one (at most 65,536) at start (`setrlimit`; the
//! children inherit it). Where the hard limit is low, `ulimit -n 4096`
//! first.
//!
//! Results: see the run recorded below (to be filled in by a run).

mod cases;
mod probe;
mod servers;

use cases::Figures;
use mcp_stack::ProtocolChoice;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::Command;

/// The value after `name` on the command line.
fn flag(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn number(args: &[String], i: usize) -> usize {
    args.get(i).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("a number at --run argument {i}"))
}

/// One measurement in this process: `--run CASE ARGS…`.
fn run_here(args: &[String]) -> Figures {
    if args[0] == "catalog-floor" {
        return cases::catalog_floor(number(args, 1), number(args, 2));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        match args[0].as_str() {
            "ready-stdio" => {
                let protocol = ProtocolChoice::parse(&args[2]).expect("a protocol choice");
                cases::ready_stdio(number(args, 1), protocol).await
            }
            "floor-stdio" => cases::floor_stdio(number(args, 1)).await,
            "ready-http" => cases::ready_http(number(args, 1)).await,
            "memory" => cases::memory(number(args, 2), &args[1]).await,
            "catalog" => cases::catalog(number(args, 1), number(args, 2)).await,
            other => panic!("no case {other:?}"),
        }
    })
}

/// The runs of one round, as `--run` arguments.
fn plan() -> Vec<Vec<String>> {
    let runs: &[&[&str]] = &[
        &["ready-stdio", "100", "legacy"],
        &["floor-stdio", "100"],
        &["ready-stdio", "500", "legacy"],
        &["floor-stdio", "500"],
        &["ready-stdio", "500", "auto"],
        &["ready-http", "100"],
        &["ready-http", "500"],
        &["memory", "stdio", "100"],
        &["memory", "stdio", "1000"],
        &["memory", "http", "100"],
        &["memory", "http", "1000"],
        &["memory", "http-close", "100"],
        &["memory", "http-close", "1000"],
        &["catalog", "100", "1"],
        &["catalog", "100", "100"],
        &["catalog-floor", "100", "100"],
        &["catalog", "100", "500"],
        &["catalog-floor", "100", "500"],
    ];
    runs.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect()
}

/// Runs `args` in a fresh process of this binary.
fn run_child(args: &[String]) -> Figures {
    let exe = std::env::current_exe().expect("the bench binary");
    let out = Command::new(exe).arg("--run").args(args).output().expect("a run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "--run {} failed: {}\n{stdout}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|_| panic!("figures from --run {}: {last}", args.join(" ")))
}

/// One line of the table and one JSON record: a case at one size, its
/// value in every round.
struct Row {
    case: String,
    size: usize,
    unit: &'static str,
    rounds: Vec<f64>,
}

impl Row {
    fn median(&self) -> f64 {
        let mut v = self.rounds.clone();
        v.sort_by(|a, b| a.partial_cmp(b).expect("a number"));
        v[v.len() / 2]
    }
    fn min(&self) -> f64 {
        self.rounds.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn max(&self) -> f64 {
        self.rounds.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
    fn json(&self) -> Value {
        json!({
            "case": self.case, "size": self.size, "unit": self.unit, "median": self.median(),
            "min": self.min(), "max": self.max(), "rounds": self.rounds,
        })
    }
}

/// The figures of every round of each run, by its `--run` arguments.
type Results = BTreeMap<String, Vec<Figures>>;

/// `field` of run `key` in every round (empty if the run was left out).
fn series(results: &Results, key: &str, field: &str) -> Vec<f64> {
    let runs = results.get(key).map(Vec::as_slice).unwrap_or(&[]);
    runs.iter().map(|f| f[field].as_f64().unwrap_or_else(|| panic!("{field} of {key}"))).collect()
}

/// Round by round, `f(a, b)`.
fn paired(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    a.iter().zip(b).map(|(a, b)| f(*a, *b)).collect()
}

fn rows(results: &Results) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut push = |case: &str, size: usize, unit: &'static str, rounds: Vec<f64>| {
        if !rounds.is_empty() {
            rows.push(Row { case: case.to_string(), size, unit, rounds });
        }
    };
    for n in [100, 500] {
        let stack = series(results, &format!("ready-stdio {n} legacy"), "ready_ms");
        let floor = series(results, &format!("floor-stdio {n}"), "ready_ms");
        push("stdio ready: mcp-stack (initialize era)", n, "ms", stack.clone());
        push("stdio ready: floor (spawn + initialize, tokio)", n, "ms", floor.clone());
        push("stdio ready: mcp-stack / floor", n, "ratio", paired(&stack, &floor, |a, b| a / b));
        if n == 500 {
            let auto = series(results, "ready-stdio 500 auto", "ready_ms");
            push("stdio ready: mcp-stack (auto, the default)", n, "ms", auto.clone());
            push("stdio ready: mcp-stack (auto) / floor", n, "ratio", paired(&auto, &floor, |a, b| a / b));
        }
    }
    for n in [100, 500] {
        push("http ready: mcp-stack, N paths of one process", n, "ms", {
            series(results, &format!("ready-http {n}"), "ready_ms")
        });
    }
    for n in [100, 500] {
        let key = format!("ready-stdio {n} legacy");
        push("stdio close: Host::close", n, "ms", series(results, &key, "close_ms"));
        push("stdio close: floor (close stdin, wait)", n, "ms", {
            series(results, &format!("floor-stdio {n}"), "close_ms")
        });
        let alive = series(results, &key, "children_alive");
        let zombies = series(results, &key, "children_zombie");
        push(
            "stdio close: children left (alive + zombie)",
            n,
            "count",
            paired(&alive, &zombies, |a, b| a + b),
        );
        push("stdio close: bindings timed out", n, "count", series(results, &key, "timed_out"));
        push("http close: Host::close", n, "ms", series(results, &format!("ready-http {n}"), "close_ms"));
    }
    for (transport, label) in
        [("stdio", "stdio"), ("http", "http"), ("http-close", "http, no idle connection (Connection: close)")]
    {
        for n in [100, 1000] {
            let key = format!("memory {transport} {n}");
            push(&format!("memory per idle binding: {label}"), n, "KiB", {
                series(results, &key, "kib_per_binding")
            });
            let sockets = series(results, &key, "sockets");
            if transport != "stdio" {
                push(&format!("  sockets per binding: {transport}"), n, "count", {
                    sockets.iter().map(|s| s / n as f64).collect()
                });
            }
        }
    }
    let one_cpu = series(results, "catalog 100 1", "cpu_ms");
    let one_peak = series(results, "catalog 100 1", "peak_mib");
    for tools in [100, 500] {
        let (key, floor) = (format!("catalog 100 {tools}"), format!("catalog-floor 100 {tools}"));
        let size = 100 * tools;
        let cpu = paired(&series(results, &key, "cpu_ms"), &one_cpu, |a, b| a - b);
        let floor_cpu = series(results, &floor, "cpu_ms");
        let peak = series(results, &key, "peak_mib");
        let own_peak = paired(&peak, &one_peak, |a, b| a - b);
        let json_mib = series(results, &key, "json_mib");
        push("catalog: wall time to merged (100 servers)", size, "ms", series(results, &key, "wall_ms"));
        push("catalog: client CPU beyond 1-tool servers", size, "ms", cpu.clone());
        push("catalog: floor CPU (serde_json::from_str::<Value>)", size, "ms", floor_cpu.clone());
        push("catalog: CPU / floor", size, "ratio", paired(&cpu, &floor_cpu, |a, b| a / b));
        push("catalog: JSON of the tools/list answers", size, "MiB", json_mib.clone());
        push("catalog: peak memory (VmHWM over start)", size, "MiB", peak.clone());
        push("catalog: peak beyond 1-tool servers", size, "MiB", own_peak.clone());
        push("catalog: peak beyond 1-tool / JSON", size, "ratio", paired(&own_peak, &json_mib, |a, b| a / b));
        push("catalog: floor peak memory", size, "MiB", series(results, &floor, "peak_mib"));
        push("catalog: memory retained after", size, "MiB", series(results, &key, "retained_mib"));
        push("route: Host::route of a model name", size, "µs", series(results, &key, "route_us"));
        push("refresh: list_changed to adopted", size, "ms", series(results, &key, "refresh_ms"));
        push("refresh: of which adopt + merge", size, "ms", series(results, &key, "adopt_merge_ms"));
    }
    rows
}

fn print_table(rows: &[Row]) {
    println!("{:<52} {:>6} {:>10} {:>21}  unit", "case", "N", "median", "range over rounds");
    for r in rows {
        let range = format!("{:.2}-{:.2}", r.min(), r.max());
        println!("{:<52} {:>6} {:>10.2} {:>21}  {}", r.case, r.size, r.median(), range, r.unit);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(tools) = flag("--serve-stdio") {
        return servers::serve_stdio(tools.parse().expect("a tool count"));
    }
    if let Some(tools) = flag("--serve-http") {
        let close = args.iter().any(|a| a == "close");
        return servers::serve_http(tools.parse().expect("a tool count"), close);
    }
    let limit = probe::raise_open_files();
    if let Some(at) = args.iter().position(|a| a == "--run") {
        let figures = run_here(&args[at + 1..]);
        println!("{}", Value::Object(figures));
        return;
    }
    let rounds: usize = flag("--rounds").and_then(|r| r.parse().ok()).unwrap_or(5).max(1);
    let only = flag("--only").unwrap_or_default();
    let json = args.iter().any(|a| a == "--json");
    let plan: Vec<Vec<String>> = plan().into_iter().filter(|r| r.join(" ").contains(&only)).collect();
    eprintln!("{} runs a round, {rounds} rounds, open-file limit {limit}", plan.len());
    let mut results = Results::new();
    for round in 0..rounds {
        let order: Vec<&Vec<String>> =
            if round % 2 == 0 { plan.iter().collect() } else { plan.iter().rev().collect() };
        for run in order {
            eprintln!("round {}/{rounds}: {}", round + 1, run.join(" "));
            let figures = run_child(run);
            results.entry(run.join(" ")).or_default().push(figures);
        }
    }
    let rows = rows(&results);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&Value::Array(rows.iter().map(Row::json).collect())).expect("JSON")
        );
    } else {
        print_table(&rows);
    }
}
