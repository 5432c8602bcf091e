//! Pagination: the cursor list requests carry and list results return.
//!
//! A cursor is opaque: the client sends back exactly what the server gave.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An opaque pagination position.
pub(crate) type Cursor = String;

/// The params of any paginated list request (`tools/list`, `prompts/list`,
/// `resources/list`, `resources/templates/list`, `tasks/list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaginatedParams {
    /// Where to continue; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl PaginatedParams {
    /// Params for the page after `cursor` (the first page when `None`).
    pub(crate) fn at(cursor: Option<Cursor>) -> Self {
        PaginatedParams { cursor, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_page_is_empty_object() {
        assert_eq!(serde_json::to_string(&PaginatedParams::default()).unwrap(), "{}");
        let p = PaginatedParams::at(Some("abc".into()));
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"cursor":"abc"}"#);
        let back: PaginatedParams = serde_json::from_str(r#"{"cursor":"abc","extra":1}"#).unwrap();
        assert_eq!(back, p);
    }
}
