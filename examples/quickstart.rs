//! Connect to a server, list its tools, call one that reports progress, and
//! print the result.
//!
//! ```text
//! cargo run --example quickstart                       # the built-in demo server
//! cargo run --example quickstart -- --stdio "npx -y @modelcontextprotocol/server-everything stdio"
//! cargo run --example quickstart -- --env NODE_EXTRA_CA_CERTS=/etc/ssl/corp.pem --stdio "npx -y …"
//! ```
//!
//! A stdio server gets only an allowlist of this environment (see
//! `mcp_stack::transport::stdio`); `--env KEY=VALUE` (repeatable) sets one
//! more variable for it.
//!
//! Against the demo server it calls `count`, then asks the server to log.
//! Against another server it calls `--tool NAME` with `--args JSON`; without
//! `--args` it builds arguments that satisfy the tool's input schema (see
//! `sample_arguments`), and without `--tool` it picks a tool it can call
//! that way (read-only ones first). It prints what it sends. When the server
//! refuses a call or the tool reports an error, it says so (that is not a
//! result) and tries the next candidate, at most `MAX_ATTEMPTS` in all.
//!
//! It also shows the host's side of the conversation: the server's log
//! records are printed as they arrive (`--log-level LEVEL`, default `info`),
//! the current directory is offered as a root, and when the server asks for
//! input (elicitation) the request is printed and answered with the form's
//! defaults when they satisfy it, declined otherwise.

use mcp_stack::handlers::{root_for_path, ElicitRequest, ElicitResult, LogMessage};
use mcp_stack::protocol::LoggingLevel;
use mcp_stack::protocol::Tool;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::{
    handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Content, Definition, ToolResult,
};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The most tools tried before giving up.
const MAX_ATTEMPTS: usize = 3;
/// How deep [`sample_arguments`] follows nested schemas.
const MAX_SAMPLE_DEPTH: usize = 8;

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
    let mut env = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => stdio = args.next(),
            "--env" => {
                let pair = args.next().unwrap_or_default();
                let (key, value) = pair.split_once('=').ok_or("--env takes KEY=VALUE")?;
                env.push((key.to_string(), value.to_string()));
            }
            "--tool" => tool = args.next(),
            "--args" => tool_args = args.next(),
            "--log-level" => log_level = args.next().unwrap_or_default().parse()?,
            other => return Err(format!("unknown argument {other:?} (try --stdio \"CMD ARGS\")").into()),
        }
    }

    let definition = match &stdio {
        Some(line) => {
            let factory = env.iter().fold(StdioFactory::from_command_line(line)?, |f, (k, v)| f.env(k, v));
            Definition::with_factory("server", Arc::new(factory))
        }
        None if !env.is_empty() => return Err("--env applies to a --stdio server".into()),
        None => Definition::new("demo", mcp_stack::demo::factory()),
    };
    // What this server may ask of us, and the level of logs we want.
    let definition = definition
        .with_capabilities(AllowedCapabilities::default().with_elicitation(true).with_roots(true))
        .with_log_level(log_level);
    let handlers = Handlers::default()
        .log(|m: LogMessage| async move {
            println!("  server log [{}] {}", m.level, shown(&m.text));
            Ok(())
        })
        .with_roots(vec![root_for_path(std::env::current_dir()?)?])
        .elicitation(|req: ElicitRequest| async move {
            println!("  the server asks: {}", shown(&req.message));
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
        shown(&session.server.name),
        shown(&session.server.version),
        session.protocol_version
    );

    let tools = binding.list_tools().await?;
    println!("{} tools:", tools.items.len());
    for t in &tools.items {
        let description = t.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
        println!("  {:<32} {}", shown(&t.name), shown(description));
    }

    if stdio.is_none() {
        let result = call(&binding, "count", json!({ "steps": 5, "delay_ms": 100 })).await?;
        print_result(&result);
        println!("asking the server to log");
        let text = json!({ "count": 2, "text": "hello from the demo server" });
        binding.call_tool("log", text, CallOpts::default()).await?;
        // Log records are delivered on their own task; give them a moment.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        binding.close().await;
        return Ok(());
    }

    // What to call: the tool asked for, with the arguments given or built
    // from its schema; else the tools we can build arguments for.
    let candidates: Vec<(String, Value)> = match tool {
        Some(name) => {
            let arguments = match &tool_args {
                Some(text) => serde_json::from_str(text)?,
                None => match tools.items.iter().find(|t| t.name == name) {
                    Some(t) => sample_arguments(&t.input_schema).unwrap_or_else(|| json!({})),
                    None => json!({}),
                },
            };
            vec![(name, arguments)]
        }
        None => callable(&tools.items),
    };
    if candidates.is_empty() {
        println!("no tool whose arguments this example can build; try --tool NAME --args JSON");
    }
    for (name, arguments) in candidates.into_iter().take(MAX_ATTEMPTS) {
        match call(&binding, &name, arguments).await {
            Ok(result) if !result.is_error => {
                print_result(&result);
                break;
            }
            Ok(result) => {
                let text = result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join(" ");
                println!("  {} reported an error (not a result): {}", shown(&name), shown(&text));
            }
            Err(e) => println!("  the server refused the call (not a result): {}", shown(&e.to_string())),
        }
    }
    binding.close().await;
    Ok(())
}

/// Calls `name`, showing what is sent and the progress it reports.
async fn call(binding: &Binding, name: &str, arguments: Value) -> Result<ToolResult, mcp_stack::Error> {
    println!("calling {} {}", shown(name), shown(&arguments.to_string()));
    let opts = CallOpts::default().with_progress(|p| {
        let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
        println!("  progress {}{total} {}", p.progress, shown(&p.message.unwrap_or_default()));
    });
    binding.call_tool(name, arguments, opts).await
}

fn print_result(result: &ToolResult) {
    for content in &result.content {
        match content {
            Content::Text { text, .. } => println!("result: {}", shown(text)),
            other => println!("result: {}", describe(other)),
        }
    }
    if let Some(structured) = &result.structured {
        println!("structured: {}", shown(&structured.to_string()));
    }
}

/// Server text for the terminal: control characters (but line breaks and
/// tabs) and bidirectional overrides, isolates and marks as visible
/// escapes, so that a server cannot move the cursor or reorder what is shown.
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| {
            let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}');
            if (c.is_control() && c != '\n' && c != '\t') || bidi {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn describe(content: &Content) -> Value {
    match content {
        Content::Image { data, mime_type, .. } | Content::Audio { data, mime_type, .. } => {
            json!({ "mimeType": mime_type, "bytes": data.len() })
        }
        other => json!(format!("{other:?}")),
    }
}

/// The tools this example can call, each with arguments built from its
/// input schema that the schema accepts: read-only tools first, then the
/// others that do not say they are destructive, in server order.
fn callable(tools: &[Tool]) -> Vec<(String, Value)> {
    let hint = |t: &Tool, f: fn(&mcp_stack::protocol::ToolAnnotations) -> Option<bool>| {
        t.annotations.as_ref().and_then(f)
    };
    let mut picked: Vec<(u8, String, Value)> = tools
        .iter()
        .filter(|t| {
            hint(t, |a| a.destructive_hint) != Some(true) || hint(t, |a| a.read_only_hint) == Some(true)
        })
        .filter_map(|t| {
            let arguments = sample_arguments(&t.input_schema)?;
            let rank = if hint(t, |a| a.read_only_hint) == Some(true) { 0 } else { 1 };
            Some((rank, t.name.clone(), arguments))
        })
        .collect();
    picked.sort_by_key(|(rank, _, _)| *rank);
    picked.into_iter().map(|(_, name, arguments)| (name, arguments)).collect()
}

/// Arguments that satisfy `schema` (a tool's input schema): each property's
/// `default`, else for a required one its `const`, first of `examples` or
/// `enum`, or a sample of its type (within `minimum`, `minLength`,
/// `minItems`, a known `format`). Optional properties without a default are
/// left out. `None` when the result does not validate against the schema
/// (a `pattern`, a `not`, a `$ref` it cannot follow): better to say so than
/// to send what the server will refuse.
fn sample_arguments(schema: &Value) -> Option<Value> {
    let arguments = match sample(schema, 0)? {
        Value::Null => Value::Object(Map::new()),
        value => value,
    };
    match jsonschema::validator_for(schema) {
        Ok(validator) if !validator.is_valid(&arguments) => None,
        _ => Some(arguments),
    }
}

fn sample(schema: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_SAMPLE_DEPTH {
        return None;
    }
    let Some(schema) = schema.as_object() else {
        // `true` (anything) or a malformed schema: the empty object.
        return Some(Value::Object(Map::new()));
    };
    for key in ["default", "const"] {
        if let Some(value) = schema.get(key) {
            return Some(value.clone());
        }
    }
    for key in ["examples", "enum"] {
        if let Some(first) = schema.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            return Some(first.clone());
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            let usable = alternatives.iter().find(|a| a.get("type").and_then(Value::as_str) != Some("null"));
            return sample(usable.unwrap_or(&Value::Bool(true)), depth + 1);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            kinds.iter().filter_map(Value::as_str).find(|k| *k != "null").unwrap_or("null")
        }
        _ if schema.contains_key("properties") => "object",
        _ => "object",
    };
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    Some(match kind {
        "object" => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut object = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    if let Some(default) = property.get("default") {
                        object.insert(name.clone(), default.clone());
                    } else if required.contains(&name.as_str()) {
                        object.insert(name.clone(), sample(property, depth + 1)?);
                    }
                }
            }
            // A required name with no property schema: any value will do.
            for name in required {
                object.entry(name.to_string()).or_insert_with(|| Value::String("sample".into()));
            }
            Value::Object(object)
        }
        "string" => {
            let text = match schema.get("format").and_then(Value::as_str) {
                Some("uri" | "url" | "iri") => "https://example.com/".to_string(),
                Some("email") => "user@example.com".to_string(),
                Some("date-time") => "2025-01-01T00:00:00Z".to_string(),
                Some("date") => "2025-01-01".to_string(),
                Some("time") => "00:00:00Z".to_string(),
                Some("uuid") => "00000000-0000-4000-8000-000000000000".to_string(),
                _ => "hello".to_string(),
            };
            let min = number("minLength").unwrap_or(0.0) as usize;
            let max = number("maxLength").map_or(usize::MAX, |m| m as usize);
            let text = if text.chars().count() < min { "x".repeat(min) } else { text };
            Value::String(if text.chars().count() > max { text.chars().take(max).collect() } else { text })
        }
        "integer" | "number" => {
            let low = match (number("minimum"), number("exclusiveMinimum")) {
                (Some(min), _) => min,
                (None, Some(min)) => min + 1.0,
                (None, None) => 1.0,
            };
            let high = number("maximum").or(number("exclusiveMaximum").map(|m| m - 1.0)).unwrap_or(f64::MAX);
            let value = low.min(high).ceil();
            if kind == "integer" {
                json!(value as i64)
            } else {
                json!(value)
            }
        }
        "boolean" => Value::Bool(false),
        "array" => {
            let count = number("minItems").unwrap_or(0.0).min(16.0) as usize;
            let item = schema.get("items").cloned().unwrap_or(Value::Bool(true));
            Value::Array((0..count).map(|_| sample(&item, depth + 1)).collect::<Option<_>>()?)
        }
        _ => Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_fields_get_a_sample_of_their_type_and_optional_ones_are_left_out() {
        let schema = json!({
            "type": "object",
            "properties": {
                "message": { "type": "string" },
                "count": { "type": "integer", "minimum": 3, "maximum": 10 },
                "ratio": { "type": "number", "exclusiveMinimum": 0 },
                "loud": { "type": "boolean" },
                "tags": { "type": "array", "items": { "type": "string" }, "minItems": 2 },
                "nested": { "type": "object", "properties": { "id": { "type": "string" } }, "required": ["id"] },
                "optional": { "type": "string" },
            },
            "required": ["message", "count", "ratio", "loud", "tags", "nested"],
        });
        assert_eq!(
            sample_arguments(&schema).unwrap(),
            json!({
                "message": "hello", "count": 3, "ratio": 1.0, "loud": false,
                "tags": ["hello", "hello"], "nested": { "id": "hello" },
            })
        );
    }

    #[test]
    fn defaults_examples_enums_and_formats_are_used() {
        let schema = json!({
            "type": "object",
            "properties": {
                "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] },
                "city": { "type": "string", "examples": ["Paris"] },
                "days": { "type": "integer", "default": 7 },
                "site": { "type": "string", "format": "uri" },
                "code": { "type": "string", "minLength": 8 },
            },
            "required": ["unit", "city", "site", "code"],
        });
        assert_eq!(
            sample_arguments(&schema).unwrap(),
            json!({ "unit": "celsius", "city": "Paris", "days": 7, "site": "https://example.com/", "code": "xxxxxxxx" })
        );
    }

    #[test]
    fn server_everything_echo_and_get_sum_are_satisfied() {
        // As server-everything 2026.8.31 lists them (zod's JSON Schema).
        let echo = json!({
            "type": "object",
            "properties": { "message": { "type": "string", "description": "Message to echo" } },
            "required": ["message"], "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#",
        });
        assert_eq!(sample_arguments(&echo).unwrap(), json!({ "message": "hello" }));
        let sum = json!({
            "type": "object",
            "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
            "required": ["a", "b"],
        });
        assert_eq!(sample_arguments(&sum).unwrap(), json!({ "a": 1.0, "b": 1.0 }));
        assert_eq!(sample_arguments(&json!({ "type": "object" })).unwrap(), json!({}));
    }

    #[test]
    fn what_cannot_be_satisfied_is_none_not_a_guess() {
        let pattern = json!({
            "type": "object",
            "properties": { "id": { "type": "string", "pattern": "^[0-9]{4}$" } },
            "required": ["id"],
        });
        assert_eq!(sample_arguments(&pattern), None);
        let deep = (0..20).fold(
            json!({ "type": "string" }),
            |inner, _| json!({ "type": "object", "properties": { "x": inner }, "required": ["x"] }),
        );
        assert_eq!(sample_arguments(&deep), None);
    }

    #[test]
    fn callable_tools_put_read_only_ones_first_and_skip_destructive_ones() {
        let tool = |name: &str, annotations: Value, schema: Value| -> Tool {
            serde_json::from_value(json!({ "name": name, "inputSchema": schema, "annotations": annotations }))
                .unwrap()
        };
        let object = json!({ "type": "object" });
        let tools = [
            tool("wipe", json!({ "destructiveHint": true }), object.clone()),
            tool("write", json!({}), object.clone()),
            tool(
                "unsatisfiable",
                json!({ "readOnlyHint": true }),
                json!({ "type": "object", "properties": { "id": { "type": "string", "pattern": "^[0-9]$" } }, "required": ["id"] }),
            ),
            tool("read", json!({ "readOnlyHint": true }), object),
        ];
        let names: Vec<String> = callable(&tools).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["read", "write"]);
    }
}
