//! The entry key [`EXTENSION_KEY`]: what these files
//! have no words for. The keys are documented in the
//! [parent module](super#our-own-keys-x-mcp-stack).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::time::Duration;

use super::{Issue, EXTENSION_KEY};
use crate::binding::Definition;
use crate::compat::Profile;
use crate::config::Limits;
use crate::config::ProtocolChoice;
use crate::config::ToolFilter;
use crate::protocol::logging::LoggingLevel;

/// The most names a tool filter list may hold.
const MAX_FILTER_NAMES: usize = 1024;
/// The longest timeout accepted: one day.
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// What the extension asks for, read before the definition exists.
#[derive(Debug, Default)]
pub(super) struct Extension {
    pub(super) name: Option<String>,
    pub(super) startup: Option<Duration>,
    pub(super) request: Option<Duration>,
    pub(super) elicitation: Option<Duration>,
    pub(super) limits: Vec<(&'static str, usize)>,
    pub(super) tool_filter: Option<ToolFilter>,
    pub(super) profile: Option<Profile>,
    pub(super) parallel_calls: Option<bool>,
    pub(super) log_level: Option<LoggingLevel>,
    pub(super) allow_redirects: Option<bool>,
    pub(super) discover: Option<Duration>,
    pub(super) protocol: Option<ProtocolChoice>,
    /// HTTP only: the network keys, as written (substituted and read when
    /// the remote definition is made).
    pub(super) network: NetworkKeys,
    pub(super) retry_requests: Option<bool>,
    pub(super) cache_responses: Option<bool>,
    pub(super) repeatable_tools: Option<crate::config::RepeatableTools>,
}

/// The HTTP network keys of the extension: a proxy (or none), extra roots
/// and a client certificate, by file path.
#[derive(Debug, Default)]
pub(super) struct NetworkKeys {
    pub(super) proxy: Option<String>,
    pub(super) no_proxy: bool,
    pub(super) ca_cert: Option<String>,
    pub(super) client_cert: Option<String>,
    pub(super) client_key: Option<String>,
}

impl NetworkKeys {
    /// Whether any is set (a stdio entry warns that they are ignored).
    pub(super) fn any(&self) -> bool {
        self.proxy.is_some()
            || self.no_proxy
            || self.ca_cert.is_some()
            || self.client_cert.is_some()
            || self.client_key.is_some()
    }
}

/// Reads the extension object of entry `entry`. Unknown keys are warnings;
/// a value of the wrong kind is an error naming its field.
pub(super) fn read(entry: &str, value: Value, warnings: &mut Vec<Issue>) -> Result<Extension, Issue> {
    let field = |f: &str| format!("{EXTENSION_KEY}.{f}");
    let Value::Object(map) = value else {
        return Err(Issue::new(entry, EXTENSION_KEY, "must be a JSON object"));
    };
    let mut ext = Extension::default();
    for (key, value) in map {
        match key.as_str() {
            "name" => ext.name = Some(typed(entry, &field("name"), value)?),
            "timeouts" => read_timeouts(entry, value, &mut ext, warnings)?,
            "limits" => read_limits(entry, value, &mut ext, warnings)?,
            "toolFilter" => {
                let mut filter: Map<String, Value> = typed(entry, &field("toolFilter"), value)?;
                // An absent list names nothing; a present `allow` is the
                // whole permitted set, so `"allow": []` permits no tool.
                let mut names = |list: &str| -> Result<Option<Vec<String>>, Issue> {
                    let f = field(&format!("toolFilter.{list}"));
                    let names: Vec<String> = match filter.remove(list) {
                        Some(v) => typed(entry, &f, v)?,
                        None => return Ok(None),
                    };
                    if names.len() > MAX_FILTER_NAMES {
                        return Err(Issue::new(
                            entry,
                            &f,
                            format!("holds more than {MAX_FILTER_NAMES} names"),
                        ));
                    }
                    Ok(Some(names))
                };
                let allow = names("allow")?;
                let deny = names("deny")?.unwrap_or_default();
                for unknown in filter.keys() {
                    warnings.push(unknown_key(entry, &field(&format!("toolFilter.{unknown}"))));
                }
                ext.tool_filter = Some(ToolFilter { allow, deny });
            }
            "profile" => {
                let id: String = typed(entry, &field("profile"), value)?;
                ext.profile = Some(Profile::shipped(&id).ok_or_else(|| {
                    Issue::new(
                        entry,
                        &field("profile"),
                        "must be one of \"strict/v1\", \"default/v3\", \"default/v2\", \"default/v1\", \"legacy/v3\", \"legacy/v2\", \"legacy/v1\"",
                    )
                })?);
            }
            "parallelCalls" => ext.parallel_calls = Some(typed(entry, &field("parallelCalls"), value)?),
            "logLevel" => {
                let level: String = typed(entry, &field("logLevel"), value)?;
                let level = level.parse().map_err(|_| {
                    Issue::new(
                        entry,
                        &field("logLevel"),
                        "is not a logging level (debug, info, notice, warning, …)",
                    )
                })?;
                ext.log_level = Some(level);
            }
            "allowRedirects" => ext.allow_redirects = Some(typed(entry, &field("allowRedirects"), value)?),
            "proxy" => ext.network.proxy = Some(typed(entry, &field("proxy"), value)?),
            "noProxy" => ext.network.no_proxy = typed(entry, &field("noProxy"), value)?,
            "caCert" => ext.network.ca_cert = Some(typed(entry, &field("caCert"), value)?),
            "clientCert" => ext.network.client_cert = Some(typed(entry, &field("clientCert"), value)?),
            "clientKey" => ext.network.client_key = Some(typed(entry, &field("clientKey"), value)?),
            "retryRequests" => ext.retry_requests = Some(typed(entry, &field("retryRequests"), value)?),
            "cacheResponses" => ext.cache_responses = Some(typed(entry, &field("cacheResponses"), value)?),
            "repeatableTools" => {
                let mut map: Map<String, Value> = typed(entry, &field("repeatableTools"), value)?;
                let names: Vec<String> = match map.remove("names") {
                    Some(v) => typed(entry, &field("repeatableTools.names"), v)?,
                    None => Vec::new(),
                };
                if names.len() > MAX_FILTER_NAMES {
                    let f = field("repeatableTools.names");
                    return Err(Issue::new(entry, &f, format!("holds more than {MAX_FILTER_NAMES} names")));
                }
                let trust_idempotent_hint = match map.remove("trustIdempotentHint") {
                    Some(v) => typed(entry, &field("repeatableTools.trustIdempotentHint"), v)?,
                    None => false,
                };
                for unknown in map.keys() {
                    warnings.push(unknown_key(entry, &field(&format!("repeatableTools.{unknown}"))));
                }
                ext.repeatable_tools = Some(crate::config::RepeatableTools { names, trust_idempotent_hint });
            }
            "protocol" => {
                let text: String = typed(entry, &field("protocol"), value)?;
                let choice = ProtocolChoice::parse(&text).map_err(|_| {
                    Issue::new(
                        entry,
                        &field("protocol"),
                        "must be \"auto\", \"legacy\", \"modern\" or a protocol version this client speaks",
                    )
                })?;
                ext.protocol = Some(choice);
            }
            _ => warnings.push(unknown_key(entry, &field(&key))),
        }
    }
    let network = &ext.network;
    if network.proxy.is_some() && network.no_proxy {
        return Err(Issue::new(entry, &field("noProxy"), "cannot be set together with proxy"));
    }
    if network.client_cert.is_some() != network.client_key.is_some() {
        return Err(Issue::new(
            entry,
            &field("clientCert"),
            "clientCert and clientKey go together: give both or neither",
        ));
    }
    Ok(ext)
}

fn read_timeouts(
    entry: &str,
    value: Value,
    ext: &mut Extension,
    warnings: &mut Vec<Issue>,
) -> Result<(), Issue> {
    let map: Map<String, Value> = typed(entry, &format!("{EXTENSION_KEY}.timeouts"), value)?;
    for (key, value) in map {
        let field = format!("{EXTENSION_KEY}.timeouts.{key}");
        let slot = match key.as_str() {
            "startupMs" => &mut ext.startup,
            "requestMs" => &mut ext.request,
            "elicitationMs" => &mut ext.elicitation,
            "discoverMs" => &mut ext.discover,
            _ => {
                warnings.push(unknown_key(entry, &field));
                continue;
            }
        };
        let ms: u64 = typed(entry, &field, value)?;
        if ms == 0 || ms > MAX_TIMEOUT_MS {
            return Err(Issue::new(entry, &field, format!("must be 1 to {MAX_TIMEOUT_MS} milliseconds")));
        }
        *slot = Some(Duration::from_millis(ms));
    }
    Ok(())
}

fn read_limits(
    entry: &str,
    value: Value,
    ext: &mut Extension,
    warnings: &mut Vec<Issue>,
) -> Result<(), Issue> {
    let map: Map<String, Value> = typed(entry, &format!("{EXTENSION_KEY}.limits"), value)?;
    for (key, value) in map {
        let field = format!("{EXTENSION_KEY}.limits.{key}");
        let Some(name) = LIMIT_KEYS.iter().map(|(k, _)| *k).find(|k| *k == key) else {
            warnings.push(unknown_key(entry, &field));
            continue;
        };
        let n: usize = typed(entry, &field, value)?;
        if n == 0 {
            // Zero reads like "no limit", which no limit here can be
            // (`Limits::validate` refuses it too).
            return Err(Issue::new(entry, &field, "must be at least 1 (leave it out for the default)"));
        }
        ext.limits.push((name, n));
    }
    Ok(())
}

/// Picks one field of a [`Limits`].
type LimitField = fn(&mut Limits) -> &mut usize;

/// The `limits` keys, and the field of [`Limits`] each sets.
const LIMIT_KEYS: &[(&str, LimitField)] = &[
    ("maxConcurrentRequests", |l| &mut l.max_concurrent_requests),
    ("maxCatalogPages", |l| &mut l.max_catalog_pages),
    ("maxCatalogItems", |l| &mut l.max_catalog_items),
    ("maxFrameBytes", |l| &mut l.max_frame_bytes),
    ("maxBodyBytes", |l| &mut l.max_body_bytes),
    ("maxSchemaBytes", |l| &mut l.max_schema_bytes),
    ("maxSchemaDepth", |l| &mut l.max_schema_depth),
    ("maxTextResultBytes", |l| &mut l.max_text_result_bytes),
    ("maxStructuredBytes", |l| &mut l.max_structured_bytes),
    ("maxBinaryItemBytes", |l| &mut l.max_binary_item_bytes),
    ("maxBinaryItems", |l| &mut l.max_binary_items),
    ("maxContentItems", |l| &mut l.max_content_items),
    ("maxLogMessageBytes", |l| &mut l.max_log_message_bytes),
    ("maxElicitMessageBytes", |l| &mut l.max_elicit_message_bytes),
    ("maxElicitSchemaBytes", |l| &mut l.max_elicit_schema_bytes),
    ("maxPromptCount", |l| &mut l.max_prompt_count),
    ("maxResourceCount", |l| &mut l.max_resource_count),
    ("maxSamplingDepth", |l| &mut l.max_sampling_depth),
    ("maxSamplingConcurrency", |l| &mut l.max_sampling_concurrency),
    ("maxSamplingTokens", |l| &mut l.max_sampling_tokens),
    ("maxSamplingMessages", |l| &mut l.max_sampling_messages),
    ("maxSamplingRequestBytes", |l| &mut l.max_sampling_request_bytes),
];

impl Extension {
    /// Applies everything but the name and the transport settings.
    pub(super) fn apply(&self, def: &mut Definition) {
        if let Some(d) = self.startup {
            def.timeouts.startup = d;
        }
        if let Some(d) = self.request {
            def.timeouts.request = d;
        }
        if let Some(d) = self.elicitation {
            def.timeouts.elicitation = d;
        }
        if let Some(d) = self.discover {
            def.timeouts.discover = d;
        }
        if let Some(protocol) = &self.protocol {
            def.protocol = protocol.clone();
        }
        for (key, n) in &self.limits {
            if let Some((_, field)) = LIMIT_KEYS.iter().find(|(k, _)| k == key) {
                *field(&mut def.limits) = *n;
            }
        }
        if let Some(filter) = &self.tool_filter {
            def.tool_filter = filter.clone();
        }
        if let Some(profile) = &self.profile {
            def.compat = profile.clone();
        }
        if let Some(parallel) = self.parallel_calls {
            def.allow_parallel_calls = parallel;
        }
        if let Some(retry) = self.retry_requests {
            def.retry_requests = retry;
        }
        if let Some(cache) = self.cache_responses {
            def.caching.enabled = cache;
        }
        if let Some(tools) = &self.repeatable_tools {
            def.repeatable_tools = tools.clone();
        }
        if let Some(level) = self.log_level {
            def.log_level = level;
        }
    }
}

/// `value` as a `T`, or an error naming `field` (serde's message, which
/// names the kind found, never the value).
pub(super) fn typed<T: DeserializeOwned>(entry: &str, field: &str, value: Value) -> Result<T, Issue> {
    let kind = kind_of(&value);
    serde_json::from_value(value).map_err(|_| {
        Issue::new(entry, field, format!("has the wrong type ({kind}) or an out-of-range value"))
    })
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn unknown_key(entry: &str, field: &str) -> Issue {
    Issue::new(entry, field, "is not a field this crate knows; ignored")
}
