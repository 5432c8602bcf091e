//! The legacy-era handshake: `initialize`, its capabilities and the
//! implementation identities both sides exchange.
//!
//! A capability is an `Option`: `None` means the peer did not declare it,
//! `Some` with every member absent means it declared it with no options.
//! Capabilities whose schema is a bare `object` keep that object as a
//! [`Map`] so that "present" and "absent" stay distinct.

use super::content::Icon;
use super::LATEST_LEGACY_VERSION;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The name, version and presentation of an MCP client or server.
///
/// A server's identity is reported to the host, never trusted or applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// The version.
    pub version: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons to display (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The implementation's website (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and version only.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// What a client offers the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// The client answers `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client answers `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client answers `elicitation/create` (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// The client accepts task-augmented requests (2025-11-25), kept as
    /// the open object the schema describes (`list`, `cancel`,
    /// `requests.sampling.createMessage`, `requests.elicitation.create`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Map<String, Value>>,
    /// Extensions the client supports, by identifier, each with its
    /// settings (SEP-2133), e.g. [`APPS_EXTENSION`] with its `mimeTypes`;
    /// in `initialize` on the legacy era, on every request on 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
}

/// The identifier of the Tasks extension of 2026-07-28 (SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The identifier of the MCP Apps extension (`ext-apps`, 2026-01-26).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML resource.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The identifier of the Skills extension (SEP-2640).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

impl ClientCapabilities {
    /// Whether the client declares the extension `id`.
    pub fn declares_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }
}

/// The `roots` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// The client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The `sampling` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// The client accepts `tools` and `toolChoice` (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Map<String, Value>>,
}

/// The `elicitation` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form-mode elicitation (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<Map<String, Value>>,
    /// URL-mode elicitation (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Map<String, Value>>,
}

impl ElicitationCapability {
    /// Whether form mode is declared. An empty capability (`{}`, the
    /// 2025-06-18 form) means form mode.
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is declared.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// What a server offers the client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// The server sends log messages and accepts `logging/setLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
    /// The server answers `completion/complete` (2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// The server accepts task-augmented requests (2025-11-25), kept as the
    /// open object the schema describes (`list`, `cancel`,
    /// `requests.tools.call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Map<String, Value>>,
    /// The extensions the server declares (SEP-2133), by identifier, with
    /// their settings as sent: in the `initialize` result on the legacy
    /// era, in `server/discover`'s on 2026-07-28. The binding acts on the
    /// ones it implements (tasks, skills) and reports the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
}

impl ServerCapabilities {
    /// Whether the server declares the extension `id` (2026-07-28).
    pub fn declares_extension(&self, id: &str) -> bool {
        self.extensions.as_ref().is_some_and(|e| e.contains_key(id))
    }

    /// Whether the server declared `tasks.requests.tools.call`: it accepts
    /// `tools/call` as a task.
    pub fn supports_task_tool_calls(&self) -> bool {
        self.tasks
            .as_ref()
            .and_then(|t| t.get("requests"))
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"))
            .is_some()
    }

    /// Whether the server declared `tools.listChanged`.
    pub fn tools_list_changed(&self) -> bool {
        self.tools.as_ref().and_then(|t| t.list_changed) == Some(true)
    }

    /// Whether the server declared `prompts.listChanged`.
    pub fn prompts_list_changed(&self) -> bool {
        self.prompts.as_ref().and_then(|p| p.list_changed) == Some(true)
    }

    /// Whether the server declared `resources.listChanged`.
    pub fn resources_list_changed(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.list_changed) == Some(true)
    }

    /// Whether the server declared `resources.subscribe`.
    pub fn resources_subscribe(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.subscribe) == Some(true)
    }
}

/// The `prompts` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// The server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The `resources` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server accepts `resources/subscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The `tools` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// The server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The params of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    /// The newest version the client speaks.
    pub protocol_version: String,
    /// What the client offers.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl InitializeParams {
    /// Params proposing [`LATEST_LEGACY_VERSION`].
    pub(crate) fn new(client_info: Implementation, capabilities: ClientCapabilities) -> Self {
        InitializeParams {
            protocol_version: LATEST_LEGACY_VERSION.to_owned(),
            capabilities,
            client_info,
            meta: None,
        }
    }
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult {
    /// The version the server chose; the client disconnects if it does not
    /// speak it.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, in the server's words. Reported to the host,
    /// never applied by this crate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_request_from_spec() {
        let p: InitializeParams = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "roots": {"listChanged": true},
                "sampling": {},
                "elicitation": {"form": {}, "url": {}},
                "tasks": {"requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}}}
            },
            "clientInfo": {
                "name": "ExampleClient", "title": "Example Client Display Name", "version": "1.0.0",
                "description": "An example MCP client application",
                "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
                "websiteUrl": "https://example.com"
            }
        }))
        .unwrap();
        assert_eq!(p.client_info.website_url.as_deref(), Some("https://example.com"));
        let caps = &p.capabilities;
        assert_eq!(caps.roots.as_ref().unwrap().list_changed, Some(true));
        assert_eq!(caps.sampling, Some(SamplingCapability::default()));
        let elicit = caps.elicitation.as_ref().unwrap();
        assert!(elicit.supports_form() && elicit.supports_url());
        assert!(caps.tasks.as_ref().unwrap()["requests"]["sampling"].get("createMessage").is_some());
    }

    #[test]
    fn initialize_result_from_spec() {
        let r: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "logging": {},
                "prompts": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "tools": {"listChanged": true},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
                "someFutureCapability": {"x": 1}
            },
            "serverInfo": {"name": "ExampleServer", "title": "Example Server Display Name", "version": "1.0.0"},
            "instructions": "Optional instructions for the client"
        }))
        .unwrap();
        let caps = &r.capabilities;
        assert!(caps.logging.is_some());
        assert!(caps.completions.is_none());
        assert!(caps.tools_list_changed() && caps.prompts_list_changed());
        assert!(caps.resources_subscribe() && caps.resources_list_changed());
        assert!(caps.supports_task_tool_calls());
        assert_eq!(r.instructions.as_deref(), Some("Optional instructions for the client"));
    }

    #[test]
    fn present_but_empty_differs_from_absent() {
        let r: ServerCapabilities = serde_json::from_value(json!({"tools": {}})).unwrap();
        assert_eq!(r.tools, Some(ToolsCapability::default()));
        assert!(!r.tools_list_changed());
        assert!(r.prompts.is_none());
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"tools":{}}"#);
        // 2025-06-18: an empty elicitation capability means form mode.
        let e = ElicitationCapability::default();
        assert!(e.supports_form() && !e.supports_url());
        let url_only = ElicitationCapability { form: None, url: Some(Map::new()) };
        assert!(!url_only.supports_form());
    }

    #[test]
    fn minimal_initialize_serializes_compactly() {
        let p =
            InitializeParams::new(Implementation::new("mcp-stack", "0.1.0"), ClientCapabilities::default());
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-stack","version":"0.1.0"}}"#
        );
        // 2024-11-05 shape: no title, no icons.
        let old: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2024-11-05", "capabilities": {},
            "serverInfo": {"name": "old", "version": "0.0.1"}
        }))
        .unwrap();
        assert_eq!(old.server_info, Implementation::new("old", "0.0.1"));
    }
}
