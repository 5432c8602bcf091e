//! Connect to a server, list its tools, call one that reports progress, and
//! print the result.
//!
//! ```text
//! cargo run --example quickstart                       # the built-in demo server
//! cargo run --example quickstart -- --stdio "npx -y @modelcontextprotocol/server-everything stdio"
//! ```
//!
//! Against the demo server it calls `count`, then asks the server to log;
//! against another server it calls `--tool NAME` with `--args JSON`
//! (default: the first tool, no arguments).
//!
//! It also shows the host's side of the conversation: the server's log
//! records are printed as they arrive (`--log-level LEVEL`, default `info`),
//! the current directory is offered as a root, and when the server asks for
//! input (elicitation) the request is printed and answered with the form's
//! defaults when they satisfy it, declined otherwise.

use mcp_stack::binding::{root_for_path, ElicitRequest, ElicitResult, LogMessage};
use mcp_stack::protocol::logging::LoggingLevel;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{Binding, CallOpts, ClientCapabilities, Content, Definition, Handlers};
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
    let (mut stdio, mut tool, mut tool_args, mut log_level) = (None, None, None, LoggingLevel::Info);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => stdio = args.next(),
            "--tool" => tool = args.next(),
            "--args" => tool_args = args.next(),
            "--log-level" => log_level = args.next().unwrap_or_default().parse()?,
            other => return Err(format!("unknown argument {other:?} (try --stdio \"CMD ARGS\")").into()),
        }
    }

    let mut definition = match &stdio {
        Some(line) => Definition::with_factory("server", Arc::new(StdioFactory::from_command_line(line)?)),
        None => Definition::new("demo", mcp_stack::demo::factory()),
    };
    // What this server may ask of us, and the level of logs we want.
    definition.capabilities = ClientCapabilities { elicitation: true, roots: true, sampling: false };
    definition.log_level = log_level;
    let handlers = Handlers::default()
        .log(|m: LogMessage| async move {
            println!("  server log [{}] {}", m.level, m.text);
            Ok(())
        })
        .with_roots(vec![root_for_path(std::env::current_dir()?)?])
        .elicitation(|req: ElicitRequest| async move {
            println!("  the server asks: {}", req.message.escape_debug());
            let defaults = req.defaults();
            Ok(match req.validate(&defaults) {
                Ok(()) => ElicitResult::accept(defaults),
                Err(_) => ElicitResult::decline(),
            })
        });
    let binding = Binding::connect(definition, handlers).await?;
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
    if stdio.is_none() {
        println!("asking the server to log");
        binding
            .call_tool(
                "log",
                json!({ "count": 2, "text": "hello from the demo server" }),
                CallOpts::default(),
            )
            .await?;
        // Log records are delivered on their own task; give them a moment.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
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
