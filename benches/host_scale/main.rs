//! A host at scale (issue 46, item 2): what a [`mcp_stack::host::Host`]
//! costs as it holds hundreds of servers and tens of thousands of tools,
//! measured at two sizes each so that what grows faster than the count
//! shows as a per-item cost that grows, and beside a floor where there is
//! one (the work any client must do, done with nothing but tokio or
//! serde_json).
//!
//! ```text
//! cargo bench --bench host_scale                       # the table (about a minute on 2 cores)
//! cargo bench --bench host_scale -- --json             # one JSON record per case (the table on stderr)
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
//!   own at once, which waits for its turn: 64 connect at once by default
//!   (`HostBuilder::max_concurrent_connects`), and at most 4 to one network
//!   origin (`HostBuilder::max_concurrent_connects_per_origin`): the HTTP
//!   bindings here, all to one origin, connect 4 at a time, the stdio ones
//!   64 (why both numbers at the end). The HTTP ready case runs with 64 to
//!   one origin at a time too, the default before.
//! - **Close**: `Host::close` after the ready case, and then every process
//!   whose parent is the bench is counted from `/proc` (alive or zombie):
//!   none must be left.
//! - **Memory per idle binding**: `VmRSS` before and after adding 100 and
//!   1,000 bindings to a host that already has one (the runtime's and the
//!   transport's first-use costs stay in the baseline), over the count. The
//!   servers are other processes (for HTTP, the server is a child process
//!   of its own); all HTTP bindings reach one origin, so they share one
//!   connection pool (the library's default). Also after `malloc_trim`
//!   (what the bindings hold, less what the allocator kept of their
//!   connects), and for HTTP once more with a server that closes every
//!   connection (the bindings without the pool's idle connections) and
//!   once with a host that connects 64 to one origin at a time (the
//!   default before) rather than 4. For a heap
//!   profile of the idle bindings, `HOST_SCALE_EXIT_IDLE=1` ends the run
//!   while they are idle, so that what they hold shows as never freed:
//!   `HOST_SCALE_EXIT_IDLE=1 heaptrack <bench binary> --run memory http 300`
//!   (a build with `CARGO_PROFILE_BENCH_DEBUG=line-tables-only
//!   CARGO_PROFILE_BENCH_STRIP=none` names the lines).
//! - **Catalog adoption**: 100 stdio servers of 100 and 500 tools (a
//!   merged catalog of 10k and 50k tools, about 390 bytes of JSON each, one
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
//! # One run
//!
//! 2026-12-05, a shared 2-core VM, `--rounds 5`, open-file limit 20,000, at
//! `HEAD` of that day (the host connecting 64 at a time, 4 to one origin;
//! load average 0.7 to 1.7). Medians, the range over the rounds in
//! brackets:
//!
//! ```text
//!                                          N=100 / 10k tools          N=500 / 50k tools
//! stdio ready, mcp-stack (initialize era)   97.4 ms (87.4-112.9)      484.9 ms (459.6-493.1)
//! stdio ready, floor (tokio)                89.9 ms (86.1-106.4)      448.0 ms (442.9-483.8)
//!   mcp-stack / floor                       1.01 (0.97-1.22)           1.08 (0.95-1.10)
//!   default era choice (auto) / floor                                  1.13 (0.96-1.16)
//! http ready, N paths of one process        35.3 ms (34.7-35.8)       154.1 ms (150.9-155.7)
//!   64 to one origin at a time (not 4)      31.9 ms (30.2-37.8)       119.1 ms (108.7-136.1)
//! stdio close, Host::close                  15.7 ms (13.9-18.6)        92.2 ms (76.8-102.1)
//!   floor (close stdin, wait)               13.9 ms (11.4-16.0)       103.2 ms (78.6-130.3)
//!   children left, bindings timed out       0, 0 in every round        0, 0 in every round
//! http close, Host::close                    1.8 ms (1.6-2.2)           8.8 ms (8.4-11.0)
//!
//!                                          N=100                      N=1,000
//! memory per idle binding, stdio            32.4 KiB (32.0-33.3)       27.7 KiB (27.6-27.7)
//! memory per idle binding, http             29.6 KiB (29.2-29.9)       26.0 KiB (26.0-26.0)
//!   after malloc_trim                       28.4 KiB (28.3-28.6)       26.0 KiB (26.0-26.0)
//!   sockets per binding                     0.11                       0.01
//!   server says Connection: close           28.5 KiB (28.3-28.7)       26.0 KiB (26.0-26.0)
//!   64 to one origin at a time (not 4)      60.6 KiB (56.3-67.7)       29.7 KiB (29.6-29.9)
//!     after malloc_trim                     50.1 KiB (48.6-52.0)       28.8 KiB (28.8-29.0)
//!     sockets per binding                   0.67                       0.07
//!
//!                                          10k tools                  50k tools
//! catalog, wall time to merged              179 ms (163-205)           586 ms (574-643)
//! catalog, client CPU beyond 1-tool         65.9 ms (62.0-74.1)        343.8 ms (336.8-402.3)
//! floor: serde_json::from_str::<Value>      34.0 ms (33.6-34.2)        172.8 ms (168.7-177.9)
//!   CPU / floor                             1.94 (1.85-2.20)           2.03 (1.91-2.38)
//! JSON of the tools/list answers            3.72 MiB                   18.68 MiB
//! catalog, peak beyond 1-tool servers       11.7 MiB (3.13 x JSON)     52.7 MiB (2.82 x JSON)
//! floor peak (the parsed Values)            46.8 MiB (12.6 x JSON)     233.5 MiB (12.5 x JSON)
//! Host::route of a model name               2.8 µs (2.7-3.7)           3.0 µs (3.0-4.2)
//! refresh, list_changed to adopted          256.0 ms (254.9-256.5)     281.6 ms (274.7-282.7)
//!   of which Host::adopt + merge            2.4 ms (2.3-2.4)           17.4 ms (14.4-20.7)
//! ```
//!
//! Since, a catalog keeps no spare capacity (a one-tool catalog held four
//! tools' room): idle bindings, three runs each of `--run memory`, HTTP
//! 28.4-28.7 KiB at 100 and 25.0 at 1,000, stdio 26.6-26.7 at 1,000; the
//! 50k-tool catalog's peak the same (58.6-59.1 MiB over start).
//!
//! The run before that (same VM and day, before the bound per origin; the
//! host connecting 64 at a time to any origin, load 1.3):
//!
//! ```text
//!                                          N=100 / 10k tools          N=500 / 50k tools
//! stdio ready, mcp-stack / floor            1.20 (0.92-1.23)           1.16 (1.07-1.19)
//! http ready, N paths of one process        33.2 ms (29.3-40.2)       111.0 ms (104.6-122.0)
//!                                          N=100                      N=1,000
//! memory per idle binding, http             63.6 KiB (56.6-64.7)       29.7 KiB (29.5-30.0)
//!   host connecting 8 at a time             32.2 KiB (31.4-32.9)       26.3 KiB (26.2-26.3)
//! catalog, client CPU / floor               1.90 (1.82-1.98)           2.13 (1.90-2.26)
//! ```
//!
//! And an earlier one (same VM and day, load 1.7 at its start and 13.9 at
//! its end; before the connect bound, the pools' bound on idle connections
//! and the catalog's schemas as text):
//!
//! ```text
//!                                          N=100 / 10k tools          N=500 / 50k tools
//! stdio ready, mcp-stack / floor            0.87 (0.86-1.21)           1.04 (0.86-1.08)
//! http ready, N paths of one process        34.3 ms (32.7-40.2)       198.7 ms (178.4-201.4)
//! memory per idle binding, stdio            38.6 KiB (38.0-40.1)       33.8 KiB (33.2-34.5)
//! memory per idle binding, http             85.7 KiB (80.4-90.6)       72.7 KiB (71.1-73.7)
//!   sockets per binding                     1.32                       1.34
//!   server says Connection: close           90.3 KiB (85.8-92.0)       67.4 KiB (65.0-69.1)
//!   the same after malloc_trim              76.0 KiB (75.0-78.1)       57.2 KiB (55.4-59.3)
//! catalog, client CPU / floor               2.51 (2.10-2.62)           2.46 (2.28-2.52)
//! catalog, peak beyond 1-tool servers       46.3 MiB (12.4 x JSON)     227.1 MiB (12.2 x JSON)
//! ```
//!
//! Against the issue's targets:
//!
//! - **500 stdio servers ready within 1.5 x the floor: met**, 1.08 (0.95-1.10
//!   over the rounds; 1.13 with the default era choice, which probes
//!   `server/discover` first; 1.16 and 1.19 in the run before, 1.04 and
//!   1.00 in the one before it, when the host dialed all at once),
//!   although each binding also lists its tools.
//!   The time is the operating system's: spawning a process is ~0.9 ms of
//!   this machine for mcp-stack and the floor alike, at 100, 500 and (runs
//!   of `--run ready-stdio 1000 legacy` beside `--run floor-stdio 1000`)
//!   1,000 servers: 0.91 and 0.96 s against the floor's 0.88 and 0.84 s
//!   in two quiet runs (a third, disturbed, 2.42 s against 1.51 s).
//! - **Closing 500 leaves no child process: met**, in every round (no
//!   binding timed out; `Host::close` closes all concurrently, 0.16 ms a
//!   binding, the floor's pace).
//! - **Adopting a 50k-tool merged catalog within 3 x the plain parse: met**,
//!   2.03 x in CPU (1.91-2.38; 2.46 x two runs before, when schemas were
//!   trees); the catalog validates, digests and names every tool besides
//!   parsing it.
//! - **Peak memory within 3 x the catalog's JSON: met since schemas are
//!   text**, 2.82 x at 50k tools (2.81-2.85; 3.14 x at 10k, where the
//!   fixed costs weigh more). Two runs before gave 12.2 x: the
//!   catalog kept every schema as a `serde_json::Value`, and a `Value`
//!   object is a `BTreeMap` whose first node is about 600 bytes however
//!   few its keys (this tool set has five objects a schema); the floor,
//!   the bare parse of the same answers, peaks at 12.5 x. `ToolSpec`'s
//!   schemas are now `catalog::Schema`, their compact JSON text. A later
//!   run the same day (`--rounds 5`, load about 2): peak beyond the 1-tool
//!   servers 52.2 MiB for 18.7 MiB of JSON (was 227 MiB), client CPU
//!   beyond them 405 ms, 2.15 x the parse (was 2.46 x: fewer pages of
//!   memory touched), wall time 676 ms (was 653). heaptrack at the peak
//!   (`--run catalog 100 500`): 52.3 MB of heap, of which the `ToolSpec`
//!   vectors 16.8 MB (352 bytes a tool), descriptions 8.7 MB, schema texts
//!   7.2 MB, schema digests 3.0 MB. What would take it lower: a smaller
//!   `ToolSpec` (the rarely set `annotations`, `meta`, `app`, `warnings`
//!   are 120 bytes of it) and digests as bytes rather than hex strings,
//!   both public-field changes.
//! - **An idle HTTP binding within 32 KiB: met at 100 bindings, 29.6
//!   KiB** (29.2-29.9; 28.4 after `malloc_trim`, 0.11 sockets a binding),
//!   **and at 1,000, 26.0 KiB** (26.0-26.0), since the host connects at
//!   most 4 bindings to one origin at once. With 64 to one origin at a time
//!   (the default until then) 60.6 KiB at 100 (56.3-67.7) and 29.7 at
//!   1,000: the 64 concurrent handshakes' share, about 3 MB, spread over
//!   100 bindings and not seen over 1,000. That share is the connections
//!   HTTP/1.1 opens, one for each request in flight: the pool's idle
//!   connections (67 sockets and 368 tasks at 100 bindings) or, with a
//!   server that closes every connection, what their buffers leave behind
//!   once freed (the same total). A heap profile at 100 (heaptrack,
//!   `HOST_SCALE_EXIT_IDLE=1`) found each pooled idle connection holding
//!   about 25 KB (hyper's dispatch task with its 8 KiB read and 8 KiB
//!   write buffers), and the peak of the heap during the herd 3.75 MB
//!   above what stayed live: each connect in flight held its connection's
//!   buffers and channels (about 30 KB), the connect's own future (12 KB,
//!   boxed by the host's connector) and its requests. The resident figure
//!   follows that peak, not what stays live: freed between the bindings'
//!   long-lived state, those pages are not given back. Fewer connects to
//!   one origin at a time lower the peak, measured at 100 bindings (three
//!   runs each): 16 at a time 38-40 KiB, 8 at a time 33-34, 6 at a time
//!   31-32, 4 at a time 29-30, 2 at a time 28. What else was ruled out:
//!   the allocator's arenas (`MALLOC_ARENA_MAX=1`: 52-60 KiB at 64 at a
//!   time), threads (3 in every case: no blocking pool), the listening
//!   stream (`listen(false)`: the same within the noise). A binding
//!   beyond the first hundred costs 26 KiB, what it holds itself. A heap
//!   profile of 300 idle HTTP bindings before any bound
//!   (`HOST_SCALE_EXIT_IDLE=1`, heaptrack) found 31.9 KB live a binding, 54.6 KiB resident after `malloc_trim`: the
//!   difference was the allocator's, not the bindings'. Of the live heap,
//!   the largest shares: the connection's tasks (reader 0.6 KB, writer 0.9
//!   KB, listener 2.4 KB, now gone), the reconnect layer's report channel
//!   (1.2 KB, a broadcast of 16 slots allocated at once) and task, the
//!   connect's catalog state (1.6 KB) and the one-tool catalog (1.4 KB),
//!   four mpsc queues (0.8 KB each: tokio allocates a block of 32 slots at
//!   once), the HTTP factory and its settings (0.7 KB), and hyper's
//!   connection state where a connection is pooled.
//!
//! # What grows faster than the count
//!
//! Per item, from the smaller size to the larger, in the run above: stdio
//! ready 0.97 -> 0.97 ms a server (the floor 0.90 -> 0.90), stdio close
//! 0.16 -> 0.18 ms, catalog CPU 6.6 -> 6.9 µs a tool, memory per binding
//! falls: linear. HTTP ready 0.35 -> 0.31 ms a binding; in the first run,
//! with every binding dialed at once, it grew 0.34 -> 0.40 (the one
//! single-threaded server process answering 500 connections at once).
//!
//! - **Routing a model name was linear in the whole merged catalog** (every
//!   `Host::call_tool` scanned every tool of every catalog): 363 µs a call
//!   at 50k tools, so calling each of T tools cost O(T²). Fixed in
//!   `HostCatalog` (src/host/catalog.rs): a sorted index, 2.9 µs at 50k,
//!   flat from 10k.
//! - **A refresh rebuilds the whole merged catalog** for one server's
//!   change: O(T log T) in all tools, 2.5 ms at 10k and 14.2 ms at 50k
//!   (0.25 -> 0.28 µs a tool: the sort). The rebuild used to allocate a
//!   lower-cased `String` and a `BTreeSet` per tool (about 33 ms at 50k);
//!   the index's sort now finds the collisions too. Rebuilding only the
//!   changed binding's share (its run of the index merged into the rest)
//!   would make it O(its tools + T) of copying: not worth its code at
//!   14 ms a change.
//! - `Host::settled` rescanned the registry at every binding's settle
//!   (until it met one still connecting), up to O(N²) in bindings over a
//!   whole `add_all`; not visible in the figures at 1,000, but fixed: the
//!   registry counts its connecting entries.
//!
//! # How the host dials: why 64 at a time, and 4 to one origin
//!
//! Until 2026-12-05 the host dialed every added server at once, and the
//! figures said a bound was not needed for time (the stdio floor is as
//! parallel, and mcp-stack kept its pace at every size). Memory said
//! otherwise: 1,000 HTTP bindings dialed at once held 60-66 KiB resident
//! each once idle (42-45 KiB after `malloc_trim`), while the heap they
//! kept alive (heaptrack, `HOST_SCALE_EXIT_IDLE`) was about 32 KB a
//! binding. The rest was the herd: 1,000 concurrent handshakes open 1,000
//! connections with their buffers at once, and once those are freed the
//! bindings' long-lived state, allocated between them, keeps the pages.
//! The same 1,000 bindings added in batches (`Host::add_all` of 64, then
//! the next 64) held 27.8 KiB, and were ready sooner (222 against 389 ms).
//! Hence a default bound of 64 (`HostBuilder::max_concurrent_connects`,
//! a semaphore each connect task acquires before the connector runs; the
//! startup timeout counts from then). Interleaved runs of the bench
//! binary before and after (three each): 1,000 idle HTTP bindings 60.3-65.9
//! -> 29.5-29.8 KiB, 500 HTTP bindings ready in 236-279 -> 156-182 ms, 500
//! stdio servers ready in the same time (429-510 against 469-494 ms, the
//! floor 413-471), 1,000 stdio bindings 29.2-29.9 -> 27.5-27.7 KiB.
//!
//! Why not lower: the bench's servers answer on loopback in microseconds.
//! A remote server takes round trips (TLS, `initialize`, `tools/list`:
//! about a second at 200 ms), and the bound divides how many of those run
//! at once, so 500 remote servers take about 8 s at 64 and 63 s at 8.
//! What a lower bound buys, measured (`--run memory http N`, two runs each
//! at 8, 16, 32 and 64): at 100 bindings 32, 38, 49 and 54-59 KiB a
//! binding, at 1,000 26.3, 27, 28 and 29.6; 500 HTTP bindings ready in
//! 166-170, 150-156, 151-155 and 157-176 ms; 500 stdio servers alike
//! (461-525 ms). At 100 bindings the 64 concurrent handshakes' share is
//! spread over few bindings; at 1,000 it is not seen. A host of servers
//! heavy at start (`npx`, `uvx`: hundreds of MiB and seconds of CPU each),
//! or close to the open-file limit (three pipes a stdio server), wants a
//! lower bound; one of remote servers far away, a higher one.
//!
//! Those measurements show the herd's cost is in the connections, and
//! bindings to many origins do not share them: a host of 100 servers at
//! 100 origins opens a connection to each whatever the bound. The herd of
//! the bench is the one of many bindings to one origin (one aggregator
//! serving many servers under paths of one host), where HTTP/1.1 opens a
//! connection for each handshake request in flight. Hence a second bound,
//! per origin (`HostBuilder::max_concurrent_connects_per_origin`, the
//! origin from `TransportFactory::connection_origin`; a stdio server has
//! none): 4 by default, the lowest of the measured bounds that keeps 100
//! bindings to one origin within 32 KiB with a margin (6 gave 30.8-32.3
//! KiB in three runs). The origin's turn is taken before the host's, so
//! bindings queued behind one origin hold none of the 64 and a slow or
//! hanging origin delays no other. Its cost, in the run above: 100 HTTP
//! bindings to one origin ready in 35.3 ms against 31.9 with 64 at a
//! time, 500 in 154 ms against 119; to a distant origin each connect's
//! round trips are waited for four at a time, so a gateway of many
//! servers behind one remote origin raises it.

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
            "ready-http" => cases::ready_http(number(args, 1), args.get(2).map(|_| number(args, 2))).await,
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
        &["ready-http", "100", "64"],
        &["ready-http", "500", "64"],
        &["memory", "stdio", "100"],
        &["memory", "stdio", "1000"],
        &["memory", "http", "100"],
        &["memory", "http", "1000"],
        &["memory", "http-close", "100"],
        &["memory", "http-close", "1000"],
        &["memory", "http-64", "100"],
        &["memory", "http-64", "1000"],
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
        push("  64 to one origin at a time (not 4)", n, "ms", {
            series(results, &format!("ready-http {n} 64"), "ready_ms")
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
    for (transport, label) in [
        ("stdio", "stdio"),
        ("http", "http"),
        ("http-close", "http, no idle connection (Connection: close)"),
        ("http-64", "http, 64 to one origin at a time (not 4)"),
    ] {
        for n in [100, 1000] {
            let key = format!("memory {transport} {n}");
            push(&format!("memory per idle binding: {label}"), n, "KiB", {
                series(results, &key, "kib_per_binding")
            });
            push(&format!("  after malloc_trim: {transport}"), n, "KiB", {
                series(results, &key, "kib_per_binding_trimmed")
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

fn table(rows: &[Row]) -> String {
    let mut out = format!("{:<52} {:>6} {:>10} {:>21}  unit\n", "case", "N", "median", "range over rounds");
    for r in rows {
        let range = format!("{:.2}-{:.2}", r.min(), r.max());
        out += &format!("{:<52} {:>6} {:>10.2} {:>21}  {}\n", r.case, r.size, r.median(), range, r.unit);
    }
    out
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
        // The table too, on stderr, so that one run gives both.
        eprint!("{}", table(&rows));
        let records = Value::Array(rows.iter().map(Row::json).collect());
        println!("{}", serde_json::to_string_pretty(&records).expect("JSON"));
    } else {
        print!("{}", table(&rows));
    }
}
