//! Progress and cancellation notifications (`notifications/progress`,
//! `notifications/cancelled`).

use super::jsonrpc::RequestId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The key under a request's `_meta` that asks for progress notifications.
pub(crate) const PROGRESS_TOKEN_META_KEY: &str = "progressToken";

/// A token tying progress notifications to the request that asked for them:
/// a string or an integer, like a [`RequestId`]. Read by a visitor of its
/// own: serde's untagged derive buffers the value and tries each variant,
/// 2,500 instructions of every progress notification over HTTP
/// (callgrind, `bench/vs-rmcp --only progress`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub(crate) enum ProgressToken {
    /// A numeric token.
    Number(i64),
    /// A string token.
    String(String),
}

impl<'de> Deserialize<'de> for ProgressToken {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Token;
        impl serde::de::Visitor<'_> for Token {
            type Value = ProgressToken;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ProgressToken, E> {
                Ok(ProgressToken::Number(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ProgressToken, E> {
                i64::try_from(n)
                    .map(ProgressToken::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(s))
            }
        }
        deserializer.deserialize_any(Token)
    }
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::Number(n) => write!(f, "{n}"),
            ProgressToken::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl From<RequestId> for ProgressToken {
    fn from(id: RequestId) -> Self {
        match id {
            RequestId::Number(n) => ProgressToken::Number(n),
            RequestId::String(s) => ProgressToken::String(s),
        }
    }
}

/// The params of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; should increase, even when the total is unknown.
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening (2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `notifications/cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    /// The request to cancel. Required before 2025-11-25; optional since,
    /// where tasks are cancelled with `tasks/cancel` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_token_is_a_string_or_an_integer() {
        let read = |v: Value| serde_json::from_value::<ProgressToken>(v).ok();
        assert_eq!(read(json!(7)), Some(ProgressToken::Number(7)));
        assert_eq!(read(json!(-7)), Some(ProgressToken::Number(-7)));
        assert_eq!(read(json!("t-1")), Some(ProgressToken::String("t-1".into())));
        assert_eq!(
            serde_json::from_str::<ProgressToken>(r#""t\"2""#).ok(),
            Some(ProgressToken::String("t\"2".into()))
        );
        for bad in [json!(1.5), json!(u64::MAX), json!(null), json!(true), json!([1]), json!({"a": 1})] {
            assert_eq!(read(bad.clone()), None, "{bad}");
        }
        assert_eq!(serde_json::to_value(ProgressToken::Number(3)).unwrap(), json!(3));
        assert_eq!(serde_json::to_value(ProgressToken::from("x")).unwrap(), json!("x"));
    }

    #[test]
    fn progress_from_spec() {
        let p: ProgressParams = serde_json::from_value(json!({
            "progressToken": "abc123", "progress": 50, "total": 100, "message": "Reticulating splines..."
        }))
        .unwrap();
        assert_eq!(p.progress_token, ProgressToken::from("abc123"));
        assert_eq!(p.progress, 50.0);
        assert_eq!(p.total, Some(100.0));
        let p: ProgressParams = serde_json::from_value(json!({"progressToken": 7, "progress": 0.5})).unwrap();
        assert_eq!(p.progress_token, ProgressToken::Number(7));
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"progressToken":7,"progress":0.5}"#);
    }

    #[test]
    fn cancelled_with_and_without_id() {
        let c: CancelledParams =
            serde_json::from_value(json!({"requestId": "123", "reason": "User requested cancellation"}))
                .unwrap();
        assert_eq!(c.request_id, Some(RequestId::String("123".into())));
        let c = CancelledParams { request_id: Some(RequestId::Number(4)), ..Default::default() };
        assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"requestId":4}"#);
        assert_eq!(serde_json::to_string(&CancelledParams::default()).unwrap(), "{}");
    }
}
