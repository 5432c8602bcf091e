//! Argument completion: `completion/complete`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What is being completed: a prompt's argument or a resource template's
/// variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// `ref/prompt`: a prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's raw name.
        name: String,
        /// A display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// `ref/resource`: a resource or resource template, by URI (template).
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI or URI template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Context for a completion (2025-06-18).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompletionContext {
    /// Arguments or variables already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompleteParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Already-resolved arguments (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The completions offered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values (at most 100 by the schema; bounded again by the caller).
    pub values: Vec<String>,
    /// How many exist in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completions.
    pub completion: Completion,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn complete_params_from_spec() {
        let p: CompleteParams = serde_json::from_value(json!({
            "ref": {"type": "ref/prompt", "name": "code_review"},
            "argument": {"name": "framework", "value": "fla"},
            "context": {"arguments": {"language": "python"}}
        }))
        .unwrap();
        assert_eq!(p.reference, CompletionReference::Prompt { name: "code_review".into(), title: None });
        assert_eq!(p.context.unwrap().arguments.unwrap()["language"], "python");

        let p = CompleteParams {
            reference: CompletionReference::Resource { uri: "file:///{path}".into() },
            argument: CompletionArgument { name: "path".into(), value: "src/".into() },
            context: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"ref":{"type":"ref/resource","uri":"file:///{path}"},"argument":{"name":"path","value":"src/"}}"#
        );
    }

    #[test]
    fn complete_result_from_spec() {
        let r: CompleteResult = serde_json::from_value(json!({
            "completion": {"values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": true}
        }))
        .unwrap();
        assert_eq!(r.completion.values.len(), 3);
        assert_eq!(r.completion.has_more, Some(true));
        let bare = CompleteResult::default();
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"completion":{"values":[]}}"#);
    }
}
