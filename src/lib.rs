#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod binding;
pub mod catalog;
pub mod connection;
pub mod content;
#[cfg(feature = "demo")]
pub mod demo;
pub mod era;
pub mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod layer;
pub mod limits;
pub mod protocol;
pub mod request;
pub mod session;
pub mod transport;

pub use binding::{
    Binding, ClientCapabilities, Definition, ElicitRequest, ElicitResult, Event, Handlers, LogMessage,
    SampleRequest, SampleResult, State, Status, ToolFilter,
};
pub use content::{Content, ToolResult};
pub use error::{Error, FailureClass, Result};
pub use layer::reconnect::ReconnectPolicy;
pub use layer::retry::RetryPolicy;
pub use limits::{Limits, Timeouts};
pub use request::{CallOpts, Progress};
