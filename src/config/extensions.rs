//! The extensions a binding declares (SEP-2133), with their settings, and
//! its experimental capabilities: what a host declares beyond the
//! capabilities its handlers imply.
//!
//! An extension is declared in `initialize`'s client capabilities on the
//! legacy era and in every request's `_meta` client capabilities on
//! 2026-07-28 (`extensions`, identifier → settings object). Declaring one
//! tells the server the host can take what it offers (an Apps host renders
//! `ui://` resources); the server's own declarations are on the session's
//! and the catalog's [`ServerCapabilities`](crate::protocol::ServerCapabilities).
//!
//! The Tasks extension is not declared here: [`AllowedCapabilities::tasks`](super::AllowedCapabilities::tasks)
//! declares it, since the binding must also be ready to follow tasks.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::{APPS_EXTENSION, APP_MIME_TYPE, SKILLS_EXTENSION, TASKS_EXTENSION};

/// The longest extension identifier or experimental capability name.
const MAX_NAME_BYTES: usize = 256;
/// The most extensions (or experimental capabilities) declared.
const MAX_ENTRIES: usize = 64;
/// The largest settings object, serialized.
const MAX_SETTINGS_BYTES: usize = 16 << 10;

/// Extensions a binding declares, each with its settings object.
///
/// ```
/// use mcp_stack::ClientExtensions;
///
/// let extensions = ClientExtensions::default().apps().skills();
/// assert!(extensions.get("io.modelcontextprotocol/ui").is_some());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientExtensions {
    entries: BTreeMap<String, Map<String, Value>>,
}

impl ClientExtensions {
    /// Declares the extension `id` (`vendor-prefix/name`, e.g.
    /// `io.modelcontextprotocol/ui`) with `settings` (`{}` when it has
    /// none), replacing an earlier declaration of it. Checked when the
    /// binding connects.
    pub fn with(mut self, id: impl Into<String>, settings: Map<String, Value>) -> Self {
        self.entries.insert(id.into(), settings);
        self
    }

    /// Declares MCP Apps (`io.modelcontextprotocol/ui`): the host renders
    /// app resources of the MIME type `text/html;profile=mcp-app`.
    pub fn apps(self) -> Self {
        let mut settings = Map::new();
        settings.insert("mimeTypes".into(), Value::from(vec![APP_MIME_TYPE]));
        self.with(APPS_EXTENSION, settings)
    }

    /// Declares Skills (`io.modelcontextprotocol/skills`, SEP-2640), which
    /// has no client settings. Listing and loading skills does not need it.
    pub fn skills(self) -> Self {
        self.with(SKILLS_EXTENSION, Map::new())
    }

    /// The settings the extension `id` is declared with.
    pub fn get(&self, id: &str) -> Option<&Map<String, Value>> {
        self.entries.get(id)
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The declarations, by identifier.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Map<String, Value>)> {
        self.entries.iter().map(|(id, settings)| (id.as_str(), settings))
    }

    /// Refuses, with `invalid_config`, an identifier that is not
    /// `prefix/name` (1 to 256 bytes, no whitespace or control
    /// characters), settings over 16 KiB, more than 64 extensions, or the
    /// Tasks extension (which `AllowedCapabilities::tasks` declares).
    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.entries.contains_key(TASKS_EXTENSION) {
            return Err(invalid(format!(
                "declare {TASKS_EXTENSION} with AllowedCapabilities::tasks, not as an extension"
            )));
        }
        check_entries("extension", self.entries.iter(), |id| {
            id.split_once('/').is_some_and(|(prefix, name)| !prefix.is_empty() && !name.is_empty())
        })
    }
}

/// Refuses experimental capabilities with an empty, overlong or odd name,
/// settings over 16 KiB, or more than 64 of them.
pub(crate) fn validate_experimental(experimental: &Map<String, Value>) -> Result<(), Error> {
    check_entries("experimental capability", experimental.iter(), |_| true)
}

fn check_entries<'a, S: serde::Serialize + 'a>(
    what: &str,
    mut entries: impl ExactSizeIterator<Item = (&'a String, &'a S)>,
    shape: impl Fn(&str) -> bool,
) -> Result<(), Error> {
    if entries.len() > MAX_ENTRIES {
        return Err(invalid(format!("more than {MAX_ENTRIES} {what} declarations")));
    }
    entries.try_for_each(|(name, settings)| {
        let named = !name.is_empty()
            && name.len() <= MAX_NAME_BYTES
            && !name.chars().any(|c| c.is_whitespace() || c.is_control())
            && shape(name);
        if !named {
            return Err(invalid(format!("the {what} name {:?} is not valid", normalize_message(name, 64))));
        }
        let settings = serde_json::to_vec(settings).unwrap_or_default();
        if settings.len() > MAX_SETTINGS_BYTES || !settings.starts_with(b"{") {
            return Err(invalid(format!(
                "the {what} {:?} must be declared with an object of at most 16 KiB",
                normalize_message(name, 64)
            )));
        }
        Ok(())
    })
}

fn invalid(message: String) -> Error {
    Error::new(FailureClass::InvalidConfig, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_settings_and_the_tasks_extension_are_checked() {
        assert!(ClientExtensions::default().apps().skills().validate().is_ok());
        let bad = |id: &str| ClientExtensions::default().with(id, Map::new()).validate().unwrap_err();
        for id in ["", "noslash", "/name", "prefix/", "a b/c", &format!("x/{}", "y".repeat(300))] {
            assert_eq!(bad(id).class(), FailureClass::InvalidConfig, "{id:?}");
        }
        assert!(bad(TASKS_EXTENSION).message().contains("AllowedCapabilities::tasks"));
        let big = json!({ "blob": "x".repeat(20_000) }).as_object().unwrap().clone();
        let e = ClientExtensions::default().with("a/b", big).validate().unwrap_err();
        assert!(e.message().contains("16 KiB"), "{e}");

        let mut experimental = Map::new();
        experimental.insert("fancy".into(), json!({ "on": true }));
        assert!(validate_experimental(&experimental).is_ok());
        experimental.insert("scalar".into(), json!(1));
        assert!(validate_experimental(&experimental).is_err(), "settings must be objects");
    }
}
