//! Sampling: a server asks the host's model for a completion
//! (`sampling/createMessage`).
//!
//! Since 2025-11-25 a message's `content` may be one block or an array of
//! blocks, and blocks include `tool_use` and `tool_result` for tool loops;
//! [`OneOrMany`] and [`SamplingContent`] read every revision's shape.

use super::content::{type_tag, AudioContent, ContentBlock, ImageContent, Role, TextContent};
use super::open_enum::open_enum;
use super::tasks::TaskMetadata;
use super::tools::Tool;
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// One value or an array of them; written back in the form it was read.
#[derive(Debug, Clone, PartialEq)]
pub enum OneOrMany<T> {
    /// A single value.
    One(T),
    /// An array (possibly of one, or empty).
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The values as a slice.
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t),
            OneOrMany::Many(v) => v,
        }
    }

    /// The values as a vector.
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(v) => v,
        }
    }

    /// Iterates over the values.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether there are none (only an empty array).
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

impl<T> From<T> for OneOrMany<T> {
    fn from(t: T) -> Self {
        OneOrMany::One(t)
    }
}

impl<T> From<Vec<T>> for OneOrMany<T> {
    fn from(v: Vec<T>) -> Self {
        OneOrMany::Many(v)
    }
}

impl<'a, T> IntoIterator for &'a OneOrMany<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Serialize> Serialize for OneOrMany<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            OneOrMany::One(t) => t.serialize(serializer),
            OneOrMany::Many(v) => v.serialize(serializer),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for OneOrMany<T> {
    /// A JSON array is `Many`; anything else is `One`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_array() {
            Vec::<T>::deserialize(value).map(OneOrMany::Many).map_err(de::Error::custom)
        } else {
            T::deserialize(value).map(OneOrMany::One).map_err(de::Error::custom)
        }
    }
}

/// A model's request to call a tool (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Identifies this use; the matching result carries it.
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// The arguments.
    pub input: Map<String, Value>,
    /// Extension metadata; to be preserved in later requests.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of a tool use, handed back to the model (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The [`ToolUseContent::id`] this answers.
    pub tool_use_id: String,
    /// The unstructured result, as in a tool call result. Required by the
    /// schema; read as empty when missing.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed; absent means it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Extension metadata; to be preserved in later requests.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One block of a sampling message.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContent {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(ImageContent),
    /// `audio` (2025-03-26).
    Audio(AudioContent),
    /// `tool_use` (2025-11-25).
    ToolUse(ToolUseContent),
    /// `tool_result` (2025-11-25).
    ToolResult(ToolResultContent),
    /// A block whose `type` this crate does not know, kept verbatim.
    Unknown(Value),
}

impl SamplingContent {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text(TextContent::new(text))
    }

    /// The block's `type` as sent on the wire.
    pub fn kind(&self) -> &str {
        match self {
            SamplingContent::Text(_) => "text",
            SamplingContent::Image(_) => "image",
            SamplingContent::Audio(_) => "audio",
            SamplingContent::ToolUse(_) => "tool_use",
            SamplingContent::ToolResult(_) => "tool_result",
            SamplingContent::Unknown(v) => type_tag(v).unwrap_or(""),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContent::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum SamplingContentRef<'a> {
    Text(&'a TextContent),
    Image(&'a ImageContent),
    Audio(&'a AudioContent),
    ToolUse(&'a ToolUseContent),
    ToolResult(&'a ToolResultContent),
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownSamplingContent {
    Text(TextContent),
    Image(ImageContent),
    Audio(AudioContent),
    ToolUse(ToolUseContent),
    ToolResult(ToolResultContent),
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Text(c) => SamplingContentRef::Text(c).serialize(serializer),
            SamplingContent::Image(c) => SamplingContentRef::Image(c).serialize(serializer),
            SamplingContent::Audio(c) => SamplingContentRef::Audio(c).serialize(serializer),
            SamplingContent::ToolUse(c) => SamplingContentRef::ToolUse(c).serialize(serializer),
            SamplingContent::ToolResult(c) => SamplingContentRef::ToolResult(c).serialize(serializer),
            SamplingContent::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match type_tag(&value) {
            Some("text" | "image" | "audio" | "tool_use" | "tool_result") => {
                Ok(match KnownSamplingContent::deserialize(value).map_err(de::Error::custom)? {
                    KnownSamplingContent::Text(c) => SamplingContent::Text(c),
                    KnownSamplingContent::Image(c) => SamplingContent::Image(c),
                    KnownSamplingContent::Audio(c) => SamplingContent::Audio(c),
                    KnownSamplingContent::ToolUse(c) => SamplingContent::ToolUse(c),
                    KnownSamplingContent::ToolResult(c) => SamplingContent::ToolResult(c),
                })
            }
            Some(_) => Ok(SamplingContent::Unknown(value)),
            None => Err(de::Error::custom("sampling content is not an object with a string \"type\"")),
        }
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One block, or (2025-11-25) an array of blocks.
    pub content: OneOrMany<SamplingContent>,
    /// Extension metadata (2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The server's advisory preferences for choosing a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, to be tried in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// A hint for choosing a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A substring of a model name (or a family the host may map).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

open_enum! {
    /// Which servers' context the server asks to include.
    pub enum IncludeContext {
        /// No context (the default).
        None => "none",
        /// Context from the requesting server (soft-deprecated in 2025-11-25).
        ThisServer => "thisServer",
        /// Context from every server (soft-deprecated in 2025-11-25).
        AllServers => "allServers",
    }
}

open_enum! {
    /// How the model may use the offered tools.
    pub enum ToolChoiceMode {
        /// The model decides (the default).
        Auto => "auto",
        /// The model must use at least one tool.
        Required => "required",
        /// The model must not use tools.
        None => "none",
    }
}

/// How the model uses tools during sampling (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode; absent means auto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// The params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Advisory model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the host may change or drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include; the host may ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to sample; the host may sample fewer.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata to pass through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may use (2025-11-25; needs `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Asks for the request to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The host's answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateMessageResult {
    /// Who speaks (normally the assistant).
    pub role: Role,
    /// What was sampled: one block or an array.
    pub content: OneOrMany<SamplingContent>,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`,
    /// `toolUse` or a provider's own reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn single_block_request_from_2025_06_18() {
        let p: CreateMessageParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8,
                                 "speedPriority": 0.5},
            "systemPrompt": "You are a helpful assistant.",
            "includeContext": "thisServer",
            "maxTokens": 100
        }))
        .unwrap();
        let msg = &p.messages[0];
        assert!(matches!(msg.content, OneOrMany::One(_)));
        assert_eq!(msg.content.len(), 1);
        assert_eq!(msg.content.as_slice()[0].as_text(), Some("What is the capital of France?"));
        assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
        assert_eq!(p.max_tokens, 100);
        // The single form is written back as a single object.
        let back = serde_json::to_value(&p).unwrap();
        assert!(back["messages"][0]["content"].is_object());
        assert!(back.get("tools").is_none() && back.get("temperature").is_none());
    }

    #[test]
    fn tool_loop_with_arrays_from_2025_11_25() {
        let p: CreateMessageParams = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "What's the weather like in Paris and London?"}},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_abc123", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_def456", "name": "get_weather", "input": {"city": "London"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "call_abc123",
                     "content": [{"type": "text", "text": "Weather in Paris: 18°C, partly cloudy"}]},
                    {"type": "tool_result", "toolUseId": "call_def456",
                     "content": [{"type": "text", "text": "Weather in London: 15°C, rainy"}],
                     "structuredContent": {"temp": 15}, "isError": false}
                ]}
            ],
            "tools": [{"name": "get_weather", "description": "Get current weather for a city",
                       "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                                       "required": ["city"]}}],
            "toolChoice": {"mode": "auto"},
            "maxTokens": 1000
        }))
        .unwrap();
        let uses = &p.messages[1].content;
        assert!(matches!(uses, OneOrMany::Many(v) if v.len() == 2));
        let SamplingContent::ToolUse(u) = &uses.as_slice()[1] else { panic!() };
        assert_eq!((u.id.as_str(), u.input["city"].as_str()), ("call_def456", Some("London")));
        let results = &p.messages[2].content;
        let SamplingContent::ToolResult(r) = &results.as_slice()[1] else { panic!() };
        assert_eq!(r.tool_use_id, "call_def456");
        assert_eq!(r.content[0].as_text(), Some("Weather in London: 15°C, rainy"));
        assert_eq!(r.is_error, Some(false));
        assert_eq!(p.tools.as_ref().unwrap()[0].name, "get_weather");
        assert_eq!(p.tool_choice.as_ref().unwrap().mode, Some(ToolChoiceMode::Auto));
        let kinds: Vec<&str> = results.iter().map(SamplingContent::kind).collect();
        assert_eq!(kinds, ["tool_result", "tool_result"]);
        // Arrays stay arrays and tags survive.
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(back["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(back["messages"][2]["content"][1]["toolUseId"], "call_def456");
        assert_eq!(serde_json::from_value::<CreateMessageParams>(back).unwrap(), p);
    }

    #[test]
    fn results_single_and_array() {
        let r: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "The capital of France is Paris."},
            "model": "claude-3-sonnet-20240307",
            "stopReason": "endTurn"
        }))
        .unwrap();
        assert_eq!(r.content.as_slice()[0].as_text(), Some("The capital of France is Paris."));
        let r = CreateMessageResult {
            role: Role::Assistant,
            content: vec![SamplingContent::ToolUse(ToolUseContent {
                id: "call_1".into(),
                name: "get_weather".into(),
                input: Map::new(),
                meta: None,
            })]
            .into(),
            model: "m".into(),
            stop_reason: Some("toolUse".into()),
            meta: None,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"get_weather","input":{}}],"model":"m","stopReason":"toolUse"}"#
        );
        let minimal =
            CreateMessageResult { stop_reason: None, content: SamplingContent::text("hi").into(), ..r };
        assert_eq!(
            serde_json::to_string(&minimal).unwrap(),
            r#"{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}"#
        );
    }

    #[test]
    fn unknown_sampling_block_and_open_enums() {
        let raw = json!({"type": "thinking", "thinking": "hmm"});
        let c: SamplingContent = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(c, SamplingContent::Unknown(raw.clone()));
        assert_eq!(c.kind(), "thinking");
        assert_eq!(serde_json::to_value(&c).unwrap(), raw);
        assert!(serde_json::from_value::<SamplingContent>(json!({"type": "tool_use", "id": "x"})).is_err());
        assert_eq!(IncludeContext::from("everything"), IncludeContext::Unknown("everything".into()));
        assert_eq!(serde_json::to_value(ToolChoiceMode::None).unwrap(), json!("none"));
    }
}
