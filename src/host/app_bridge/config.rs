//! The bridge's bounds and the host's context an app is initialized with.

use serde_json::{json, Map, Value};

/// The largest message an app may post, in bytes, by default (1 MiB).
pub const DEFAULT_MAX_APP_MESSAGE_BYTES: usize = 1 << 20;
/// How many of an app's requests may be in flight at once, by default.
pub const DEFAULT_MAX_APP_REQUESTS_IN_FLIGHT: usize = 8;
/// How many of an app's log entries are kept until the host takes them,
/// by default.
pub const DEFAULT_MAX_APP_LOG_ENTRIES: usize = 64;
/// The longest log entry kept, in bytes, by default (longer ones are cut).
pub const DEFAULT_MAX_APP_LOG_ENTRY_BYTES: usize = 4096;

/// The bounds of one [`AppBridge`](super::AppBridge). Every bound is a
/// real number: there is no "zero means unbounded"; a zero refuses
/// everything it bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppBridgeConfig {
    max_message_bytes: usize,
    max_requests_in_flight: usize,
    max_log_entries: usize,
    max_log_entry_bytes: usize,
    host_name: String,
    host_version: String,
}

impl Default for AppBridgeConfig {
    fn default() -> Self {
        AppBridgeConfig {
            max_message_bytes: DEFAULT_MAX_APP_MESSAGE_BYTES,
            max_requests_in_flight: DEFAULT_MAX_APP_REQUESTS_IN_FLIGHT,
            max_log_entries: DEFAULT_MAX_APP_LOG_ENTRIES,
            max_log_entry_bytes: DEFAULT_MAX_APP_LOG_ENTRY_BYTES,
            host_name: "mcp-stack".to_string(),
            host_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

impl AppBridgeConfig {
    /// The largest message an app may post, in bytes: a longer one is
    /// refused with `limit_exceeded` before it is parsed.
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// How many of the app's requests may be in flight at once: one more
    /// is refused at once with `limit_exceeded`.
    pub fn with_max_requests_in_flight(mut self, requests: usize) -> Self {
        self.max_requests_in_flight = requests;
        self
    }

    /// How many log entries are kept until the host takes them; past it
    /// the oldest is dropped (and counted).
    pub fn with_max_log_entries(mut self, entries: usize) -> Self {
        self.max_log_entries = entries;
        self
    }

    /// The longest log entry kept, in bytes; a longer one is cut at a
    /// character boundary.
    pub fn with_max_log_entry_bytes(mut self, bytes: usize) -> Self {
        self.max_log_entry_bytes = bytes;
        self
    }

    /// The host's name and version, as the app is told in `hostInfo`.
    pub fn with_host_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.host_name = name.into();
        self.host_version = version.into();
        self
    }

    /// See [`with_max_message_bytes`](Self::with_max_message_bytes).
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// See [`with_max_requests_in_flight`](Self::with_max_requests_in_flight).
    pub fn max_requests_in_flight(&self) -> usize {
        self.max_requests_in_flight
    }

    /// See [`with_max_log_entries`](Self::with_max_log_entries).
    pub fn max_log_entries(&self) -> usize {
        self.max_log_entries
    }

    /// See [`with_max_log_entry_bytes`](Self::with_max_log_entry_bytes).
    pub fn max_log_entry_bytes(&self) -> usize {
        self.max_log_entry_bytes
    }

    /// The host's name (see [`with_host_info`](Self::with_host_info)).
    pub fn host_name(&self) -> &str {
        &self.host_name
    }

    /// The host's version (see [`with_host_info`](Self::with_host_info)).
    pub fn host_version(&self) -> &str {
        &self.host_version
    }
}

/// The host's color theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppTheme {
    /// Light.
    #[default]
    Light,
    /// Dark.
    Dark,
}

impl AppTheme {
    fn as_str(self) -> &'static str {
        match self {
            AppTheme::Light => "light",
            AppTheme::Dark => "dark",
        }
    }
}

/// How the host shows an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AppDisplayMode {
    /// In the conversation.
    #[default]
    Inline,
    /// Over the whole window.
    Fullscreen,
    /// Picture in picture.
    Pip,
}

impl AppDisplayMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AppDisplayMode::Inline => "inline",
            AppDisplayMode::Fullscreen => "fullscreen",
            AppDisplayMode::Pip => "pip",
        }
    }
}

/// What the host tells an app of itself when the app initializes
/// (`hostContext`), besides the tool, which the bridge adds from the
/// catalog. Only what is set is sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppHostContext {
    theme: AppTheme,
    display_mode: AppDisplayMode,
    locale: Option<String>,
    time_zone: Option<String>,
}

impl AppHostContext {
    /// The color theme (light by default).
    pub fn with_theme(mut self, theme: AppTheme) -> Self {
        self.theme = theme;
        self
    }

    /// How the app is shown (inline by default). The bridge answers an
    /// app's `ui/request-display-mode` with this mode: changing it is the
    /// host's decision, told with
    /// [`AppBridge::context_changed`](super::AppBridge::context_changed).
    pub fn with_display_mode(mut self, mode: AppDisplayMode) -> Self {
        self.display_mode = mode;
        self
    }

    /// The user's locale, a BCP 47 tag such as `en-GB` (none by default).
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.locale = Some(locale.into());
        self
    }

    /// The user's IANA time zone, such as `Europe/Paris` (none by default).
    pub fn with_time_zone(mut self, time_zone: impl Into<String>) -> Self {
        self.time_zone = Some(time_zone.into());
        self
    }

    /// See [`with_theme`](Self::with_theme).
    pub fn theme(&self) -> AppTheme {
        self.theme
    }

    /// See [`with_display_mode`](Self::with_display_mode).
    pub fn display_mode(&self) -> AppDisplayMode {
        self.display_mode
    }

    /// See [`with_locale`](Self::with_locale).
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    /// See [`with_time_zone`](Self::with_time_zone).
    pub fn time_zone(&self) -> Option<&str> {
        self.time_zone.as_deref()
    }

    /// The context as the wire has it, without the tool.
    pub(crate) fn to_json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("theme".into(), json!(self.theme.as_str()));
        out.insert("displayMode".into(), json!(self.display_mode.as_str()));
        out.insert("availableDisplayModes".into(), json!([self.display_mode.as_str()]));
        out.insert("platform".into(), json!("web"));
        if let Some(locale) = &self.locale {
            out.insert("locale".into(), json!(locale));
        }
        if let Some(tz) = &self.time_zone {
            out.insert("timeZone".into(), json!(tz));
        }
        out
    }
}
