//! Elicitation: a server asks the user, through the host, for input
//! (`elicitation/create`, `notifications/elicitation/complete`).
//!
//! Two modes exist since 2025-11-25: *form* (a message and a flat JSON
//! Schema to fill in; the only mode of 2025-06-18, which has no `mode`
//! member) and *url* (the user is sent to a URL out of band). A request
//! without `mode` is a form request.

use super::tasks::TaskMetadata;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// How an elicitation is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationMode {
    /// The host shows a form built from a schema.
    Form,
    /// The host sends the user to a URL.
    Url,
}

/// The params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ElicitRequestParams {
    /// A form request: `mode` is `"form"` or absent.
    Form(ElicitFormParams),
    /// A URL request: `mode` is `"url"` (2025-11-25).
    Url(ElicitUrlParams),
}

impl ElicitRequestParams {
    /// The request's mode.
    pub(crate) fn mode(&self) -> ElicitationMode {
        match self {
            ElicitRequestParams::Form(_) => ElicitationMode::Form,
            ElicitRequestParams::Url(_) => ElicitationMode::Url,
        }
    }

    /// The message to show the user.
    pub(crate) fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(f) => &f.message,
            ElicitRequestParams::Url(u) => &u.message,
        }
    }

    /// Whether the server asked for the request to run as a task.
    pub(crate) fn task(&self) -> Option<&TaskMetadata> {
        match self {
            ElicitRequestParams::Form(f) => f.task.as_ref(),
            ElicitRequestParams::Url(u) => u.task.as_ref(),
        }
    }

    /// The request metadata.
    pub(crate) fn meta(&self) -> Option<&Map<String, Value>> {
        match self {
            ElicitRequestParams::Form(f) => f.meta.as_ref(),
            ElicitRequestParams::Url(u) => u.meta.as_ref(),
        }
    }
}

/// A form-mode elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitFormParams {
    /// What is being asked, for the user.
    pub message: String,
    /// A flat JSON Schema (an object of primitive properties) describing
    /// the answer, kept raw.
    pub requested_schema: Value,
    /// Asks for the request to run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A URL-mode elicitation (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitUrlParams {
    /// Why the user should go there.
    pub message: String,
    /// Where to send the user. Bounded by the binding, never vetted here.
    pub url: String,
    /// The server's opaque identifier of this elicitation, which its
    /// `notifications/elicitation/complete` names. Required up to
    /// 2025-11-25; absent in a 2026-07-28 input request, where a URL
    /// elicitation is consent only (the answer travels in the retried
    /// request, and nothing completes later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Asks for the request to run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[derive(Serialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
enum TaggedUrl<'a> {
    Url(&'a ElicitUrlParams),
}

impl Serialize for ElicitRequestParams {
    /// A form request is written without `mode` (valid in every revision);
    /// a URL request with `"mode": "url"`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitRequestParams::Form(f) => f.serialize(serializer),
            ElicitRequestParams::Url(u) => TaggedUrl::Url(u).serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Some(obj) = value.as_object() else {
            return Err(de::Error::custom("elicitation params are not an object"));
        };
        match obj.get("mode") {
            None | Some(Value::Null) => {}
            Some(Value::String(m)) if m == "form" => {}
            Some(Value::String(m)) if m == "url" => {
                return ElicitUrlParams::deserialize(value)
                    .map(ElicitRequestParams::Url)
                    .map_err(de::Error::custom);
            }
            Some(other) => return Err(de::Error::custom(format!("unknown elicitation mode {other}"))),
        }
        ElicitFormParams::deserialize(value).map(ElicitRequestParams::Form).map_err(de::Error::custom)
    }
}

/// What the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form or agreed to go to the URL.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The host's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values: only for an accepted form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// An accepted form with its values, or an accepted URL request
    /// (`None`).
    pub(crate) fn accept(content: Option<Map<String, Value>>) -> Self {
        ElicitResult { action: ElicitAction::Accept, content, meta: None }
    }

    /// A declined request.
    pub(crate) fn decline() -> Self {
        ElicitResult { action: ElicitAction::Decline, content: None, meta: None }
    }

    /// A cancelled request.
    pub(crate) fn cancel() -> Self {
        ElicitResult { action: ElicitAction::Cancel, content: None, meta: None }
    }
}

/// The params of `notifications/elicitation/complete` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitationCompleteParams {
    /// The URL elicitation that completed.
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The `data` of a URL-elicitation-required error (code -32042,
/// 2025-11-25): the elicitations to complete before retrying.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UrlElicitationRequiredData {
    /// The URL elicitations required.
    pub elicitations: Vec<ElicitUrlParams>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form_json() -> Value {
        json!({
            "message": "Please provide your contact information",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Your full name"},
                    "email": {"type": "string", "format": "email"},
                    "age": {"type": "number", "minimum": 18}
                },
                "required": ["name", "email"]
            }
        })
    }

    #[test]
    fn missing_mode_means_form() {
        let p: ElicitRequestParams = serde_json::from_value(form_json()).unwrap();
        assert_eq!(p.mode(), ElicitationMode::Form);
        assert_eq!(p.message(), "Please provide your contact information");
        let ElicitRequestParams::Form(f) = &p else { panic!() };
        assert_eq!(f.requested_schema["required"][1], "email");
        // Written back exactly as read: no `mode` added.
        assert_eq!(serde_json::to_value(&p).unwrap(), form_json());
    }

    #[test]
    fn explicit_form_mode() {
        let mut raw = form_json();
        raw["mode"] = json!("form");
        raw["task"] = json!({"ttl": 1000});
        let p: ElicitRequestParams = serde_json::from_value(raw).unwrap();
        assert_eq!(p.mode(), ElicitationMode::Form);
        assert_eq!(p.task(), Some(&TaskMetadata { ttl: Some(1000) }));
    }

    #[test]
    fn url_mode_from_spec() {
        let raw = json!({
            "mode": "url",
            "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
            "url": "https://mcp.example.com/ui/set_api_key",
            "message": "Please provide your API key to continue."
        });
        let p: ElicitRequestParams = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(p.mode(), ElicitationMode::Url);
        let ElicitRequestParams::Url(u) = &p else { panic!() };
        assert_eq!(u.elicitation_id.as_deref(), Some("550e8400-e29b-41d4-a716-446655440000"));
        assert_eq!(serde_json::to_value(&p).unwrap(), raw);
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"mode":"url","message":"Please provide your API key to continue.","url":"https://mcp.example.com/ui/set_api_key","elicitationId":"550e8400-e29b-41d4-a716-446655440000"}"#
        );
    }

    #[test]
    fn bad_modes_and_shapes_are_errors() {
        let mut raw = form_json();
        raw["mode"] = json!("telepathy");
        assert!(serde_json::from_value::<ElicitRequestParams>(raw).is_err());
        assert!(
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"})).is_err()
        );
        assert!(serde_json::from_value::<ElicitRequestParams>(json!([1])).is_err());
    }

    #[test]
    fn results_and_completion() {
        let r: ElicitResult = serde_json::from_value(json!({
            "action": "accept", "content": {"name": "Monalisa Octocat", "email": "octocat@github.com", "age": 30}
        }))
        .unwrap();
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(r.content.as_ref().unwrap()["age"], 30);
        assert_eq!(serde_json::to_string(&ElicitResult::decline()).unwrap(), r#"{"action":"decline"}"#);
        assert_eq!(serde_json::to_string(&ElicitResult::cancel()).unwrap(), r#"{"action":"cancel"}"#);
        let c: ElicitationCompleteParams =
            serde_json::from_value(json!({"elicitationId": "550e8400-e29b-41d4-a716-446655440000"})).unwrap();
        assert_eq!(c.elicitation_id, "550e8400-e29b-41d4-a716-446655440000");
        let d: UrlElicitationRequiredData = serde_json::from_value(json!({"elicitations": [{
            "mode": "url", "elicitationId": "e1", "url": "https://example.com/auth", "message": "Authorize"
        }]}))
        .unwrap();
        assert_eq!(d.elicitations[0].url, "https://example.com/auth");
    }
}
