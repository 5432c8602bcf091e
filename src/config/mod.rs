//! What a binding is configured with, below everything that uses it: the
//! bounds ([`Limits`]), the deadlines ([`Timeouts`]) and the tool policy
//! ([`ToolFilter`]). The transport, the layers, the catalog and the binding
//! all read these; none of them is imported from a higher module.

mod always_load;
mod capabilities;
pub(crate) mod extensions;
pub(crate) mod limits;
mod protocol;
mod reconnect;
mod retry;
mod tool_filter;

pub use always_load::AlwaysLoad;
pub use capabilities::AllowedCapabilities;
pub use extensions::ClientExtensions;
pub use limits::{Limits, Timeouts};
pub use protocol::ProtocolChoice;
pub use reconnect::ReconnectPolicy;
pub use retry::{RepeatableTools, RetryPolicy};

pub use tool_filter::ToolFilter;
