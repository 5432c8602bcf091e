//! The demo server on stdio: `mcp-stack-demo` speaks MCP on stdin/stdout.
//!
//! Tests and examples use it as a real child-process server that needs
//! nothing installed: `cargo run --bin mcp-stack-demo`, or through the CLI,
//! `cargo run --features cli --bin mcp -- --stdio target/debug/mcp-stack-demo tools`.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    mcp_stack::demo::serve_stdio().await;
}
