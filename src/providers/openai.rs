//! OpenAI: function tools for Chat Completions
//! (`{"type": "function", "function": {"name", "description", "parameters"}}`)
//! and the Responses API (the flat `{"type": "function", "name", …}`), their
//! tool calls back (arguments as a JSON string), and tool results out. The
//! rules are in the [parent module](super).

use serde_json::{json, Map, Value};

use super::render::{parts, Part};
use super::schema::{openai_strict, strip_optional_nulls, top_level, Provider};
use super::{bad_call, bounded, call_arguments, call_id, call_name, description, offered};
use super::{CallError, ProviderTools, Rendered, ToolCall};
use crate::catalog::ToolSpec;
use crate::content::ToolResult;
use crate::error::Error;
use crate::host::Host;
use crate::request::CallOpts;

/// What a tool result starts with when the tool reported failure: OpenAI's
/// tool results have no error flag.
pub(crate) const TOOL_ERROR_PREFIX: &str = "Tool error: ";

/// Which OpenAI API the tools are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Chat Completions: tools nested under `function`; results as `tool`
    /// messages (text only).
    ChatCompletions,
    /// The Responses API: flat function tools; results as
    /// `function_call_output` items (text and images).
    Responses,
}

/// How tools are offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The API.
    pub api: Api,
    /// Offer each tool in strict mode (Structured Outputs) when its schema
    /// can be made strict; see the [parent module](super).
    pub strict: bool,
}

impl Options {
    /// Chat Completions, not strict.
    pub fn chat() -> Self {
        Options { api: Api::ChatCompletions, strict: false }
    }

    /// The Responses API, not strict.
    pub fn responses() -> Self {
        Options { api: Api::Responses, strict: false }
    }

    /// These options, strict or not.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// The tools as OpenAI function tools, for a request's `tools`.
pub fn tools<'a>(tools: impl IntoIterator<Item = &'a ToolSpec>, options: &Options) -> ProviderTools {
    let mut warnings = Vec::new();
    let tools = offered(tools, &mut warnings);
    let tools = tools.into_iter().map(|tool| definition(tool, options, &mut warnings)).collect();
    ProviderTools { tools, warnings: bounded(warnings) }
}

/// The parameters for the tool `name` whose input schema is `input_schema`
/// (parsed once by the caller), and whether they are strict.
fn parameters(
    name: &str,
    input_schema: Value,
    options: &Options,
    warnings: &mut Vec<String>,
) -> (Value, bool) {
    let schema = top_level(input_schema, Provider::OpenAi, name, warnings);
    if !options.strict {
        return (schema, false);
    }
    match openai_strict(&schema) {
        Ok(strict) => {
            warnings.extend(strict.notes.into_iter().map(|n| format!("{name}: strict mode: {n}")));
            (strict.schema, true)
        }
        Err(why) => {
            warnings.push(format!("{name}: offered without strict mode: {why}"));
            (schema, false)
        }
    }
}

fn definition(tool: &ToolSpec, options: &Options, warnings: &mut Vec<String>) -> Value {
    let (parameters, strict) = parameters(&tool.model_name, tool.input_schema.to_value(), options, warnings);
    let mut function = Map::new();
    if options.api == Api::Responses {
        function.insert("type".into(), json!("function"));
    }
    function.insert("name".into(), json!(tool.model_name));
    if let Some(d) = description(tool) {
        function.insert("description".into(), json!(d));
    }
    function.insert("parameters".into(), parameters);
    // Said whenever strict was asked for, and always on the Responses API,
    // whose default is not the same as Chat Completions'.
    if options.strict || options.api == Api::Responses {
        function.insert("strict".into(), json!(strict));
    }
    match options.api {
        Api::ChatCompletions => json!({"type": "function", "function": function}),
        Api::Responses => Value::Object(function),
    }
}

/// The function calls in `value`, in order: a chat completion (every
/// choice's `message.tool_calls`), a message, a `tool_calls` array, a
/// Responses API response (its `output` items of type `function_call`), an
/// array of such items, or one call. Responses output items of other types
/// (messages, reasoning) are skipped.
pub fn tool_calls(value: &Value) -> Vec<Result<ToolCall, CallError>> {
    let mut items: Vec<&Value> = Vec::new();
    match value {
        Value::Array(list) => items.extend(list),
        Value::Object(m) => {
            if let Some(choices) = m.get("choices").and_then(Value::as_array) {
                for choice in choices {
                    if let Some(calls) = choice.pointer("/message/tool_calls").and_then(Value::as_array) {
                        items.extend(calls);
                    }
                }
            } else if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                items.extend(calls);
            } else if let Some(output) = m.get("output").and_then(Value::as_array) {
                items.extend(output);
            } else {
                items.push(value);
            }
        }
        _ => {}
    }
    items
        .into_iter()
        .filter(|item| match item.get("type").and_then(Value::as_str) {
            // Responses output items that are not calls.
            Some("message" | "reasoning" | "web_search_call" | "file_search_call") => false,
            _ => true,
        })
        .map(parse_call)
        .collect()
}

/// One call: a Chat Completions tool call (`{"id", "type": "function",
/// "function": {"name", "arguments"}}`) or a Responses API `function_call`
/// item (`{"type": "function_call", "call_id", "name", "arguments"}`).
pub fn parse_call(item: &Value) -> Result<ToolCall, CallError> {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => {
            let id = call_id(item.get("call_id"), "call_id")?;
            let name = call_name(item.get("name"), &id)?;
            let arguments = call_arguments(item.get("arguments"), &id)?;
            Ok(ToolCall { id, name, arguments })
        }
        None | Some("function") => {
            let id = call_id(item.get("id"), "id")?;
            let function = item.get("function");
            let name = call_name(function.and_then(|f| f.get("name")), &id)?;
            let arguments = call_arguments(function.and_then(|f| f.get("arguments")), &id)?;
            Ok(ToolCall { id, name, arguments })
        }
        Some(_) => {
            let id = call_id(item.get("id").or(item.get("call_id")), "id").ok();
            Err(bad_call(id, "the item is not a function call"))
        }
    }
}

/// Calls the tool through the host (see [`super::dispatch`]). With strict
/// options, and when the tool was offered strict, a `null` the model sent
/// for a property the tool has as optional is removed first: strict mode
/// made the model send one.
pub async fn dispatch(
    host: &Host,
    call: &ToolCall,
    options: &Options,
    opts: CallOpts,
) -> Result<ToolResult, Error> {
    if !options.strict {
        return super::dispatch(host, call, opts).await;
    }
    let mut call = call.clone();
    if let Ok((_, tool)) = host.catalog().resolve(&call.name) {
        let input_schema = tool.input_schema.to_value();
        let (_, strict) = parameters(&tool.model_name, input_schema.clone(), options, &mut Vec::new());
        if strict {
            strip_optional_nulls(&input_schema, &mut call.arguments);
        }
    }
    super::dispatch(host, &call, opts).await
}

/// Dispatches the call and renders what came back: the result, or the
/// host's failure (an unknown name, a deadline, …) as an error result the
/// model can read.
pub async fn answer(host: &Host, call: &ToolCall, options: &Options, opts: CallOpts) -> Rendered {
    match dispatch(host, call, options, opts).await {
        Ok(result) => self::result(&call.id, &result, options),
        Err(e) => Rendered { value: error(&call.id, &e, options), warnings: Vec::new() },
    }
}

/// The tool result for the call `call_id`: a `tool` message (Chat
/// Completions) or a `function_call_output` item (Responses).
pub fn result(call_id: &str, result: &ToolResult, options: &Options) -> Rendered {
    let mut warnings = Vec::new();
    let images = options.api == Api::Responses;
    let mut parts = parts(result, images, "OpenAI", &mut warnings);
    if result.is_error {
        match parts.iter_mut().find_map(|p| match p {
            Part::Text(t) => Some(t),
            Part::Image { .. } => None,
        }) {
            Some(text) => text.insert_str(0, TOOL_ERROR_PREFIX),
            None => parts.insert(0, Part::Text(TOOL_ERROR_PREFIX.trim_end().to_string())),
        }
    }
    let has_image = parts.iter().any(|p| matches!(p, Part::Image { .. }));
    let text = || {
        parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.as_str()),
                Part::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let value = match options.api {
        Api::ChatCompletions => json!({"role": "tool", "tool_call_id": call_id, "content": text()}),
        Api::Responses if !has_image => {
            json!({"type": "function_call_output", "call_id": call_id, "output": text()})
        }
        Api::Responses => {
            let items: Vec<Value> = parts
                .iter()
                .map(|p| match p {
                    Part::Text(t) => json!({"type": "input_text", "text": t}),
                    Part::Image { media_type, base64 } => {
                        json!({"type": "input_image", "image_url": format!("data:{media_type};base64,{base64}")})
                    }
                })
                .collect();
            json!({"type": "function_call_output", "call_id": call_id, "output": items})
        }
    };
    Rendered { value, warnings: bounded(warnings) }
}

/// A tool result that tells the model why the call could not be made.
pub fn error(call_id: &str, error: &Error, options: &Options) -> Value {
    let text = format!("{TOOL_ERROR_PREFIX}{error}");
    match options.api {
        Api::ChatCompletions => json!({"role": "tool", "tool_call_id": call_id, "content": text}),
        Api::Responses => json!({"type": "function_call_output", "call_id": call_id, "output": text}),
    }
}
