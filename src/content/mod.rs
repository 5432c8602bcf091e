//! What results hold once they reach the host: [`Content`], [`ToolResult`],
//! [`PromptResult`], [`ResourceResult`].

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, FailureClass};
use crate::protocol::content::{Annotations, ContentBlock, ResourceContents};
use crate::request::McpResponse;

/// The kind name of image content.
pub(crate) const KIND_IMAGE: &str = "image";
/// The kind name of audio content.
pub(crate) const KIND_AUDIO: &str = "audio";
/// The kind name of an embedded resource.
pub(crate) const KIND_RESOURCE: &str = "resource";

/// What a result limit did to the items of one result, attached to the
/// response as an extension by
/// [`ResultLimit`](crate::layer::result_limit::ResultLimit) (absent when it
/// changed nothing). Items are numbered by their index in the result's list:
/// `content` of a tool result, `messages` of a prompt, `contents` of a
/// resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultMarks {
    pub(crate) items: std::collections::BTreeMap<usize, Mark>,
    pub(crate) structured_dropped: Option<usize>,
    pub(crate) dropped: Dropped,
}

/// The items a limit removed from a result (beyond `max_content_items`, or
/// binary items beyond `max_binary_items`): how many, and their size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// How many items were removed.
    pub items: usize,
    /// Their size: decoded bytes for binary payloads, compact JSON bytes for
    /// any other item.
    pub bytes: usize,
}

/// What a limit did to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Its text was cut (or, for a resource's item, its bytes dropped).
    Truncated,
    /// It was refused: its payload was emptied.
    Refused {
        /// The kind of content refused (`"image"`, ...).
        kind: &'static str,
        /// The decoded size of the payload refused.
        bytes: usize,
    },
}

impl ResultMarks {
    /// Whether the limit changed nothing.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.structured_dropped.is_none() && self.dropped.items == 0
    }

    /// The items the limit removed from the result, if it removed any.
    pub fn dropped(&self) -> Option<Dropped> {
        (self.dropped.items > 0).then_some(self.dropped)
    }

    /// What the limit did to item `index`, if anything.
    pub fn item(&self, index: usize) -> Option<Mark> {
        self.items.get(&index).copied()
    }

    /// Whether item `index` was cut.
    pub fn is_truncated(&self, index: usize) -> bool {
        self.item(index) == Some(Mark::Truncated)
    }

    /// The size of the structured content the limit dropped, if it did.
    pub fn structured_dropped(&self) -> Option<usize> {
        self.structured_dropped
    }
}

/// The longest `kind` kept from an unsupported item, in bytes.
const MAX_KIND_BYTES: usize = 64;

/// One piece of a result.
///
/// Serialized tagged with its kind in `type` (`text`, `image`, `audio`,
/// `resource`, `resource_link`, `unsupported`), its fields in camelCase, and
/// bytes as base64 as on the wire: `{"type": "image", "data": "iVBO…",
/// "mimeType": "image/png"}`. A `resource` is its [`ResourceContent`]'s
/// fields with the tag.
///
/// These are the wire's content blocks decoded (base64 becomes bytes) and
/// bounded. A block the crate does not know, or one a limit refused, becomes
/// [`Content::Unsupported`] with its kind and size, so the host learns that
/// something was there without holding it.
///
/// # From a response
///
/// [`ToolResult::from_response`], [`PromptResult::from_response`] and
/// [`ResourceResult::from_response`] convert what the stack answered
/// ([`McpResponse`]): the binding's `call_tool`, `get_prompt` and
/// `read_resource` are exactly these over `binding.service()`, so a host
/// that sends through the service gets the same results.
///
/// The bounds are applied to the JSON result by
/// [`ResultLimit`](crate::layer::result_limit), which says what it did in a
/// [`ResultMarks`] attached to the response as a typed extension (never as
/// keys in the server's JSON, which a server could forge): a refused item
/// becomes [`Content::Unsupported`] with its kind and size, without another
/// warning (the layer already gave one); a cut text, or a resource item
/// whose text was cut or whose blob was dropped, has `truncated` set.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Content {
    /// Text, possibly cut at a UTF-8 boundary by a limit.
    Text {
        /// The text.
        text: String,
        /// Whether a limit cut it.
        truncated: bool,
        /// The server's hints for the host (audience, priority, last
        /// change), checked ([`Content::from_block`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// The block's `_meta`, as the server sent it (within the result's
        /// bounds): data for the host, never acted on by the client.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// An image, decoded: from base64, or from a `data:` URL of an image
    /// type that agrees with the block's `mimeType`. An image given as an
    /// `http(s)` URL is a [`Content::ResourceLink`] named `image` instead,
    /// never fetched by the client.
    Image {
        /// The bytes.
        #[serde(serialize_with = "crate::serialize::base64")]
        data: Vec<u8>,
        /// Its MIME type, as the server said.
        mime_type: String,
        /// As [`Content::Text`]'s.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// As [`Content::Text`]'s.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// Audio, decoded, like [`Content::Image`] (a link is a
    /// [`Content::ResourceLink`] named `audio`).
    Audio {
        /// The bytes.
        #[serde(serialize_with = "crate::serialize::base64")]
        data: Vec<u8>,
        /// Its MIME type, as the server said.
        mime_type: String,
        /// As [`Content::Text`]'s.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// As [`Content::Text`]'s.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// A resource's contents, embedded in the result.
    Resource {
        /// The contents (with their own `_meta`).
        resource: ResourceContent,
        /// As [`Content::Text`]'s.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// As [`Content::Text`]'s.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
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
        /// Its display name, if the server gave one (bounded, control
        /// characters made visible, like every display string).
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Its size in bytes, if the server said.
        #[serde(skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// The server's hints for the host, checked like a block's.
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// The link's `_meta`, as the server sent it (within the result's
        /// bounds): data for the host, never acted on by the client.
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// Content that was not kept: an unknown kind, undecodable data, or an
    /// item a limit refused.
    ///
    /// Items a limit removed from a tool result (past `max_content_items`,
    /// or binary items past `max_binary_items`) are represented by one
    /// stand-in at the end of the content, whose `kind` counts them
    /// (`"9984 items"`, `"1 item"`; `dropped_kind`) and whose `bytes` is
    /// their total size; [`ResultMarks::dropped`] has the same figures typed.
    Unsupported {
        /// The content kind that was refused, or for the stand-in of removed
        /// items, their count.
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
    /// The item's `_meta`, as the server sent it (within the result's
    /// bounds): data for the host, never acted on by the client.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
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

/// The `kind` of the one [`Content::Unsupported`] stand-in for `items`
/// removed items: `"1 item"`, `"9984 items"`.
pub(crate) fn dropped_kind(items: usize) -> String {
    if items == 1 {
        "1 item".to_owned()
    } else {
        format!("{items} items")
    }
}

/// The longest resource link title kept, in bytes.
const MAX_LINK_TITLE_BYTES: usize = 256;

pub(crate) fn decode_base64(data: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()
}

/// What an image's or audio's `data` held.
enum Media {
    /// The bytes, and their MIME type.
    Bytes(Vec<u8>, String),
    /// An `http(s)` URL: kept as a link, never fetched by the client.
    Link(String),
}

/// Reads an image's or audio's `data` (`kind` is `image` or `audio`): base64
/// as the specification has it; a `data:` URL some servers send instead
/// (`data:image/png;base64,…`), decoded when it is base64 and its MIME type
/// is of `kind` and agrees with the block's; an `http(s)` URL, kept as a
/// link. The data was bounded before (by `Limits::max_binary_item_bytes`);
/// an error says why it cannot be kept, without quoting it.
fn media(data: &str, mime_type: &str, kind: &str) -> Result<Media, String> {
    let head: Vec<u8> = data.bytes().take(8).map(|b| b.to_ascii_lowercase()).collect();
    if head.starts_with(b"https://") || head.starts_with(b"http://") {
        return Ok(Media::Link(data.trim().to_string()));
    }
    if !head.starts_with(b"data:") {
        return decode_base64(data)
            .map(|bytes| Media::Bytes(bytes, mime_type.to_string()))
            .ok_or_else(|| "its data is not base64".into());
    }
    let (header, payload) = data[5..].split_once(',').ok_or("its data: URL has no payload")?;
    let mut parts = header.split(';').map(str::trim);
    let url_type = parts.next().unwrap_or("").to_ascii_lowercase();
    if !parts.any(|p| p.eq_ignore_ascii_case("base64")) {
        return Err("its data: URL is not base64".into());
    }
    if !url_type.starts_with(&format!("{kind}/")) {
        return Err(format!("its data: URL is not of type {kind}/*"));
    }
    if !mime_type.is_empty() && !mime_type.eq_ignore_ascii_case(&url_type) {
        return Err("its data: URL's type differs from its mimeType".into());
    }
    let bytes = decode_base64(payload).ok_or("its data: URL's payload is not base64")?;
    Ok(Media::Bytes(bytes, url_type))
}

/// An image or audio given by URL: a link the host may follow, or not.
fn media_link(
    uri: String,
    mime_type: String,
    kind: &str,
    annotations: Option<Annotations>,
    meta: Option<Map<String, Value>>,
) -> Content {
    let mime_type = (!mime_type.is_empty()).then_some(mime_type);
    Content::ResourceLink {
        uri,
        name: kind.to_string(),
        mime_type,
        description: None,
        title: None,
        size: None,
        annotations,
        meta,
    }
}

/// An image or audio block (`kind`), decoded, kept as a link, or refused
/// with a warning.
fn media_block(
    kind: &'static str,
    data: String,
    mime_type: String,
    annotations: Option<Annotations>,
    meta: Option<Map<String, Value>>,
    warnings: &mut Vec<String>,
) -> Content {
    let annotations = checked_annotations(annotations, warnings);
    match media(&data, &mime_type, kind) {
        Ok(Media::Bytes(data, mime_type)) if kind == KIND_IMAGE => {
            Content::Image { data, mime_type, annotations, meta }
        }
        Ok(Media::Bytes(data, mime_type)) => Content::Audio { data, mime_type, annotations, meta },
        Ok(Media::Link(uri)) => media_link(uri, mime_type, kind, annotations, meta),
        Err(why) => {
            let what = if kind == KIND_IMAGE { "an image" } else { "audio" };
            crate::request::push_warning(warnings, format!("dropped {what}: {why}"));
            Content::Unsupported { kind: kind.into(), bytes: data.len() }
        }
    }
}

/// The longest `lastModified` kept (an ISO 8601 time is about 30 bytes).
const MAX_LAST_MODIFIED_BYTES: usize = 64;

/// A block's annotations, checked: a priority outside 0 to 1 and a
/// `lastModified` over [`MAX_LAST_MODIFIED_BYTES`] are dropped with a
/// warning (the rest of the annotations stay), the audience is
/// de-duplicated, and annotations with nothing left are none.
fn checked_annotations(annotations: Option<Annotations>, warnings: &mut Vec<String>) -> Option<Annotations> {
    let mut a = annotations?;
    if a.priority.is_some_and(|p| !(0.0..=1.0).contains(&p)) {
        crate::request::push_warning(warnings, "dropped an annotation's priority outside 0 to 1".into());
        a.priority = None;
    }
    if a.last_modified.as_ref().is_some_and(|t| t.len() > MAX_LAST_MODIFIED_BYTES) {
        crate::request::push_warning(
            warnings,
            format!("dropped an annotation's lastModified over {MAX_LAST_MODIFIED_BYTES} bytes"),
        );
        a.last_modified = None;
    }
    a.last_modified = a.last_modified.map(|t| crate::error::normalize_message(&t, MAX_LAST_MODIFIED_BYTES));
    if let Some(audience) = &mut a.audience {
        let mut seen = Vec::with_capacity(2);
        audience.retain(|role| {
            !seen.contains(role) && {
                seen.push(*role);
                true
            }
        });
    }
    (a != Annotations::default()).then_some(a)
}

impl Content {
    /// Converts one wire block. Undecodable data becomes `Unsupported`.
    pub fn from_block(block: ContentBlock, warnings: &mut Vec<String>) -> Content {
        Self::from_marked_block(block, None, warnings)
    }

    /// Converts one wire block a limit may have marked.
    fn from_marked_block(block: ContentBlock, mark: Option<Mark>, warnings: &mut Vec<String>) -> Content {
        if let Some(Mark::Refused { kind, bytes }) = mark {
            return Content::Unsupported { kind: kind.into(), bytes };
        }
        let truncated = mark == Some(Mark::Truncated);
        match block {
            ContentBlock::Text(t) => Content::Text {
                truncated,
                text: t.text,
                annotations: checked_annotations(t.annotations, warnings),
                meta: t.meta,
            },
            ContentBlock::Image(i) => {
                media_block(KIND_IMAGE, i.data, i.mime_type, i.annotations, i.meta, warnings)
            }
            ContentBlock::Audio(a) => {
                media_block(KIND_AUDIO, a.data, a.mime_type, a.annotations, a.meta, warnings)
            }
            ContentBlock::Resource(r) => Content::Resource {
                resource: ResourceContent::from_marked(r.resource, truncated, warnings),
                annotations: checked_annotations(r.annotations, warnings),
                meta: r.meta,
            },
            ContentBlock::ResourceLink(l) => Content::ResourceLink {
                uri: l.uri,
                name: l.name,
                mime_type: l.mime_type,
                description: l.description,
                title: l.title.map(|t| crate::error::normalize_message(&t, MAX_LINK_TITLE_BYTES)),
                size: l.size,
                annotations: checked_annotations(l.annotations, warnings),
                meta: l.meta,
            },
            ContentBlock::Unknown(raw) => {
                let kind = raw.get("type").and_then(Value::as_str).unwrap_or("unknown");
                let kind = crate::error::normalize_message(kind, MAX_KIND_BYTES);
                crate::request::push_warning(warnings, format!("dropped content of unknown kind {kind:?}"));
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
    /// The item's whole body, for a reader that must have all of it (a
    /// skill's file, an app's HTML): a text's UTF-8 or a blob's bytes; or
    /// the class and reason it cannot be had (a result limit cut it; it
    /// has neither body).
    pub(crate) fn whole_bytes(self) -> Result<Vec<u8>, (FailureClass, &'static str)> {
        if self.truncated {
            return Err((
                FailureClass::LimitExceeded,
                "a result limit cut it (max_text_result_bytes or max_binary_item_bytes)",
            ));
        }
        match (self.text, self.data) {
            (Some(text), None) => Ok(text.into_bytes()),
            (None, Some(data)) => Ok(data),
            _ => Err((FailureClass::VerificationFailed, "its item is neither text nor a blob")),
        }
    }

    /// Converts one wire item; undecodable bytes are dropped with a warning.
    pub fn from_wire(contents: ResourceContents, warnings: &mut Vec<String>) -> ResourceContent {
        Self::from_marked(contents, false, warnings)
    }

    /// Converts one wire item a limit may have cut (its cut text is kept,
    /// its dropped bytes are not).
    fn from_marked(
        contents: ResourceContents,
        truncated: bool,
        warnings: &mut Vec<String>,
    ) -> ResourceContent {
        match contents {
            ResourceContents::Text(t) => ResourceContent {
                truncated,
                uri: t.uri,
                mime_type: t.mime_type,
                text: Some(t.text),
                data: None,
                meta: t.meta,
            },
            ResourceContents::Blob(b) if truncated => ResourceContent {
                uri: b.uri,
                mime_type: b.mime_type,
                text: None,
                data: None,
                truncated: true,
                meta: b.meta,
            },
            ResourceContents::Blob(b) => {
                let data = decode_base64(&b.blob);
                if data.is_none() {
                    crate::request::push_warning(
                        warnings,
                        format!("dropped the bytes of {:?}: not base64", b.uri),
                    );
                }
                ResourceContent {
                    truncated: data.is_none(),
                    uri: b.uri,
                    mime_type: b.mime_type,
                    text: None,
                    data,
                    meta: b.meta,
                }
            }
        }
    }
}

/// Parses a response's result as `T`, or fails with `server_protocol`.
fn parse<T: serde::de::DeserializeOwned>(rsp: &mut McpResponse, method: &str) -> Result<T, Error> {
    serde_json::from_value(std::mem::take(&mut rsp.result))
        .map_err(|e| Error::new(FailureClass::ServerProtocol, format!("malformed {method} result: {e}")))
}

fn marks_of(rsp: &mut McpResponse) -> ResultMarks {
    rsp.extensions.remove::<ResultMarks>().unwrap_or_default()
}

impl ToolResult {
    /// Converts a `tools/call` response: content decoded, the limit's marks
    /// applied, the response's warnings kept. Fails with `server_protocol`
    /// when the result is not a tool result.
    pub fn from_response(mut rsp: McpResponse) -> Result<ToolResult, Error> {
        let marks = marks_of(&mut rsp);
        // The structured result is moved over as it is, not deserialized
        // again (which would build every map in it twice); `_meta` is not
        // kept, so an object one is only taken out.
        let structured = match &mut rsp.result {
            Value::Object(members) => {
                drop(crate::protocol::take_meta(members));
                members.remove("structuredContent").filter(|s| !s.is_null())
            }
            _ => None,
        };
        let result: crate::protocol::tools::CallToolResult = parse(&mut rsp, "tools/call")?;
        let mut warnings = rsp.warnings;
        let mut content: Vec<Content> = result
            .content
            .into_iter()
            .enumerate()
            .map(|(i, block)| Content::from_marked_block(block, marks.item(i), &mut warnings))
            .collect();
        // One stand-in for everything removed; the layer's warning counts
        // them already.
        if let Some(dropped) = marks.dropped() {
            content.push(Content::Unsupported { kind: dropped_kind(dropped.items), bytes: dropped.bytes });
        }
        Ok(ToolResult { is_error: result.is_error.unwrap_or(false), content, structured, warnings })
    }
}

impl PromptResult {
    /// Converts a `prompts/get` response (see [`ToolResult::from_response`]).
    pub fn from_response(mut rsp: McpResponse) -> Result<PromptResult, Error> {
        let marks = marks_of(&mut rsp);
        let result: crate::protocol::prompts::GetPromptResult = parse(&mut rsp, "prompts/get")?;
        let mut warnings = rsp.warnings;
        let messages = result
            .messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| PromptMessage {
                role: m.role.as_str().to_owned(),
                content: Content::from_marked_block(m.content, marks.item(i), &mut warnings),
            })
            .collect();
        Ok(PromptResult { description: result.description, messages, warnings })
    }
}

impl ResourceResult {
    /// The one item for `uri`; `None` when there is none, or more than one.
    pub(crate) fn only_item(self, uri: &str) -> Option<ResourceContent> {
        let mut items = self.contents.into_iter().filter(|c| c.uri == uri);
        match (items.next(), items.next()) {
            (Some(item), None) => Some(item),
            _ => None,
        }
    }

    /// Converts a `resources/read` response (see
    /// [`ToolResult::from_response`]).
    pub fn from_response(mut rsp: McpResponse) -> Result<ResourceResult, Error> {
        let marks = marks_of(&mut rsp);
        let result: crate::protocol::resources::ReadResourceResult = parse(&mut rsp, "resources/read")?;
        let mut warnings = rsp.warnings;
        let contents = result
            .contents
            .into_iter()
            .enumerate()
            .map(|(i, c)| ResourceContent::from_marked(c, marks.is_truncated(i), &mut warnings))
            .collect();
        Ok(ResourceResult { contents, warnings })
    }
}

#[cfg(test)]
mod tests;
