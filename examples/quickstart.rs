//! Connect to a server, list its tools, call one that reports progress, and
//! print the result.
//!
//! ```text
//! cargo run --example quickstart                       # the built-in demo server
//! cargo run --example quickstart -- --stdio "npx -y @modelcontextprotocol/server-everything stdio"
//! ```
//!
//! Against the demo server it calls `count`; against another server it calls
//! `--tool NAME` with `--args JSON` (default: the first tool, no arguments).

use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{Binding, CallOpts, Content, Definition, Handlers};
use serde_json::{json, Value};
use std::sync::Arc;

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut stdio, mut tool, mut tool_args) = (None, None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => stdio = args.next(),
            "--tool" => tool = args.next(),
            "--args" => tool_args = args.next(),
            other => return Err(format!("unknown argument {other:?} (try --stdio \"CMD ARGS\")").into()),
        }
    }

    let definition = match &stdio {
        Some(line) => Definition::with_factory("server", Arc::new(StdioFactory::from_command_line(line)?)),
        None => Definition::new("demo", mcp_stack::demo::factory()),
    };
    let binding = Binding::connect(definition, Handlers::default()).await?;
    let session = binding.session();
    println!(
        "connected to {} {} (protocol {})",
        session.server.name, session.server.version, session.protocol_version
    );

    let tools = binding.list_tools().await?;
    println!("{} tools:", tools.items.len());
    for t in &tools.items {
        println!("  {:<32} {}", t.name, t.description.as_deref().unwrap_or("").lines().next().unwrap_or(""));
    }

    let (name, arguments) = match (&stdio, tool) {
        (None, _) => ("count".to_string(), json!({ "steps": 5, "delay_ms": 100 })),
        (Some(_), Some(name)) => (name, serde_json::from_str(tool_args.as_deref().unwrap_or("{}"))?),
        (Some(_), None) => match tools.items.first() {
            Some(t) => (t.name.clone(), json!({})),
            None => return Ok(()),
        },
    };

    println!("calling {name} {arguments}");
    let opts = CallOpts::default().with_progress(|p| {
        let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
        println!("  progress {}{total} {}", p.progress, p.message.unwrap_or_default());
    });
    let result = binding.call_tool(&name, arguments, opts).await?;
    for content in &result.content {
        match content {
            Content::Text { text, .. } => println!("result: {text}"),
            other => println!("result: {}", describe(other)),
        }
    }
    if let Some(structured) = &result.structured {
        println!("structured: {structured}");
    }
    binding.close().await;
    Ok(())
}

fn describe(content: &Content) -> Value {
    match content {
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            json!({ "mimeType": mime_type, "bytes": data.len() })
        }
        other => json!(format!("{other:?}")),
    }
}
