//! [`Secret`]: a string that never prints.

use std::fmt;

/// A token, client secret, authorization code, PKCE verifier or `state`.
///
/// Its `Debug` prints `[redacted]` and it has no `Display`, so a secret
/// inside any struct, error or tracing field cannot leak by formatting; the
/// value comes out only through [`Secret::expose`], which names the intent at
/// the one place that sends it. It has no `Serialize` either: the stores
/// write secrets through their own private file format.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
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
}
