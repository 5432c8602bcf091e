//! The 2026-07-28 listen stream: one `subscriptions/listen` request per
//! binding that carries the list-changed notifications the catalog needs.
//!
//! There are no free-floating `notifications/*/list_changed` in this era: a
//! client that wants them opens a long-lived `subscriptions/listen` request
//! whose filter (`notifications`) names the families, and the server sends
//! them on that request's stream, each with
//! `_meta["io.modelcontextprotocol/subscriptionId"]`, after a first
//! `notifications/subscriptions/acknowledged`. The notifications reach the
//! binding's inbound side like any other, so the catalog's stale, candidate
//! and adopt rules are the same in both eras.
//!
//! The binding opens the stream after each handshake of a modern session
//! (replacing the previous one), asking for the families the server
//! advertises `listChanged` for. A result ends it gracefully; any other end
//! (a broken stream, a lost connection) opens it again after a backoff
//! ([`LISTEN_BACKOFF`], doubling to [`MAX_LISTEN_BACKOFF`]), at most
//! [`MAX_LISTEN_ATTEMPTS`] times in a row without a stream that lasted; a
//! reconnect opens a new one. The stream is one request like any other, so
//! it holds one of the binding's `max_concurrent_requests` while open, and
//! it is bounded by [`LISTEN_TIMEOUT`], after which it is opened again.
//!
//! Resource subscriptions ride the same request: in this era
//! [`Binding::subscribe`] and [`Binding::unsubscribe`] change the listen
//! request's `resourceSubscriptions` (the stream is opened again with the
//! new filter) instead of sending `resources/subscribe`; updates arrive as
//! `notifications/resources/updated` and become `ResourceUpdated` events as
//! in the legacy era.
//!
//! Tasks of the 2026-07-28 Tasks extension ride it too: while a
//! [`TaskHandle`](crate::TaskHandle) waits for a task, the filter's
//! `taskIds` names it (at most [`MAX_LISTENED_TASKS`] at once; more are
//! only polled), so the server may push its `notifications/tasks`, and a
//! change it pushes brings the next poll forward. Adding a task opens the
//! stream again with the new filter, as a subscription does; a task that
//! ended leaves the filter at the next change. A server that answers
//! `subscriptions/listen` with "method not found" is not asked again in
//! the session (one warning), and its tasks are polled.
//!
//! The acknowledgement names what the server honours; when it differs from
//! what was asked (an asked family missing or off, a resource left out),
//! the binding emits a warning event. Task ids are not compared: the
//! handles poll whatever the server agreed to.
//!
//! On stdio every stream shares the one channel, so the binding tells its
//! open stream's messages apart by their
//! `_meta["io.modelcontextprotocol/subscriptionId"]` ([`SUBSCRIPTION_ID_META`](crate::handlers::inbound::SUBSCRIPTION_ID_META),
//! the id of the listen request that opened the stream): a message stamped
//! with another id (a stream the binding replaced when a subscription
//! changed, whose last messages may still be on their way) is dropped, so a
//! stale acknowledgement is not compared with the new filter and a stale
//! update is not reported. A notification with no stamp is taken as it is.
//! Over HTTP each stream is its own response, and nothing is dropped.

use serde_json::{json, Map, Value};
use std::time::Duration;

use super::{Binding, MAX_SUBSCRIPTION_URI_BYTES};
use crate::error::Error;
use crate::error::FailureClass;
use crate::protocol::lifecycle::ServerCapabilities;
use crate::protocol::methods;
use crate::request::{CallOpts, McpRequest};
use std::sync::atomic::Ordering;

/// The first wait before a listen stream that ended is opened again.
pub(super) const LISTEN_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
pub(super) const MAX_LISTEN_BACKOFF: Duration = Duration::from_secs(30);
/// Attempts in a row that end early (before [`LISTEN_STABLE`]) before the
/// binding gives up on the stream with a warning.
pub(super) const MAX_LISTEN_ATTEMPTS: u32 = 8;
/// A stream that lasted this long counts as established: the attempts
/// start again from the first backoff.
pub(super) const LISTEN_STABLE: Duration = Duration::from_secs(60);
/// How long one listen request may stay open before it is opened anew.
pub(super) const LISTEN_TIMEOUT: Duration = Duration::from_secs(3600);
/// The most tasks one listen stream asks notifications for.
pub(crate) const MAX_LISTENED_TASKS: usize = 32;

/// The notification filter for what `capabilities` can announce, the
/// resources subscribed to and the tasks waited for (only those of a
/// server that declares the Tasks extension), or `None` when there is
/// nothing to listen for.
pub(crate) fn filter(
    capabilities: &ServerCapabilities,
    resources: &[String],
    tasks: &[String],
) -> Option<Map<String, Value>> {
    let mut filter = Map::new();
    if capabilities.tools.as_ref().and_then(|c| c.list_changed) == Some(true) {
        filter.insert("toolsListChanged".into(), json!(true));
    }
    if capabilities.prompts.as_ref().and_then(|c| c.list_changed) == Some(true) {
        filter.insert("promptsListChanged".into(), json!(true));
    }
    if capabilities.resources.as_ref().and_then(|c| c.list_changed) == Some(true) {
        filter.insert("resourcesListChanged".into(), json!(true));
    }
    if !resources.is_empty() {
        filter.insert("resourceSubscriptions".into(), json!(resources));
    }
    if !tasks.is_empty() && capabilities.declares_extension(crate::protocol::TASKS_EXTENSION) {
        filter.insert("taskIds".into(), json!(tasks));
    }
    (!filter.is_empty()).then_some(filter)
}

impl Binding {
    /// Subscribes to updates of the resource `uri` (passed verbatim, never
    /// resolved on the host): the server's `notifications/resources/updated`
    /// become [`Event::ResourceUpdated`](crate::Event::ResourceUpdated). The binding keeps the subscription
    /// (at most `Limits::max_resource_count` of them) so that a new
    /// connection can restore it.
    ///
    /// Fails with `invalid_config`, sending nothing, when the server does
    /// not advertise `resources.subscribe`, or the URI is empty or over
    /// 8 KiB; with `limit_exceeded` when the
    /// binding holds its maximum already.
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        self.check_subscription(uri, "subscribe")?;
        {
            let subs = self.inner.subscriptions.lock().expect("subscriptions lock");
            if !subs.contains(uri) && subs.len() >= self.inner.limits.max_resource_count {
                return Err(Error::new(
                    FailureClass::LimitExceeded,
                    format!("the binding holds {} subscriptions already", subs.len()),
                )
                .with_binding(&self.inner.name)
                .with_op("subscribe"));
            }
        }
        if self.listens() {
            // The listen request carries the subscriptions.
            self.inner.subscriptions.lock().expect("subscriptions lock").insert(uri.to_string());
            self.start_listening();
            return Ok(());
        }
        self.request(
            McpRequest::with_value(methods::RESOURCES_SUBSCRIBE, json!({ "uri": uri })),
            "subscribe",
        )
        .await?;
        self.inner.subscriptions.lock().expect("subscriptions lock").insert(uri.to_string());
        Ok(())
    }

    /// Ends the subscription to `uri`. The binding forgets it even when the
    /// server's answer is an error: the host no longer wants the updates.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        self.check_subscription(uri, "unsubscribe")?;
        self.inner.subscriptions.lock().expect("subscriptions lock").remove(uri);
        if self.listens() {
            self.start_listening();
            return Ok(());
        }
        let params = json!({ "uri": uri });
        self.request(McpRequest::with_value(methods::RESOURCES_UNSUBSCRIBE, params), "unsubscribe")
            .await
            .map(drop)
    }

    fn check_subscription(&self, uri: &str, op: &'static str) -> Result<(), Error> {
        let problem = if !self.current_session().capabilities.resources_subscribe() {
            Some("the server does not support resource subscriptions".to_string())
        } else if uri.is_empty() || uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
            Some(format!("a resource URI must be 1 to {MAX_SUBSCRIPTION_URI_BYTES} bytes"))
        } else {
            None
        };
        match problem {
            Some(text) => {
                Err(Error::new(FailureClass::InvalidConfig, text).with_binding(&self.inner.name).with_op(op))
            }
            None => Ok(()),
        }
    }

    /// The resources this binding is subscribed to, in order.
    pub fn subscriptions(&self) -> Vec<String> {
        self.inner.subscriptions.lock().expect("subscriptions lock").iter().cloned().collect()
    }

    /// Subscribes again to every resource in [`Binding::subscriptions`]:
    /// what a new connection needs, since subscriptions die with the old
    /// one. Returns the failures (the binding keeps those subscriptions, to
    /// try again on the next connection); empty when all succeeded or there
    /// were none.
    pub async fn resubscribe_all(&self) -> Vec<(String, Error)> {
        let mut failures = Vec::new();
        if self.listens() {
            // The listen stream, opened again for the new session, carries them.
            return failures;
        }
        for uri in self.subscriptions() {
            let params = json!({ "uri": uri });
            if let Err(e) =
                self.request(McpRequest::with_value(methods::RESOURCES_SUBSCRIBE, params), "subscribe").await
            {
                failures.push((uri, e));
            }
        }
        failures
    }

    /// Asks the listen stream for the notifications of task `id` while the
    /// returned guard lives (a handle waits for it); `None`, changing
    /// nothing, unless the session listens, both sides declare the Tasks
    /// extension, the server has not refused the stream and fewer than
    /// [`MAX_LISTENED_TASKS`] are listened for. The first waiter of a task
    /// opens the stream again with it.
    pub(crate) fn listen_for_task(&self, id: &str) -> Option<ListenedTask> {
        if !self.listens()
            || !self.inner.declares_tasks
            || self.inner.listen_refused.load(Ordering::Relaxed)
            || !self.current_session().capabilities.declares_extension(crate::protocol::TASKS_EXTENSION)
        {
            return None;
        }
        let first = {
            let mut tasks = self.inner.listened_tasks.lock().expect("listened tasks lock");
            if let Some(waiting) = tasks.get_mut(id) {
                *waiting += 1;
                false
            } else if tasks.len() >= MAX_LISTENED_TASKS {
                return None;
            } else {
                tasks.insert(id.to_string(), 1);
                true
            }
        };
        if first {
            self.start_listening();
        }
        Some(ListenedTask { binding: self.clone(), id: id.to_string() })
    }

    fn listened_tasks(&self) -> Vec<String> {
        self.inner.listened_tasks.lock().expect("listened tasks lock").keys().cloned().collect()
    }

    /// Opens the listen stream of a modern session (replacing any earlier
    /// one); see the [module docs](self).
    pub(crate) fn start_listening(&self) {
        if self.inner.listen_refused.load(Ordering::Relaxed) {
            return;
        }
        let capabilities = self.current_session().capabilities;
        let Some(filter) = filter(&capabilities, &self.subscriptions(), &self.listened_tasks()) else {
            if let Some(previous) = self.inner.listen.lock().expect("listen lock").take() {
                previous.abort();
            }
            self.inner.inbound.begin_listen();
            return;
        };
        let generation = self.inner.inbound.begin_listen();
        self.inner.inbound.set_listen_filter(Some(filter.clone()));
        let weak = std::sync::Arc::downgrade(&self.inner);
        let task = tokio::spawn(async move {
            let mut backoff = LISTEN_BACKOFF;
            let mut attempts = 0u32;
            while attempts < MAX_LISTEN_ATTEMPTS {
                // Only the service is held while the stream is open, so a
                // binding dropped without `close` is not kept alive by it.
                let Some(service) = weak.upgrade().map(|inner| inner.service.clone()) else { return };
                let params = json!({ "notifications": filter.clone() });
                let opts = CallOpts { timeout: Some(LISTEN_TIMEOUT), ..CallOpts::default() };
                let mut request = McpRequest::with_value(methods::SUBSCRIPTIONS_LISTEN, params).opts(opts);
                // The connection writes the request's id here; its
                // notifications carry it.
                let id = crate::connection::AssignedId::default();
                request.extensions.insert(id.clone());
                if let Some(inner) = weak.upgrade() {
                    inner.inbound.set_listen_id(generation, id);
                }
                let opened = tokio::time::Instant::now();
                let outcome = tower::ServiceExt::oneshot(service, request).await;
                match outcome {
                    // The server ended the subscription on purpose.
                    Ok(_) => return,
                    Err(e) if matches!(e.class(), FailureClass::Shutdown | FailureClass::NotFound) => {
                        if e.class() == FailureClass::NotFound {
                            if let Some(inner) = weak.upgrade() {
                                inner.listen_refused.store(true, Ordering::Relaxed);
                                Binding { inner }
                                    .warn(format!("the server does not offer subscriptions/listen: {e}"));
                            }
                        }
                        return;
                    }
                    Err(e) => {
                        tracing::debug!(target: "mcp_stack::listen", "listen stream ended: {e}");
                    }
                }
                if opened.elapsed() >= LISTEN_STABLE {
                    attempts = 0;
                    backoff = LISTEN_BACKOFF;
                }
                attempts += 1;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_LISTEN_BACKOFF);
            }
            if let Some(inner) = weak.upgrade() {
                Binding { inner }.warn(format!(
                    "gave up on the subscriptions/listen stream after {MAX_LISTEN_ATTEMPTS} attempts; catalog changes will not be announced"
                ));
            }
        });
        let previous = self.inner.listen.lock().expect("listen lock").replace(task.abort_handle());
        if let Some(previous) = previous {
            previous.abort();
        }
    }
}

/// A task the listen stream asks notifications for, while this lives
/// ([`Binding::listen_for_task`]). Dropping the last guard of a task takes
/// it out of the filter the next stream is opened with; the open stream
/// keeps it until then (its notifications, if any, reach no waiter).
pub(crate) struct ListenedTask {
    binding: Binding,
    id: String,
}

impl Drop for ListenedTask {
    fn drop(&mut self) {
        let mut tasks = self.binding.inner.listened_tasks.lock().expect("listened tasks lock");
        if let Some(waiting) = tasks.get_mut(&self.id) {
            *waiting -= 1;
            if *waiting == 0 {
                tasks.remove(&self.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::inbound::differs;

    #[test]
    fn an_acknowledgement_that_leaves_something_out_differs() {
        let asked: Map<String, Value> =
            serde_json::from_value(json!({ "toolsListChanged": true, "resourceSubscriptions": ["a", "b"] }))
                .unwrap();
        let same = asked.clone();
        assert!(!differs(&asked, &same));
        let fewer: Map<String, Value> =
            serde_json::from_value(json!({ "toolsListChanged": true, "resourceSubscriptions": ["a"] }))
                .unwrap();
        assert!(differs(&asked, &fewer));
        let off: Map<String, Value> =
            serde_json::from_value(json!({ "resourceSubscriptions": ["a", "b"] })).unwrap();
        assert!(differs(&asked, &off));
    }
}
