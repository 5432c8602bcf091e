//! Server logs: `notifications/message` to the host's log service. Documented in the [logging section of the parent module](crate::handlers#logging).

use serde_json::Value;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crate::error::normalize_message;
use crate::error::Error;
use crate::layer::progress::{Deliveries, Pending};
use crate::protocol::logging::LoggingLevel;
use tower::util::BoxCloneSyncService;

/// Receives the server's log messages, one at a time, on the binding's
/// delivery task: in the order the server sent them, between the progress
/// reports it sent (see [`crate::layer::progress`]). A slow service delays
/// the binding's progress reports too, never the connection.
pub type LogService = BoxCloneSyncService<LogMessage, (), Error>;

/// Log records queued (not yet delivered) for the log service before new
/// ones are dropped.
pub(crate) const LOG_QUEUE: usize = 256;
/// The longest logger name kept.
pub(crate) const MAX_LOGGER_BYTES: usize = 128;

/// One server log record, as the host's log service sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    /// The binding whose server logged.
    pub binding: String,
    /// The severity the server claimed.
    pub level: LoggingLevel,
    /// The server-side logger, if named (bounded).
    pub logger: Option<String>,
    /// The bounded message, control characters replaced.
    pub text: String,
    /// Whether `text` was cut to the bound.
    pub truncated: bool,
}

/// A record's text from its `data`: a string as is, anything else as JSON.
pub(crate) fn text_of(data: Option<&Value>) -> String {
    match data {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Bounds a record's text; returns it and whether it was cut.
pub(crate) fn bound_text(text: &str, max: usize) -> (String, bool) {
    let bounded = normalize_message(text, max);
    let truncated = bounded.len() < text.len() && bounded.ends_with('…');
    (bounded, truncated)
}

/// The hand-off from the connection's reader to the log service, through
/// the binding's ordered delivery queue.
pub(crate) struct LogPump {
    service: Option<LogService>,
    deliveries: Deliveries,
    pending: Arc<Pending>,
    dropped: Arc<AtomicU64>,
    /// The least severe level delivered, as an index into
    /// [`LoggingLevel::ALL`].
    min_level: AtomicU8,
}

fn level_index(level: LoggingLevel) -> u8 {
    LoggingLevel::ALL.iter().position(|l| *l == level).unwrap_or(0) as u8
}

impl LogPump {
    /// A pump to `service` through `deliveries` (the binding's progress
    /// router's), or one that delivers nothing when there is no service.
    pub(crate) fn new(service: Option<LogService>, min_level: LoggingLevel, deliveries: Deliveries) -> Self {
        LogPump {
            service,
            deliveries,
            pending: Arc::default(),
            dropped: Arc::new(AtomicU64::new(0)),
            min_level: AtomicU8::new(level_index(min_level)),
        }
    }

    /// Whether a log service is installed.
    pub(crate) fn installed(&self) -> bool {
        self.service.is_some()
    }

    /// Changes the least severe level delivered.
    pub(crate) fn set_min_level(&self, level: LoggingLevel) {
        self.min_level.store(level_index(level), Ordering::Relaxed);
    }

    /// Queues a record without waiting; below the level it is skipped, on a
    /// full queue dropped and counted.
    pub(crate) fn deliver(&self, record: LogMessage) {
        let Some(service) = &self.service else { return };
        if level_index(record.level) < self.min_level.load(Ordering::Relaxed) {
            return;
        }
        if !self.pending.take(LOG_QUEUE) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let service = service.clone();
        let job: crate::layer::progress::Job = Box::new(move || {
            Box::pin(async move {
                if let Err(e) = tower::ServiceExt::oneshot(service, record).await {
                    tracing::debug!(target: "mcp_stack::inbound", "the log service failed: {e}");
                }
            })
        });
        self.deliveries.job(job, self.pending.clone());
    }

    /// Records dropped because the log service fell behind.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_bounded_and_marked() {
        assert_eq!(bound_text("short", 16), ("short".to_string(), false));
        let (t, cut) = bound_text(&"x".repeat(100), 16);
        assert!(cut && t.len() <= 16);
        let (t, cut) = bound_text("a\nb", 16);
        assert_eq!((t.as_str(), cut), ("a b", false));
        assert_eq!(text_of(Some(&json!({"k": 1}))), r#"{"k":1}"#);
        assert_eq!(text_of(Some(&json!("s"))), "s");
    }

    #[tokio::test]
    async fn a_full_queue_drops_and_counts_and_levels_filter() {
        let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
        let svc = tower::service_fn(move |_m: LogMessage| {
            let mut gate = gate_rx.clone();
            async move {
                let _ = gate.wait_for(|open| *open).await;
                Ok::<_, crate::Error>(())
            }
        });
        let pump = LogPump::new(
            Some(tower::util::BoxCloneSyncService::new(svc)),
            LoggingLevel::Info,
            Deliveries::default(),
        );
        let record = |level| LogMessage {
            binding: "b".into(),
            level,
            logger: None,
            text: "t".into(),
            truncated: false,
        };
        pump.deliver(record(LoggingLevel::Debug));
        for _ in 0..LOG_QUEUE + 10 {
            pump.deliver(record(LoggingLevel::Error));
        }
        tokio::task::yield_now().await;
        // One record is with the service, LOG_QUEUE are queued, the rest dropped.
        assert!(pump.dropped() >= 9 && pump.dropped() <= 10, "{}", pump.dropped());
        gate_tx.send(true).unwrap();
    }
}
