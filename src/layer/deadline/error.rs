use std::fmt;
use std::time::Duration;

/// The call's deadline passed before its reply. Found as the `source` of an
/// [`Error`](crate::Error) of class `deadline`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elapsed {
    /// The method of the call that ran out of time.
    pub method: String,
    /// How long the call had, from entering the layer to its deadline (zero
    /// when the deadline was already past).
    pub allowed: Duration,
    /// Whether the deadline passed while waiting for the service to become
    /// ready, that is before the request was sent.
    pub before_sending: bool,
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let when = if self.before_sending { "waiting to send" } else { "waiting for the reply" };
        write!(f, "{} exceeded its deadline of {:?} while {when}", self.method, self.allowed)
    }
}

impl std::error::Error for Elapsed {}
