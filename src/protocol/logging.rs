//! Logging: `logging/setLevel` and `notifications/message`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// A log severity (RFC 5424 syslog levels), ordered from least to most
/// severe: `Debug < Info < … < Emergency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The level as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no [`LoggingLevel`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown logging level {0:?}")]
pub struct ParseLoggingLevelError(pub String);

impl FromStr for LoggingLevel {
    type Err = ParseLoggingLevelError;

    /// Parses a wire name, exactly (lowercase).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoggingLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == s)
            .ok_or_else(|| ParseLoggingLevelError(s.to_owned()))
    }
}

/// The params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetLevelParams {
    /// The least severe level the client wants to receive.
    pub level: LoggingLevel,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The params of `notifications/message`: one log message from the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoggingMessageParams {
    /// The severity.
    pub level: LoggingLevel,
    /// The name of the logger that issued it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The payload: a string or any JSON value.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_are_ordered_by_severity() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Warning < LoggingLevel::Error);
        assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
        let mut shuffled = vec![LoggingLevel::Error, LoggingLevel::Debug, LoggingLevel::Emergency];
        shuffled.sort();
        assert_eq!(shuffled, [LoggingLevel::Debug, LoggingLevel::Error, LoggingLevel::Emergency]);
        assert!(LoggingLevel::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn display_and_from_str_round_trip() {
        for level in LoggingLevel::ALL {
            assert_eq!(level.to_string().parse::<LoggingLevel>().unwrap(), level);
            assert_eq!(serde_json::to_value(level).unwrap(), json!(level.as_str()));
        }
        assert_eq!("verbose".parse::<LoggingLevel>(), Err(ParseLoggingLevelError("verbose".into())));
        assert!("INFO".parse::<LoggingLevel>().is_err());
    }

    #[test]
    fn message_from_spec() {
        let m: LoggingMessageParams = serde_json::from_value(json!({
            "level": "error", "logger": "database",
            "data": {"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}
        }))
        .unwrap();
        assert_eq!(m.level, LoggingLevel::Error);
        assert_eq!(m.data["details"]["port"], 5432);
        let s = SetLevelParams { level: LoggingLevel::Info, meta: None };
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"level":"info"}"#);
        let m =
            LoggingMessageParams { level: LoggingLevel::Debug, logger: None, data: json!("x"), meta: None };
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"level":"debug","data":"x"}"#);
    }
}
