//! [`Secret`]: a string that never prints.

use std::fmt;

use crate::redact::Registration;

/// A token, client secret, authorization code, PKCE verifier or `state`.
///
/// Its `Debug` prints `[redacted]` and it has no `Display`, so a secret
/// inside any struct, error or tracing field cannot leak by formatting; the
/// value comes out only through [`Secret::expose`], which names the intent at
/// the one place that sends it. It has no `Serialize` either: the stores
/// write secrets through their own private file format.
///
/// A secret is also known to the crate's [redaction point](crate::redact)
/// for as long as a copy of it lives (and a while after), so that a server
/// that quotes it back (an error page reflecting the request's headers, an
/// authorization server answering with the client secret as its `error`)
/// has it removed from every error, event and log line.
#[derive(Clone)]
pub struct Secret {
    value: String,
    _known: Registration,
}

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        let _known = crate::redact::register(&value);
        Self { value, _known }
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.value
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let secret = Secret::new("sentinel-7f3a");
        assert_eq!(format!("{secret:?}"), "[redacted]");
        assert_eq!(format!("{secret:#?}"), "[redacted]");
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Holder {
            token: Secret,
            other: Option<Secret>,
        }
        let holder = Holder { token: secret.clone(), other: Some(secret.clone()) };
        assert!(!format!("{holder:?}").contains("sentinel"));
        assert!(!format!("{holder:#?}").contains("sentinel"));
        assert_eq!(secret.expose(), "sentinel-7f3a");
    }

    #[test]
    fn a_secret_is_scrubbed_from_quoted_text_while_it_lives() {
        let secret = Secret::new("sentinel-scrub-91c2");
        let quoted = crate::error::normalize_message("upstream said: sentinel-scrub-91c2", 256);
        assert_eq!(quoted, "upstream said: [redacted]");
        assert_eq!(secret.expose(), "sentinel-scrub-91c2");
    }
}
