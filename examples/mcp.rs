//! `mcp`: a command-line MCP client for people and scripts, built on
//! mcp-stack.
//!
//! ```text
//! cargo run --example mcp -- --stdio "<command> <args>" <COMMAND>
//! cargo run --example mcp -- --http https://host/mcp --header 'Authorization: Bearer …' <COMMAND>
//! cargo run --example mcp -- --sse https://host/sse <COMMAND>       # 2024-11-05 HTTP+SSE
//! cargo run --example mcp -- tools                    # the built-in demo server
//! ```
//!
//! `--binding NAME` names the binding (`[A-Za-z0-9_-]`, 1 to 32 bytes;
//! default `server`): it is part of every tool's model name.
//!
//! `--http` speaks streamable HTTP, `--sse` the older HTTP+SSE transport.
//! `--header 'Name: value'` (repeatable) adds a header to every HTTP request;
//! its value is never printed. Redirects are refused unless
//! `--allow-redirects` is given, and then credentials never follow one to
//! another origin.
//!
//! Commands: `tools`, `call NAME 'JSON'`, `prompts`, `get-prompt NAME 'JSON'`,
//! `resources`, `templates`, `read URI`.
//!
//! # What the server may ask
//!
//! - **Elicitation.** When the server asks for input, the CLI asks on the
//!   terminal (stderr for the prompts, stdin for the answers, so it works
//!   through a pipe too): field by field from the requested schema (required
//!   fields first), showing each field's description, choices and default;
//!   an empty line takes the default or skips an optional field; `:decline`
//!   or `:cancel` at any prompt answers that. The answer is shown for review
//!   and checked against the schema before it is sent. A URL request shows
//!   the URL in full (never opened by the CLI) and asks for consent. With
//!   `--accept-defaults` it does not prompt: it accepts with the schema's
//!   defaults (and consents to a URL), or cancels when a required field has
//!   no default. End of input cancels.
//! - **Roots.** `--root DIR` (repeatable) offers DIR as a root (a `file://`
//!   URI).
//! - **Logs.** `--log-level LEVEL` (`debug` … `emergency`) turns the
//!   server's logs on at LEVEL and prints them on stderr as
//!   `[binding] level logger: text`.
//!
//! Every timeout and limit of the binding's definition is a flag named after
//! its field in kebab-case: `--startup-timeout-ms`, `--request-timeout-ms`,
//! `--elicitation-timeout-ms`, `--max-concurrent-requests`,
//! `--max-frame-bytes`, `--max-text-result-bytes`, and so on (`--help` lists
//! them all). Zero or absent means the crate's default.
//!
//! # `--json`
//!
//! With `--json` the command prints one JSON document on stdout: the
//! `serde` form of the crate's result types, with camelCase field names
//! and `null` for what is absent.
//!
//! - `tools`: the binding's adopted catalog (discovered while connecting),
//!   a `mcp_stack::catalog::Catalog`: `{ binding, generation, digest,
//!   protocolVersion, server: {name, version, title}, capabilities,
//!   instructions, tools: [{rawName, modelName, title, description,
//!   inputSchema, outputSchema, inputSchemaDigest, outputSchemaDigest,
//!   annotations, meta, warnings}], prompts, resources, resourceTemplates,
//!   warnings, appliedTolerances }`. `modelName` is the name to show a model,
//!   `mcp__<binding>__<tool>` (the binding is `--binding NAME`, default
//!   `server`; sanitized, at most 64 bytes, with a digest suffix on a
//!   collision). The digests are hex SHA-256 (64 characters): `digest` of the
//!   server's whole offering, the others of each schema (`outputSchemaDigest`
//!   is null without an output schema). `generation` is the catalog's ordinal
//!   (1: discovered at connect). `appliedTolerances` names the deviations of
//!   the compatibility profile this server needed (e.g. `legacy_sse`).
//!   `warnings` are the catalog's discovery warnings (all families), a
//!   tool's own `warnings` what was tolerated for that tool. `prompts`,
//!   `resources` and `resourceTemplates` are the catalog's entries, as in
//!   the commands below.
//! - `call`: `{ isError, content, structuredContent, warnings }`, where each
//!   content item is `{type: "text", text, truncated}`, `{type: "image" |
//!   "audio", mimeType, data (base64)}`, `{type: "resource", uri, mimeType,
//!   text | data, truncated}`, `{type: "resource_link", uri, name, mimeType,
//!   description}` or `{type: "unsupported", kind, bytes}`
//! - `prompts`: `{ prompts: [{name, title, description, arguments}], warnings }`
//! - `get-prompt`: `{ description, messages: [{role, content}], warnings }`
//! - `resources`: `{ resources: [{uri, name, title, description, mimeType}], warnings }`
//! - `templates`: `{ resourceTemplates: [{uriTemplate, name, title, description, mimeType}], warnings }`
//! - `read`: `{ contents: [{uri, mimeType, text | data, truncated}], warnings }`
//!
//! A failure prints `{ error: {class, message, binding, op} }` (with
//! `--json`; `binding` and `op` are `null` when the failure has none, as
//! for a usage error) or `error: <class>: <message>` on stderr. `class` is
//! the crate's stable failure id, `message` the bounded description.
//!
//! # Exit codes
//!
//! `0` ok; `2` usage; `3` could not connect or complete the handshake; `4` the
//! request failed; `5` the tool returned `isError`.
//!
//! A call that reports progress shows a progress bar when stderr is a
//! terminal, and plain lines on stderr otherwise (nothing with `--json`).

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use mcp_stack::binding::{
    root_for_path, ElicitRequest, ElicitResult, ElicitationMode, ElicitationModes, LogMessage,
};
use mcp_stack::protocol::logging::LoggingLevel;
#[cfg(feature = "http")]
use mcp_stack::transport::http::{HttpBuilder, SecretHeaders};
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::{
    Binding, CallOpts, ClientCapabilities, Content, Definition, Error, ErrorReport, FailureClass, Handlers,
    Limits, Timeouts,
};
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(name = "mcp", about = "A bounded MCP client for people and scripts")]
struct Cli {
    /// Run this server as a child process ("<command> <args>", split like a shell).
    #[arg(long, global = true)]
    stdio: Option<String>,
    /// Connect over streamable HTTP to this URL.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL")]
    http: Option<String>,
    /// Connect over the 2024-11-05 HTTP+SSE transport to this SSE URL.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL")]
    sse: Option<String>,
    /// A header for every HTTP request, as 'Name: value' (repeatable). The
    /// value is never printed.
    #[cfg(feature = "http")]
    #[arg(long = "header", global = true, value_name = "NAME: VALUE")]
    headers: Vec<HeaderArg>,
    /// Follow HTTP redirects (refused otherwise); credentials never follow
    /// one to another origin.
    #[cfg(feature = "http")]
    #[arg(long, global = true)]
    allow_redirects: bool,
    /// Print one JSON document on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// The binding's name ([A-Za-z0-9_-], 1 to 32 bytes): part of every
    /// tool's model name, mcp__<binding>__<tool>.
    #[arg(long, global = true, default_value = "server")]
    binding: String,
    /// Answer elicitation with the schema's defaults, without prompting.
    #[arg(long, global = true)]
    accept_defaults: bool,
    /// Offer this directory to the server as a root (repeatable).
    #[arg(long = "root", value_name = "DIR", global = true)]
    roots: Vec<std::path::PathBuf>,
    /// Print the server's logs at this level and above on stderr.
    #[arg(long, value_name = "LEVEL", global = true)]
    log_level: Option<String>,
    #[command(flatten)]
    timeouts: TimeoutFlags,
    #[command(flatten)]
    limits: LimitFlags,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the server's tools.
    Tools,
    /// Call a tool with JSON arguments.
    Call {
        /// The tool's raw name.
        name: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// List the server's prompts.
    Prompts,
    /// Render a prompt with JSON arguments.
    GetPrompt {
        /// The prompt's name.
        name: String,
        /// The arguments, a JSON object of strings.
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// List the server's resources.
    Resources,
    /// List the server's resource templates.
    Templates,
    /// Read a resource.
    Read {
        /// The resource's URI (passed to the server verbatim).
        uri: String,
    },
}

#[derive(Args, Debug)]
struct TimeoutFlags {
    /// Timeouts.startup in milliseconds.
    #[arg(long, global = true, default_value_t = 0)]
    startup_timeout_ms: u64,
    /// Timeouts.request in milliseconds.
    #[arg(long, global = true, default_value_t = 0)]
    request_timeout_ms: u64,
    /// Timeouts.elicitation in milliseconds.
    #[arg(long, global = true, default_value_t = 0)]
    elicitation_timeout_ms: u64,
}

macro_rules! limit_flags {
    ($($field:ident),* $(,)?) => {
        #[derive(Args, Debug)]
        struct LimitFlags {
            $(
                #[doc = concat!("Limits.", stringify!($field), " (0: the default).")]
                #[arg(long, global = true, default_value_t = 0)]
                $field: usize,
            )*
        }

        impl LimitFlags {
            fn limits(&self) -> Limits {
                Limits { $( $field: self.$field, )* }
            }
        }
    };
}

limit_flags!(
    max_concurrent_requests,
    max_catalog_pages,
    max_catalog_items,
    max_frame_bytes,
    max_body_bytes,
    max_schema_bytes,
    max_schema_depth,
    max_text_result_bytes,
    max_structured_bytes,
    max_binary_item_bytes,
    max_binary_items,
    max_content_items,
    max_log_message_bytes,
    max_elicit_message_bytes,
    max_elicit_schema_bytes,
    max_prompt_count,
    max_resource_count,
    max_sampling_depth,
    max_sampling_concurrency,
    max_sampling_tokens,
    max_sampling_messages,
    max_sampling_request_bytes,
);

const EXIT_CONNECT: u8 = 3;
const EXIT_CALL: u8 = 4;
const EXIT_TOOL_ERROR: u8 = 5;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let json_out = cli.json;
    match run(cli).await {
        Ok(code) => ExitCode::from(code),
        Err((code, report)) => {
            if json_out {
                println!("{}", json!({ "error": report }));
            } else {
                eprintln!("error: {}: {}", report.class, report.message);
            }
            ExitCode::from(code)
        }
    }
}

type Failure = (u8, ErrorReport);

fn failure(code: u8, e: &Error) -> Failure {
    (code, e.report())
}

fn usage(message: String) -> Failure {
    failure(2, &Error::new(FailureClass::InvalidConfig, message))
}

fn parse_object(text: &str) -> Result<Map<String, Value>, Failure> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(usage("arguments must be a JSON object".into())),
        Err(e) => Err(usage(format!("arguments are not JSON: {e}"))),
    }
}

/// A `--header` value: `Name: value`. Its `Debug` shows the name only.
#[cfg(feature = "http")]
#[derive(Clone)]
struct HeaderArg {
    line: String,
}

#[cfg(feature = "http")]
impl std::fmt::Debug for HeaderArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.line.split(':').next().unwrap_or("");
        write!(f, "HeaderArg({name:?}: …)")
    }
}

#[cfg(feature = "http")]
impl std::str::FromStr for HeaderArg {
    type Err = std::convert::Infallible;

    /// Never fails: the header is checked when the transport is built, by
    /// an error that never quotes the value (a parse error here would be
    /// printed with the whole argument).
    fn from_str(line: &str) -> Result<Self, Self::Err> {
        Ok(HeaderArg { line: line.to_string() })
    }
}

/// The transport the flags name: `--stdio`, `--http`, `--sse`, or the
/// built-in demo server.
fn factory(cli: &Cli) -> Result<Arc<dyn TransportFactory>, Failure> {
    #[cfg(feature = "http")]
    if [cli.stdio.is_some(), cli.http.is_some(), cli.sse.is_some()].iter().filter(|given| **given).count() > 1
    {
        return Err(usage("give at most one of --stdio, --http and --sse".into()));
    }
    if let Some(line) = &cli.stdio {
        let factory = StdioFactory::from_command_line(line).map_err(|e| usage(e.to_string()))?;
        return Ok(Arc::new(factory));
    }
    #[cfg(feature = "http")]
    if let Some(url) = cli.http.as_ref().or(cli.sse.as_ref()) {
        let mut headers = SecretHeaders::default();
        for header in &cli.headers {
            headers.insert_line(&header.line).map_err(|e| usage(e.message().to_string()))?;
        }
        let builder = HttpBuilder::new(url.as_str()).headers(headers).allow_redirects(cli.allow_redirects);
        let built: Result<Arc<dyn TransportFactory>, Error> = if cli.http.is_some() {
            builder.build().map(|f| Arc::new(f) as Arc<dyn TransportFactory>)
        } else {
            builder.build_sse().map(|f| Arc::new(f) as Arc<dyn TransportFactory>)
        };
        return built.map_err(|e| usage(e.to_string()));
    }
    #[cfg(feature = "http")]
    if !cli.headers.is_empty() {
        return Err(usage("--header needs --http or --sse".into()));
    }
    Ok(Arc::new(mcp_stack::demo::factory()))
}

async fn run(cli: Cli) -> Result<u8, Failure> {
    let mut definition = Definition::with_factory(cli.binding.clone(), factory(&cli)?);
    definition.timeouts = Timeouts {
        startup: Duration::from_millis(cli.timeouts.startup_timeout_ms),
        request: Duration::from_millis(cli.timeouts.request_timeout_ms),
        elicitation: Duration::from_millis(cli.timeouts.elicitation_timeout_ms),
    };
    definition.limits = cli.limits.limits();
    // Arguments are checked before connecting, so a typo costs no child process.
    let arguments = match &cli.command {
        Command::Call { arguments, .. } | Command::GetPrompt { arguments, .. } => {
            Some(parse_object(arguments)?)
        }
        _ => None,
    };
    let handlers = handlers(&cli, &mut definition)?;

    let binding = Binding::connect(definition, handlers).await.map_err(|e| failure(EXIT_CONNECT, &e))?;
    let outcome = command(&cli, &binding, arguments).await;
    binding.close().await;
    outcome
}

async fn command(cli: &Cli, binding: &Binding, arguments: Option<Map<String, Value>>) -> Result<u8, Failure> {
    let call_failed = |e: Error| failure(EXIT_CALL, &e);
    let (document, text, code) = match &cli.command {
        Command::Tools => {
            // The adopted catalog, discovered while connecting: the tools as
            // a host shows them to a model.
            let catalog = binding.catalog();
            let doc = json!(*catalog);
            let text = catalog
                .tools
                .iter()
                .map(|t| format!("{:<32} {}", t.raw_name, first_line(t.description.as_deref())))
                .chain(catalog.warnings.iter().map(|w| format!("warning: {w}")))
                .collect::<Vec<_>>()
                .join("\n");
            (doc, text, 0)
        }
        Command::Call { name, .. } => {
            let arguments = Value::Object(arguments.unwrap_or_default());
            let bar = progress_display(cli.json);
            let result = binding.call_tool(name, arguments, bar.opts()).await;
            bar.finish();
            let result = result.map_err(call_failed)?;
            let doc = json!(result);
            let mut lines: Vec<String> = result.content.iter().map(content_text).collect();
            if let Some(s) = &result.structured {
                lines.push(format!("structured: {s}"));
            }
            lines.extend(result.warnings.iter().map(|w| format!("warning: {w}")));
            (doc, lines.join("\n"), if result.is_error { EXIT_TOOL_ERROR } else { 0 })
        }
        Command::Prompts => {
            let prompts = binding.list_prompts().await.map_err(call_failed)?;
            let text = prompts
                .items
                .iter()
                .map(|p| format!("{:<32} {}", p.name, first_line(p.description.as_deref())))
                .collect::<Vec<_>>()
                .join("\n");
            let doc = json!({ "prompts": prompts.items, "warnings": prompts.warnings });
            (doc, text, 0)
        }
        Command::GetPrompt { name, .. } => {
            let prompt = binding
                .get_prompt(name, arguments.unwrap_or_default(), mcp_stack::CallOpts::default())
                .await
                .map_err(call_failed)?;
            let doc = json!(prompt);
            let text = prompt
                .messages
                .iter()
                .map(|m| format!("{}: {}", m.role, content_text(&m.content)))
                .collect::<Vec<_>>()
                .join("\n");
            (doc, text, 0)
        }
        Command::Resources => {
            let resources = binding.list_resources().await.map_err(call_failed)?;
            let text = resources
                .items
                .iter()
                .map(|r| format!("{:<40} {}", r.uri, r.name))
                .collect::<Vec<_>>()
                .join("\n");
            (json!({ "resources": resources.items, "warnings": resources.warnings }), text, 0)
        }
        Command::Templates => {
            let templates = binding.list_resource_templates().await.map_err(call_failed)?;
            let text = templates
                .items
                .iter()
                .map(|t| format!("{:<40} {}", t.uri_template, t.name))
                .collect::<Vec<_>>()
                .join("\n");
            (json!({ "resourceTemplates": templates.items, "warnings": templates.warnings }), text, 0)
        }
        Command::Read { uri } => {
            let resource =
                binding.read_resource(uri, mcp_stack::CallOpts::default()).await.map_err(call_failed)?;
            let doc = json!(resource);
            let text = resource
                .contents
                .iter()
                .map(|c| {
                    c.text
                        .clone()
                        .unwrap_or_else(|| format!("<{} bytes>", c.data.as_ref().map_or(0, Vec::len)))
                })
                .collect::<Vec<_>>()
                .join("\n");
            (doc, text, 0)
        }
    };
    if cli.json {
        println!("{document}");
    } else if !text.is_empty() {
        println!("{text}");
    }
    Ok(code)
}

/// The host's side: elicitation on the terminal, `--root`, `--log-level`.
fn handlers(cli: &Cli, definition: &mut Definition) -> Result<Handlers, Failure> {
    let mut roots = Vec::new();
    for dir in &cli.roots {
        let dir = dir
            .canonicalize()
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| usage(format!("--root {}: not a directory", dir.display())))?;
        roots.push(root_for_path(&dir).map_err(|e| usage(e.to_string()))?);
    }
    definition.capabilities =
        ClientCapabilities { elicitation: true, sampling: false, roots: !roots.is_empty() };
    let accept_defaults = cli.accept_defaults;
    // One prompt at a time, whatever the server asks at once.
    let terminal = Arc::new(tokio::sync::Mutex::new(()));
    let mut handlers = Handlers::default()
        .elicitation(move |req: ElicitRequest| {
            let terminal = terminal.clone();
            async move {
                let _turn = terminal.lock().await;
                tokio::task::spawn_blocking(move || ask(&req, accept_defaults))
                    .await
                    .map_err(|e| Error::new(mcp_stack::FailureClass::Cancelled, e.to_string()))
            }
        })
        .elicitation_modes(ElicitationModes { form: true, url: true })
        .with_roots(roots);
    if let Some(level) = &cli.log_level {
        definition.log_level = level
            .parse::<LoggingLevel>()
            .map_err(|_| usage(format!("--log-level {level:?}: one of debug, info, notice, warning, error, critical, alert, emergency")))?;
        handlers = handlers.log(|m: LogMessage| async move {
            let logger = m.logger.map(|l| format!(" {l}:")).unwrap_or_default();
            eprintln!("[{}] {}{} {}", m.binding, m.level, logger, m.text);
            Ok(())
        });
    }
    Ok(handlers)
}

/// Server text made safe for a terminal: control characters (but line
/// breaks) and bidirectional overrides shown as `?`.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if (c.is_control() && c != '\n') || bidi {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// Reads one answer line; `None` at end of input.
fn read_answer(prompt: &str) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
    }
}

/// What the person typed at one field.
enum Entry {
    Value(Value),
    Skip,
    Decline,
    Cancel,
}

/// Asks a person (or accepts the defaults) on the terminal. Runs on a
/// blocking thread.
fn ask(req: &ElicitRequest, accept_defaults: bool) -> ElicitResult {
    eprintln!("\n[{}] asks: {}", req.binding, clean(&req.message));
    if req.mode == ElicitationMode::Url {
        let url = clean(req.url.as_deref().unwrap_or_default());
        let host = url.split("://").nth(1).and_then(|rest| rest.split(['/', '?', '#']).next()).unwrap_or("");
        eprintln!(
            "  URL:  {url}\n  host: {host}\n  (the CLI does not open it; open it yourself if you trust it)"
        );
        if accept_defaults {
            eprintln!("  --accept-defaults: accepted");
            return ElicitResult::accept_url();
        }
        return match read_answer("  accept? [a]ccept / [d]ecline / [c]ancel: ").as_deref().map(str::trim) {
            Some("a" | "accept" | "y" | "yes") => ElicitResult::accept_url(),
            Some("d" | "decline" | "n" | "no") => ElicitResult::decline(),
            _ => ElicitResult::cancel(),
        };
    }
    let schema = req.schema.clone().unwrap_or_else(|| json!({}));
    if accept_defaults {
        let content = req.defaults();
        return match req.validate(&content) {
            Ok(()) => {
                eprintln!("  --accept-defaults: {}", Value::Object(content.clone()));
                ElicitResult::accept(content)
            }
            Err(e) => {
                eprintln!("  --accept-defaults: cannot accept ({}); cancelled", e.message());
                ElicitResult::cancel()
            }
        };
    }
    for _attempt in 0..3 {
        let mut content = Map::new();
        for (name, prop, required) in fields(&schema) {
            match ask_field(name, prop, required) {
                Entry::Value(v) => {
                    content.insert(name.to_string(), v);
                }
                Entry::Skip => {}
                Entry::Decline => return ElicitResult::decline(),
                Entry::Cancel => return ElicitResult::cancel(),
            }
        }
        if let Err(e) = req.validate(&content) {
            eprintln!("  not valid: {}; again", e.message());
            continue;
        }
        eprintln!("  answer: {}", Value::Object(content.clone()));
        return match read_answer("  send it? [Y]es / [n]o (decline) / [c]ancel: ").as_deref().map(str::trim) {
            Some("" | "y" | "Y" | "yes") => ElicitResult::accept(content),
            Some("n" | "no" | "d" | "decline") => ElicitResult::decline(),
            _ => ElicitResult::cancel(),
        };
    }
    ElicitResult::cancel()
}

/// The schema's properties, required ones first (in the schema's order),
/// then the others by name.
fn fields(schema: &Value) -> Vec<(&str, &Value, bool)> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else { return Vec::new() };
    let mut out: Vec<(&str, &Value, bool)> =
        required.iter().filter_map(|r| props.get(*r).map(|p| (*r, p, true))).collect();
    out.extend(
        props.iter().filter(|(k, _)| !required.contains(&k.as_str())).map(|(k, p)| (k.as_str(), p, false)),
    );
    out
}

/// The choices of an enum property: (value, label).
fn choices(prop: &Value) -> Vec<(Value, String)> {
    let labelled = |options: &Value| -> Vec<(Value, String)> {
        options
            .as_array()
            .map(|o| {
                o.iter()
                    .filter_map(|c| {
                        let v = c.get("const")?.clone();
                        let label = c["title"].as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
                        Some((v, label))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(values) = prop["enum"].as_array() {
        let names = prop["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let label = names.and_then(|n| n.get(i)).and_then(Value::as_str).map(str::to_owned);
                (
                    v.clone(),
                    label.unwrap_or_else(|| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())),
                )
            })
            .collect();
    }
    if prop.get("oneOf").is_some() {
        return labelled(&prop["oneOf"]);
    }
    let items = &prop["items"];
    if items.get("enum").is_some() || items.get("anyOf").is_some() || items.get("oneOf").is_some() {
        let mut inner = choices(items);
        if inner.is_empty() {
            inner = labelled(&items["anyOf"]);
        }
        return inner;
    }
    Vec::new()
}

fn pick(text: &str, options: &[(Value, String)]) -> Option<Value> {
    let text = text.trim();
    if let Ok(n) = text.parse::<usize>() {
        if (1..=options.len()).contains(&n) {
            return Some(options[n - 1].0.clone());
        }
    }
    options.iter().find(|(v, label)| v.as_str() == Some(text) || label == text).map(|(v, _)| v.clone())
}

fn ask_field(name: &str, prop: &Value, required: bool) -> Entry {
    let kind = prop["type"].as_str().unwrap_or("string");
    let options = choices(prop);
    let title = prop["title"].as_str().map(|t| format!(" ({})", clean(t))).unwrap_or_default();
    eprintln!("  {}{title}{}", clean(name), if required { " — required" } else { "" });
    if let Some(d) = prop["description"].as_str() {
        eprintln!("    {}", clean(d));
    }
    for (i, (_, label)) in options.iter().enumerate() {
        eprintln!("    {}. {}", i + 1, clean(label));
    }
    let default = prop.get("default");
    let hint = match (kind, options.is_empty()) {
        ("array", false) => "choices, comma-separated",
        (_, false) => "a choice",
        ("boolean", _) => "y/n",
        ("integer", _) => "an integer",
        ("number", _) => "a number",
        _ => "text",
    };
    let default_text = default.map(|d| format!(", default {}", clean(&d.to_string()))).unwrap_or_default();
    loop {
        let Some(line) = read_answer(&format!("    {hint}{default_text}: ")) else { return Entry::Cancel };
        match line.trim() {
            ":decline" => return Entry::Decline,
            ":cancel" => return Entry::Cancel,
            "" => match default {
                Some(d) => return Entry::Value(d.clone()),
                None if !required => return Entry::Skip,
                None => {
                    eprintln!("    required");
                    continue;
                }
            },
            _ => {}
        }
        let parsed = match (kind, options.is_empty()) {
            ("array", false) => {
                line.split(',').map(|part| pick(part, &options)).collect::<Option<Vec<_>>>().map(Value::Array)
            }
            (_, false) => pick(&line, &options),
            ("boolean", _) => match line.trim() {
                "y" | "yes" | "true" => Some(Value::Bool(true)),
                "n" | "no" | "false" => Some(Value::Bool(false)),
                _ => None,
            },
            ("integer", _) => line.trim().parse::<i64>().ok().map(Value::from),
            ("number", _) => {
                line.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
            }
            _ => Some(Value::String(line)),
        };
        match parsed {
            Some(v) => return Entry::Value(v),
            None => eprintln!("    not {hint}"),
        }
    }
}

fn first_line(text: Option<&str>) -> &str {
    text.unwrap_or("").lines().next().unwrap_or("")
}

fn content_text(content: &Content) -> String {
    match content {
        Content::Text { text, truncated: false } => text.clone(),
        Content::Text { text, truncated: true } => format!("{text}… (truncated)"),
        Content::Image { data, mime_type } => format!("<image {mime_type}, {} bytes>", data.len()),
        Content::Audio { data, mime_type } => format!("<audio {mime_type}, {} bytes>", data.len()),
        Content::Resource(c) => match &c.text {
            Some(text) => format!("<resource {}>\n{text}", c.uri),
            None => format!("<resource {}, {} bytes>", c.uri, c.data.as_ref().map_or(0, Vec::len)),
        },
        Content::ResourceLink { uri, name, .. } => format!("<link {name}: {uri}>"),
        Content::Unsupported { kind, bytes } => format!("<{kind} dropped, {bytes} bytes>"),
    }
}

/// How a call's progress is shown: a bar on a terminal, lines otherwise,
/// nothing with `--json`.
enum ProgressDisplay {
    Bar(ProgressBar),
    Lines,
    Quiet,
}

fn progress_display(json_out: bool) -> ProgressDisplay {
    if json_out {
        ProgressDisplay::Quiet
    } else if std::io::stderr().is_terminal() {
        let bar = ProgressBar::hidden();
        bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("a valid template"));
        ProgressDisplay::Bar(bar)
    } else {
        ProgressDisplay::Lines
    }
}

impl ProgressDisplay {
    fn opts(&self) -> CallOpts {
        match self {
            ProgressDisplay::Quiet => CallOpts::default(),
            ProgressDisplay::Lines => CallOpts::default().with_progress(|p| {
                let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                eprintln!("progress {}{total} {}", p.progress, p.message.unwrap_or_default());
            }),
            ProgressDisplay::Bar(bar) => {
                let bar = bar.clone();
                CallOpts::default().with_progress(move |p| {
                    if bar.is_hidden() {
                        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    }
                    if let Some(total) = p.total {
                        bar.set_length(total.max(0.0) as u64);
                    }
                    bar.set_position(p.progress.max(0.0) as u64);
                    bar.set_message(p.message.unwrap_or_default());
                })
            }
        }
    }

    fn finish(&self) {
        if let ProgressDisplay::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
