//! Bounds and deadlines: [`Limits`] and [`Timeouts`], with their defaults.
//!
//! No default means "unbounded". Both are built the way every configuration
//! type of the crate is (see [`Definition`](crate::Definition)): `default()`
//! holds the real defaults, `with_*` setters change one value, a getter of
//! the same name reads it, and a value that cannot work (a zero bound, a
//! zero deadline) is refused by `validate` with `invalid_config` rather
//! than read as "the default".

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

/// Per-connection deadlines.
///
/// ```
/// use mcp_stack::Timeouts;
/// use std::time::Duration;
///
/// let t = Timeouts::default().with_request(Duration::from_secs(10));
/// assert_eq!(t.request(), Duration::from_secs(10));
/// assert_eq!(t.startup(), Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub(crate) startup: Duration,
    pub(crate) request: Duration,
    pub(crate) elicitation: Duration,
    pub(crate) discover: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            startup: DEFAULT_STARTUP_TIMEOUT,
            request: DEFAULT_REQUEST_TIMEOUT,
            elicitation: DEFAULT_ELICITATION_TIMEOUT,
            discover: DEFAULT_DISCOVER_TIMEOUT,
        }
    }
}

impl Timeouts {
    /// Bounds connecting plus the handshake (default 30 s).
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// With another startup deadline.
    pub fn with_startup(mut self, startup: Duration) -> Self {
        self.startup = startup;
        self
    }

    /// Bounds one request/response exchange when the call sets no deadline
    /// (default 60 s).
    pub fn request(&self) -> Duration {
        self.request
    }

    /// With another request deadline.
    pub fn with_request(mut self, request: Duration) -> Self {
        self.request = request;
        self
    }

    /// Bounds a server-initiated elicitation round trip: a person answering
    /// (default 300 s).
    pub fn elicitation(&self) -> Duration {
        self.elicitation
    }

    /// With another elicitation deadline.
    pub fn with_elicitation(mut self, elicitation: Duration) -> Self {
        self.elicitation = elicitation;
        self
    }

    /// How long the automatic protocol choice waits for `server/discover`
    /// before it takes the server for a legacy one (default 5 s). Part of
    /// the startup deadline, not added to it.
    pub fn discover(&self) -> Duration {
        self.discover
    }

    /// With another discovery wait.
    pub fn with_discover(mut self, discover: Duration) -> Self {
        self.discover = discover;
        self
    }

    /// Refuses a zero deadline (`invalid_config`): it would fail every
    /// exchange before it started.
    pub fn validate(&self) -> Result<(), crate::Error> {
        for (name, d) in [
            ("startup", self.startup),
            ("request", self.request),
            ("elicitation", self.elicitation),
            ("discover", self.discover),
        ] {
            if d.is_zero() {
                return Err(crate::Error::new(
                    crate::FailureClass::InvalidConfig,
                    format!("the {name} timeout must be longer than zero"),
                ));
            }
        }
        Ok(())
    }
}

macro_rules! limits {
    ($( $(#[$doc:meta])* $field:ident, $setter:ident = $default:ident, )*) => {
        /// Bounds on what one binding takes from its server.
        ///
        /// ```
        /// use mcp_stack::Limits;
        ///
        /// let limits = Limits::default().with_max_frame_bytes(1 << 20);
        /// assert_eq!(limits.max_frame_bytes(), 1 << 20);
        /// assert_eq!(limits.max_content_items(), 256);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Limits {
            $( pub(crate) $field: usize, )*
        }

        impl Default for Limits {
            fn default() -> Self {
                Limits { $( $field: $default, )* }
            }
        }

        impl Limits {
            $(
                $(#[$doc])*
                pub fn $field(&self) -> usize {
                    self.$field
                }

                #[doc = concat!("With another [`", stringify!($field), "`](Self::", stringify!($field), ").")]
                pub fn $setter(mut self, value: usize) -> Self {
                    self.$field = value;
                    self
                }
            )*

            /// Refuses a zero bound (`invalid_config`): no bound of a
            /// binding is meant to refuse everything.
            pub fn validate(&self) -> Result<(), crate::Error> {
                $(
                    if self.$field == 0 {
                        return Err(crate::Error::new(
                            crate::FailureClass::InvalidConfig,
                            concat!("the limit ", stringify!($field), " must be at least 1"),
                        ));
                    }
                )*
                Ok(())
            }
        }
    };
}

limits! {
    /// Caps in-flight requests on one connection.
    max_concurrent_requests, with_max_concurrent_requests = DEFAULT_MAX_CONCURRENT_REQUESTS,
    /// Caps list-pagination round trips per catalog fetch.
    max_catalog_pages, with_max_catalog_pages = DEFAULT_MAX_CATALOG_PAGES,
    /// Caps the tools accepted from one server.
    max_catalog_items, with_max_catalog_items = DEFAULT_MAX_CATALOG_ITEMS,
    /// Caps one wire frame (one JSON-RPC message).
    max_frame_bytes, with_max_frame_bytes = DEFAULT_MAX_FRAME_BYTES,
    /// Caps one whole HTTP response body.
    max_body_bytes, with_max_body_bytes = DEFAULT_MAX_BODY_BYTES,
    /// Caps one tool's input or output schema document.
    max_schema_bytes, with_max_schema_bytes = DEFAULT_MAX_SCHEMA_BYTES,
    /// Caps schema nesting.
    max_schema_depth, with_max_schema_depth = DEFAULT_MAX_SCHEMA_DEPTH,
    /// Caps the text content of one result.
    max_text_result_bytes, with_max_text_result_bytes = DEFAULT_MAX_TEXT_RESULT_BYTES,
    /// Caps the structured content of one tool result.
    max_structured_bytes, with_max_structured_bytes = DEFAULT_MAX_STRUCTURED_BYTES,
    /// Caps one binary (image, audio, blob) result item, decoded.
    max_binary_item_bytes, with_max_binary_item_bytes = DEFAULT_MAX_BINARY_ITEM_BYTES,
    /// Caps how many binary items one result may carry.
    max_binary_items, with_max_binary_items = DEFAULT_MAX_BINARY_ITEMS,
    /// Caps how many items one result may carry: a tool result's content
    /// blocks, a prompt's messages, a resource's contents (default
    /// 256). Items beyond it are removed, not
    /// replaced one for one.
    max_content_items, with_max_content_items = DEFAULT_MAX_CONTENT_ITEMS,
    /// Caps one server log message.
    max_log_message_bytes, with_max_log_message_bytes = DEFAULT_MAX_LOG_MESSAGE_BYTES,
    /// Caps one elicitation prompt (message, URL and id).
    max_elicit_message_bytes, with_max_elicit_message_bytes = DEFAULT_MAX_ELICIT_MESSAGE_BYTES,
    /// Caps the schema an elicitation may request.
    max_elicit_schema_bytes, with_max_elicit_schema_bytes = DEFAULT_MAX_ELICIT_SCHEMA_BYTES,
    /// Caps the prompts accepted from one server.
    max_prompt_count, with_max_prompt_count = DEFAULT_MAX_PROMPT_COUNT,
    /// Caps the resources accepted from one server.
    max_resource_count, with_max_resource_count = DEFAULT_MAX_RESOURCE_COUNT,
    /// Caps nested sampling.
    max_sampling_depth, with_max_sampling_depth = DEFAULT_MAX_SAMPLING_DEPTH,
    /// Caps concurrent sampling requests.
    max_sampling_concurrency, with_max_sampling_concurrency = DEFAULT_MAX_SAMPLING_CONCURRENCY,
    /// Caps the tokens of one sampling completion.
    max_sampling_tokens, with_max_sampling_tokens = DEFAULT_MAX_SAMPLING_TOKENS,
    /// Caps the messages of one sampling request.
    max_sampling_messages, with_max_sampling_messages = DEFAULT_MAX_SAMPLING_MESSAGES,
    /// Caps one sampling request's system prompt plus messages, as JSON.
    max_sampling_request_bytes, with_max_sampling_request_bytes = DEFAULT_MAX_SAMPLING_REQUEST_BYTES,
    /// Caps the files of one skill, `SKILL.md` included (SEP-2640's 512).
    max_skill_files, with_max_skill_files = DEFAULT_MAX_SKILL_FILES,
    /// Caps the bytes one skill's files declare in all (SEP-2640's 16 MiB).
    max_skill_bytes, with_max_skill_bytes = DEFAULT_MAX_SKILL_BYTES,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_real_values_and_a_setter_changes_one() {
        let l = Limits::default().with_max_frame_bytes(10);
        assert_eq!(l.max_frame_bytes(), 10);
        assert_eq!(l.max_body_bytes(), DEFAULT_MAX_BODY_BYTES);
        assert_eq!(l.max_sampling_tokens(), 8192);
        assert_eq!(l.max_content_items(), 256);
        assert!(l.validate().is_ok());
        let t = Timeouts::default();
        assert_eq!(t.startup(), Duration::from_secs(30));
        assert_eq!(t.request(), Duration::from_secs(60));
        assert_eq!(t.elicitation(), Duration::from_secs(300));
        assert!(t.validate().is_ok());
    }

    #[test]
    fn zero_is_refused_not_read_as_the_default() {
        let err = Limits::default().with_max_skill_files(0).validate().unwrap_err();
        assert_eq!(err.class(), crate::FailureClass::InvalidConfig);
        assert!(err.to_string().contains("max_skill_files"), "{err}");
        let err = Timeouts::default().with_discover(Duration::ZERO).validate().unwrap_err();
        assert_eq!(err.class(), crate::FailureClass::InvalidConfig);
        assert!(err.to_string().contains("discover"), "{err}");
    }
}
