//! The demo server on stdio: `mcp-stack-demo` speaks MCP on stdin/stdout.
//!
//! Tests and examples use it as a real child-process server that needs
//! nothing installed: `cargo run --bin mcp-stack-demo`, or through the CLI,
//! `cargo run --features cli --bin mcp -- --stdio target/debug/mcp-stack-demo tools`.
//! It speaks 2025-11-25; with `--modern`, 2026-07-28.

use mcp_stack::demo::DemoEra;

const USAGE: &str = "\
mcp-stack-demo: the built-in MCP demo server, speaking MCP on stdin and stdout.

Usage: mcp-stack-demo [--modern]

  --modern    speak 2026-07-28 (server/discover) instead of 2025-11-25
  -h, --help  print this help

Run it under a client, e.g. `mcp --stdio mcp-stack-demo tools`.";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let era = match std::env::args().nth(1).as_deref() {
        None => DemoEra::Legacy,
        Some("--modern") => DemoEra::Modern,
        Some("--help" | "-h") => {
            println!("{USAGE}");
            return;
        }
        Some(other) => {
            eprintln!("mcp-stack-demo: unknown option {other:?}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    mcp_stack::demo::serve_stdio_for(era).await;
}
