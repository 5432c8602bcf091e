//! Tools for LLM providers: a catalog's tools as OpenAI, Anthropic and
//! Gemini tool definitions, a provider's tool call dispatched to [`Host::call_tool`], and
//! a [`ToolResult`] as that provider's tool-result content.
//!
//! Everything here works on [`ToolSpec`]s, so the tools can come from one
//! binding's [`Catalog`](crate::catalog::Catalog) (`&catalog.tools`) or from
//! a host's merged view ([`HostCatalog::tools`]). Tools are named by their
//! model name, which already fits both providers' name rule
//! (`^[a-zA-Z0-9_-]{1,64}$`); a call comes back by that name and is resolved
//! only through the host's catalogs.
//!
//! ```
//! # #[cfg(feature = "demo")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! use mcp_stack::providers::{anthropic, openai};
//! use mcp_stack::{host::Host, CallOpts, Definition};
//! use serde_json::json;
//!
//! let host = Host::new();
//! host.add_all([Definition::new("demo", mcp_stack::demo::factory())]).await;
//! let catalog = host.catalog();
//! let for_claude = anthropic::tools(catalog.tools()); // `tools` of a Messages request
//! let for_gpt = openai::tools(catalog.tools(), &openai::Options::chat()); // `tools` of a chat completion
//! assert_eq!(for_claude.tools.len(), for_gpt.tools.len());
//!
//! // What the model answered, as the Messages API returns it:
//! let message = json!({"role": "assistant", "content": [
//!     {"type": "tool_use", "id": "toolu_01", "name": "mcp__demo__echo", "input": {"message": "hi"}}
//! ]});
//! for call in anthropic::tool_calls(&message) {
//!     let call = call.map_err(|bad| bad.error)?;
//!     let answer = anthropic::answer(&host, &call, CallOpts::default()).await;
//!     assert_eq!(answer.value["content"][0]["text"], "hi"); // a `tool_result` block
//! }
//! host.close().await;
//! # Ok(()) }
//! # #[cfg(not(feature = "demo"))]
//! # fn main() {}
//! ```
//!
//! # Schemas: what each provider refuses, and what is done about it
//!
//! An MCP input schema is any JSON Schema object; the providers take less.
//! Nothing is changed silently: every rewrite is a line in
//! [`ProviderTools::warnings`], naming the tool.
//!
//! | rule (as the provider documents it) | OpenAI | Anthropic | done |
//! | --- | --- | --- | --- |
//! | the top level is `"type": "object"` | yes | yes | set, with a warning |
//! | no `anyOf`, `oneOf`, `allOf` at the top level | yes (also `enum`, `not`) | yes | dropped: the server still validates |
//! | `properties` present | yes | no | an empty one added |
//!
//! Gemini takes an OpenAPI subset rather than JSON Schema: its rewrites
//! (`$ref` inlined, type lists as `nullable` or `anyOf`, `const` as a
//! one-value `enum`, unsupported keywords dropped) and the tools it cannot
//! take are in [`gemini`].
//!
//! OpenAI's **strict mode** ([`openai::Options::strict`], Structured
//! Outputs) takes a subset of JSON Schema. Per tool, the schema is rewritten
//! when that can be done without the model losing a meaning:
//! `additionalProperties: false` on every object; every property required,
//! an optional one made nullable (and a `null` the model sends for it is
//! removed again before the call, in [`openai::dispatch`]); `oneOf` as
//! `anyOf`; keywords strict mode does not support that only narrow what is
//! valid (`minLength`, `maxLength`, `uniqueItems`, `minProperties`, unknown
//! `format`s, …) dropped. A tool that cannot be made strict (`allOf`, `not`,
//! `if`, `$ref`, `patternProperties`, tuples, additional properties allowed,
//! an optional property inside `anyOf`, over 10 levels, 5000 properties or
//! 1000 enum values) is offered with `strict: false`, with a warning saying
//! why.
//!
//! # Results
//!
//! | content | Anthropic `tool_result` | OpenAI chat `tool` message | OpenAI Responses `function_call_output` |
//! | --- | --- | --- | --- |
//! | text | a text block | text (parts joined by newlines) | text, or an `input_text` item |
//! | PNG, JPEG, GIF, WebP image | an image block (base64) | a placeholder text (tool messages take text only) | an `input_image` item (data URL) |
//! | other images, audio, binary resources, content a limit refused | a placeholder text | the same | the same |
//! | a text resource | text, after a `[resource URI]` line | the same | the same |
//! | a resource link | a `[resource link: …]` text | the same | the same |
//! | `structuredContent` | compact JSON text, unless a text block already is that JSON | the same | the same |
//! | `isError` | `"is_error": true` | the text starts with `"Tool error: "` | the same |
//!
//! A text the host cut ends with `[truncated by the host]`. Each placeholder
//! and each cut is a line in [`Rendered::warnings`].
//!
//! # Calls from a model are untrusted
//!
//! A call's id must be a string of 1 to 256 bytes without
//! control characters; its arguments a JSON object (OpenAI's JSON string is
//! parsed, at most 1 MiB; an empty string is `{}`).
//! Anything else is `invalid_config`, with the id when it could be read
//! ([`CallError`]), so that the host can still answer that call. The name
//! is resolved by the host, which refuses an unknown name with `not_found`
//! before any I/O (see [`crate::host`]). [`anthropic::answer`] and
//! [`openai::answer`] render such a failure as an error result the model
//! can read, so that one bad call does not end the conversation.
//!
//! [`Host::call_tool`]: crate::host::Host::call_tool
//! [`HostCatalog::tools`]: crate::host::HostCatalog::tools

pub mod anthropic;
pub mod budget;
pub mod exposure;
pub mod gemini;
pub mod openai;
mod render;
mod schema;

use serde_json::Value;

use crate::catalog::names::is_valid_model_name;
use crate::catalog::ToolSpec;
use crate::content::ToolResult;
use crate::error::{normalize_message, Error, FailureClass};
use crate::host::Host;
use crate::request::CallOpts;

/// The longest arguments string parsed, in bytes.
pub(crate) const MAX_ARGUMENTS_BYTES: usize = 1 << 20;
/// The longest tool-call id accepted, in bytes.
pub(crate) const MAX_CALL_ID_BYTES: usize = 256;
/// The most warnings one conversion keeps.
pub(crate) const MAX_CONVERSION_WARNINGS: usize = 1024;

/// A catalog's tools in one provider's form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProviderTools {
    /// The tool definitions, in catalog order: what goes in the request's
    /// `tools`.
    pub tools: Vec<Value>,
    /// What was dropped or rewritten on the way, one line each, naming the
    /// tool. Bounded by 1024.
    pub warnings: Vec<String>,
}

/// A tool call a model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id for the call, which its result must carry back.
    pub id: String,
    /// The tool's model name.
    pub name: String,
    /// The arguments: a JSON object.
    pub arguments: Value,
}

/// A tool call that could not be read.
#[derive(Debug)]
pub struct CallError {
    /// The call's id, when it could be read: the host can still answer it.
    pub id: Option<String>,
    /// Why (`invalid_config`).
    pub error: Error,
}

/// A tool result in one provider's form.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The provider's tool-result value (a content block or a message).
    pub value: Value,
    /// What could not be shown as it was (images a provider does not take,
    /// audio, cut texts), one line each.
    pub warnings: Vec<String>,
}

/// Calls the tool a model named, through the host (see
/// [`Host::call_tool`](crate::host::Host::call_tool)).
pub async fn dispatch(host: &Host, call: &ToolCall, opts: CallOpts) -> Result<ToolResult, Error> {
    host.call_tool(&call.name, call.arguments.clone(), opts).await
}

/// The tools to offer, each visible to a model (never a tool an Apps
/// server marked for its app only) and with a usable model name; a
/// warning for any other (only a hand-built `ToolSpec` can lack one).
fn offered<'a>(
    tools: impl IntoIterator<Item = &'a ToolSpec>,
    warnings: &mut Vec<String>,
) -> Vec<&'a ToolSpec> {
    let mut out = Vec::new();
    for tool in tools {
        if !tool.visible_to_model() {
            warnings.push(format!(
                "left out the tool {:?}: its server shows it to its app only",
                normalize_message(&tool.raw_name, 64)
            ));
        } else if is_valid_model_name(&tool.model_name) {
            out.push(tool);
        } else {
            warnings.push(format!(
                "left out the tool {:?}: its model name is not a provider tool name",
                normalize_message(&tool.raw_name, 64)
            ));
        }
    }
    out
}

/// What the model is told a tool does: its description, else its title.
fn description(tool: &ToolSpec) -> Option<&str> {
    tool.description.as_deref().or(tool.title.as_deref()).filter(|d| !d.is_empty())
}

fn bounded(mut warnings: Vec<String>) -> Vec<String> {
    if warnings.len() > MAX_CONVERSION_WARNINGS {
        let more = warnings.len() - (MAX_CONVERSION_WARNINGS - 1);
        warnings.truncate(MAX_CONVERSION_WARNINGS - 1);
        warnings.push(format!("{more} further warnings were not kept"));
    }
    warnings.into_iter().map(|w| normalize_message(&w, 512)).collect()
}

fn bad_call(id: Option<String>, message: impl AsRef<str>) -> CallError {
    let error = Error::new(FailureClass::InvalidConfig, message).with_op("tool_call");
    CallError { id, error }
}

/// A call id: a string of 1 to [`MAX_CALL_ID_BYTES`] bytes, no control
/// characters.
fn call_id(value: Option<&Value>, field: &str) -> Result<String, CallError> {
    match value.and_then(Value::as_str) {
        Some(id) if !id.is_empty() && id.len() <= MAX_CALL_ID_BYTES && !id.chars().any(char::is_control) => {
            Ok(id.to_string())
        }
        Some(_) => {
            Err(bad_call(None, format!("the call's {field} is empty, too long or holds control characters")))
        }
        None => Err(bad_call(None, format!("the call has no string {field}"))),
    }
}

fn call_name(value: Option<&Value>, id: &str) -> Result<String, CallError> {
    match value.and_then(Value::as_str) {
        Some(name) if name.len() <= MAX_ARGUMENTS_BYTES => Ok(name.to_string()),
        _ => Err(bad_call(Some(id.to_string()), "the call has no string name")),
    }
}

/// Arguments as a JSON object: an object as it is, a JSON string parsed
/// (at most [`MAX_ARGUMENTS_BYTES`]; empty means `{}`), null as `{}`.
fn call_arguments(value: Option<&Value>, id: &str) -> Result<Value, CallError> {
    let bad = |why: &str| bad_call(Some(id.to_string()), format!("the call's arguments {why}"));
    let parsed = match value {
        None | Some(Value::Null) => return Ok(Value::Object(Default::default())),
        Some(Value::Object(_)) => return Ok(value.cloned().expect("present")),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(Value::Object(Default::default())),
        Some(Value::String(text)) if text.len() > MAX_ARGUMENTS_BYTES => {
            return Err(bad(&format!("are over {MAX_ARGUMENTS_BYTES} bytes")))
        }
        Some(Value::String(text)) => {
            serde_json::from_str::<Value>(text).map_err(|_| bad("are not valid JSON"))?
        }
        Some(_) => return Err(bad("are neither a JSON object nor a JSON string")),
    };
    match parsed {
        Value::Object(_) => Ok(parsed),
        Value::Null => Ok(Value::Object(Default::default())),
        _ => Err(bad("are not a JSON object")),
    }
}
