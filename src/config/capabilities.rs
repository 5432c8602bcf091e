//! Which optional client capabilities a host allows a binding to advertise.

/// The optional client capabilities a binding advertises. A capability is
/// advertised only when it is set here *and* the host installed the handler
/// that serves it.
///
/// ```
/// use mcp_stack::AllowedCapabilities;
///
/// let caps = AllowedCapabilities::default().with_elicitation(true).with_roots(true);
/// assert!(caps.elicitation() && caps.roots() && !caps.sampling());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllowedCapabilities {
    pub(crate) elicitation: bool,
    pub(crate) sampling: bool,
    pub(crate) roots: bool,
    pub(crate) tasks: bool,
}

impl AllowedCapabilities {
    /// No optional capability (the default), for a `const`.
    pub const fn none() -> Self {
        AllowedCapabilities { elicitation: false, sampling: false, roots: false, tasks: false }
    }

    /// Every optional capability allowed (each still advertised only when
    /// its handler is installed).
    pub fn all() -> Self {
        AllowedCapabilities { elicitation: true, sampling: true, roots: true, tasks: true }
    }

    /// Whether the server may ask a person for input.
    pub fn elicitation(&self) -> bool {
        self.elicitation
    }

    /// With elicitation allowed or not.
    pub const fn with_elicitation(mut self, allowed: bool) -> Self {
        self.elicitation = allowed;
        self
    }

    /// Whether the server may ask for model completions.
    pub fn sampling(&self) -> bool {
        self.sampling
    }

    /// With sampling allowed or not.
    pub const fn with_sampling(mut self, allowed: bool) -> Self {
        self.sampling = allowed;
        self
    }

    /// Whether the server may ask for the host's filesystem roots.
    pub fn roots(&self) -> bool {
        self.roots
    }

    /// With roots allowed or not.
    pub const fn with_roots(mut self, allowed: bool) -> Self {
        self.roots = allowed;
        self
    }

    /// Tasks, both ways. The server may answer a tool call with a task,
    /// which the binding follows to its result: on 2026-07-28 this declares
    /// the Tasks extension (`io.modelcontextprotocol/tasks`) on every
    /// request (a 2025-11-25 server makes a task only when asked to, with
    /// [`Binding::call_tool_task`](crate::Binding::call_tool_task)). And on
    /// 2025-11-25 the server may ask the client to run its elicitation or
    /// sampling requests as tasks: `initialize` declares the `tasks`
    /// capability for those whose handler is installed and allowed, and the
    /// binding answers the server's `tasks/get`, `tasks/result`,
    /// `tasks/list` and `tasks/cancel` for the tasks it holds (at most 64,
    /// each for its TTL, at most an hour).
    pub fn tasks(&self) -> bool {
        self.tasks
    }

    /// With tasks allowed or not.
    pub const fn with_tasks(mut self, allowed: bool) -> Self {
        self.tasks = allowed;
        self
    }
}
