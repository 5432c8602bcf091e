//! The headers of the HTTP transports: the custom ones a definition sets
//! ([`SecretHeaders`], kept secret), the names the transports reserve for
//! themselves, and the headers of one request ([`RequestHeaders`]).
//!
//! Apart from the redirect loop that decides which of them cross origins
//! ([`HttpClient`](super::client::HttpClient)), so that what is secret about
//! a header is in one place.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::fmt;

use crate::error::{normalize_message, Error, FailureClass};

/// `Mcp-Session-Id`.
pub(crate) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
pub(crate) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Last-Event-ID`.
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// Headers the transports set themselves; a factory refuses them as custom
/// headers.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// Custom headers sent with every request of a definition (an API key, a
/// bearer token). Their values are marked sensitive and never printed:
/// `Debug` shows the names only. They are known to the crate's
/// [redaction point](crate::redact) while the headers live, so a server
/// that quotes one back has it removed from errors, events and logs.
#[derive(Clone, Default)]
pub struct SecretHeaders {
    pub(super) entries: Vec<(HeaderName, HeaderValue)>,
    pub(super) known: Vec<crate::redact::Registration>,
}

impl fmt::Debug for SecretHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|(name, _)| name.as_str())).finish()
    }
}

impl SecretHeaders {
    /// Adds a header. The name must be a valid header name that the
    /// transport does not set itself; the value must be visible ASCII. The
    /// error never quotes the value.
    pub fn insert(&mut self, name: &str, value: &str) -> Result<(), Error> {
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            Error::new(
                FailureClass::InvalidConfig,
                format!("{:?} is not a valid header name", normalize_message(name, 64)),
            )
        })?;
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(Error::new(
                FailureClass::InvalidConfig,
                format!("the header {name} is set by the transport and cannot be configured"),
            ));
        }
        let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
            Error::new(FailureClass::InvalidConfig, format!("the value of header {name} is not valid"))
        })?;
        value.set_sensitive(true);
        self.known.extend(secret_parts(value.to_str().unwrap_or_default()).map(crate::redact::register));
        self.entries.retain(|(n, _)| n != name);
        self.entries.push((name, value));
        Ok(())
    }

    /// Parses `"Name: value"` (as a command line takes it) and adds it.
    pub fn insert_line(&mut self, line: &str) -> Result<(), Error> {
        let Some((name, value)) = line.split_once(':') else {
            return Err(Error::new(FailureClass::InvalidConfig, "a header must be written as 'Name: value'"));
        };
        self.insert(name, value)
    }

    /// The header names, in the order they were set.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(name, _)| name.as_str())
    }

    /// How many headers are set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no header is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A secret value as a server could quote it back: whole, and, for a value
/// of the `Scheme credential` shape (`Authorization`), the credential alone.
pub(crate) fn secret_parts(value: &str) -> impl Iterator<Item = &str> {
    let credential = value.split_once(' ').map(|(_, c)| c.trim());
    std::iter::once(value).chain(credential)
}

/// Headers of one request that the transport sets.
#[derive(Default, Clone)]
pub(crate) struct RequestHeaders {
    /// Sent on every hop (`Accept`, `Content-Type`, `MCP-Protocol-Version`,
    /// `Last-Event-ID`).
    pub(crate) public: HeaderMap,
    /// `Mcp-Session-Id`: sent only while the request stays on the configured
    /// origin.
    pub(crate) session: Option<HeaderValue>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_never_printed() {
        let mut h = SecretHeaders::default();
        h.insert("Authorization", "Bearer s3cret").unwrap();
        h.insert_line("X-Api-Key: s3cret2").unwrap();
        let shown = format!("{h:?}");
        assert_eq!(shown, r#"["authorization", "x-api-key"]"#);
        let e = h.insert("X-Bad", "s3cret\nInjected: x").unwrap_err();
        assert!(!e.to_string().contains("s3cret"));
        assert!(h.insert("Mcp-Session-Id", "x").is_err());
        assert!(h.insert_line("no colon s3cret").is_err());
        assert!(!h.insert_line("no colon s3cret").unwrap_err().to_string().contains("s3cret"));
    }
}
