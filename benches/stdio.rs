//! What a call costs end to end over stdio, through a binding, against the
//! demo server as a child process (`mcp-stack-demo`).
//!
//! This is the figure a user feels: the whole client — the stack, the
//! connection, the framing, the pipes — for a small `tools/call`, one at a
//! time and with 32 in flight. It prints, per mode, the client's CPU time
//! per call (the whole process: the runtime's worker and the stdio tasks;
//! the server is another process) and the wall time per call, as the median
//! of `--rounds` rounds.
//!
//! ```text
//! cargo bench --bench stdio                      # the table
//! cargo bench --bench stdio -- --rounds 9 --calls 4000
//! ```
//!
//! Its first use was the question of issue 11, item 7: do the hand-made
//! replacements of tokio and tower primitives that an earlier build had —
//! one timer task per deadline layer instead of a tokio `Sleep` per call,
//! and a kept spare copy of the stack behind a `try_lock` instead of a clone
//! per call — save more than 5% of a call end to end? Both versions were
//! built and run side by side, alternating rounds, on one shared 2-core VM
//! (the build before, 98d7b9a, has both; this one has neither, plus two
//! layers more: the catalog's call checks and the sampling-depth count, and
//! a boxed stack for user layers):
//!
//! ```text
//!                    client CPU µs/call     wall µs/call
//!                    before     after       before    after
//! one at a time        6.9       7.4         19.2      19.8    (+7% CPU, +3% wall)
//! 32 in flight         6.6       6.3         17.5      17.0    (-5% CPU, -3% wall)
//! ```
//!
//! Those are the least-disturbed of nine alternating runs of each binary
//! (`--rounds 3 --calls 1500`; other builds were running, and single runs
//! of the same binary ranged from 7 to 30 µs of CPU a call). Two
//! deterministic counts agree with them:
//!
//! - instructions in the client, by callgrind (the difference between
//!   `--calls 1500` and `--calls 500`, over the 2,200 calls between them):
//!   41,595 a call before, 39,470 after (-5%);
//! - system calls on the client's thread, by `strace -c` (same method):
//!   2.5 a call before, 4.1 after. The difference is the tokio timer: a
//!   `Sleep` registered earlier than the driver's next wake-up unparks it
//!   (an `eventfd` write, then an `epoll_wait` that returns at once), about
//!   0.3 writes and 0.9 extra `epoll_wait`s a call.
//!
//! So the timer task and the kept stack copy saved a few hundred
//! nanoseconds of the client's CPU on a sequential call, about 3% of the
//! call as the caller waits for it, and nothing with calls in flight: under
//! the 5% a hand-made replacement of a tokio or tower primitive must save
//! to stay.
//!
//! The simpler primitives stay.
//!
//! Issue 21 (one request type through the stack, the connection split by
//! task, a curated public API) was measured the same way against a53215c,
//! the build before it: nine alternating runs of each binary, `--rounds 3
//! --calls 1500`, on a shared VM that was busier than the one above (a load
//! of about 1.8 from outside; hence the larger figures):
//!
//! ```text
//!                 client CPU µs/call (median / fastest)   wall µs/call (median / fastest)
//!                 before          after                   before          after
//! one at a time   49.4 / 41.6     51.3 / 41.7             156.7 / 142.0   155.7 / 132.1
//! 32 in flight    32.7 / 26.7     35.4 / 27.9             103.9 /  79.0   103.2 /  86.8
//! ```
//!
//! Within the noise: the fastest runs differ by under 1.2 µs of CPU, the
//! medians by a few µs either way, and single runs of one binary ranged
//! over 50%.

#[path = "support.rs"]
mod support;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Limits};
use serde_json::json;
use std::time::{Duration, Instant};
use support::{arg, median};
use tokio::task::JoinSet;

const IN_FLIGHT: usize = 32;

/// The CPU time this process has used.
fn process_cpu() -> Duration {
    let t =
        nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID).expect("process CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

async fn connect(parallel: bool) -> Binding {
    let mut definition = Definition::new("demo", StdioFactory::new(env!("CARGO_BIN_EXE_mcp-stack-demo")));
    definition = definition.with_allow_parallel_calls(parallel);
    definition = definition.with_limits(Limits::default().with_max_concurrent_requests(IN_FLIGHT));
    Binding::connect(definition, Handlers::default()).await.expect("the demo server over stdio")
}

/// Makes `calls` echo calls, `in_flight` at a time; the client CPU and wall
/// time they took.
async fn round(binding: &Binding, calls: usize, in_flight: usize) -> (Duration, Duration) {
    let (cpu, wall) = (process_cpu(), Instant::now());
    let mut tasks = JoinSet::new();
    let mut started = 0;
    while started < calls || !tasks.is_empty() {
        while started < calls && tasks.len() < in_flight {
            let binding = binding.clone();
            tasks.spawn(async move {
                let args = json!({ "message": "x" });
                binding.call_tool("echo", args, CallOpts::default()).await.expect("echo")
            });
            started += 1;
        }
        tasks.join_next().await.expect("a call").expect("joined");
    }
    (process_cpu() - cpu, wall.elapsed())
}

fn main() {
    let rounds = arg("--rounds", 7).max(1);
    let calls = arg("--calls", 2000).max(1);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        println!("{calls} calls per round, median of {rounds} rounds, demo server over stdio");
        println!("{:<16} {:>18} {:>16}", "mode", "client CPU µs/call", "wall µs/call");
        for (mode, in_flight) in [("one at a time", 1), ("32 in flight", IN_FLIGHT)] {
            let binding = connect(in_flight > 1).await;
            round(&binding, calls / 10, in_flight).await; // warm up
            let (mut cpu, mut wall) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                let (c, w) = round(&binding, calls, in_flight).await;
                cpu.push(c.as_secs_f64() * 1e6 / calls as f64);
                wall.push(w.as_secs_f64() * 1e6 / calls as f64);
            }
            println!("{mode:<16} {:>18.1} {:>16.1}", median(cpu), median(wall));
            binding.close().await;
        }
    });
}
