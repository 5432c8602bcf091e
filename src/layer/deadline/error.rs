use std::fmt;
use std::time::Duration;

/// The call's deadline passed before its reply. Found as the `source` of an
/// [`Error`](crate::Error) of class `deadline`.
///
/// It says nothing about whether the server saw the request: a call that
/// timed out may have been processed (treat it as such unless the method is
/// safe to repeat).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elapsed {
    /// The method of the call that ran out of time.
    pub method: String,
    /// How long the call had, from entering the layer to its deadline (zero
    /// when the deadline was already past).
    pub allowed: Duration,
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} exceeded its deadline of {}", self.method, crate::error::for_people(self.allowed))
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for crate::Error {
    fn from(cause: Elapsed) -> Self {
        crate::Error::new(crate::FailureClass::Deadline, cause.to_string()).with_source(cause)
    }
}
