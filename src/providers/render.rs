//! A [`ToolResult`] as the pieces every provider's tool result is made of:
//! text, and images where the provider takes them.

use base64::Engine as _;

use crate::content::{Content, ToolResult};

/// The image types both providers document for images they are sent.
pub(crate) const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Appended to a text a limit cut, so that the model knows.
pub(crate) const TRUNCATED_NOTE: &str = "\n[truncated by the host]";

/// One piece of a rendered result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Image { media_type: String, base64: String },
}

/// The result's content as parts, in order, then its structured content as
/// compact JSON text unless a text part already is that JSON (servers are
/// asked to send both). An image becomes an image part when `images` is set
/// and its type is one of [`IMAGE_TYPES`], else a placeholder text; so does
/// everything a provider cannot take (audio, binary resources, content a
/// limit refused). Every placeholder and every cut text is a warning.
pub(crate) fn parts(
    result: &ToolResult,
    images: bool,
    provider: &str,
    warnings: &mut Vec<String>,
) -> Vec<Part> {
    let mut parts = Vec::new();
    let image = |data: &[u8], mime: &str, parts: &mut Vec<Part>, warnings: &mut Vec<String>| {
        if images && IMAGE_TYPES.contains(&mime) {
            let base64 = base64::engine::general_purpose::STANDARD.encode(data);
            parts.push(Part::Image { media_type: mime.to_string(), base64 });
        } else {
            let mime = crate::error::normalize_message(mime, 64);
            warnings.push(format!(
                "an image ({mime}, {} bytes) is sent to {provider} as a placeholder text",
                data.len()
            ));
            parts.push(Part::Text(format!("[image {mime}, {} bytes, not shown]", data.len())));
        }
    };
    for content in &result.content {
        match content {
            Content::Text { text, truncated, .. } => {
                let mut text = text.clone();
                if *truncated {
                    warnings.push(format!("a text the host cut is marked as cut for {provider}"));
                    text.push_str(TRUNCATED_NOTE);
                }
                parts.push(Part::Text(text));
            }
            Content::Image { data, mime_type, .. } => image(data, mime_type, &mut parts, warnings),
            Content::Audio { data, mime_type, .. } => {
                let mime = crate::error::normalize_message(mime_type, 64);
                warnings.push(format!("audio ({mime}) is sent to {provider} as a placeholder text"));
                parts.push(Part::Text(format!("[audio {mime}, {} bytes, not shown]", data.len())));
            }
            Content::Resource { resource, .. } => {
                let mime = resource.mime_type.as_deref().unwrap_or("");
                match (&resource.text, &resource.data) {
                    (Some(text), _) => {
                        let mut text = format!("[resource {}]\n{text}", resource.uri);
                        if resource.truncated {
                            warnings.push(format!(
                                "a resource text the host cut is marked as cut for {provider}"
                            ));
                            text.push_str(TRUNCATED_NOTE);
                        }
                        parts.push(Part::Text(text));
                    }
                    (None, Some(data)) if mime.starts_with("image/") => {
                        image(data, mime, &mut parts, warnings)
                    }
                    (None, data) => {
                        let bytes = data.as_ref().map_or(0, Vec::len);
                        warnings
                            .push(format!("a binary resource is sent to {provider} as a placeholder text"));
                        parts.push(Part::Text(format!(
                            "[resource {} ({bytes} bytes), not shown]",
                            resource.uri
                        )));
                    }
                }
            }
            Content::ResourceLink { uri, name, description, .. } => {
                let mut text = format!("[resource link: {name} <{uri}>]");
                if let Some(d) = description {
                    text.push(' ');
                    text.push_str(d);
                }
                parts.push(Part::Text(text));
            }
            Content::Unsupported { kind, bytes } => {
                warnings.push(format!(
                    "content the host did not keep ({kind}) is sent to {provider} as a placeholder text"
                ));
                parts.push(Part::Text(format!("[{kind} content not shown ({bytes} bytes)]")));
            }
        }
    }
    if let Some(structured) = &result.structured {
        let already = parts.iter().any(|p| match p {
            Part::Text(t) => serde_json::from_str::<serde_json::Value>(t).is_ok_and(|v| &v == structured),
            Part::Image { .. } => false,
        });
        if !already {
            parts.push(Part::Text(structured.to_string()));
        }
    }
    parts
}
