//! Roots: the directories or files the host lets a server operate on
//! (`roots/list`, `notifications/roots/list_changed`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One root the host exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// The root's URI (`file://` in every revision so far).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Extension metadata (2025-06-18).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Root {
    /// A root with a URI and no name.
    pub fn new(uri: impl Into<String>) -> Self {
        Root { uri: uri.into(), name: None, meta: None }
    }
}

/// The host's answer to `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roots_from_spec_and_back() {
        let r: ListRootsResult = serde_json::from_value(json!({
            "roots": [{"uri": "file:///home/user/projects/myproject", "name": "My Project"},
                      {"uri": "file:///tmp"}]
        }))
        .unwrap();
        assert_eq!(r.roots[0].name.as_deref(), Some("My Project"));
        assert_eq!(r.roots[1], Root::new("file:///tmp"));
        assert_eq!(
            serde_json::to_string(&ListRootsResult { roots: vec![Root::new("file:///tmp")], meta: None })
                .unwrap(),
            r#"{"roots":[{"uri":"file:///tmp"}]}"#
        );
    }
}
