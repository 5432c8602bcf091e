//! [`ToolFilter`]: which tools a binding may see and call.

/// Which tools a binding may see and call, by raw name.
///
/// Enforced at call time (a refused call never leaves the client: see
/// [`crate::layer::tool_filter`]) and applied to what the catalog and
/// `tools/list` show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// When non-empty, the complete set of permitted raw names.
    pub allow: Vec<String>,
    /// Raw names that are always refused; deny wins over allow.
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool `raw_name` is permitted.
    pub fn permits(&self, raw_name: &str) -> bool {
        if self.deny.iter().any(|d| d == raw_name) {
            return false;
        }
        self.allow.is_empty() || self.allow.iter().any(|a| a == raw_name)
    }

    /// Whether the filter permits every tool.
    pub fn is_unrestricted(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}
