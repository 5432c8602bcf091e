//! What a handshake learns about a server: [`SessionInfo`].
//!
//! All of it is reported, nothing of it is trusted: the identity names a peer
//! and never authorizes one, and the instructions are never applied.

use serde::Serialize;

use crate::protocol::lifecycle::{Implementation, ServerCapabilities};

/// The longest identity field (name, version, title) kept from a server.
pub(crate) const MAX_IDENTITY_FIELD_BYTES: usize = 256;

/// What the server claims to be. Cosmetic: it names a peer, it never
/// authorizes one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ServerIdentity {
    /// The server's name.
    pub name: String,
    /// The server's version.
    pub version: String,
    /// The server's display title, if it sent one.
    pub title: String,
}

impl ServerIdentity {
    /// The bounded, normalized identity from a handshake's `serverInfo`.
    pub fn from_implementation(info: &Implementation) -> Self {
        let bound = |s: &str| crate::error::normalize_message(s, MAX_IDENTITY_FIELD_BYTES);
        ServerIdentity {
            name: bound(&info.name),
            version: bound(&info.version),
            title: info.title.as_deref().map(bound).unwrap_or_default(),
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
    /// The programmatic name.
    pub name: String,
    /// The version.
    pub version: String,
    /// A display name, if any.
    pub title: Option<String>,
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
