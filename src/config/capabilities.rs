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
    pub tasks: bool,
}
