#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

#[cfg(feature = "oauth")]
pub mod auth;
pub mod binding;
mod canonical;
pub mod catalog;
pub mod compat;
pub mod config;
pub mod connection;
pub mod content;
#[cfg(feature = "demo")]
pub mod demo;
pub mod era;
pub mod error;
pub mod events;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod handlers;
pub mod host;
pub mod layer;
pub mod protocol;
pub mod providers;
pub mod redact;
pub mod request;
mod serialize;
pub mod session;
pub mod transport;

pub use binding::{Binding, Definition, Status};
pub use config::{
    limits, AllowedCapabilities, Limits, ProtocolChoice, ReconnectPolicy, RetryPolicy, Timeouts, ToolFilter,
};
pub use content::{Content, ToolResult};
pub use error::{Error, ErrorReport, FailureClass, Result};
pub use events::{Event, State};
pub use handlers::{ElicitRequest, ElicitResult, Handlers, LogMessage, SampleRequest, SampleResult};
pub use host::Host;
pub use request::{CallOpts, McpRequest, McpResponse, Progress};
