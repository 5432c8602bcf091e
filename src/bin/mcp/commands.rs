//! The commands: each asks the host or one binding and says what to print.

use mcp_stack::host::Host;
use mcp_stack::{Binding, CallOpts, Content, Error, FailureClass, Status, ToolResult};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::time::Duration;

use crate::cli::{Cli, Command};
use crate::progress::ProgressDisplay;
use crate::terminal::{clean, clean_line};
use crate::{
    failure, names, signature, usage, Failure, EXIT_CALL, EXIT_CONNECT, EXIT_TOOL_ERROR, EXIT_USAGE,
};

/// What a command prints: the `--json` document, or lines of text already
/// made safe for a terminal; and its exit code.
pub(crate) struct Output {
    pub(crate) document: Value,
    pub(crate) lines: Vec<String>,
    pub(crate) code: u8,
}

impl Output {
    pub(crate) fn ok(document: Value, lines: Vec<String>) -> Output {
        Output { document, lines, code: 0 }
    }
}

/// A row of `servers --json`: the binding's status and its tool count.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServerRow<'a> {
    #[serde(flatten)]
    status: &'a Status,
    tool_count: usize,
}

/// The one server a single-server command talks to.
pub(crate) async fn one_server(cli: &Cli, host: &Host) -> Result<Binding, Failure> {
    let name = match &cli.server {
        Some(name) => name.clone(),
        None => {
            let names = host.names();
            match names.as_slice() {
                [one] => one.clone(),
                _ => {
                    return Err(usage(format!(
                        "{} servers: choose one with --server NAME ({})",
                        names.len(),
                        names.join(", ")
                    )))
                }
            }
        }
    };
    host.ready(&name).await.map_err(|e| match e.class() {
        FailureClass::NotFound => usage(format!("no server named {:?}", clean_line(&name))),
        _ => failure(EXIT_CONNECT, &e),
    })
}

pub(crate) async fn command(
    cli: &Cli,
    host: &Host,
    arguments: Option<Map<String, Value>>,
) -> Result<Output, Failure> {
    let call_failed = |e: Error| failure(EXIT_CALL, &e);
    Ok(match &cli.command {
        Command::Servers => {
            let statuses = host.status();
            let catalog = host.catalog();
            let tool_count = |name: &str| catalog.catalog(name).map_or(0, |c| c.tools.len());
            let rows: Vec<ServerRow<'_>> = statuses
                .iter()
                .map(|s| ServerRow { status: s, tool_count: tool_count(&s.binding) })
                .collect();
            let mut table =
                vec![["NAME", "STATE", "TRANSPORT", "PROTOCOL", "TOOLS", "LAST FAILURE"].map(String::from)];
            for row in &rows {
                let s = row.status;
                let protocol = if s.protocol_version.is_empty() { "-" } else { &s.protocol_version };
                let failure = s
                    .failure
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |f| format!("{}: {}", f.class, clean_line(&f.message)));
                table.push([
                    s.binding.clone(),
                    s.state.to_string(),
                    s.transport_kind.to_string(),
                    clean_line(protocol),
                    row.tool_count.to_string(),
                    failure,
                ]);
            }
            Output::ok(json!({ "servers": rows }), aligned(&table))
        }
        Command::Tools { search: Some(query), k, .. } => search_output(host, query, usize::from(*k)),
        Command::Tools { provider: Some(provider), deferred, .. } => {
            provider_output(host, provider, *deferred)
        }
        Command::Tools { .. } => {
            // The adopted catalogs, discovered while connecting: the tools
            // as a host shows them to a model.
            // A tool for apps only is never shown to a model: it is
            // counted here, and listed by `apps`.
            let catalog = host.catalog();
            let (for_model, for_apps): (Vec<_>, Vec<_>) = catalog.tools().partition(|t| t.visible_to_model());
            let entries = for_model.iter().map(|t| Entry {
                name: &t.model_name,
                description: t.description.as_deref(),
                signature: signature::of_schema(&t.input_schema.to_value()),
            });
            let mut lines = entry_lines(entries);
            if !for_apps.is_empty() {
                lines.push(format!("({} more for apps only: see `mcp apps`)", for_apps.len()));
            }
            for c in catalog.catalogs() {
                lines.extend(c.warnings.iter().map(|w| format!("warning: {}: {}", c.binding, clean_line(w))));
            }
            lines.extend(catalog.warnings().iter().map(|w| format!("warning: {}", clean_line(w))));
            let catalogs: Vec<&mcp_stack::catalog::Catalog> =
                catalog.catalogs().iter().map(|c| &**c).collect();
            Output::ok(json!({ "catalogs": catalogs, "warnings": catalog.warnings() }), lines)
        }
        Command::Call { name, task: true, ttl_ms, .. } => {
            let arguments = Value::Object(arguments.unwrap_or_default());
            let target = call_target(cli, host, name).await?;
            crate::tasks::call(cli, host, name, target, arguments, ttl_ms.map(Duration::from_millis)).await?
        }
        Command::Tasks { action } => crate::tasks::command(cli, host, action).await?,
        Command::Apps => crate::extensions::apps(host),
        Command::ReadApp { tool, output } => {
            crate::extensions::read_app(cli, host, tool, output.as_deref()).await?
        }
        Command::Skills { action } => crate::extensions::skills(cli, host, action).await?,
        // Served by `inspect::serve`, which `run` calls instead of this.
        Command::Inspect { .. } => unreachable!("mcp inspect is served by inspect::serve"),
        Command::Call { name, as_app, output, .. } => {
            let arguments = Value::Object(arguments.unwrap_or_default());
            let target = match (call_target(cli, host, name).await?, as_app) {
                (None, true) => Some(model_target(host, name)?),
                (target, _) => target,
            };
            let progress = ProgressDisplay::new(cli.json);
            let result = match &target {
                None => host.call_tool(name, arguments, progress.opts()).await,
                Some((binding, raw)) if *as_app => {
                    binding.call_tool_from_app(raw, arguments, progress.opts()).await
                }
                Some((binding, raw)) => binding.call_tool(raw, arguments, progress.opts()).await,
            };
            progress.finish();
            let result = result.map_err(call_failed)?;
            match output {
                Some(path) => save_tool_result(&result, path)?,
                None => tool_output(&result),
            }
        }
        Command::Prompts => {
            let binding = one_server(cli, host).await?;
            let prompts = binding.list_prompts().await.map_err(call_failed)?;
            let entries = prompts.items.iter().map(|p| Entry {
                name: &p.name,
                description: p.description.as_deref(),
                signature: signature::of_prompt(
                    p.arguments.iter().flatten().map(|a| (a.name.as_str(), a.required.unwrap_or(false))),
                ),
            });
            let mut lines = match prompts.items.is_empty() {
                true => vec![format!("server {} offers no prompts", binding.name())],
                false => entry_lines(entries),
            };
            lines.extend(prompts.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "prompts": prompts.items, "warnings": prompts.warnings }), lines)
        }
        Command::GetPrompt { name, .. } => {
            let binding = one_server(cli, host).await?;
            let prompt = binding
                .get_prompt(name, arguments.unwrap_or_default(), CallOpts::default())
                .await
                .map_err(call_failed)?;
            let lines = prompt
                .messages
                .iter()
                .map(|m| format!("{}: {}", clean_line(&m.role.to_string()), clean(&content_text(&m.content))))
                .collect();
            Output::ok(json!(prompt), lines)
        }
        Command::Resources => {
            let binding = one_server(cli, host).await?;
            let resources = binding.list_resources().await.map_err(call_failed)?;
            let rows: Vec<[String; 2]> =
                resources.items.iter().map(|r| [clean_line(&r.uri), clean_line(&r.name)]).collect();
            let mut lines = listed(&rows, binding.name(), "resources");
            lines.extend(resources.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "resources": resources.items, "warnings": resources.warnings }), lines)
        }
        Command::Templates => {
            let binding = one_server(cli, host).await?;
            let templates = binding.list_resource_templates().await.map_err(call_failed)?;
            let rows: Vec<[String; 2]> =
                templates.items.iter().map(|t| [clean_line(&t.uri_template), clean_line(&t.name)]).collect();
            let mut lines = listed(&rows, binding.name(), "resource templates");
            lines.extend(templates.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "resourceTemplates": templates.items, "warnings": templates.warnings }), lines)
        }
        Command::Read { uri, output } => {
            let binding = one_server(cli, host).await?;
            let resource = binding.read_resource(uri, CallOpts::default()).await.map_err(call_failed)?;
            let mut lines: Vec<String> =
                resource.warnings.iter().map(|w| format!("warning: {}", clean_line(w))).collect();
            match output {
                Some(path) => lines.extend(save_resource(&resource, path)?),
                None => lines.extend(resource.contents.iter().map(|c| match &c.text {
                    Some(text) => clean(text),
                    None => format!(
                        "<{} bytes of {}; save them with --output FILE>",
                        c.data.as_ref().map_or(0, Vec::len),
                        clean_line(c.mime_type.as_deref().unwrap_or("an unnamed type"))
                    ),
                })),
            }
            Output::ok(json!(resource), lines)
        }
    })
}

/// What a tool's result prints; exit 5 when it is an error.
pub(crate) fn tool_output(result: &ToolResult) -> Output {
    let mut lines: Vec<String> = result.content.iter().map(|c| clean(&content_text(c))).collect();
    // A tool that returns structured content also returns it as text (the
    // specification asks it to); shown once.
    let has_text = result.content.iter().any(|c| matches!(c, Content::Text { .. }));
    if let (Some(s), false) = (&result.structured, has_text) {
        lines.push(format!("structured: {}", clean(&s.to_string())));
    }
    lines.extend(result.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
    let code = if result.is_error { EXIT_TOOL_ERROR } else { 0 };
    Output { document: json!(result), lines, code }
}

/// `call --output FILE`: the result's first image, audio or embedded
/// resource, else its text, written to `path`; the rest of the output says
/// what was saved and what was not.
fn save_tool_result(result: &ToolResult, path: &std::path::Path) -> Result<Output, Failure> {
    let binary = result.content.iter().find_map(|c| match c {
        Content::Image { data, mime_type, .. } | Content::Audio { data, mime_type, .. } => {
            Some((data.clone(), Some(mime_type.clone())))
        }
        Content::Resource { resource, .. } => {
            let bytes = resource.data.clone().or_else(|| resource.text.clone().map(String::into_bytes));
            bytes.map(|b| (b, resource.mime_type.clone()))
        }
        _ => None,
    });
    let (bytes, mime) = binary.unwrap_or_else(|| {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (text.join("\n").into_bytes(), None)
    });
    std::fs::write(path, &bytes).map_err(|e| usage(format!("--output {}: {e}", path.display())))?;
    let mime = mime.map(|m| format!(" ({})", clean_line(&m))).unwrap_or_default();
    let mut lines = vec![format!("saved {} bytes{mime} to {}", bytes.len(), path.display())];
    lines.extend(result.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
    let code = if result.is_error { EXIT_TOOL_ERROR } else { 0 };
    let document = json!({ "saved": { "path": path, "bytes": bytes.len() }, "isError": result.is_error, "warnings": result.warnings });
    Ok(Output { document, lines, code })
}

/// The tool `call NAME` means (`None`: a model name the host routes),
/// decided before anything is sent (see [`names`]). A name no catalog
/// lists is a usage error (`not_found`, exit 2).
pub(crate) async fn call_target(
    cli: &Cli,
    host: &Host,
    name: &str,
) -> Result<Option<(Binding, String)>, Failure> {
    let statuses = host.status();
    let stale = |binding: &str| {
        statuses.iter().any(|s| s.binding == binding && s.stale_families.iter().any(|f| f == "tools"))
    };
    let target = names::resolve(&host.catalog(), &host.names(), cli.server.as_deref(), name, &stale)
        .map_err(|names::Unknown(why)| {
            failure(EXIT_USAGE, &Error::new(FailureClass::NotFound, why).with_op("call_tool"))
        })?;
    match target {
        names::Target::Model => Ok(None),
        names::Target::Raw { binding, raw_name } => {
            let several = cli.server.is_none() && host.names().len() > 1;
            if several && !cli.json {
                // The person named no server: say which one answers.
                eprintln!("{raw_name:?} is served by the server {binding:?}");
            }
            let binding = host.ready(&binding).await.map_err(|e| match e.class() {
                FailureClass::NotFound => usage(format!("no server named {:?}", clean_line(&binding))),
                _ => failure(EXIT_CONNECT, &e),
            })?;
            Ok(Some((binding, raw_name)))
        }
    }
}

/// The binding and raw name behind the model name `name` (for `--as-app`,
/// which calls through the binding rather than the host's model routing).
fn model_target(host: &Host, name: &str) -> Result<(Binding, String), Failure> {
    let catalog = host.catalog();
    let (listing, tool) = catalog.resolve(name).map_err(|e| failure(EXIT_USAGE, &e.with_op("call_tool")))?;
    let binding = host.binding(&listing.binding).ok_or_else(|| {
        let e = Error::new(FailureClass::NotFound, format!("server {} is not ready", listing.binding));
        failure(EXIT_USAGE, &e.with_op("call_tool"))
    })?;
    Ok((binding, tool.raw_name.clone()))
}

/// `tools --search QUERY -k N`: the hits, best first.
fn search_output(host: &Host, query: &str, k: usize) -> Output {
    let hits = host.search_tools(query, k);
    let document: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "server": h.server,
                "tool": h.name,
                "modelName": h.model_name,
                "score": h.score,
                "why": h.why(),
            })
        })
        .collect();
    let mut lines: Vec<String> = hits
        .iter()
        .map(|h| format!("{:<44} {:>7.3}  {}", clean_line(&h.model_name), h.score, clean_line(&h.why())))
        .collect();
    if hits.is_empty() {
        lines.push(format!("no tool matches {:?}", clean_line(query)));
    }
    Output::ok(json!({ "query": query, "hits": document }), lines)
}

/// `tools --for PROVIDER`: the definitions as that provider is sent them,
/// the conversion's warnings, and the estimated tokens of the set.
fn provider_output(host: &Host, provider: &str, deferred: bool) -> Output {
    use mcp_stack::providers::exposure::{self, Deferral, ToolExposure, ToolSession};
    use mcp_stack::providers::{anthropic, gemini, openai};
    let catalog = host.catalog();
    let exposure = match deferred {
        true => ToolExposure::Deferred(Deferral::default()),
        false => ToolExposure::All,
    };
    let session = ToolSession::new(exposure);
    let offered = session.offered(&catalog);
    let sent = offered.tools.iter().copied();
    let mut converted = match provider {
        "openai" => openai::tools(sent, &openai::Options::chat().strict(true)),
        "anthropic" => anthropic::tools(sent),
        _ => gemini::tools(sent),
    };
    if offered.search_tool {
        converted.tools.push(match provider {
            "openai" => exposure::openai_search_tool(),
            "anthropic" => exposure::anthropic_search_tool(),
            _ => exposure::gemini_search_tool(),
        });
        converted.warnings.push(format!("{} tools deferred behind search_tools", offered.deferred));
    }
    let tools = match provider {
        "gemini" => json!([{ "functionDeclarations": converted.tools }]),
        _ => Value::Array(converted.tools.clone()),
    };
    let text = serde_json::to_string_pretty(&tools).unwrap_or_default();
    let tokens = estimated_tokens(&serde_json::to_string(&tools).unwrap_or_default());
    let mut lines = vec![text];
    lines.extend(converted.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
    lines.push(format!(
        "{} tools for {provider}: about {tokens} tokens ({} bytes of JSON, at 4 bytes a token)",
        converted.tools.len(),
        serde_json::to_string(&tools).map_or(0, |t| t.len())
    ));
    Output::ok(
        json!({ "provider": provider, "tools": tools, "warnings": converted.warnings, "estimatedTokens": tokens }),
        lines,
    )
}

/// Tokens estimated from bytes: about 4 bytes of JSON a token for the
/// providers' tokenizers on English text and JSON punctuation; an estimate
/// for budgets, not a count.
fn estimated_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// A tool or prompt as `tools` and `prompts` print it.
pub(crate) struct Entry<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: Option<&'a str>,
    pub(crate) signature: String,
}

/// The widest name column: a longer name puts its description on a line
/// of its own, so that the two never run together.
const NAME_COLUMN: usize = 40;

/// Each entry as its name and the first line of its description, then its
/// parameters on a line below, indented.
pub(crate) fn entry_lines<'a>(entries: impl Iterator<Item = Entry<'a>>) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in entries {
        let name = clean_line(entry.name);
        let description = clean_line(first_line(entry.description));
        if name.chars().count() <= NAME_COLUMN {
            lines.push(format!("{name:<NAME_COLUMN$}  {description}").trim_end().to_string());
        } else {
            lines.push(name);
            if !description.is_empty() {
                lines.push(format!("{:NAME_COLUMN$}  {description}", ""));
            }
        }
        lines.push(format!("    {}", clean_line(&entry.signature)));
    }
    lines
}

/// Rows as columns as wide as their widest cell (the last column as it
/// is), two spaces apart.
pub(crate) fn aligned<const N: usize>(rows: &[[String; N]]) -> Vec<String> {
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..N).map(width).collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, cell)| if i + 1 == N { cell.clone() } else { format!("{cell:<w$}", w = widths[i]) })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

/// A listing's rows, aligned, or one line saying there are none.
pub(crate) fn listed(rows: &[[String; 2]], binding: &str, what: &str) -> Vec<String> {
    if rows.is_empty() {
        return vec![format!("server {binding} offers no {what}")];
    }
    aligned(rows)
}

/// Writes a read resource to `path`: the first item's bytes, or its text.
/// Returns what to tell the person.
pub(crate) fn save_resource(
    resource: &mcp_stack::ResourceResult,
    path: &std::path::Path,
) -> Result<Vec<String>, Failure> {
    let Some(first) = resource.contents.first() else {
        return Err(failure(
            EXIT_CALL,
            &Error::new(FailureClass::NotFound, "the resource has no content to save")
                .with_op("read_resource"),
        ));
    };
    let bytes: &[u8] = match (&first.data, &first.text) {
        (Some(data), _) => data,
        (None, Some(text)) => text.as_bytes(),
        (None, None) => &[],
    };
    std::fs::write(path, bytes).map_err(|e| usage(format!("--output {}: {e}", path.display())))?;
    let mime = first.mime_type.as_deref().map(|m| format!(" ({})", clean_line(m))).unwrap_or_default();
    let mut lines = vec![format!("saved {} bytes{mime} to {}", bytes.len(), path.display())];
    if first.truncated {
        lines.push("warning: a limit cut this content; the file holds what was kept".into());
    }
    if resource.contents.len() > 1 {
        lines.push(format!(
            "warning: the resource has {} items; only the first was saved",
            resource.contents.len()
        ));
    }
    Ok(lines)
}

pub(crate) fn first_line(text: Option<&str>) -> &str {
    text.unwrap_or("").lines().next().unwrap_or("")
}

/// One content item as text (not yet made safe for a terminal).
pub(crate) fn content_text(content: &Content) -> String {
    match content {
        Content::Text { text, truncated: false, .. } => text.clone(),
        Content::Text { text, truncated: true, .. } => format!("{text}… (truncated)"),
        Content::Image { data, mime_type, .. } => format!("<image {mime_type}, {} bytes>", data.len()),
        Content::Audio { data, mime_type, .. } => format!("<audio {mime_type}, {} bytes>", data.len()),
        Content::Resource { resource: c, .. } => match &c.text {
            Some(text) => format!("<resource {}>\n{text}", c.uri),
            None => format!("<resource {}, {} bytes>", c.uri, c.data.as_ref().map_or(0, Vec::len)),
        },
        Content::ResourceLink { uri, name, .. } => format!("<link {name}: {uri}>"),
        Content::Unsupported { kind, bytes } => format!("<{kind} dropped, {bytes} bytes>"),
    }
}
