//! Resources: `resources/list`, `resources/templates/list`, `resources/read`,
//! subscriptions and their notifications.
//!
//! A resource URI is an opaque identifier chosen by the server: these types
//! carry it verbatim and never resolve it as a host path.

use super::content::{Annotations, Icon, ResourceContents};
use super::pagination::Cursor;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A resource the server can read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// The resource's programmatic name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The raw size in bytes (before base64), if known (2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons to display (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Resource {
    /// A resource with only its URI and name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// The template's programmatic name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the template is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type shared by every matching resource, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons to display (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `resources/list`: one page of resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListResourcesResult {
    /// This page's resources.
    pub resources: Vec<Resource>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `resources/templates/list`: one page of templates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListResourceTemplatesResult {
    /// This page's templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadResourceParams {
    /// The URI to read.
    pub uri: String,
    /// Request metadata (progress token, modern-era fields).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadResourceResult {
    /// The contents: one or more (a directory may yield several).
    pub contents: Vec<ResourceContents>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `resources/subscribe` and `resources/unsubscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubscribeParams {
    /// The URI to (un)subscribe.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `resources/unsubscribe`: the same shape as
/// [`SubscribeParams`].
pub(crate) type UnsubscribeParams = SubscribeParams;

/// The params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourceUpdatedParams {
    /// The URI that changed; possibly a sub-resource of the one subscribed.
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_resources_page_from_spec() {
        let page: ListResourcesResult = serde_json::from_value(json!({
            "resources": [{
                "uri": "file:///project/src/main.rs",
                "name": "main.rs",
                "title": "Rust Software Application Main File",
                "description": "Primary application entry point",
                "mimeType": "text/x-rust",
                "size": 1024,
                "annotations": {"audience": ["assistant"], "priority": 0.8},
                "icons": [{"src": "https://example.com/rust.png", "mimeType": "image/png", "sizes": ["48x48"]}]
            }],
            "nextCursor": "next-page-cursor"
        }))
        .unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some("next-page-cursor"));
        let r = &page.resources[0];
        assert_eq!(r.uri, "file:///project/src/main.rs");
        assert_eq!(r.size, Some(1024));
        assert_eq!(r.icons.as_ref().unwrap()[0].src, "https://example.com/rust.png");
    }

    #[test]
    fn templates_and_read_result() {
        let t: ListResourceTemplatesResult = serde_json::from_value(json!({
            "resourceTemplates": [{
                "uriTemplate": "file:///{path}", "name": "Project Files",
                "title": "📁 Project Files", "mimeType": "application/octet-stream"
            }]
        }))
        .unwrap();
        assert_eq!(t.resource_templates[0].uri_template, "file:///{path}");
        assert!(t.next_cursor.is_none());

        let read: ReadResourceResult = serde_json::from_value(json!({
            "contents": [
                {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust",
                 "text": "fn main() {\n    println!(\"Hello world!\");\n}"},
                {"uri": "file:///project/logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
            ]
        }))
        .unwrap();
        assert!(matches!(read.contents[0], ResourceContents::Text(_)));
        assert!(matches!(read.contents[1], ResourceContents::Blob(_)));
    }

    #[test]
    fn absent_optionals_are_not_emitted() {
        let r = Resource::new("demo://a", "a");
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"uri":"demo://a","name":"a"}"#);
        let p = SubscribeParams { uri: "demo://a".into(), meta: None };
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"uri":"demo://a"}"#);
        let back: Resource = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
