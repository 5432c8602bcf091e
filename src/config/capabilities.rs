//! Which optional client capabilities a host allows a binding to advertise.

/// The optional client capabilities a binding advertises. A capability is
/// advertised only when it is set here *and* the host installed the handler
/// that serves it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllowedCapabilities {
    /// The server may ask a person for input.
    pub elicitation: bool,
    /// The server may ask for model completions.
    pub sampling: bool,
    /// The server may ask for the host's filesystem roots.
    pub roots: bool,
}
