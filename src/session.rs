//! What a handshake learns about a server: [`SessionInfo`].
//!
//! All of it is reported, nothing of it is trusted: the identity names a peer
//! and never authorizes one, and the instructions are never applied.

use serde::Serialize;

use crate::protocol::content::Icon;
use crate::protocol::lifecycle::{Implementation, ServerCapabilities};

/// The longest identity field (name, version, title) kept from a server.
pub(crate) const MAX_IDENTITY_FIELD_BYTES: usize = 256;
/// The longest description and website URL kept from a server.
const MAX_IDENTITY_TEXT_BYTES: usize = 2 << 10;
/// The most icons kept from a server; the rest are dropped.
const MAX_ICONS: usize = 8;
/// The longest icon source kept: an http(s) URL, or a `data:` URI of an
/// image (a small one; a larger icon belongs at a URL).
const MAX_ICON_SRC_BYTES: usize = 64 << 10;
/// The most sizes kept on one icon.
const MAX_ICON_SIZES: usize = 8;

/// What the server claims to be. Cosmetic: it names a peer, it never
/// authorizes one. As JSON, camelCase, the optional parts left out when
/// absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerIdentity {
    /// The server's name.
    pub name: String,
    /// The server's version.
    pub version: String,
    /// The server's display title, if it sent one.
    pub title: String,
    /// What the server says it does (2025-11-25), bounded and with control
    /// and bidirectional formatting characters replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The server's website (2025-11-25): kept only when it is an absolute
    /// `http` or `https` URL. Never fetched by this crate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// The server's icons (2025-11-25), at most eight: each an `http(s)`
    /// URL or a `data:` URI of an image, bounded; an icon that is neither is
    /// dropped, the others kept. Never fetched by this crate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
}

/// `url` if it is an absolute `http(s)` URL of at most `max` bytes.
fn web_url(url: &str, max: usize) -> Option<String> {
    let url = url.trim();
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let web = lower.starts_with("https://") || lower.starts_with("http://");
    (web && url.len() <= max && !url.chars().any(crate::error::is_display_hazard) && !url.contains(' '))
        .then(|| url.to_string())
}

/// The icon, bounded, if its source is one a host may show.
fn icon(icon: &Icon) -> Option<Icon> {
    let src = icon.src.trim();
    let data_image = src.get(..11).is_some_and(|p| p.eq_ignore_ascii_case("data:image/"));
    let src = if data_image {
        (src.len() <= MAX_ICON_SRC_BYTES && !src.chars().any(|c| c.is_whitespace() || c.is_control()))
            .then(|| src.to_string())?
    } else {
        web_url(src, MAX_IDENTITY_TEXT_BYTES)?
    };
    let bound = |s: &String| crate::error::normalize_message(s, 64);
    Some(Icon {
        src,
        mime_type: icon
            .mime_type
            .as_ref()
            .map(|m| crate::error::normalize_message(m, MAX_IDENTITY_FIELD_BYTES)),
        sizes: icon.sizes.as_ref().map(|s| s.iter().take(MAX_ICON_SIZES).map(bound).collect()),
        theme: icon.theme.clone(),
    })
}

impl ServerIdentity {
    /// The bounded, normalized identity from a handshake's `serverInfo`.
    pub fn from_implementation(info: &Implementation) -> Self {
        let bound = |s: &str| crate::error::normalize_message(s, MAX_IDENTITY_FIELD_BYTES);
        ServerIdentity {
            name: bound(&info.name),
            version: bound(&info.version),
            title: info.title.as_deref().map(bound).unwrap_or_default(),
            description: info
                .description
                .as_deref()
                .map(|d| crate::error::normalize_message(d, MAX_IDENTITY_TEXT_BYTES)),
            website_url: info.website_url.as_deref().and_then(|u| web_url(u, MAX_IDENTITY_TEXT_BYTES)),
            icons: info.icons.iter().flatten().filter_map(icon).take(MAX_ICONS).collect(),
        }
    }

    /// A bounded description of how `other` differs from `self`, or `None`
    /// when it is the same server.
    pub fn drift(&self, other: &ServerIdentity) -> Option<String> {
        let mut parts = Vec::new();
        for (field, a, b) in [
            ("name", &self.name, &other.name),
            ("version", &self.version, &other.version),
            ("title", &self.title, &other.title),
        ] {
            if a != b {
                parts.push(format!("{field} {a:?} -> {b:?}"));
            }
        }
        (!parts.is_empty()).then(|| crate::error::normalize_message(&parts.join(", "), 512))
    }
}

/// What one handshake established. Serialized with camelCase names.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// What the server claims to be.
    pub server: ServerIdentity,
    /// What the server advertised.
    pub capabilities: ServerCapabilities,
    /// The server's bounded usage hint. Reported, never applied: adding it to
    /// a model's instructions would give any connected server instruction
    /// authority; a host that wants that must do it deliberately.
    pub instructions: Option<String>,
    /// The compatibility tolerances the transport needed to reach the server
    /// over this connection (`legacy_sse`, when an automatic HTTP factory fell
    /// back to HTTP+SSE; none otherwise). A fact of this connection: the next
    /// connection of the same binding may need different ones.
    pub transport_tolerances: Vec<crate::compat::Tolerance>,
}

/// What the client tells a server it is (`clientInfo`), in every handshake
/// a binding runs: the first, each reconnect and each renewed session.
/// The default is `mcp-stack` and the crate's version; a host names itself
/// with [`Definition::client`](crate::Definition::client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) title: Option<String>,
}

impl Default for ClientIdentity {
    fn default() -> Self {
        ClientIdentity { name: "mcp-stack".into(), version: env!("CARGO_PKG_VERSION").into(), title: None }
    }
}

impl ClientIdentity {
    /// An identity with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientIdentity { name: name.into(), version: version.into(), title: None }
    }

    /// The programmatic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// A display name, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// With a display name.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// As the handshake sends it.
    pub fn to_implementation(&self) -> Implementation {
        Implementation {
            name: self.name.clone(),
            version: self.version.clone(),
            title: self.title.clone(),
            description: None,
            icons: None,
            website_url: None,
        }
    }
}

/// What this crate tells a server it is by default (`clientInfo`):
/// `mcp-stack` and the crate's version.
pub(crate) fn client_identity() -> Implementation {
    ClientIdentity::default().to_implementation()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(info: serde_json::Value) -> ServerIdentity {
        ServerIdentity::from_implementation(&serde_json::from_value(info).unwrap())
    }

    /// Issue 22, item 6: the description, website and icons a server sends
    /// reach the host, bounded; a website or icon a host should not show
    /// (another scheme, a page as a `data:` URI) is dropped alone.
    #[test]
    fn description_website_and_icons_are_kept_within_bounds() {
        let id = identity(serde_json::json!({
            "name": "files", "version": "1.2",
            "description": "Reads\u{202E} files\nand more",
            "websiteUrl": "https://files.example.com/docs",
            "icons": [
                {"src": "https://files.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]},
                {"src": "javascript:alert(1)"},
                {"src": "data:text/html;base64,PGgxPg=="},
                {"src": "data:image/svg+xml;base64,PHN2Zy8+", "theme": "dark"},
            ],
        }));
        assert_eq!(id.description.as_deref(), Some("Reads  files and more"));
        assert_eq!(id.website_url.as_deref(), Some("https://files.example.com/docs"));
        let sources: Vec<&str> = id.icons.iter().map(|i| i.src.as_str()).collect();
        assert_eq!(sources, ["https://files.example.com/icon.png", "data:image/svg+xml;base64,PHN2Zy8+"]);
        let json = serde_json::to_value(&id).unwrap();
        assert_eq!(json["websiteUrl"], "https://files.example.com/docs");

        let bare = identity(serde_json::json!({
            "name": "x", "version": "1", "websiteUrl": "javascript:alert(1)",
            "icons": (0..20).map(|i| serde_json::json!({"src": format!("https://x.example/{i}.png")})).collect::<Vec<_>>(),
        }));
        assert_eq!(bare.website_url, None);
        assert_eq!(bare.icons.len(), MAX_ICONS);
        let big = format!("data:image/png;base64,{}", "A".repeat(MAX_ICON_SRC_BYTES));
        assert!(identity(serde_json::json!({"name": "x", "version": "1", "icons": [{"src": big}]}))
            .icons
            .is_empty());
        // Nothing optional sent, nothing optional serialized.
        let plain = serde_json::to_value(identity(serde_json::json!({"name": "x", "version": "1"}))).unwrap();
        assert_eq!(plain, serde_json::json!({"name": "x", "version": "1", "title": ""}));
    }
}
