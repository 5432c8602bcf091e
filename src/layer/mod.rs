//! The per-binding middleware, one concern per module, each a
//! `tower::Layer`.
//!
//! A binding's default stack is assembled in [`crate::binding`], outermost
//! first; each module documents what it adds and why it sits where it does.

pub mod deadline;
pub mod progress;
pub mod reconnect;
pub mod result_limit;
pub mod retry;
pub mod tool_filter;
pub mod tool_gate;

pub use deadline::{Deadline, DeadlineLayer};
pub use progress::{ProgressLayer, ProgressRouter, ProgressTracker};
pub use reconnect::{Dialer, Reconnect, ReconnectLayer, ReconnectPolicy};
pub use result_limit::{ResultLimit, ResultLimitLayer};
pub use retry::{RetryPolicy, SafeRetry};
pub use tool_filter::{ToolFilterLayer, ToolFilterService};
pub use tool_gate::{ToolCallGate, ToolCallGateLayer};
