use std::fmt;

use crate::error::{Error, FailureClass};

/// Why a [`Reconnect`](super::Reconnect) has no connection and will not get
/// one again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The connection was lost and the policy forbids reconnecting
    /// ([`ReconnectPolicy::never`](super::ReconnectPolicy::never)).
    Disabled,
    /// Reconnecting failed this many times and the policy's budget (attempts
    /// or total time) is spent.
    Exhausted {
        /// Attempts made.
        attempts: u32,
    },
    /// The service was closed on purpose.
    Closed,
}

/// The service is unavailable for good: the one error
/// [`Reconnect`](super::Reconnect)'s `poll_ready` returns. Found as the
/// `source` of an [`Error`] of class `transport_closed` (or `shutdown` when
/// [`Reason::Closed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// Why there is no connection.
    pub reason: Reason,
    /// The class of the failure that ended the last connection or attempt
    /// (`shutdown` when closed).
    pub class: FailureClass,
    /// That failure's bounded text.
    pub message: String,
}

impl Unavailable {
    /// The crate error callers get: `shutdown` after a close, otherwise
    /// `transport_closed`, with `self` as its source.
    pub fn to_error(&self) -> Error {
        let class = match self.reason {
            Reason::Closed => FailureClass::Shutdown,
            Reason::Disabled | Reason::Exhausted { .. } => FailureClass::TransportClosed,
        };
        Error::new(class, self.to_string()).with_source(self.clone())
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            Reason::Closed => f.write_str("the binding is closed"),
            Reason::Disabled => {
                write!(
                    f,
                    "the connection was lost and reconnecting is disabled ({}: {})",
                    self.class, self.message
                )
            }
            Reason::Exhausted { attempts } => write!(
                f,
                "gave up reconnecting after {attempts} attempt{} ({}: {})",
                if attempts == 1 { "" } else { "s" },
                self.class,
                self.message
            ),
        }
    }
}

impl std::error::Error for Unavailable {}
