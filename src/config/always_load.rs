//! [`AlwaysLoad`]: which of a server's tools a host keeps in front of its
//! model when tool definitions are deferred.

/// Which of a binding's tools are always loaded when a host defers tool
/// definitions ([`providers::exposure`](crate::providers::exposure)):
/// sent every turn instead of found through `search_tools`. A tool whose
/// `_meta` says `"anthropic/alwaysLoad": true` is always loaded too,
/// whatever this says; the result is on
/// [`ToolSpec::always_load`](crate::catalog::ToolSpec::always_load).
///
/// In a config file, an entry's `"alwaysLoad": true` is [`AlwaysLoad::All`]
/// and `"alwaysLoad": ["search", "read"]` names raw tool names.
///
/// ```
/// use mcp_stack::AlwaysLoad;
///
/// let some = AlwaysLoad::Tools(vec!["search".into()]);
/// assert!(some.includes("search") && !some.includes("delete"));
/// assert!(AlwaysLoad::All.includes("anything"));
/// assert!(!AlwaysLoad::default().includes("search"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AlwaysLoad {
    /// Only the tools whose `_meta` asks (the default).
    #[default]
    AsServerAsks,
    /// Every tool of the server: for a small server a model needs on every
    /// turn.
    All,
    /// These tools, by raw name.
    Tools(Vec<String>),
}

impl AlwaysLoad {
    /// Whether the tool `raw_name` is always loaded by this setting (the
    /// tool's own `_meta` aside).
    pub fn includes(&self, raw_name: &str) -> bool {
        match self {
            AlwaysLoad::AsServerAsks => false,
            AlwaysLoad::All => true,
            AlwaysLoad::Tools(names) => names.iter().any(|n| n == raw_name),
        }
    }
}
