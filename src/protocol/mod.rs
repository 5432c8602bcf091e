//! The wire model: the JSON-RPC envelope and serde types for every MCP
//! message this crate sends or reads.
//!
//! Types tolerate unknown fields (servers add them freely) and keep the
//! `_meta` bags they carry. Documents that are schemas, such as a tool's
//! input schema, stay raw [`serde_json::Value`]s: they are data to pass on,
//! not domain types.

pub mod completion;
pub mod content;
pub mod elicitation;
pub mod family;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod methods;
mod open_enum;
pub mod pagination;
pub mod progress;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod tasks;
pub mod tools;

pub use family::Family;
pub use jsonrpc::{ErrorObject, Message, Notification, Outcome, Request, RequestId, Response};

pub use completion::{
    CompleteParams, CompleteResult, Completion, CompletionArgument, CompletionContext, CompletionReference,
};
pub use content::{
    Annotations, AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, Icon, IconTheme,
    ImageContent, ResourceContents, Role, TextContent, TextResourceContents,
};
pub use elicitation::{
    ElicitAction, ElicitFormParams, ElicitRequestParams, ElicitResult, ElicitUrlParams,
    ElicitationCompleteParams, ElicitationMode, UrlElicitationRequiredData,
};
pub use lifecycle::{
    ClientCapabilities, ElicitationCapability, Implementation, InitializeParams, InitializeResult,
    PromptsCapability, ResourcesCapability, RootsCapability, SamplingCapability, ServerCapabilities,
    ToolsCapability,
};
pub use logging::{LoggingLevel, LoggingMessageParams, ParseLoggingLevelError, SetLevelParams};
pub use pagination::{Cursor, PaginatedParams};
pub use progress::{CancelledParams, ProgressParams, ProgressToken};
pub use prompts::{
    GetPromptParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage,
};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams, ReadResourceResult, Resource,
    ResourceTemplate, ResourceUpdatedParams, SubscribeParams, UnsubscribeParams,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences, OneOrMany,
    SamplingContent, SamplingMessage, ToolChoice, ToolChoiceMode, ToolResultContent, ToolUseContent,
};
pub use tasks::{
    CreateTaskResult, GetTaskParams, ListTasksResult, RelatedTaskMetadata, Task, TaskMetadata, TaskStatus,
};
pub use tools::{
    CallToolParams, CallToolResult, ListToolsResult, TaskSupport, Tool, ToolAnnotations, ToolExecution,
};

/// The protocol versions this crate speaks, newest first.
///
/// This list is the one place the supported versions live; the handshake,
/// the HTTP header logic and the tests all read it.
pub const SUPPORTED_VERSIONS: &[&str] = &[LATEST_LEGACY_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"];

/// The newest version of the legacy era (the `initialize` handshake), which
/// the client proposes in `initialize`.
pub const LATEST_LEGACY_VERSION: &str = "2025-11-25";

/// Whether `version` is one this crate speaks in the legacy era.
pub fn is_supported_version(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}

/// The protocol versions of the modern era (per-request `_meta`, no
/// handshake) this crate speaks, newest first.
pub const MODERN_VERSIONS: &[&str] = &[LATEST_MODERN_VERSION];

/// The newest modern-era version, which a modern request proposes first.
pub const LATEST_MODERN_VERSION: &str = "2026-07-28";

/// Whether `version` is a modern-era version this crate speaks.
pub fn is_modern_version(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}
