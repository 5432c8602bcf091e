//! A transport of your own: MCP over a Unix-domain socket, written only
//! against the public `mcp_stack::transport` traits (see `transport.rs`,
//! the file to copy).
//!
//! ```text
//! socat UNIX-LISTEN:/tmp/mcp.sock,fork EXEC:'npx -y @modelcontextprotocol/server-everything stdio' &
//! cargo run --example unix_socket -- /tmp/mcp.sock                      # lists tools, calls echo
//! cargo run --example unix_socket -- /tmp/mcp.sock get-sum '{"a":2,"b":3}'
//! ```
//!
//! It connects a binding to the socket, lists the server's tools and calls
//! one: `echo` with a message when no tool is named, else the tool named
//! with the JSON arguments given (`{}` when none). Its tests, against a real
//! server on a socket, are `tests/interop/unix_socket.rs`, which include
//! `transport.rs` itself.

mod transport;

use mcp_stack::{handlers::Handlers, Binding, CallOpts, Content, Definition};
use serde_json::{json, Value};
use std::sync::Arc;
use transport::UnixSocketFactory;

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: unix_socket SOCKET_PATH [TOOL [ARGS_JSON]]")?;
    let tool = args.next();
    let arguments: Value = match args.next() {
        Some(text) => serde_json::from_str(&text)?,
        None if tool.is_some() => json!({}),
        None => json!({"message": "hello over a unix socket"}),
    };
    let tool = tool.unwrap_or_else(|| "echo".to_string());

    // A factory of your own goes in a definition like any of the crate's.
    let definition = Definition::with_factory("socket", Arc::new(UnixSocketFactory::new(&path)));
    let binding = Binding::connect(definition, Handlers::default()).await?;
    let session = binding.session();
    println!(
        "connected to {} {} over {} ({})",
        session.server.name,
        session.server.version,
        binding.status().redacted_origin,
        session.protocol_version
    );

    let tools = binding.list_tools().await?;
    println!(
        "{} tools: {}",
        tools.items.len(),
        tools.items.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
    );

    println!("calling {tool} {arguments}");
    let result = binding.call_tool(&tool, arguments, CallOpts::default()).await;
    binding.close().await;
    let result = result?;
    let text: Vec<&str> = result.content.iter().filter_map(Content::as_text).collect();
    let label = if result.is_error { "tool error" } else { "result" };
    println!("{label}: {}", text.join("\n"));
    Ok(())
}
