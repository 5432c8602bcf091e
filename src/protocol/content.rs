//! Content blocks: what tool results, prompt messages and embedded resources
//! carry, with the annotations and icons they share.
//!
//! A [`ContentBlock`] is tagged by its `type`. A type this crate does not know
//! (a newer revision's, or a vendor's) is kept whole as
//! [`ContentBlock::Unknown`] rather than failing the message that carries it;
//! a known type with malformed fields is still an error.

use super::open_enum::open_enum;
use super::resources::Resource;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The sender or recipient of messages and data in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (or the host acting for them).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The role as it appears on the wire: `"user"` or `"assistant"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Hints about how a client should use or display an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important the object is, from 0 (optional) to 1 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the object was last modified, as an ISO 8601 string (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

open_enum! {
    /// The background an [`Icon`] is designed for.
    pub enum IconTheme {
        /// A light background.
        Light => "light",
        /// A dark background.
        Dark => "dark",
    }
}

/// An icon a client may display (2025-11-25).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An HTTP(S) URL or a `data:` URI. Not fetched by this crate.
    pub src: String,
    /// A MIME type overriding the source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes the icon suits, as `"48x48"` or `"any"`. A single
    /// space-separated string (an earlier draft's form) is accepted too.
    #[serde(default, deserialize_with = "sizes", skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The background the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

fn sizes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Sizes {
        List(Vec<String>),
        Joined(String),
    }
    Ok(match Option::<Sizes>::deserialize(deserializer)? {
        None => None,
        Some(Sizes::List(list)) => Some(list),
        Some(Sizes::Joined(s)) => Some(s.split_whitespace().map(str::to_owned).collect()),
    })
}

/// Text for or from a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl TextContent {
    /// Plain text without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { text: text.into(), annotations: None, meta: None }
    }
}

/// An image for or from a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The image, base64-encoded (kept encoded: decoding is the consumer's
    /// choice, and bounded elsewhere).
    pub data: String,
    /// The image's MIME type.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Audio for or from a model (2025-03-26).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The audio, base64-encoded.
    pub data: String,
    /// The audio's MIME type.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource's contents embedded in a result or prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The contents of one resource or sub-resource: text or a binary blob.
///
/// Told apart by which of `text` and `blob` is present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The URI of the resource.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, if known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }
}

/// A resource's contents as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI of the resource. An opaque identifier, never a host path.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource's contents as a binary blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI of the resource. An opaque identifier, never a host path.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The bytes, base64-encoded.
    pub blob: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One block of content in a tool result or prompt message.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(ImageContent),
    /// `audio` (2025-03-26).
    Audio(AudioContent),
    /// `resource_link`: a pointer to a resource, not its contents (2025-06-18).
    ResourceLink(Resource),
    /// `resource`: a resource's contents.
    Resource(EmbeddedResource),
    /// A block whose `type` this crate does not know, kept verbatim (the
    /// whole object, `type` included).
    Unknown(Value),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The block's `type` as sent on the wire (for an unknown block, the type
    /// it claimed).
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum ContentBlockRef<'a> {
    #[serde(rename = "text")]
    Text(&'a TextContent),
    #[serde(rename = "image")]
    Image(&'a ImageContent),
    #[serde(rename = "audio")]
    Audio(&'a AudioContent),
    #[serde(rename = "resource_link")]
    ResourceLink(&'a Resource),
    #[serde(rename = "resource")]
    Resource(&'a EmbeddedResource),
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => ContentBlockRef::Text(c).serialize(serializer),
            ContentBlock::Image(c) => ContentBlockRef::Image(c).serialize(serializer),
            ContentBlock::Audio(c) => ContentBlockRef::Audio(c).serialize(serializer),
            ContentBlock::ResourceLink(c) => ContentBlockRef::ResourceLink(c).serialize(serializer),
            ContentBlock::Resource(c) => ContentBlockRef::Resource(c).serialize(serializer),
            ContentBlock::Unknown(v) => v.serialize(serializer),
        }
    }
}

/// Dispatched on `type` straight to the block's own struct (which ignores
/// the `type` member): serde's internally tagged enums buffer the whole
/// object before reading it, a second copy of every block on the hot path
/// of a tool call (bench/vs-rmcp, callgrind: about a tenth of a small
/// call's instructions went to reading its one content block).
impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let block = match type_tag(&value) {
            Some("text") => TextContent::deserialize(value).map(ContentBlock::Text),
            Some("image") => ImageContent::deserialize(value).map(ContentBlock::Image),
            Some("audio") => AudioContent::deserialize(value).map(ContentBlock::Audio),
            Some("resource_link") => Resource::deserialize(value).map(ContentBlock::ResourceLink),
            Some("resource") => EmbeddedResource::deserialize(value).map(ContentBlock::Resource),
            Some(_) => return Ok(ContentBlock::Unknown(value)),
            None => return Err(de::Error::custom("content block is not an object with a string \"type\"")),
        };
        block.map_err(de::Error::custom)
    }
}

/// The `type` member of a tagged object, if it is one.
pub(crate) fn type_tag(value: &Value) -> Option<&str> {
    value.as_object()?.get("type")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_block_with_annotations_and_meta() {
        let block: ContentBlock = serde_json::from_value(json!({
            "type": "text",
            "text": "Tool result text",
            "annotations": {"audience": ["user", "assistant"], "priority": 0.9,
                            "lastModified": "2025-01-12T15:00:58Z"},
            "_meta": {"example.com/trace": "abc"},
            "vendorExtra": true
        }))
        .unwrap();
        let ContentBlock::Text(t) = &block else { panic!("not text: {block:?}") };
        assert_eq!(t.text, "Tool result text");
        let ann = t.annotations.as_ref().unwrap();
        assert_eq!(ann.audience.as_deref(), Some(&[Role::User, Role::Assistant][..]));
        assert_eq!(serde_json::to_value(Role::Assistant).unwrap(), Role::Assistant.as_str());
        assert_eq!(ann.priority, Some(0.9));
        assert_eq!(ann.last_modified.as_deref(), Some("2025-01-12T15:00:58Z"));
        assert_eq!(t.meta.as_ref().unwrap()["example.com/trace"], "abc");
        // The unknown member is not kept; everything else round-trips.
        let back = serde_json::to_value(&block).unwrap();
        assert_eq!(back["type"], "text");
        assert_eq!(back["_meta"]["example.com/trace"], "abc");
        assert!(back.get("vendorExtra").is_none());
    }

    #[test]
    fn absent_optionals_are_not_emitted() {
        let block = ContentBlock::text("hi");
        assert_eq!(serde_json::to_string(&block).unwrap(), r#"{"type":"text","text":"hi"}"#);
        let blob = ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Blob(BlobResourceContents {
                uri: "file:///a.bin".into(),
                mime_type: None,
                blob: "AAE=".into(),
                meta: None,
            }),
            annotations: None,
            meta: None,
        });
        assert_eq!(
            serde_json::to_string(&blob).unwrap(),
            r#"{"type":"resource","resource":{"uri":"file:///a.bin","blob":"AAE="}}"#
        );
    }

    #[test]
    fn unknown_type_is_kept_verbatim() {
        let raw = json!({"type": "hologram", "frames": [1, 2, 3], "_meta": {"x": 1}});
        let block: ContentBlock = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(block, ContentBlock::Unknown(raw.clone()));
        assert_eq!(block.kind(), "hologram");
        assert_eq!(serde_json::to_value(&block).unwrap(), raw);
    }

    #[test]
    fn malformed_known_type_and_untyped_block_are_errors() {
        assert!(serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "AA=="})).is_err());
        assert!(serde_json::from_value::<ContentBlock>(json!({"text": "no type"})).is_err());
        assert!(serde_json::from_value::<ContentBlock>(json!("text")).is_err());
    }

    #[test]
    fn resource_contents_are_told_apart_by_field() {
        let text: ResourceContents =
            serde_json::from_value(json!({"uri": "file:///a.txt", "mimeType": "text/plain", "text": "x"}))
                .unwrap();
        assert!(matches!(text, ResourceContents::Text(_)));
        assert_eq!(text.mime_type(), Some("text/plain"));
        let blob: ResourceContents =
            serde_json::from_value(json!({"uri": "file:///a.png", "blob": "iVBORw0KGgo="})).unwrap();
        assert!(matches!(blob, ResourceContents::Blob(_)));
        assert_eq!(blob.uri(), "file:///a.png");
        assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "file:///a"})).is_err());
    }

    #[test]
    fn icons_accept_list_or_joined_sizes() {
        let icon: Icon = serde_json::from_value(json!({
            "src": "https://example.com/icon.png", "mimeType": "image/png",
            "sizes": ["48x48", "96x96"], "theme": "dark"
        }))
        .unwrap();
        assert_eq!(icon.sizes.as_deref(), Some(&["48x48".to_owned(), "96x96".to_owned()][..]));
        assert_eq!(icon.theme, Some(IconTheme::Dark));
        let old: Icon = serde_json::from_value(json!({"src": "data:,", "sizes": "16x16 32x32"})).unwrap();
        assert_eq!(old.sizes.unwrap(), vec!["16x16", "32x32"]);
        let odd: Icon = serde_json::from_value(json!({"src": "data:,", "theme": "sepia"})).unwrap();
        assert_eq!(odd.theme, Some(IconTheme::Unknown("sepia".into())));
        let bare = Icon { src: "data:,".into(), mime_type: None, sizes: None, theme: None };
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"src":"data:,"}"#);
    }
}
