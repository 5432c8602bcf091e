//! [`ToolFilter`]: which tools a binding may see and call.

/// Which tools a binding may see and call, by raw name.
///
/// Enforced at call time (a refused call never leaves the client: see
/// [`crate::layer::tool_filter`]) and applied to what the catalog and
/// `tools/list` show.
///
/// ```
/// use mcp_stack::ToolFilter;
///
/// let f = ToolFilter::default().with_allowed(["search", "delete"]).with_denied(["delete"]);
/// assert!(f.permits("search"));
/// assert!(!f.permits("delete"), "deny wins over allow");
/// assert!(!f.permits("other"), "not in the allowed set");
/// assert!(ToolFilter::default().permits("anything"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// `None`: every tool not denied. `Some`: only these (an empty set
    /// permits none).
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) deny: Vec<String>,
}

impl ToolFilter {
    /// The complete set of permitted raw names, if the filter names one
    /// (by default it does not: every tool not denied is permitted).
    pub fn allowed(&self) -> Option<&[String]> {
        self.allow.as_deref()
    }

    /// Permits only these raw names (deny still wins). An empty set permits
    /// no tool at all.
    pub fn with_allowed<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Raw names that are always refused.
    pub fn denied(&self) -> &[String] {
        &self.deny
    }

    /// Refuses these raw names, in place of any denied before; deny wins
    /// over allow.
    pub fn with_denied<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny = names.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the tool `raw_name` is permitted.
    pub fn permits(&self, raw_name: &str) -> bool {
        if self.deny.iter().any(|d| d == raw_name) {
            return false;
        }
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(|a| a == raw_name))
    }

    /// Whether the filter permits every tool.
    pub fn is_unrestricted(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }
}
