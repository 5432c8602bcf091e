//! Anthropic's Messages API: tool definitions (`{"name", "description",
//! "input_schema"}`), `tool_use` blocks back, `tool_result` blocks out.
//! The rules are in the [parent module](super).

use serde_json::{json, Map, Value};

use super::render::{parts, Part};
use super::schema::{top_level, Provider};
use super::{bounded, call_arguments, call_id, call_name, description, offered};
use super::{CallError, ProviderTools, Rendered, ToolCall};
use crate::catalog::ToolSpec;
use crate::content::ToolResult;
use crate::error::Error;
use crate::host::Host;
use crate::request::CallOpts;

/// The tools as Anthropic tool definitions, for a request's `tools`.
pub fn tools<'a>(tools: impl IntoIterator<Item = &'a ToolSpec>) -> ProviderTools {
    let mut warnings = Vec::new();
    let tools = offered(tools, &mut warnings);
    let tools = tools.into_iter().map(|tool| definition(tool, &mut warnings)).collect();
    ProviderTools { tools, warnings: bounded(warnings) }
}

fn definition(tool: &ToolSpec, warnings: &mut Vec<String>) -> Value {
    let mut def = Map::new();
    def.insert("name".into(), json!(tool.model_name));
    if let Some(d) = description(tool) {
        def.insert("description".into(), json!(d));
    }
    def.insert(
        "input_schema".into(),
        top_level(tool.input_schema.to_value(), Provider::Anthropic, &tool.model_name, warnings),
    );
    Value::Object(def)
}

/// The `tool_use` blocks of a message (or of a Messages API response, or of
/// a content array, or one block), in order. Other blocks (text, thinking)
/// are skipped.
pub fn tool_calls(message: &Value) -> Vec<Result<ToolCall, CallError>> {
    let blocks: Vec<&Value> = match message {
        Value::Array(blocks) => blocks.iter().collect(),
        Value::Object(m) if m.get("type").and_then(Value::as_str) == Some("tool_use") => vec![message],
        Value::Object(m) => {
            m.get("content").and_then(Value::as_array).map(|b| b.iter().collect()).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    blocks
        .into_iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(parse_call)
        .collect()
}

/// One `tool_use` block: `{"type": "tool_use", "id", "name", "input"}`.
pub fn parse_call(block: &Value) -> Result<ToolCall, CallError> {
    let id = call_id(block.get("id"), "id")?;
    let name = call_name(block.get("name"), &id)?;
    let arguments = call_arguments(block.get("input"), &id)?;
    Ok(ToolCall { id, name, arguments })
}

/// Calls the tool through the host (see [`super::dispatch`]).
pub async fn dispatch(host: &Host, call: &ToolCall, opts: CallOpts) -> Result<ToolResult, Error> {
    super::dispatch(host, call, opts).await
}

/// Dispatches the call and renders what came back: the result, or the
/// host's failure (an unknown name, a deadline, …) as an error result the
/// model can read.
pub async fn answer(host: &Host, call: &ToolCall, opts: CallOpts) -> Rendered {
    match dispatch(host, call, opts).await {
        Ok(result) => self::result(&call.id, &result),
        Err(e) => Rendered { value: error(&call.id, &e), warnings: Vec::new() },
    }
}

/// The `tool_result` block for the call `tool_use_id`: text and image
/// blocks, `is_error` when the tool reported failure. Empty texts are left
/// out (the API refuses them); a result with nothing to show has no
/// `content`.
pub fn result(tool_use_id: &str, result: &ToolResult) -> Rendered {
    let mut warnings = Vec::new();
    let blocks: Vec<Value> = parts(result, true, "Anthropic", &mut warnings)
        .into_iter()
        .filter_map(|part| match part {
            Part::Text(text) if text.is_empty() => None,
            Part::Text(text) => Some(json!({"type": "text", "text": text})),
            Part::Image { media_type, base64 } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": base64},
            })),
        })
        .collect();
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert("tool_use_id".into(), json!(tool_use_id));
    if !blocks.is_empty() {
        block.insert("content".into(), Value::Array(blocks));
    }
    if result.is_error {
        block.insert("is_error".into(), json!(true));
    }
    Rendered { value: Value::Object(block), warnings: bounded(warnings) }
}

/// A `tool_result` block with `is_error` that tells the model why the call
/// could not be made.
pub fn error(tool_use_id: &str, error: &Error) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": [{"type": "text", "text": error.to_string()}],
        "is_error": true,
    })
}
