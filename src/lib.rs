//! A bounded, deadline-driven client for hosts that consume many MCP servers,
//! built as tower layers.
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod error;
pub mod limits;
pub mod protocol;
pub mod transport;

pub use error::{Error, FailureClass, Result};
pub use limits::{Limits, Timeouts};
