//! Which protocol era a binding may speak: [`ProtocolChoice`].

use std::fmt;

use crate::error::{Error, FailureClass};
use crate::protocol::{is_modern_version, is_supported_version};

/// Which protocol era, or which version, a binding speaks.
///
/// - [`Auto`](ProtocolChoice::Auto), the default: try the modern era first
///   (`server/discover`); a result or a recognized modern error means the
///   server is modern, any other error (or no answer within
///   5 s) means legacy, and `initialize` follows
///   on the same connection. Every peer a user compares a client with
///   (the official SDKs) chooses this way, so a binding does too.
/// - [`Legacy`](ProtocolChoice::Legacy): only the `initialize` handshake
///   (2024-11-05 to 2025-11-25), with no probe first.
/// - [`Modern`](ProtocolChoice::Modern): only the per-request era
///   (2026-07-28); a legacy server fails the dial.
/// - [`Pinned`](ProtocolChoice::Pinned): exactly one version, of either
///   era; a server that will not speak it fails with `unsupported_protocol`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// Modern first, legacy as the fallback. The default.
    #[default]
    Auto,
    /// The `initialize` era only.
    Legacy,
    /// The 2026-07-28 era only.
    Modern,
    /// One version exactly.
    Pinned(String),
}

impl ProtocolChoice {
    /// Parses `auto`, `legacy`, `modern` or a version this crate speaks.
    pub fn parse(text: &str) -> Result<Self, Error> {
        match text.trim() {
            "auto" => Ok(ProtocolChoice::Auto),
            "legacy" => Ok(ProtocolChoice::Legacy),
            "modern" => Ok(ProtocolChoice::Modern),
            v if is_supported_version(v) || is_modern_version(v) => Ok(ProtocolChoice::Pinned(v.to_string())),
            other => Err(Error::new(
                FailureClass::InvalidConfig,
                format!(
                    "{:?} is not a protocol choice: use auto, legacy, modern or a version this client speaks",
                    crate::error::normalize_message(other, 64)
                ),
            )),
        }
    }

    /// Whether the choice may speak the modern era.
    pub fn allows_modern(&self) -> bool {
        match self {
            ProtocolChoice::Auto | ProtocolChoice::Modern => true,
            ProtocolChoice::Legacy => false,
            ProtocolChoice::Pinned(v) => is_modern_version(v),
        }
    }

    /// Whether the choice may speak the legacy era.
    pub fn allows_legacy(&self) -> bool {
        match self {
            ProtocolChoice::Auto | ProtocolChoice::Legacy => true,
            ProtocolChoice::Modern => false,
            ProtocolChoice::Pinned(v) => is_supported_version(v),
        }
    }

    /// The pinned version, if one is.
    pub fn pinned(&self) -> Option<&str> {
        match self {
            ProtocolChoice::Pinned(v) => Some(v),
            _ => None,
        }
    }

    /// Checks a pinned version is one this crate speaks.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            ProtocolChoice::Pinned(v) if !is_supported_version(v) && !is_modern_version(v) => {
                Err(Error::new(
                    FailureClass::InvalidConfig,
                    format!("the pinned protocol version {:?} is not one this client speaks", v),
                ))
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for ProtocolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolChoice::Auto => f.write_str("auto"),
            ProtocolChoice::Legacy => f.write_str("legacy"),
            ProtocolChoice::Modern => f.write_str("modern"),
            ProtocolChoice::Pinned(v) => f.write_str(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_every_choice() {
        for text in ["auto", "legacy", "modern", "2026-07-28", "2025-11-25"] {
            assert_eq!(ProtocolChoice::parse(text).unwrap().to_string(), text);
        }
        let e = ProtocolChoice::parse("1999-01-01").unwrap_err();
        assert_eq!(e.class(), FailureClass::InvalidConfig);
        assert!(ProtocolChoice::Pinned("2026-07-28".into()).allows_modern());
        assert!(!ProtocolChoice::Pinned("2026-07-28".into()).allows_legacy());
        assert_eq!(ProtocolChoice::default(), ProtocolChoice::Auto, "auto is the default");
        assert!(ProtocolChoice::default().allows_modern() && ProtocolChoice::default().allows_legacy());
    }
}
