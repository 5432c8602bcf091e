//! What a binding does with what its server sends on its own.

use std::sync::Arc;
use std::time::SystemTime;

use super::events::{Event, EventBus};
use crate::catalog::{ChangeFeed, Family};
use crate::connection::InboundHandler;
use crate::error::normalize_message;
use crate::layer::ProgressRouter;
use crate::limits::Limits;
use crate::protocol::{methods, Notification};

/// The longest stderr line surfaced, in bytes.
pub(crate) const MAX_STDERR_LINE_BYTES: usize = 1024;

pub(crate) struct BindingInbound {
    binding: String,
    limits: Limits,
    events: EventBus,
    progress: ProgressRouter,
    catalog: Arc<ChangeFeed>,
}

impl BindingInbound {
    pub(crate) fn new(
        binding: String,
        limits: Limits,
        events: EventBus,
        progress: ProgressRouter,
        catalog: Arc<ChangeFeed>,
    ) -> Self {
        BindingInbound { binding, limits, events, progress, catalog }
    }

    /// A sink for a transport's out-of-band diagnostics (a child's stderr).
    pub(crate) fn diagnostics_sink(self: Arc<Self>) -> Arc<dyn Fn(String) + Send + Sync> {
        Arc::new(move |line: String| {
            let line = normalize_message(&line, MAX_STDERR_LINE_BYTES);
            tracing::info!(target: "mcp_stack::stderr", binding = %self.binding, "{line}");
            self.events.emit(Event::ServerStderr {
                binding: self.binding.clone(),
                line,
                at: SystemTime::now(),
            });
        })
    }
}

impl InboundHandler for BindingInbound {
    fn notification(&self, notification: Notification) {
        match notification.method.as_str() {
            methods::NOTIFICATIONS_PROGRESS => {
                self.progress.route(notification.params.as_ref());
            }
            methods::NOTIFICATIONS_MESSAGE => {
                let params = notification.params.unwrap_or_default();
                let level = params.get("level").and_then(|v| v.as_str()).unwrap_or("info");
                let logger = params.get("logger").and_then(|v| v.as_str()).map(|s| normalize_message(s, 128));
                let text = match params.get("data") {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                self.events.emit(Event::ServerLog {
                    binding: self.binding.clone(),
                    level: normalize_message(level, 16),
                    logger,
                    text: normalize_message(&text, self.limits.max_log_message_bytes),
                    at: SystemTime::now(),
                });
            }
            method if Family::from_list_changed(method).is_some() => {
                if let Some(family) = Family::from_list_changed(method) {
                    self.catalog.list_changed(family);
                }
            }
            other => {
                tracing::debug!(target: "mcp_stack::inbound", binding = %self.binding, method = %normalize_message(other, 128), "notification");
            }
        }
    }

    fn warning(&self, text: String) {
        tracing::warn!(target: "mcp_stack::connection", binding = %self.binding, "{text}");
        self.events.emit(Event::Warning { binding: self.binding.clone(), text, at: SystemTime::now() });
    }
}
