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
//! - `auth/*`: the same as any other scenario, with OAuth configured the
//!   way a host would: the headless authorization handler, this client's
//!   Client ID Metadata Document URL (the one the suite expects), and the
//!   pre-registered `client_id`/`client_secret` when
//!   `MCP_CONFORMANCE_CONTEXT` names them. The extensions, from what the
//!   context hands over as a host's configuration would: `private_key_pem`
//!   (with `signing_algorithm`) is the client's `private_key_jwt` key; the
//!   `auth/client-credentials-*` scenarios are machine clients (the
//!   `client_credentials` grant); `idp_token_endpoint` and `idp_id_token`
//!   (with `idp_client_id`) are the enterprise IdP of enterprise-managed
//!   authorization; `valid_jwt` is the workload token of workload identity
//!   federation; the `auth/dpop*` scenarios turn DPoP on with a fresh key.
//! - `sep-2640-client-*` (Skills): list the server's skills
//!   ([`Binding::list_skills`]), and, but for `no-prefetch`, load each
//!   ([`Binding::load_skill`]): its `SKILL.md` read and verified first,
//!   every other file only once the one before passed. A skill that fails
//!   verification is refused, reported on stderr, and not a failure of the
//!   run: refusing it is what a host must do.
//! - any other scenario: connect, list the tools, call each one that takes
//!   no required argument, and close.
//!
//! The protocol era is the one `MCP_CONFORMANCE_PROTOCOL_VERSION` names: a
//! 2026-07-28 version is pinned, a 2025 one (or older) selects the
//! `initialize` era; without it the binding's default, the automatic choice.
//!
//! Exit status: 0 when every step succeeded, 1 otherwise (with the error on
//! stderr).

use mcp_stack::auth::{AuthorizationHandler, EnterpriseIdp, Grant, OAuth, Secret, SigningKey, TokenSource};
use mcp_stack::handlers::{ElicitRequest, ElicitResult};
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::ProtocolChoice;
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Error, Timeouts};
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
    let factory = if scenario.starts_with("auth/") {
        StreamableHttpFactory::builder(url).oauth(oauth_settings(scenario)?).build()?
    } else {
        StreamableHttpFactory::new(url)?
    };
    let mut definition = Definition::new("conformance", factory);
    definition = definition.with_timeouts(
        Timeouts::default().with_startup(Duration::from_secs(10)).with_request(Duration::from_secs(10)),
    );
    // The era the harness names: a modern version is pinned, a legacy one
    // means the initialize era (no server/discover probe first), and none
    // leaves the default, the automatic choice.
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let mut modern = false;
    if let Ok(pinned @ ProtocolChoice::Pinned(_)) = ProtocolChoice::parse(&version) {
        modern = !pinned.allows_legacy();
        definition = definition.with_protocol(if modern { pinned } else { ProtocolChoice::Legacy });
    }
    let handlers = match scenario {
        _ if modern => {
            let capabilities = definition.capabilities().with_elicitation(true);
            definition = definition.with_capabilities(capabilities);
            Handlers::default()
                .elicitation(|req: ElicitRequest| async move { Ok(ElicitResult::accept(req.defaults())) })
        }
        ELICITATION_DEFAULTS => {
            // What this server may ask of the host, and what the host does:
            // a person who accepts every form as it is filled in by default.
            let capabilities = definition.capabilities().with_elicitation(true);
            definition = definition.with_capabilities(capabilities);
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

/// The Client ID Metadata Document URL the suite's authorization servers
/// accept as this client's id.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Where the (headless) authorization response is sent; nothing listens.
const REDIRECT_URI: &str = "http://127.0.0.1:3000/callback";

/// OAuth as a host configures it, with what `MCP_CONFORMANCE_CONTEXT` adds.
/// A machine client (the `client-credentials` scenarios) uses the
/// `client_credentials` grant, as its host would have configured it.
fn oauth_settings(scenario: &str) -> Result<OAuth, Error> {
    let handler = AuthorizationHandler::headless(REDIRECT_URI, Duration::from_secs(10))?;
    let mut oauth = OAuth::new()
        .client_name("mcp-stack conformance")
        .metadata_document(CLIENT_METADATA_URL)
        .handler(handler);
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str::<Value>(&c).ok())
        .unwrap_or(Value::Null);
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        Error::new(mcp_stack::FailureClass::InvalidConfig, format!("{what}: {e}"))
    };
    if let Some(id) = text("client_id") {
        oauth = oauth.client_id(id);
    }
    if let Some(secret) = text("client_secret") {
        oauth = oauth.client_secret(secret);
    }
    if let Some(pem) = text("private_key_pem") {
        let algorithm = text("signing_algorithm")
            .map(str::parse)
            .transpose()
            .map_err(|e| bad("signing_algorithm", &e))?;
        let key =
            SigningKey::from_pem(&Secret::new(pem), algorithm).map_err(|e| bad("private_key_pem", &e))?;
        oauth = oauth.private_key(key);
    }
    if scenario.starts_with("auth/client-credentials") {
        oauth = oauth.grant(Grant::ClientCredentials);
    }
    if let (Some(endpoint), Some(id_token)) = (text("idp_token_endpoint"), text("idp_id_token")) {
        let mut idp = EnterpriseIdp::new(endpoint, TokenSource::Static(Secret::new(id_token)));
        if let Some(id) = text("idp_client_id") {
            idp = idp.client_id(id);
        }
        oauth = oauth.enterprise(idp);
    }
    if let Some(token) = text("valid_jwt") {
        oauth = oauth.workload_identity(TokenSource::Static(Secret::new(token)));
    }
    if scenario.starts_with("auth/dpop") {
        oauth = oauth.dpop(SigningKey::generate_es256().map_err(|e| bad("DPoP key", &e))?);
    }
    Ok(oauth)
}

/// The scenario that answers elicitation with the schema's defaults.
const ELICITATION_DEFAULTS: &str = "elicitation-sep1034-client-defaults";

async fn scenario_steps(scenario: &str, binding: &Binding) -> Result<(), Error> {
    if let Some(calls) = context_tool_calls() {
        binding.list_tools().await?;
        for (name, arguments) in calls {
            let result = binding.call_tool(&name, arguments, CallOpts::default()).await?;
            report(&name, &result);
        }
        return Ok(());
    }
    if let Some(skills) = scenario.strip_prefix("sep-2640-client-") {
        return load_skills(binding, skills != "no-prefetch").await;
    }
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
        "http-standard-headers" => {
            call_argless_tools(binding).await?;
            let catalog = binding.catalog();
            for prompt in &catalog.prompts {
                if prompt.arguments.iter().all(|a| !a.required) {
                    binding.get_prompt(&prompt.name, Default::default(), CallOpts::default()).await?;
                }
            }
            for resource in &catalog.resources {
                binding.read_resource(&resource.uri, CallOpts::default()).await?;
            }
            Ok(())
        }
        "http-invalid-tool-headers" => {
            // Every tool the catalog kept, with simple values for its
            // required arguments: the ones with invalid annotations are not
            // there to call.
            let tools = binding.list_tools().await?;
            for tool in &tools.items {
                let arguments = simple_arguments(&tool.input_schema);
                let result = binding.call_tool(&tool.name, arguments, CallOpts::default()).await?;
                report(&tool.name, &result);
            }
            Ok(())
        }
        _ => call_argless_tools(binding).await,
    }
}

/// A value of the right primitive type for each required property.
fn simple_arguments(schema: &Value) -> Value {
    let mut arguments = serde_json::Map::new();
    let required = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let kind = schema.pointer(&format!("/properties/{name}/type")).and_then(Value::as_str);
        let value = match kind {
            Some("integer") | Some("number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("x"),
        };
        arguments.insert(name.to_string(), value);
    }
    Value::Object(arguments)
}

/// The calls `MCP_CONFORMANCE_CONTEXT` asks for, if it names `toolCalls`.
fn context_tool_calls() -> Option<Vec<(String, Value)>> {
    let context: Value = serde_json::from_str(&std::env::var("MCP_CONFORMANCE_CONTEXT").ok()?).ok()?;
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|c| {
                Some((c.get("name")?.as_str()?.to_string(), c.get("arguments").cloned().unwrap_or(json!({}))))
            })
            .collect(),
    )
}

/// Lists the tools and calls each one that takes no required argument.
/// Lists the server's skills and, when `load`, loads each one; a skill
/// that fails verification is refused (on stderr), any other error fails.
async fn load_skills(binding: &Binding, load: bool) -> Result<(), Error> {
    let skills = binding.list_skills().await?;
    for warning in &skills.warnings {
        eprintln!("warning: {warning}");
    }
    for skill in skills.items.iter().filter(|_| load) {
        match binding.load_skill(skill, CallOpts::default()).await {
            Ok(loaded) => println!("skill {}: {} files verified", skill.name, loaded.files.len()),
            Err(e) if e.class() == mcp_stack::FailureClass::VerificationFailed => {
                eprintln!("refused skill {}: {e}", skill.name)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn call_argless_tools(binding: &Binding) -> Result<(), Error> {
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

fn report(tool: &str, result: &mcp_stack::ToolResult) {
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
    eprintln!("conformance: {tool} -> is_error={} {:?}", result.is_error, text);
}
