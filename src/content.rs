//! What results hold once they reach the host: [`Content`], [`ToolResult`],
//! [`PromptResult`], [`ResourceResult`].
//!
//! These are the wire's content blocks decoded (base64 becomes bytes) and
//! bounded. A block the crate does not know, or one a limit refused, becomes
//! [`Content::Unsupported`] with its kind and size, so the host learns that
//! something was there without holding it.
//!
//! # Markers
//!
//! The bounds are applied to the JSON result by
//! [`ResultLimit`](crate::layer::result_limit), a layer that knows nothing of
//! these types, so it leaves two crate-internal marks in the JSON that the
//! conversion here turns into fields:
//!
//! - An item a limit refused is replaced by an object of type
//!   [`UNSUPPORTED_MARKER`]: `{"type": "x-mcp-stack/unsupported", "kind":
//!   "image", "bytes": 12345}`. It becomes [`Content::Unsupported`] with that
//!   kind and size, without another warning (the layer already gave one).
//! - A text the limit cut, and a resource item whose text was cut or whose
//!   blob was dropped, carries `"_meta": {"x-mcp-stack/truncated": true}`
//!   ([`TRUNCATED_MARKER`]). It becomes `truncated: true`. A dropped blob is
//!   left as an empty string so the item stays a valid blob item.
//!
//! The names are in an `x-` namespace no MCP revision uses. The layer removes
//! marks a server sends itself (replacing a server's item of the marker type
//! with a marker of its own, and deleting a server's truncation flag, each
//! with a warning), so a mark that reaches the conversion was made by this
//! crate: a server can neither hide content behind one nor claim a cut that
//! did not happen. A stack built without that layer trusts whatever marks
//! arrive; they can only ever make content *less* usable.

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use crate::protocol::content::{ContentBlock, ResourceContents};

/// The kind name of text content.
pub const KIND_TEXT: &str = "text";
/// The kind name of image content.
pub const KIND_IMAGE: &str = "image";
/// The kind name of audio content.
pub const KIND_AUDIO: &str = "audio";
/// The kind name of an embedded resource.
pub const KIND_RESOURCE: &str = "resource";
/// The kind name of a resource link.
pub const KIND_RESOURCE_LINK: &str = "resource_link";

/// The `type` of the crate-internal item that stands in for content a limit
/// refused: `{"type": "x-mcp-stack/unsupported", "kind": KIND, "bytes": N}`.
/// See [the module docs](self#markers).
pub const UNSUPPORTED_MARKER: &str = "x-mcp-stack/unsupported";

/// The `_meta` key, set to `true`, of a text or resource item a limit cut.
/// See [the module docs](self#markers).
pub const TRUNCATED_MARKER: &str = "x-mcp-stack/truncated";

/// The key, in a tool result's own `_meta`, that says its structured content
/// was dropped by a limit (the value is its size in bytes), so that output
/// validation does not mistake a withheld result for a missing one.
pub const STRUCTURED_DROPPED_MARKER: &str = "x-mcp-stack/structured-dropped";

/// The longest `kind` kept from an unsupported item, in bytes.
const MAX_KIND_BYTES: usize = 64;

/// One piece of a result.
///
/// Serialized tagged with its kind in `type` (`text`, `image`, `audio`,
/// `resource`, `resource_link`, `unsupported`), its fields in camelCase, and
/// bytes as base64 as on the wire: `{"type": "image", "data": "iVBO…",
/// "mimeType": "image/png"}`. A `resource` is its [`ResourceContent`]'s
/// fields with the tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Content {
    /// Text, possibly cut at a UTF-8 boundary by a limit.
    Text {
        /// The text.
        text: String,
        /// Whether a limit cut it.
        truncated: bool,
    },
    /// An image, decoded.
    Image {
        /// The bytes.
        #[serde(serialize_with = "crate::serialize::base64")]
        data: Vec<u8>,
        /// Its MIME type, as the server said.
        mime_type: String,
    },
    /// Audio, decoded.
    Audio {
        /// The bytes.
        #[serde(serialize_with = "crate::serialize::base64")]
        data: Vec<u8>,
        /// Its MIME type, as the server said.
        mime_type: String,
    },
    /// A resource's contents, embedded in the result.
    Resource(ResourceContent),
    /// A link to a resource the host may read. The URI is an opaque
    /// identifier, never a host path.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// The resource's name.
        name: String,
        /// Its MIME type, if the server said.
        mime_type: Option<String>,
        /// Its description, if the server gave one.
        description: Option<String>,
    },
    /// Content that was not kept: an unknown kind, undecodable data, or an
    /// item a limit refused.
    Unsupported {
        /// The content kind that was refused.
        kind: String,
        /// The size of the refused payload: exact for an item dropped on a
        /// size bound, a diagnostic lower bound otherwise.
        bytes: usize,
    },
}

/// One item of a resource's contents. The URI is an opaque identifier, never
/// resolved as a host path.
///
/// Serialized with camelCase names; like the wire's text or blob item, it
/// has `text` or `data` (base64), whichever it holds, and neither when a
/// limit dropped the bytes: `{"uri": "demo://readme", "mimeType":
/// "text/plain", "text": "…", "truncated": false}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContent {
    /// The item's URI.
    pub uri: String,
    /// Its MIME type, if the server said.
    pub mime_type: Option<String>,
    /// The text, for a text item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The bytes, for a binary item.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::serialize::opt_base64")]
    pub data: Option<Vec<u8>>,
    /// Whether a limit cut the text, or dropped the bytes.
    pub truncated: bool,
}

/// The outcome of a tool call.
///
/// Serialized with the wire's names: `{"isError": false, "content": [...],
/// "structuredContent": null, "warnings": []}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The tool itself reported failure. Its content says why.
    pub is_error: bool,
    /// The unstructured result.
    pub content: Vec<Content>,
    /// The structured result, when the server sent one within the bound.
    #[serde(rename = "structuredContent")]
    pub structured: Option<Value>,
    /// Defects tolerated while converting the result.
    pub warnings: Vec<String>,
}

/// A prompt, rendered by the server.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResult {
    /// The server's description.
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// Defects tolerated while converting.
    pub warnings: Vec<String>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The content.
    pub content: Content,
}

/// A resource's contents, as read.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceResult {
    /// The items.
    pub contents: Vec<ResourceContent>,
    /// Defects tolerated while converting.
    pub warnings: Vec<String>,
}

pub(crate) fn decode_base64(data: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()
}

impl Content {
    /// Converts one wire block. Undecodable data becomes `Unsupported`; the
    /// crate's [markers](self#markers) become `Unsupported` and `truncated`.
    pub fn from_block(block: ContentBlock, warnings: &mut Vec<String>) -> Content {
        match block {
            ContentBlock::Text(t) => {
                Content::Text { truncated: is_marked_truncated(t.meta.as_ref()), text: t.text }
            }
            ContentBlock::Image(i) => match decode_base64(&i.data) {
                Some(data) => Content::Image { data, mime_type: i.mime_type },
                None => {
                    warnings.push("dropped an image whose data is not base64".into());
                    Content::Unsupported { kind: KIND_IMAGE.into(), bytes: i.data.len() }
                }
            },
            ContentBlock::Audio(a) => match decode_base64(&a.data) {
                Some(data) => Content::Audio { data, mime_type: a.mime_type },
                None => {
                    warnings.push("dropped audio whose data is not base64".into());
                    Content::Unsupported { kind: KIND_AUDIO.into(), bytes: a.data.len() }
                }
            },
            ContentBlock::Resource(r) => Content::Resource(ResourceContent::from_wire(r.resource, warnings)),
            ContentBlock::ResourceLink(l) => Content::ResourceLink {
                uri: l.uri,
                name: l.name,
                mime_type: l.mime_type,
                description: l.description,
            },
            ContentBlock::Unknown(raw)
                if raw.get("type").and_then(Value::as_str) == Some(UNSUPPORTED_MARKER) =>
            {
                let kind = raw.get("kind").and_then(Value::as_str).unwrap_or("unknown");
                let bytes = raw.get("bytes").and_then(Value::as_u64).unwrap_or(0);
                Content::Unsupported {
                    kind: crate::error::normalize_message(kind, MAX_KIND_BYTES),
                    bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
                }
            }
            ContentBlock::Unknown(raw) => {
                let kind = raw.get("type").and_then(Value::as_str).unwrap_or("unknown");
                let kind = crate::error::normalize_message(kind, MAX_KIND_BYTES);
                warnings.push(format!("dropped content of unknown kind {kind:?}"));
                Content::Unsupported { kind, bytes: raw.to_string().len() }
            }
        }
    }

    /// The text, for text content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

impl ResourceContent {
    /// Converts one wire item; undecodable bytes are dropped with a warning.
    /// An item the crate [marked](self#markers) truncated keeps its (cut)
    /// text, or loses its bytes, with `truncated` set.
    pub fn from_wire(contents: ResourceContents, warnings: &mut Vec<String>) -> ResourceContent {
        match contents {
            ResourceContents::Text(t) => ResourceContent {
                truncated: is_marked_truncated(t.meta.as_ref()),
                uri: t.uri,
                mime_type: t.mime_type,
                text: Some(t.text),
                data: None,
            },
            ResourceContents::Blob(b) if is_marked_truncated(b.meta.as_ref()) => ResourceContent {
                uri: b.uri,
                mime_type: b.mime_type,
                text: None,
                data: None,
                truncated: true,
            },
            ResourceContents::Blob(b) => {
                let data = decode_base64(&b.blob);
                if data.is_none() {
                    warnings.push(format!("dropped the bytes of {:?}: not base64", b.uri));
                }
                ResourceContent {
                    truncated: data.is_none(),
                    uri: b.uri,
                    mime_type: b.mime_type,
                    text: None,
                    data,
                }
            }
        }
    }
}

/// Whether an item's `_meta` carries the crate's truncation marker.
fn is_marked_truncated(meta: Option<&serde_json::Map<String, Value>>) -> bool {
    meta.and_then(|m| m.get(TRUNCATED_MARKER)).and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(v: Value) -> ContentBlock {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_unsupported_marker_becomes_unsupported_without_a_new_warning() {
        let mut warnings = Vec::new();
        let c = Content::from_block(
            block(json!({"type": UNSUPPORTED_MARKER, "kind": "image", "bytes": 12345})),
            &mut warnings,
        );
        assert_eq!(c, Content::Unsupported { kind: "image".into(), bytes: 12345 });
        assert!(warnings.is_empty());
    }

    #[test]
    fn the_truncated_marker_sets_truncated_on_text_and_resources() {
        let mut warnings = Vec::new();
        let c = Content::from_block(
            block(json!({"type": "text", "text": "ab", "_meta": {TRUNCATED_MARKER: true}})),
            &mut warnings,
        );
        assert_eq!(c, Content::Text { text: "ab".into(), truncated: true });
        let c = Content::from_block(block(json!({"type": "text", "text": "ab"})), &mut warnings);
        assert_eq!(c, Content::Text { text: "ab".into(), truncated: false });

        let text: ResourceContents =
            serde_json::from_value(json!({"uri": "x:a", "text": "cut", "_meta": {TRUNCATED_MARKER: true}}))
                .unwrap();
        let r = ResourceContent::from_wire(text, &mut warnings);
        assert!(r.truncated);
        assert_eq!(r.text.as_deref(), Some("cut"));
        let blob: ResourceContents =
            serde_json::from_value(json!({"uri": "x:b", "blob": "", "_meta": {TRUNCATED_MARKER: true}}))
                .unwrap();
        let r = ResourceContent::from_wire(blob, &mut warnings);
        assert!(r.truncated);
        assert_eq!(r.data, None);
        assert!(warnings.is_empty());
    }
}
