//! Tools: `tools/list` and `tools/call`.
//!
//! Input and output schemas stay raw [`Value`]s: they are documents to pass
//! on and to digest, not types to interpret.

use super::content::{ContentBlock, Icon};
use super::open_enum::open_enum;
use super::pagination::Cursor;
use super::tasks::TaskMetadata;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's raw name: the server's identifier, sent back verbatim.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// The JSON Schema of `structuredContent` in results (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints about the tool's behaviour; never to be trusted from an
    /// untrusted server (2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// How the tool may be executed (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons to display (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Tool {
    /// The name to show a person: `title`, then `annotations.title`, then
    /// `name`, the precedence the specification gives.
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }

    /// How the tool supports tasks; `TaskSupport::Forbidden` when it does
    /// not say.
    pub fn task_support(&self) -> TaskSupport {
        self.execution.as_ref().and_then(|e| e.task_support.clone()).unwrap_or(TaskSupport::Forbidden)
    }
}

/// Hints describing a tool. All are hints, not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true; meaningful when not
    /// read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool can run as a task; absent means forbidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

open_enum! {
    /// Whether a tool can be called as a task.
    pub enum TaskSupport {
        /// Never as a task (the default).
        Forbidden => "forbidden",
        /// Either way.
        Optional => "optional",
        /// Only as a task.
        Required => "required",
    }
}

/// The result of `tools/list`: one page of tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListToolsResult {
    /// This page's tools.
    pub tools: Vec<Tool>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallToolParams {
    /// The tool's raw name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Request metadata (the progress token goes here).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Asks for the call to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
}

impl CallToolParams {
    /// A call of `name` with `arguments`.
    pub(crate) fn new(name: impl Into<String>, arguments: Option<Map<String, Value>>) -> Self {
        CallToolParams { name: name.into(), arguments, meta: None, task: None }
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallToolResult {
    /// The unstructured result. Required by the schema; read as empty when
    /// missing.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The structured result, which should match the tool's output schema
    /// (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed; absent means it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// Whether the tool reported a failure.
    pub(crate) fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::content::ResourceContents;
    use serde_json::json;

    #[test]
    fn tool_with_output_schema_annotations_and_execution() {
        let list: ListToolsResult = serde_json::from_value(json!({
            "tools": [{
                "name": "get_weather_data",
                "title": "Weather Data Retriever",
                "description": "Get current weather data for a location",
                "inputSchema": {
                    "type": "object",
                    "properties": {"location": {"type": "string", "description": "City name or zip code"}},
                    "required": ["location"]
                },
                "outputSchema": {
                    "type": "object",
                    "properties": {
                        "temperature": {"type": "number", "description": "Temperature in celsius"},
                        "conditions": {"type": "string"},
                        "humidity": {"type": "number"}
                    },
                    "required": ["temperature", "conditions", "humidity"]
                },
                "annotations": {"title": "Weather", "readOnlyHint": true, "openWorldHint": true},
                "execution": {"taskSupport": "optional"},
                "icons": [{"src": "https://example.com/weather.svg", "mimeType": "image/svg+xml", "sizes": ["any"]}],
                "_meta": {"agentfootprint": {"resultKind": "weather"}},
                "futureField": {"anything": 1}
            }],
            "nextCursor": "next-page-cursor"
        }))
        .unwrap();
        let tool = &list.tools[0];
        assert_eq!(tool.display_name(), "Weather Data Retriever");
        assert_eq!(tool.input_schema["required"][0], "location");
        assert_eq!(tool.output_schema.as_ref().unwrap()["required"][2], "humidity");
        let ann = tool.annotations.as_ref().unwrap();
        assert_eq!(ann.read_only_hint, Some(true));
        assert_eq!(ann.destructive_hint, None);
        assert_eq!(tool.task_support(), TaskSupport::Optional);
        assert_eq!(tool.meta.as_ref().unwrap()["agentfootprint"]["resultKind"], "weather");
        assert_eq!(list.next_cursor.as_deref(), Some("next-page-cursor"));
    }

    #[test]
    fn minimal_tool_round_trips_without_absent_fields() {
        let raw = json!({"name": "echo", "inputSchema": {"type": "object"}});
        let tool: Tool = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(tool.display_name(), "echo");
        assert_eq!(tool.task_support(), TaskSupport::Forbidden);
        assert_eq!(serde_json::to_value(&tool).unwrap(), raw);
    }

    #[test]
    fn unknown_task_support_is_kept() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "preferred"}
        }))
        .unwrap();
        assert_eq!(tool.task_support(), TaskSupport::Unknown("preferred".into()));
        assert_eq!(serde_json::to_value(&tool).unwrap()["execution"]["taskSupport"], "preferred");
    }

    #[test]
    fn call_result_with_every_content_kind() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "{\"temperature\": 22.5}"},
                {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUg==", "mimeType": "image/png",
                 "annotations": {"audience": ["user"], "priority": 0.9}},
                {"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs",
                 "description": "Primary application entry point", "mimeType": "text/x-rust"},
                {"type": "resource", "resource": {"uri": "file:///project/src/main.rs",
                 "mimeType": "text/x-rust", "text": "fn main() {}"}, "annotations": {"priority": 0.7}},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
            ],
            "structuredContent": {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65},
            "isError": false
        }))
        .unwrap();
        let kinds: Vec<&str> = result.content.iter().map(ContentBlock::kind).collect();
        assert_eq!(kinds, ["text", "image", "resource_link", "resource", "audio"]);
        let ContentBlock::Image(img) = &result.content[1] else { panic!() };
        assert_eq!(img.mime_type, "image/png");
        let ContentBlock::ResourceLink(link) = &result.content[2] else { panic!() };
        assert_eq!(link.name, "main.rs");
        let ContentBlock::Resource(embedded) = &result.content[3] else { panic!() };
        assert!(matches!(&embedded.resource, ResourceContents::Text(t) if t.text == "fn main() {}"));
        assert_eq!(result.structured_content.as_ref().unwrap()["humidity"], 65);
        assert!(!result.is_error());
        // Every block re-serializes with its tag.
        let back = serde_json::to_value(&result).unwrap();
        assert_eq!(back["content"][2]["type"], "resource_link");
        assert_eq!(back["content"][3]["resource"]["text"], "fn main() {}");
        assert_eq!(serde_json::from_value::<CallToolResult>(back).unwrap(), result);
    }

    #[test]
    fn error_result_and_unknown_block() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "Invalid departure date"},
                        {"type": "chart", "series": [1, 2]}],
            "isError": true
        }))
        .unwrap();
        assert!(result.is_error());
        assert!(matches!(&result.content[1], ContentBlock::Unknown(v) if v["series"][1] == 2));
        let empty: CallToolResult = serde_json::from_value(json!({})).unwrap();
        assert!(empty.content.is_empty());
        assert_eq!(serde_json::to_string(&empty).unwrap(), r#"{"content":[]}"#);
    }

    #[test]
    fn call_params_serialize_only_what_is_set() {
        let mut args = Map::new();
        args.insert("location".into(), json!("New York"));
        let p = CallToolParams::new("get_weather", Some(args));
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"name":"get_weather","arguments":{"location":"New York"}}"#
        );
        let p = CallToolParams {
            task: Some(TaskMetadata { ttl: Some(60000) }),
            ..CallToolParams::new("t", None)
        };
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"name":"t","task":{"ttl":60000}}"#);
    }
}
