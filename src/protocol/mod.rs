//! The wire model: the JSON-RPC envelope and serde types for every MCP
//! message this crate sends or reads.
//!
//! Types tolerate unknown fields (servers add them freely) and keep the
//! `_meta` bags they carry. Documents that are schemas, such as a tool's
//! input schema, stay raw [`serde_json::Value`]s: they are data to pass on,
//! not domain types.
//!
//! Only the types the public API hands out or takes are public here (a
//! tool's listing, a sampling request's messages, the capabilities); the
//! envelopes, params and method names stay inside the crate.
//!
//! The model covers every message of the methods the crate speaks, both
//! directions. Some types the client itself only builds or reads as raw JSON
//! (a few params and results, the tasks model that the tasks work will
//! drive); they stay, tested against the schema, so dead-code warnings are
//! off for this module alone.

#![allow(dead_code)]

pub(crate) mod bounded_list;
pub(crate) mod completion;
pub(crate) mod content;
pub(crate) mod elicitation;
pub(crate) mod family;
pub(crate) mod jsonrpc;
pub(crate) mod lifecycle;
pub(crate) mod logging;
pub(crate) mod methods;
mod open_enum;
pub(crate) mod pagination;
pub(crate) mod progress;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod roots;
pub(crate) mod sampling;
pub(crate) mod tasks;
pub(crate) mod tools;

pub(crate) use jsonrpc::{Message, Outcome, Request, Response};

// The wire types the public API hands out or takes, each at one path. The
// rest of the model (requests' params, results the client unpacks itself,
// the method names) is the crate's own business.
pub use completion::{CompleteResult, Completion, CompletionReference};
pub use content::{
    Annotations, AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, Icon, IconTheme,
    ImageContent, ResourceContents, Role, TextContent, TextResourceContents,
};
pub use jsonrpc::{ErrorObject, Notification, RequestId};
pub use lifecycle::{
    ClientCapabilities, ElicitationCapability, Implementation, PromptsCapability, ResourcesCapability,
    RootsCapability, SamplingCapability, ServerCapabilities, ToolsCapability, APPS_EXTENSION, APP_MIME_TYPE,
    SKILLS_EXTENSION, TASKS_EXTENSION,
};
pub use logging::{LoggingLevel, ParseLoggingLevelError};
pub use prompts::{Prompt, PromptArgument};
pub use resources::{Resource, ResourceTemplate};
pub use roots::Root;
pub use sampling::{
    IncludeContext, ModelHint, ModelPreferences, OneOrMany, SamplingContent, SamplingMessage, ToolChoice,
    ToolChoiceMode, ToolResultContent, ToolUseContent,
};
pub use tools::{TaskSupport, Tool, ToolAnnotations, ToolExecution};

/// The protocol versions this crate speaks, newest first.
///
/// This list is the one place the supported versions live; the handshake,
/// the HTTP header logic and the tests all read it.
pub(crate) const SUPPORTED_VERSIONS: &[&str] =
    &[LATEST_LEGACY_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"];

/// The newest version of the legacy era (the `initialize` handshake), which
/// the client proposes in `initialize`.
pub(crate) const LATEST_LEGACY_VERSION: &str = "2025-11-25";

/// Whether `version` is one this crate speaks in the legacy era.
pub(crate) fn is_supported_version(version: &str) -> bool {
    SUPPORTED_VERSIONS.contains(&version)
}

/// The protocol versions of the modern era (per-request `_meta`, no
/// handshake) this crate speaks, newest first.
pub(crate) const MODERN_VERSIONS: &[&str] = &[LATEST_MODERN_VERSION];

/// The newest modern-era version, which a modern request proposes first.
pub(crate) const LATEST_MODERN_VERSION: &str = "2026-07-28";

/// Whether `version` is a modern-era version this crate speaks.
pub(crate) fn is_modern_version(version: &str) -> bool {
    MODERN_VERSIONS.contains(&version)
}

/// Takes an object `_meta` out of a message's members, for the caller to
/// move into what the rest deserializes to: deserializing a `Value` from a
/// `Value` builds every map in it again. A `_meta` that is not an object is
/// left in, for the deserializer to refuse in its words; a null one is
/// taken, as the deserializer reads it as absent.
pub(crate) fn take_meta(
    members: &mut serde_json::Map<String, serde_json::Value>,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    use serde_json::Value;
    match members.remove("_meta") {
        Some(Value::Object(meta)) => Some(meta),
        Some(Value::Null) | None => None,
        Some(other) => {
            members.insert("_meta".into(), other);
            None
        }
    }
}
