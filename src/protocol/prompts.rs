//! Prompts: `prompts/list` and `prompts/get`.

use super::content::{ContentBlock, Icon, Role};
use super::pagination::Cursor;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A prompt or prompt template the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The prompt's raw name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons to display (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One argument a prompt accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given (absent means optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// The result of `prompts/list`: one page of prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListPromptsResult {
    /// This page's prompts.
    pub prompts: Vec<Prompt>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetPromptParams {
    /// The prompt's raw name.
    pub name: String,
    /// Values for the prompt's arguments (strings only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetPromptResult {
    /// A description of the rendered prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said: one content block.
    pub content: ContentBlock,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_and_get_from_spec() {
        let list: ListPromptsResult = serde_json::from_value(json!({
            "prompts": [{
                "name": "code_review", "title": "Request Code Review",
                "description": "Asks the LLM to analyze code quality and suggest improvements",
                "arguments": [{"name": "code", "description": "The code to review", "required": true}],
                "icons": [{"src": "https://example.com/review.png", "mimeType": "image/png"}]
            }],
            "nextCursor": "next-page-cursor"
        }))
        .unwrap();
        let p = &list.prompts[0];
        assert_eq!(p.arguments.as_ref().unwrap()[0].required, Some(true));

        let got: GetPromptResult = serde_json::from_value(json!({
            "description": "Code review prompt",
            "messages": [
                {"role": "user", "content": {"type": "text",
                 "text": "Please review this Python code:\ndef hello():\n    print('world')"}},
                {"role": "assistant", "content": {"type": "resource", "resource": {
                    "uri": "resource://example", "mimeType": "text/plain", "text": "Resource content"}}}
            ]
        }))
        .unwrap();
        assert_eq!(got.messages[0].role, Role::User);
        assert!(got.messages[0].content.as_text().unwrap().starts_with("Please review"));
        assert_eq!(got.messages[1].content.kind(), "resource");
    }

    #[test]
    fn get_params_serialize_only_what_is_set() {
        let p = GetPromptParams { name: "simple-prompt".into(), arguments: None, meta: None };
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"name":"simple-prompt"}"#);
        let args = BTreeMap::from([("code".to_owned(), "def hello(): pass".to_owned())]);
        let p = GetPromptParams { arguments: Some(args), ..p };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"name":"simple-prompt","arguments":{"code":"def hello(): pass"}}"#
        );
    }
}
