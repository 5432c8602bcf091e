//! The demo server on stdio: `mcp-stack-demo` speaks MCP on stdin/stdout.
//!
//! Tests and examples use it as a real child-process server that needs
//! nothing installed: `cargo run --bin mcp-stack-demo`, or through the CLI,
//! `cargo run --features cli --bin mcp -- --stdio target/debug/mcp-stack-demo tools`.
//! It speaks 2025-11-25; with `--modern`, 2026-07-28.

use mcp_stack::demo::DemoEra;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let era = match std::env::args().nth(1).as_deref() {
        None => DemoEra::Legacy,
        Some("--modern") => DemoEra::Modern,
        Some(other) => {
            eprintln!("mcp-stack-demo: the one option is --modern, not {other:?}");
            std::process::exit(2);
        }
    };
    mcp_stack::demo::serve_stdio_for(era).await;
}
