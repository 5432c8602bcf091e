//! Bounds and deadlines: [`Limits`] and [`Timeouts`], with their defaults.
//!
//! No default means "unbounded". A field left at `0` in a definition selects
//! its default ([`Limits::resolved`], [`Timeouts::resolved`]), so that a
//! zero-initialised configuration is always a safe one.

use std::time::Duration;

/// Default [`Timeouts::startup`]: connecting plus the handshake.
pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`Timeouts::request`]: one request/response exchange.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default [`Timeouts::elicitation`]: a person answering an elicitation.
pub(crate) const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the automatic choice waits for an answer to `server/discover`
/// before it takes the server for a legacy one and sends `initialize`.
///
/// A legacy server usually answers at once with "method not found"
/// (-32601), and then the fallback costs one round trip. A legacy server
/// that says nothing to a request it does not know (some stdio servers do)
/// costs this long on the first dial only: the verdict is kept for
/// reconnects (see `Dialer` in `crate::layer`). It counts against the
/// startup timeout, so it is shorter than
/// [`DEFAULT_STARTUP_TIMEOUT`];
/// [`Timeouts::discover`] changes it, and
/// `ProtocolChoice::Legacy` skips the probe for a server known to be
/// legacy.
pub(crate) const DEFAULT_DISCOVER_TIMEOUT: Duration = Duration::from_secs(5);
/// Default [`Limits::max_concurrent_requests`].
pub(crate) const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 8;
/// Default [`Limits::max_catalog_pages`].
pub(crate) const DEFAULT_MAX_CATALOG_PAGES: usize = 64;
/// Default [`Limits::max_catalog_items`].
pub(crate) const DEFAULT_MAX_CATALOG_ITEMS: usize = 1024;
pub(crate) const DEFAULT_MAX_SKILL_FILES: usize = 512;
pub(crate) const DEFAULT_MAX_SKILL_BYTES: usize = 16 << 20;
/// Default [`Limits::max_frame_bytes`]: 4 MiB.
pub(crate) const DEFAULT_MAX_FRAME_BYTES: usize = 4 << 20;
/// Default [`Limits::max_body_bytes`]: 16 MiB.
pub(crate) const DEFAULT_MAX_BODY_BYTES: usize = 16 << 20;
/// Default [`Limits::max_schema_bytes`]: 256 KiB.
pub(crate) const DEFAULT_MAX_SCHEMA_BYTES: usize = 256 << 10;
/// Default [`Limits::max_schema_depth`].
pub(crate) const DEFAULT_MAX_SCHEMA_DEPTH: usize = 32;
/// Default [`Limits::max_text_result_bytes`]: 1 MiB.
pub(crate) const DEFAULT_MAX_TEXT_RESULT_BYTES: usize = 1 << 20;
/// Default [`Limits::max_structured_bytes`]: 1 MiB.
pub(crate) const DEFAULT_MAX_STRUCTURED_BYTES: usize = 1 << 20;
/// Default [`Limits::max_binary_item_bytes`]: 8 MiB.
pub(crate) const DEFAULT_MAX_BINARY_ITEM_BYTES: usize = 8 << 20;
/// Default [`Limits::max_binary_items`].
pub(crate) const DEFAULT_MAX_BINARY_ITEMS: usize = 16;
/// Default [`Limits::max_content_items`].
pub(crate) const DEFAULT_MAX_CONTENT_ITEMS: usize = 256;
/// Default [`Limits::max_log_message_bytes`]: 8 KiB.
pub(crate) const DEFAULT_MAX_LOG_MESSAGE_BYTES: usize = 8 << 10;
/// Default [`Limits::max_elicit_message_bytes`]: 4 KiB.
pub(crate) const DEFAULT_MAX_ELICIT_MESSAGE_BYTES: usize = 4 << 10;
/// Default [`Limits::max_elicit_schema_bytes`]: 16 KiB.
pub(crate) const DEFAULT_MAX_ELICIT_SCHEMA_BYTES: usize = 16 << 10;
/// Default [`Limits::max_prompt_count`].
pub(crate) const DEFAULT_MAX_PROMPT_COUNT: usize = 256;
/// Default [`Limits::max_resource_count`].
pub(crate) const DEFAULT_MAX_RESOURCE_COUNT: usize = 4096;
/// Default [`Limits::max_sampling_depth`].
pub(crate) const DEFAULT_MAX_SAMPLING_DEPTH: usize = 2;
/// Default [`Limits::max_sampling_concurrency`].
pub(crate) const DEFAULT_MAX_SAMPLING_CONCURRENCY: usize = 2;
/// Default [`Limits::max_sampling_tokens`].
pub(crate) const DEFAULT_MAX_SAMPLING_TOKENS: usize = 8192;
/// Default [`Limits::max_sampling_messages`].
pub(crate) const DEFAULT_MAX_SAMPLING_MESSAGES: usize = 256;
/// Default [`Limits::max_sampling_request_bytes`]: 1 MiB.
pub(crate) const DEFAULT_MAX_SAMPLING_REQUEST_BYTES: usize = 1 << 20;
/// The largest `instructions` text kept from a server: 16 KiB.
pub(crate) const MAX_INSTRUCTIONS_BYTES: usize = 16 << 10;

/// Per-connection deadlines. A zero field selects its default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// Bounds connecting plus the handshake.
    pub startup: Duration,
    /// Bounds one request/response exchange when the call sets no deadline.
    pub request: Duration,
    /// Bounds a server-initiated elicitation round trip.
    pub elicitation: Duration,
    /// How long the automatic protocol choice waits for `server/discover`
    /// before it takes the server for a legacy one (default 5 s).
    /// Part of the startup timeout, not added to it.
    pub discover: Duration,
}

impl Timeouts {
    /// This value with every zero field replaced by its default.
    pub fn resolved(self) -> Self {
        fn or(d: Duration, default: Duration) -> Duration {
            if d.is_zero() {
                default
            } else {
                d
            }
        }
        Timeouts {
            startup: or(self.startup, DEFAULT_STARTUP_TIMEOUT),
            request: or(self.request, DEFAULT_REQUEST_TIMEOUT),
            elicitation: or(self.elicitation, DEFAULT_ELICITATION_TIMEOUT),
            discover: or(self.discover, DEFAULT_DISCOVER_TIMEOUT),
        }
    }
}

macro_rules! limits {
    ($( $(#[$doc:meta])* $field:ident = $default:ident, )*) => {
        /// Bounds on what one binding takes from its server. A zero field
        /// selects its default.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct Limits {
            $( $(#[$doc])* pub $field: usize, )*
        }

        impl Limits {
            /// This value with every zero field replaced by its default.
            pub fn resolved(self) -> Self {
                Limits { $( $field: if self.$field == 0 { $default } else { self.$field }, )* }
            }
        }
    };
}

limits! {
    /// Caps in-flight requests on one connection.
    max_concurrent_requests = DEFAULT_MAX_CONCURRENT_REQUESTS,
    /// Caps list-pagination round trips per catalog fetch.
    max_catalog_pages = DEFAULT_MAX_CATALOG_PAGES,
    /// Caps the tools accepted from one server.
    max_catalog_items = DEFAULT_MAX_CATALOG_ITEMS,
    /// Caps one wire frame (one JSON-RPC message).
    max_frame_bytes = DEFAULT_MAX_FRAME_BYTES,
    /// Caps one whole HTTP response body.
    max_body_bytes = DEFAULT_MAX_BODY_BYTES,
    /// Caps one tool's input or output schema document.
    max_schema_bytes = DEFAULT_MAX_SCHEMA_BYTES,
    /// Caps schema nesting.
    max_schema_depth = DEFAULT_MAX_SCHEMA_DEPTH,
    /// Caps the text content of one result.
    max_text_result_bytes = DEFAULT_MAX_TEXT_RESULT_BYTES,
    /// Caps the structured content of one tool result.
    max_structured_bytes = DEFAULT_MAX_STRUCTURED_BYTES,
    /// Caps one binary (image, audio, blob) result item, decoded.
    max_binary_item_bytes = DEFAULT_MAX_BINARY_ITEM_BYTES,
    /// Caps how many binary items one result may carry.
    max_binary_items = DEFAULT_MAX_BINARY_ITEMS,
    /// Caps how many items one result may carry: a tool result's content
    /// blocks, a prompt's messages, a resource's contents (default
    /// 256). Items beyond it are removed, not
    /// replaced one for one.
    max_content_items = DEFAULT_MAX_CONTENT_ITEMS,
    /// Caps one server log message.
    max_log_message_bytes = DEFAULT_MAX_LOG_MESSAGE_BYTES,
    /// Caps one elicitation prompt (message, URL and id).
    max_elicit_message_bytes = DEFAULT_MAX_ELICIT_MESSAGE_BYTES,
    /// Caps the schema an elicitation may request.
    max_elicit_schema_bytes = DEFAULT_MAX_ELICIT_SCHEMA_BYTES,
    /// Caps the prompts accepted from one server.
    max_prompt_count = DEFAULT_MAX_PROMPT_COUNT,
    /// Caps the resources accepted from one server.
    max_resource_count = DEFAULT_MAX_RESOURCE_COUNT,
    /// Caps nested sampling.
    max_sampling_depth = DEFAULT_MAX_SAMPLING_DEPTH,
    /// Caps concurrent sampling requests.
    max_sampling_concurrency = DEFAULT_MAX_SAMPLING_CONCURRENCY,
    /// Caps the tokens of one sampling completion.
    max_sampling_tokens = DEFAULT_MAX_SAMPLING_TOKENS,
    /// Caps the messages of one sampling request.
    max_sampling_messages = DEFAULT_MAX_SAMPLING_MESSAGES,
    /// Caps one sampling request's system prompt plus messages, as JSON.
    max_sampling_request_bytes = DEFAULT_MAX_SAMPLING_REQUEST_BYTES,
    /// Caps the files of one skill, `SKILL.md` included (SEP-2640's 512).
    max_skill_files = DEFAULT_MAX_SKILL_FILES,
    /// Caps the bytes one skill's files declare in all (SEP-2640's 16 MiB).
    max_skill_bytes = DEFAULT_MAX_SKILL_BYTES,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_selects_defaults_and_set_fields_stay() {
        let l = Limits { max_frame_bytes: 10, ..Limits::default() }.resolved();
        assert_eq!(l.max_frame_bytes, 10);
        assert_eq!(l.max_body_bytes, DEFAULT_MAX_BODY_BYTES);
        assert_eq!(l.max_sampling_tokens, 8192);
        assert_eq!(l.max_content_items, 256);
        let t = Timeouts::default().resolved();
        assert_eq!(t.startup, Duration::from_secs(30));
        assert_eq!(t.request, Duration::from_secs(60));
        assert_eq!(t.elicitation, Duration::from_secs(300));
    }
}
