#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

#[cfg(feature = "oauth")]
pub mod auth;
mod binding;
pub mod cache;
mod canonical;
pub mod catalog;
pub mod compat;
mod config;
pub mod connection;
mod content;
#[cfg(feature = "demo")]
pub mod demo;
pub mod era;
mod error;
mod events;
mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod handlers;
pub mod host;
pub mod layer;
pub mod protocol;
pub mod providers;
pub mod redact;
mod request;
mod serialize;
pub mod session;
pub mod skills;
pub mod tasks;
pub mod transport;

// The everyday types live at the root, each at this one path: a binding and
// what configures it, the requests and responses of its stack, the results
// it hands back, its events and its errors. Everything else is in the module
// of its concern.
pub use binding::{
    Binding, BindingBuilder, BindingFuture, BindingService, Definition, Listing, StackParts, Status,
    TaskHandle, TaskStart,
};
pub use config::{
    AllowedCapabilities, ClientExtensions, Limits, ProtocolChoice, ReconnectPolicy, RepeatableTools,
    RetryPolicy, Timeouts, ToolFilter,
};
pub use content::{
    Content, Dropped, Mark, PromptMessage, PromptResult, ResourceContent, ResourceResult, ResultMarks,
    ToolResult,
};
pub use error::{BoxError, Error, ErrorReport, FailureClass, Result};
pub use events::{Event, EventHandler, EventItem, EventStream, Failure, SampleOutcome, State};
pub use request::{BoxMcpService, CallOpts, McpRequest, McpResponse, ProgressSink, ProgressUpdate};
pub use tasks::{TaskInfo, TaskStatus};
