use std::fmt;

/// The binding's tool filter does not permit the tool. Found as the `source`
/// of an [`Error`](crate::Error) of class `tool_unavailable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filtered {
    /// The raw name that was refused (bounded and normalized).
    pub tool: String,
}

impl fmt::Display for Filtered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool {:?} is not available: the binding's tool filter does not permit it", self.tool)
    }
}

impl std::error::Error for Filtered {}
