//! mcp-stack's client side by side with the official Rust SDK's (`rmcp`
//! 3.11.0) and two floors, over stdio, against one small echo server
//! (`src/bin/echo_server.rs`), in one run.
//!
//! ```text
//! bench/vs-rmcp/run.sh                 # build (release) and run pinned to one CPU
//! bench/vs-rmcp/run.sh --rounds 3      # fewer rounds
//! bench/vs-rmcp/run.sh --only inflight stack legacy   # one case, for a profiler
//! bench/vs-rmcp/run.sh --help          # every flag; a wrong one is an error, not a default
//! bench/vs-rmcp/run.sh --json          # the figures as JSON records, one per line (src/table.rs)
//! bench/vs-rmcp/run.sh --transport http   # streamable HTTP: src/http/mod.rs
//! ```
//!
//! # What is compared
//!
//! - `mcp-stack`: a [`Binding`] over [`StdioFactory`], the protocol era
//!   pinned (as `rmcp` is told its lifecycle), every default layer on;
//! - `rmcp`: its client over `TokioChildProcess`, `initialize` or
//!   `server/discover` as the era asks;
//! - the **JSON floor**: what any client must do, and nothing else: write
//!   each request serialized from a JSON value (with the era's `_meta` on
//!   2026-07-28), read each reply line, check it is UTF-8 and parse the
//!   text into a value (as both clients do), and match its id, on one task
//!   that owns both pipes;
//! - the **pipe floor**: lines out and lines in, no JSON on the client's
//!   side (the server still parses and answers each).
//!
//! Every client's loop checks what it received: no error, and on the
//! structured case every record asked for, so that none is measured
//! receiving less (a result cut by a limit, say).
//!
//! The cases: `tools/call` one at a time, 32 in flight (32 tasks sharing
//! one client; the floors keep 32 written and unanswered), 1 MiB text
//! results one at a time, connect-to-ready (spawn, handshake, first
//! `tools/list`), a 1,024-tool catalog to ready (`rmcp`: `list_all_tools`;
//! mcp-stack: a connected binding, whose catalog has every tool checked,
//! named for models and digested), and the memory one more idle
//! connection costs the client (resident memory of a process of its own
//! before and after opening 32 more, divided by 32; the server processes
//! are not counted). Each case runs for both eras; the echo server speaks
//! one per process.
//!
//! # How the figures are kept honest
//!
//! - Rounds are interleaved (`--rounds`, 7 by default): each round runs
//!   every case for every client, in an order that rotates from round to
//!   round, and the table shows medians. Ratios are of medians of the same
//!   run, never of figures from different runs.
//! - The last column is the range of mcp-stack's ratio to rmcp round by
//!   round (the two clients' figures of one round paired). A ratio of
//!   medians near 1 whose range spans 1 widely is this machine's noise,
//!   not a difference between the clients.
//! - `run.sh` pins the bench, and so the servers it starts, to one CPU
//!   (`taskset`): on a shared 2-core VM, wakeups across CPUs cost tens of
//!   microseconds at random, more than a small call itself, and would
//!   drown the differences measured. The CPUs allowed are printed.
//! - No figure is asserted anywhere: this is a program that prints a
//!   table. CI builds it; people run it.
//!
//! # Figures (2026-12-04, this machine: a shared 2-core VM)
//!
//! One run, 7 rounds, `run.sh` pinned to CPU 1, release builds (rates on
//! this VM move by a third from one day to the next; read the ratios, and
//! the last column for how far each moved from round to round):
//!
//! ```text
//! 2025-11-25 (initialize)
//!   case                         unit     mcp-stack   rmcp  JSON floor  pipe floor  / rmcp  / JSON floor  / rmcp by round
//!   sequential tools/call        calls/s      64588  39313       62271       59966    1.64          1.04        1.28-2.43
//!   32 in flight                 calls/s     149417  73476      153667      216636    2.03          0.97        1.93-2.07
//!   1 MiB text results           calls/s        416    326         419         506    1.27          0.99        1.14-1.45
//!   1 MiB structured results     calls/s         25     16          21          37    1.56          1.16        1.35-1.79
//!   connect to ready             ms            0.96   0.93        0.90        0.86    1.02          1.06        0.95-1.26
//!   1,024-tool catalog to ready  ms           33.01  27.66       29.07       29.34    1.19          1.14        0.98-1.45
//!   memory per idle connection   KiB           29.4   29.8           -           -    0.99             -        0.98-1.04
//!
//! 2026-07-28 (server/discover)
//!   case                         unit     mcp-stack   rmcp  JSON floor  pipe floor  / rmcp  / JSON floor  / rmcp by round
//!   sequential tools/call        calls/s      51229  31151       44920       49520    1.64          1.14        1.34-1.84
//!   32 in flight                 calls/s     128434  56175      112324      170137    2.29          1.14        1.98-2.96
//!   1 MiB text results           calls/s        396    271         411         458    1.46          0.96        1.22-1.83
//!   1 MiB structured results     calls/s         25     17          24          31    1.44          1.03        1.04-1.99
//!   connect to ready             ms            1.00   0.99        0.96        0.89    1.00          1.04        0.74-1.24
//!   1,024-tool catalog to ready  ms           31.72  32.03       29.08       30.99    0.99          1.09        0.82-1.49
//!   memory per idle connection   KiB           29.6   31.5           -           -    0.94             -        0.93-0.97
//! ```
//!
//! Ratios move from run to run on this VM, rmcp's most, and the catalog's
//! and connect's within their round-by-round ranges. The same day's other
//! runs of the same library code (before this column existed) gave
//! sequential 1.17 / 1.51 and 1.39 / 1.42 × rmcp, 32 in flight 2.00 / 1.85
//! and 1.95 / 2.07, connect 1.05 / 1.06 and 1.06 / 1.05, the catalog
//! 1.03 / 1.26 and 1.15 / 1.16. The run of 2026-12-03 (steadier, before
//! the last two changes below, which callgrind alone can show): sequential
//! 1.50 / 1.59 and 1.01 / 1.02 of the JSON floor, 32 in flight 1.98 /
//! 2.05, 1 MiB text 1.31 / 1.30, structured 1.65 / 1.65, connect 1.05 /
//! 1.04, the catalog 1.00 / 1.03, 29.5 / 29.5 KiB per idle connection.
//!
//! The catalog is slower where every case runs in one process one after
//! the other than in a process of its own (`--only catalog CLIENT ERA`),
//! and moves most of all. Alone, 9 interleaved rounds on 2026-12-04 gave
//! mcp-stack 31.5 ms and rmcp 31.5 on 2025-11-25; a build with the
//! catalog's digests turned off, 31.6 (the digests do not show in the
//! figure: the echo server building and writing 1,024 tools takes about
//! two thirds of the case's CPU, `perf`). Only the catalog case, in
//! rounds of every client (21 rounds, three runs): 0.97 to 1.07 × rmcp.
//!
//! Instructions (callgrind, `--only CASE CLIENT ERA`, the whole client
//! process, runtime included; 2026-12-03): a sequential call costs
//! mcp-stack 32,700 instructions, rmcp 79,100 and the JSON floor 21,400 on
//! 2025-11-25 (5,050 calls), and 36,000, 95,700 and 34,600 on 2026-07-28,
//! where every request carries the era's `_meta`: mcp-stack encodes it
//! once per binding and writes it into each request's text, which took a
//! 2026-07-28 call from 52,000 instructions to 39,500. A lone call's
//! request is written by its caller (below), which took a call from
//! 35,300 instructions to 32,700. With 32 in flight, 32,700 (10,050
//! calls). Where a sequential call's 33,000 go, against the floor's
//! 21,000 (2026-12-04, inclusive counts per call, which callgrind can
//! blur where calls recurse): parsing the reply 5,300 (the floor 5,450)
//! and serializing the request 1,900 (the floor 1,900) are the floor's
//! work. Beyond it: turning the parsed result into a `ToolResult` 4,450
//! (counted alone with `--toggle-collect`), most of it freeing the
//! `Value`'s maps and keys, which the floor pays too (6,000 dropping its
//! parsed reply); the layers' calls about 1,800 and the drop of their
//! futures about 1,900; the request's drops (the caller's and the copies
//! the retry and reconnect layers keep) 1,700 and clones 500; the
//! caller's at-once write 1,040; the reader task waking the caller.
//! Boxing the connection's call future as it is (952 bytes) rather than
//! in an `async` block (1,056, past glibc's per-thread cache of 1,032)
//! saved about 420 instructions a call, sequential, and 470 in flight
//! (three callgrind runs each; `malloc_consolidate` left the profile).
//! 1 MiB text results: 194 million for the run against the JSON
//! floor's 219 and rmcp's 550; reading the rest of a large frame straight
//! into the frame took mcp-stack's from 226. A connect to ready: 389,000
//! against rmcp's 291,000 (21 connects; 405,000 before the reconnect
//! supervisor started lazily); a 1,024-tool catalog: 118
//! million a catalog (10 catalogs; 2026-12-04), 62 million of it SHA-256
//! in software, against rmcp's 55 million and the JSON floor's 29. A call makes
//! about 33 allocations. Under callgrind the CPU has no SHA extensions,
//! so the digests look far larger there than they are natively (`perf`:
//! about 5% of the catalog case's client samples).
//!
//! What bounds the figures:
//!
//! - **1 MiB structured results** (12,000 records in `structuredContent`)
//!   were above the JSON floor in the table above because the floor then
//!   parsed the reply's bytes with `from_slice`, which checks each string
//!   is UTF-8 as it parses it. It now checks the line once and parses the
//!   text, as both clients do: 10% faster on this case (16.2 → 18.0
//!   calls/s, medians of 5 interleaved runs of the case alone). The
//!   structured result is parsed once and moved into the `ToolResult`;
//!   deserializing it again from the `Value`, as until this case was
//!   added, cost 14% of the rate (22.3 against 26.0 calls/s). What
//!   mcp-stack does beyond the floor here is the result limit's size check
//!   (`max_structured_bytes`, measured as compact JSON): 12.7 million
//!   instructions per call, a tenth of the client's, counting the bytes by
//!   serializing the document into a counter.
//! - **1 MiB text results** are at the JSON floor (1.00 / 0.99; 1.03 in
//!   the other run) and use fewer instructions than it: the rest of a
//!   frame longer than the read buffer is read straight into the frame
//!   (`transport::framing`), so the result is copied once from the pipe
//!   and once into its string. What is left is the floor's own work:
//!   scanning the 1 MiB string for escapes, and checking it is UTF-8.
//! - **Sequential** calls are bound by the server and the pipe, not the
//!   client: mcp-stack is at the JSON floor (1.01 / 1.00), and the JSON
//!   floor itself is only 1.5 times rmcp, so no client can be twice rmcp
//!   here. By instructions, mcp-stack's call is under half of rmcp's. A
//!   lone request (nothing queued for the writer, no other call in
//!   flight) is written by its caller in one non-blocking write
//!   (`MessageSender::try_send`; `connection::writer`), which spares the
//!   wake-up of the writer's task: that took sequential calls from 0.93 /
//!   0.98 of the JSON floor to where they are, and left a call with the
//!   hops the floor has (the caller writes; the reply wakes it).
//! - **32 in flight** is at the JSON floor (0.97 to 1.06): the floor
//!   writes one request per reply, mcp-stack's
//!   writer (through which a request goes when others are in flight)
//!   gathers what its callers queued while it let them run (see `connection::writer`), so
//!   the server reads several requests per `read`. Until this change the
//!   bench measured mcp-stack one call at a time: a binding runs one tool
//!   call at a time unless `allow_parallel_calls` is set, and the bench did
//!   not set it (it does now, with room for 32 requests). Three times rmcp
//!   is above the pipe floor itself (2.5 to 2.8 times rmcp here).
//! - **The 1,024-tool catalog** is at rmcp's time (see above), and rmcp
//!   is at the JSON floor (it lists and keeps nothing else). mcp-stack
//!   also checks every tool, names it for models and digests the offering
//!   and each schema. Each entry is encoded canonically once
//!   (`Offering::digested`): the entry's digest and its schemas' digests
//!   are hashed from that one encoding, and the schemas are moved into the
//!   tool rather than deserialized again. Those two took it from 1.14 to
//!   about 1.0 times rmcp's time; keeping the offering's text for a
//!   refresh only when more than one family is advertised (this server
//!   offers tools only) took 15 interleaved rounds of that case to 0.97 /
//!   0.94. What is left: `perf` shows the server's own work (about 65% of
//!   the samples), then the reply parsed into `Value`s, allocation and
//!   page faults, and the canonical encoding.
//! - **Connect** is the child's spawn and start (0.87 ms of the JSON
//!   floor's 0.87); mcp-stack takes 0.04 to 0.05 ms more than rmcp. Timed
//!   by phase (medians of 7 × 20 connects, both clients instrumented in
//!   one build): the spawn and the handshake take the same time in both
//!   (mcp-stack 0.87 ms, rmcp 0.86), and so does the first `tools/list`
//!   (67 µs each). The difference is what rmcp does not do: about 8 µs
//!   before the spawn (the definition's checks, the cache partition's
//!   digest, the inbound handlers), 10 µs assembling the stack (the
//!   reconnect supervisor, retry, cache), 21 µs making the catalog from
//!   the list (each tool checked, named and digested, the generation and
//!   its refresh task) and 5 µs the binding's front. Every connect runs
//!   cold: the child's start, on the same CPU, evicts the client's caches,
//!   so these are mostly cache misses of code that runs once per binding.
//!   callgrind: 405,000 instructions per connect against 291,000, about
//!   60,000 of the difference SHA-256 in software (valgrind's CPU has no
//!   SHA extensions). Spawning a task at connect costs about 12 µs here
//!   (a worker woken, switched to and back), so a connect now spawns only
//!   the reader and the child's watcher (stderr and exit in one task; they
//!   were two): the writer starts the first time a message waits for it,
//!   the catalog's refresh task at the first change the server announces,
//!   the binding's task over reconnect reports at the first report, and
//!   the reconnect supervisor when the first connection ends (or the
//!   binding is closed). Interleaved A/B runs of the case (7 to 11
//!   rounds): 1.023 → 0.998 ms without the refresh and reports tasks,
//!   1.038 → 1.014 ms with the writer started lazily, 0.992 → 0.973 ms
//!   with the supervisor started lazily (rmcp 0.935 in that run).
//!
//!   What is left is mostly what mcp-stack does for a child that rmcp's
//!   transport does not. mcp-stack pipes the child's stderr and drains it
//!   (its last lines explain a failed start); rmcp leaves it inherited.
//!   Measured on rmcp itself (a build of the bench, not kept, whose rmcp
//!   client pipes stderr and drains it in a task, 11 interleaved rounds):
//!   0.939 → 0.958 ms, against mcp-stack's 0.984. `strace -c` per
//!   connect: three pipes against two, eight `epoll_ctl` against six, two
//!   more `fcntl` and `close`. mcp-stack also starts the child with an
//!   allowlisted environment and in a process group of its own. Against
//!   rmcp with stderr piped, mcp-stack takes 1.03 times as long.
//!   Boxing the dial and the discovery inside `Binding::connect` made its
//!   future 6.7 KiB instead of 10.9 KiB (about 40 KiB fewer bytes moved
//!   per connect) but did not move the figure (0.979 against 0.975 ms over
//!   11 rounds), so it was not kept.
//! - **Memory** per idle binding is at rmcp's: an idle reader holds no
//!   buffer, the offering is kept as text (and only when a refresh can
//!   need it), rare futures are boxed, a 2026-07-28 binding keeps its
//!   era's `_meta` as encoded text, and an idle stdio binding runs two
//!   tasks (the reader and the child's watcher) until it needs more: 30.6 /
//!   31.1 KiB before the tasks were started lazily, 30.1 / 30.2 with the
//!   writer, refresh and reports tasks started lazily, 29.5 / 29.5 with
//!   the reconnect supervisor too.

use mcp_stack::handlers::Handlers;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{Binding, CallOpts, Definition, ProtocolChoice};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout};

mod args;
mod http;
mod table;

use args::{Command, Transport};

/// Who talks to the server.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Client {
    Stack,
    Rmcp,
    JsonFloor,
    PipeFloor,
}

impl Client {
    const ALL: [Client; 4] = [Client::Stack, Client::Rmcp, Client::JsonFloor, Client::PipeFloor];

    fn index(self) -> usize {
        Client::ALL.iter().position(|c| *c == self).expect("a client")
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Era {
    Legacy,
    Modern,
}

impl Era {
    fn arg(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    fn version(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }
}

/// The cases, with what their figure is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Case {
    Sequential,
    InFlight,
    Large,
    Structured,
    Connect,
    Catalog,
    Memory,
}

impl Case {
    const ALL: [Case; 7] = [
        Case::Sequential,
        Case::InFlight,
        Case::Large,
        Case::Structured,
        Case::Connect,
        Case::Catalog,
        Case::Memory,
    ];

    /// How the case is shown.
    fn row(self) -> table::Row {
        let (key, name, unit, scale, decimals) = match self {
            Case::Sequential => ("sequential", "sequential tools/call", "calls/s", 1.0, 0),
            Case::InFlight => ("inflight", "32 in flight", "calls/s", 1.0, 0),
            Case::Large => ("large", "1 MiB text results", "calls/s", 1.0, 0),
            Case::Structured => ("structured", "1 MiB structured results", "calls/s", 1.0, 0),
            Case::Connect => ("connect", "connect to ready", "ms", 1e3, 2),
            Case::Catalog => ("catalog", "1,024-tool catalog to ready", "ms", 1e3, 2),
            Case::Memory => ("memory", "memory per idle connection", "KiB", 1.0 / 1024.0, 1),
        };
        table::Row { key, name, unit, scale, decimals }
    }
}

/// How much each round does.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Sizes {
    sequential: usize,
    in_flight: usize,
    large: usize,
    connects: usize,
    catalogs: usize,
    /// 50 MB calls per client process (HTTP only).
    huge: usize,
}

const DEPTH: usize = 32;
const LARGE_BYTES: u64 = 1 << 20;
/// Records in a structured result: about 1 MiB of JSON.
const STRUCTURED_RECORDS: u64 = 12_000;
const CATALOG_TOOLS: usize = 1024;
const IDLE_CONNECTIONS: usize = 32;

fn echo_server() -> PathBuf {
    std::env::current_exe().expect("the bench's path").with_file_name("echo-server")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = args::parse(&args).unwrap_or_else(|e| {
        eprintln!("vs-rmcp: {e}\n\n{}", args::USAGE);
        std::process::exit(2);
    });
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let (rounds, sizes, json) = match command {
        Command::Table { transport: Transport::Stdio, rounds, sizes, json } => (rounds, sizes, json),
        Command::Table { transport: Transport::Http, rounds, sizes, json } => {
            return http::table(&runtime, rounds, sizes, json);
        }
        Command::HttpOnly { case, client, era } => return http::only(&runtime, case, client, era),
        Command::HttpChild { case, client, era, url, calls } => {
            return http::child(&runtime, case, client, era, &url, calls);
        }
        Command::Help => {
            println!("{}", args::USAGE);
            return;
        }
        Command::Memory { client, era } => {
            // A process of its own per measurement.
            println!("{}", runtime.block_on(memory_per_connection(client, era)));
            return;
        }
        Command::Only { case, client, era } => {
            let sizes =
                Sizes { sequential: 5000, in_flight: 10000, large: 40, connects: 20, catalogs: 10, huge: 3 };
            println!("{:?}", runtime.block_on(measure(client, era, case, sizes)));
            return;
        }
    };
    if !json {
        println!("CPUs allowed: {}", cpus_allowed());
        println!("{rounds} rounds; medians; ratios of medians of this run\n");
    }
    for era in [Era::Legacy, Era::Modern] {
        let mut results = table::Results::default();
        for round in 0..rounds {
            let mut order = Client::ALL.to_vec();
            order.rotate_left(round % Client::ALL.len());
            for (case_index, case) in Case::ALL.into_iter().enumerate() {
                for &client in &order {
                    if let Some(figure) = runtime.block_on(measure(client, era, case, sizes)) {
                        results.add(case_index, client.index(), figure);
                    }
                }
            }
            eprintln!("{} round {} of {rounds} done", era.arg(), round + 1);
        }
        let layout = table::Layout {
            transport: "stdio",
            era: era.version(),
            title: match era {
                Era::Legacy => "2025-11-25 (initialize)",
                Era::Modern => "2026-07-28 (server/discover)",
            },
            rows: Case::ALL.into_iter().map(Case::row).collect(),
            clients: vec![
                ("mcp-stack", "mcp-stack"),
                ("rmcp", "rmcp"),
                ("json-floor", "JSON floor"),
                ("pipe-floor", "pipe floor"),
            ],
            floor_by_round: false,
        };
        table::print(&layout, &results, json);
    }
}

/// One case for one client: calls a second, seconds, or bytes; `None`
/// where the case does not apply (memory of the floors).
async fn measure(client: Client, era: Era, case: Case, sizes: Sizes) -> Option<f64> {
    match case {
        Case::Sequential => {
            Some(calls_per_second(client, era, sizes.sequential, 1, json!({ "text": "hi" })).await)
        }
        Case::InFlight => {
            Some(calls_per_second(client, era, sizes.in_flight, DEPTH, json!({ "text": "hi" })).await)
        }
        Case::Large => {
            Some(calls_per_second(client, era, sizes.large, 1, json!({ "bytes": LARGE_BYTES })).await)
        }
        Case::Structured => {
            let records = json!({ "records": STRUCTURED_RECORDS });
            Some(calls_per_second(client, era, sizes.large, 1, records).await)
        }
        Case::Connect => Some(seconds_to_ready(client, era, 1, sizes.connects).await),
        Case::Catalog => Some(seconds_to_ready(client, era, CATALOG_TOOLS, sizes.catalogs).await),
        Case::Memory => match client {
            Client::Stack | Client::Rmcp => Some(memory_in_own_process(client, era)),
            _ => None,
        },
    }
}

/// A connected client of any kind.
enum Session {
    Stack(Binding),
    Rmcp(RunningService<RoleClient, ()>),
    Floor(Box<Floor>),
}

impl Session {
    /// Spawns the server with `tools` tools and makes the client ready: the
    /// handshake done and the tools listed.
    async fn open(client: Client, era: Era, tools: usize) -> Session {
        match client {
            Client::Stack => {
                let factory =
                    StdioFactory::new(echo_server()).arg(era.arg()).env("ECHO_TOOLS", tools.to_string());
                let mut definition = Definition::new("bench", factory);
                definition = definition.with_protocol(match era {
                    Era::Legacy => ProtocolChoice::Legacy,
                    Era::Modern => ProtocolChoice::Modern,
                });
                let limits = definition.limits().with_max_text_result_bytes(2 << 20);
                definition = definition.with_limits(limits);
                // By default a binding runs one tool call at a time, and at
                // most 8 requests at once: the safe policy for a model's
                // calls. A host that wants 32 calls in flight says so, as
                // here; rmcp has no such gate.
                definition = definition.with_allow_parallel_calls(true);
                let limits = definition.limits().with_max_concurrent_requests(32);
                definition = definition.with_limits(limits);
                let binding =
                    Binding::connect(definition, Handlers::default()).await.expect("mcp-stack connects");
                assert_eq!(binding.catalog().tools.len(), tools);
                Session::Stack(binding)
            }
            Client::Rmcp => {
                let mut command = tokio::process::Command::new(echo_server());
                command.arg(era.arg()).env("ECHO_TOOLS", tools.to_string());
                let transport = TokioChildProcess::new(command).expect("rmcp spawns");
                let service = match era {
                    Era::Legacy => ().serve(transport).await.expect("rmcp initializes"),
                    Era::Modern => {
                        let discover = ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        };
                        ().serve_with_lifecycle(transport, discover).await.expect("rmcp discovers")
                    }
                };
                let listed = service.list_all_tools().await.expect("rmcp lists");
                assert_eq!(listed.len(), tools);
                Session::Rmcp(service)
            }
            Client::JsonFloor | Client::PipeFloor => Session::Floor(Box::new(Floor::open(era, tools).await)),
        }
    }

    async fn close(self) {
        match self {
            Session::Stack(binding) => binding.close().await,
            Session::Rmcp(service) => {
                let _ = service.cancel().await;
            }
            Session::Floor(floor) => floor.close().await,
        }
    }
}

async fn seconds_to_ready(client: Client, era: Era, tools: usize, times: usize) -> f64 {
    let mut total = Duration::ZERO;
    for _ in 0..times {
        let begun = Instant::now();
        let session = Session::open(client, era, tools).await;
        total += begun.elapsed();
        session.close().await;
    }
    total.as_secs_f64() / times as f64
}

async fn calls_per_second(client: Client, era: Era, calls: usize, depth: usize, arguments: Value) -> f64 {
    let mut session = Session::open(client, era, 1).await;
    let arguments = arguments.as_object().expect("an object").clone();
    // A few calls first: what is lazily set up is not measured.
    let warm = if arguments.contains_key("bytes") || arguments.contains_key("records") { 2 } else { 50 };
    run_calls(&mut session, client, warm, 1, &arguments).await;
    let begun = Instant::now();
    run_calls(&mut session, client, calls, depth, &arguments).await;
    let rate = calls as f64 / begun.elapsed().as_secs_f64();
    session.close().await;
    rate
}

async fn run_calls(
    session: &mut Session,
    client: Client,
    calls: usize,
    depth: usize,
    arguments: &Map<String, Value>,
) {
    let records = arguments.get("records").and_then(Value::as_u64);
    match session {
        Session::Stack(binding) => {
            let mut tasks = tokio::task::JoinSet::new();
            for share in shares(calls, depth) {
                let (binding, arguments) = (binding.clone(), Value::Object(arguments.clone()));
                tasks.spawn(async move {
                    for _ in 0..share {
                        let result = binding.call_tool("echo", arguments.clone(), CallOpts::default()).await;
                        let result = result.expect("the call succeeds");
                        assert!(!result.is_error);
                        assert_whole(records, result.structured.as_ref());
                    }
                });
            }
            while let Some(done) = tasks.join_next().await {
                done.expect("a calling task");
            }
        }
        Session::Rmcp(service) => {
            let mut tasks = tokio::task::JoinSet::new();
            for share in shares(calls, depth) {
                let (peer, arguments) = (service.peer().clone(), arguments.clone());
                tasks.spawn(async move {
                    for _ in 0..share {
                        let params = CallToolRequestParams::new("echo").with_arguments(arguments.clone());
                        let result = peer.call_tool(params).await.expect("the call succeeds");
                        assert_ne!(result.is_error, Some(true));
                        assert_whole(records, result.structured_content.as_ref());
                    }
                });
            }
            while let Some(done) = tasks.join_next().await {
                done.expect("a calling task");
            }
        }
        Session::Floor(floor) => {
            floor.calls(client == Client::JsonFloor, calls, depth, arguments, records).await
        }
    }
}

/// `calls` split over `depth` callers.
fn shares(calls: usize, depth: usize) -> Vec<usize> {
    (0..depth).map(|i| calls / depth + usize::from(i < calls % depth)).collect()
}

/// The floors' side of the pipes: one task, no framing beyond lines.
struct Floor {
    child: Child,
    writer: BufWriter<ChildStdin>,
    reader: BufReader<ChildStdout>,
    era: Era,
    next_id: u64,
    line: Vec<u8>,
}

impl Floor {
    async fn open(era: Era, tools: usize) -> Floor {
        let mut child = tokio::process::Command::new(echo_server())
            .arg(era.arg())
            .env("ECHO_TOOLS", tools.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the echo server");
        let writer = BufWriter::new(child.stdin.take().expect("stdin"));
        let reader = BufReader::with_capacity(64 << 10, child.stdout.take().expect("stdout"));
        let mut floor = Floor { child, writer, reader, era, next_id: 0, line: Vec::new() };
        match era {
            Era::Legacy => {
                floor.request("initialize", json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "floor", "version": "0" } })).await;
                floor.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
            }
            Era::Modern => {
                floor.request("server/discover", json!({})).await;
            }
        }
        let listed = floor.request("tools/list", json!({})).await;
        assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(tools));
        floor
    }

    fn envelope(&mut self, method: &str, mut params: Value) -> (u64, Value) {
        self.next_id += 1;
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { "name": "floor", "version": "0" },
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        (self.next_id, json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params }))
    }

    async fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).expect("serializes");
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await.expect("write");
        self.writer.flush().await.expect("flush");
    }

    async fn read_line(&mut self) -> &[u8] {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line).await.expect("read");
        assert!(n > 0, "the server closed its stdout");
        &self.line
    }

    /// One request, its reply parsed.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let (id, message) = self.envelope(method, params);
        self.send(&message).await;
        let reply = parse_reply(self.read_line().await);
        assert_eq!(reply["id"], id);
        reply
    }

    /// `calls` tools/call requests, at most `depth` unanswered at once;
    /// with `records`, each reply's structured result checked whole.
    async fn calls(
        &mut self,
        json: bool,
        calls: usize,
        depth: usize,
        arguments: &Map<String, Value>,
        records: Option<u64>,
    ) {
        let params = json!({ "name": "echo", "arguments": arguments });
        // The pipe floor writes one prepared line over and over.
        let (_, prepared) = self.envelope("tools/call", params.clone());
        let mut prepared = serde_json::to_vec(&prepared).expect("serializes");
        prepared.push(b'\n');
        let mut outstanding = HashSet::new();
        let (mut sent, mut answered) = (0, 0);
        while answered < calls {
            while sent < calls && sent - answered < depth {
                if json {
                    let (id, message) = self.envelope("tools/call", params.clone());
                    let mut bytes = serde_json::to_vec(&message).expect("serializes");
                    bytes.push(b'\n');
                    self.writer.write_all(&bytes).await.expect("write");
                    outstanding.insert(id);
                } else {
                    self.writer.write_all(&prepared).await.expect("write");
                }
                sent += 1;
            }
            self.writer.flush().await.expect("flush");
            let line = self.read_line().await;
            if json {
                let reply = parse_reply(line);
                let id = reply["id"].as_u64().expect("an id");
                assert!(outstanding.remove(&id), "an unknown id");
                assert!(reply["result"]["content"][0]["text"].is_string());
                assert_whole(records, reply["result"].get("structuredContent"));
            }
            answered += 1;
        }
    }

    async fn close(mut self) {
        drop(self.writer);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let _ = self.child.kill().await;
    }
}

/// Checks that a structured result arrived whole: the `records` the
/// arguments asked for, so that no client is measured receiving less (a
/// result cut by a limit, say).
fn assert_whole(records: Option<u64>, structured: Option<&Value>) {
    if let Some(records) = records {
        let got = structured.and_then(|s| s["records"].as_array()).map(Vec::len);
        assert_eq!(got, Some(records as usize), "the structured result arrived whole");
    }
}

/// A reply line parsed into a value, the way a client that checks a frame
/// is UTF-8 once does (mcp-stack, rmcp): `from_slice` would check each
/// string again as it parses it, which made this floor slower than
/// mcp-stack on replies of many short strings.
fn parse_reply(line: &[u8]) -> Value {
    let text = std::str::from_utf8(line).expect("a UTF-8 reply");
    serde_json::from_str(text).expect("a JSON reply")
}

/// Runs `--memory CLIENT ERA` as a process of its own; its bytes per idle
/// connection.
fn memory_in_own_process(client: Client, era: Era) -> f64 {
    let me = std::env::current_exe().expect("the bench's path");
    let which = if client == Client::Rmcp { "rmcp" } else { "stack" };
    let out = std::process::Command::new(me).args(["--memory", which, era.arg()]).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a number")
}

/// In this process: resident bytes one more idle connection costs.
async fn memory_per_connection(client: Client, era: Era) -> f64 {
    // One first, so that what is set up once is not counted.
    let mut open = vec![Session::open(client, era, 1).await];
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = resident_bytes();
    for _ in 0..IDLE_CONNECTIONS {
        open.push(Session::open(client, era, 1).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = resident_bytes();
    let per = (after as f64 - before as f64) / IDLE_CONNECTIONS as f64;
    for session in open {
        session.close().await;
    }
    per
}

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    pages * 4096
}

pub(crate) fn cpus_allowed() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown".into())
}
