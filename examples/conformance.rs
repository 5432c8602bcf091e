//! The client under test for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, see `scripts/interop.sh`).
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance http://localhost:PORT/mcp
//! ```
//!
//! The harness starts a mock server for one scenario and runs this program
//! with the server URL as its last argument (used exactly as given: some
//! scenarios serve at `/`, others at `/mcp`) and the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`. Everything goes through the crate's public
//! API: a [`Binding`] over streamable HTTP. There is no protocol code here,
//! only what a host would do in each scenario:
//!
//! - `initialize`: connect (the handshake) and close.
//! - `tools_call`: list the tools and call `add_numbers`.
//! - `sse-retry`: list the tools and call `test_reconnection`, whose reply
//!   stream the server closes early so that the transport resumes it.
//! - `json-schema-2020-12-preservation`: list the tools and send the
//!   `inputSchema` of `json_schema_2020_12_tool` back verbatim as the
//!   `schema` argument of `json_schema_echo`.
//! - `elicitation-sep1034-client-defaults`: declare the elicitation
//!   capability, install an elicitation handler (a closure through
//!   [`Handlers::elicitation`]) that accepts with the requested schema's
//!   defaults ([`ElicitRequest::defaults`]), and call
//!   `test_client_elicitation_defaults`, during which the server asks.
//! - any other scenario: connect, list the tools, call each one that takes
//!   no required argument, and close.
//!
//! Exit status: 0 when every step succeeded, 1 otherwise (with the error on
//! stderr).

use mcp_stack::binding::{ElicitRequest, ElicitResult};
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::{Binding, CallOpts, Definition, Error, Handlers, Timeouts};
use serde_json::{json, Value};
use std::process::ExitCode;
use std::time::Duration;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.last() else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance <server URL>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("conformance: scenario {scenario:?}");
    match run(&scenario, url).await {
        Ok(()) => {
            eprintln!("conformance: scenario {scenario:?} done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance: scenario {scenario:?} failed: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), Error> {
    let factory = StreamableHttpFactory::new(url)?;
    let mut definition = Definition::new("conformance", factory);
    definition.timeouts = Timeouts {
        startup: Duration::from_secs(10),
        request: Duration::from_secs(10),
        ..Timeouts::default()
    };
    let handlers = match scenario {
        ELICITATION_DEFAULTS => {
            // What this server may ask of the host, and what the host does:
            // a person who accepts every form as it is filled in by default.
            definition.capabilities.elicitation = true;
            Handlers::default()
                .elicitation(|req: ElicitRequest| async move { Ok(ElicitResult::accept(req.defaults())) })
        }
        _ => Handlers::default(),
    };
    let binding = Binding::connect(definition, handlers).await?;
    let session = binding.session();
    eprintln!(
        "conformance: connected to {:?} {:?}, protocol {}",
        session.server.name, session.server.version, session.protocol_version
    );
    let outcome = scenario_steps(scenario, &binding).await;
    binding.close().await;
    outcome
}

/// The scenario that answers elicitation with the schema's defaults.
const ELICITATION_DEFAULTS: &str = "elicitation-sep1034-client-defaults";

async fn scenario_steps(scenario: &str, binding: &Binding) -> Result<(), Error> {
    match scenario {
        "initialize" => Ok(()),
        "tools_call" => {
            binding.list_tools().await?;
            let result =
                binding.call_tool("add_numbers", json!({"a": 5, "b": 3}), CallOpts::default()).await?;
            report("add_numbers", &result);
            Ok(())
        }
        "sse-retry" => {
            binding.list_tools().await?;
            let result = binding.call_tool("test_reconnection", json!({}), CallOpts::default()).await?;
            report("test_reconnection", &result);
            Ok(())
        }
        ELICITATION_DEFAULTS => {
            binding.list_tools().await?;
            let tool = "test_client_elicitation_defaults";
            let result = binding.call_tool(tool, json!({}), CallOpts::default()).await?;
            report(tool, &result);
            Ok(())
        }
        "json-schema-2020-12-preservation" => {
            let tools = binding.list_tools().await?;
            let focal =
                tools.items.iter().find(|t| t.name == "json_schema_2020_12_tool").ok_or_else(|| {
                    Error::new(
                        mcp_stack::FailureClass::NotFound,
                        "the server lists no json_schema_2020_12_tool",
                    )
                })?;
            let arguments = json!({ "schema": focal.input_schema });
            let result = binding.call_tool("json_schema_echo", arguments, CallOpts::default()).await?;
            report("json_schema_echo", &result);
            Ok(())
        }
        _ => {
            let tools = binding.list_tools().await?;
            for tool in &tools.items {
                let required = tool.input_schema.get("required").and_then(Value::as_array);
                if required.is_some_and(|r| !r.is_empty()) {
                    continue;
                }
                let result = binding.call_tool(&tool.name, json!({}), CallOpts::default()).await?;
                report(&tool.name, &result);
            }
            Ok(())
        }
    }
}

fn report(tool: &str, result: &mcp_stack::ToolResult) {
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
    eprintln!("conformance: {tool} -> is_error={} {:?}", result.is_error, text);
}
