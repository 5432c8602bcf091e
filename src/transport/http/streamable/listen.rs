//! The `GET` listening stream: what the server sends on its own, resumed
//! while it brings messages, and the requests answered with `202` whose
//! replies only it can carry.
//!
//! Apart from the call path because it lives from `initialized` to the end
//! of the connection, not for one request.

use reqwest::StatusCode;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

use super::shared::Core;
use super::MAX_IN_FLIGHT;
use crate::error::FailureClass;
use crate::protocol::RequestId;
use crate::transport::http::body::{body_kind, BodyKind};
use crate::transport::http::peek::Peek;
use crate::transport::http::sse::{End, EventReader, Item};
use crate::transport::Inbound;

/// The listening stream, and the requests the server answered with 202
/// whose replies only it can carry.
#[derive(Default)]
pub(super) struct Listening {
    pub(super) task: Option<JoinHandle<()>>,
    /// The listening task runs (it clears this as its last act).
    pub(super) live: bool,
    /// Requests answered with 202 while the stream was live, oldest first.
    /// An entry leaves when the stream carries its reply, when its caller
    /// abandons it, or when the stream ends; at most [`MAX_IN_FLIGHT`] are
    /// kept (a reply the stream carried before its 202 arrived leaves one
    /// behind), and past that the oldest is failed, which the connection
    /// ignores when it was answered.
    pub(super) parked: VecDeque<RequestId>,
}

impl Core {
    /// A 202 to the request `id`: its reply can only come on the listening
    /// stream. Without one it never comes, and the request ends now.
    pub(super) async fn park(&self, id: RequestId) {
        let (parked, evicted) = {
            let mut listening = self.listening.lock().expect("listening lock");
            if listening.live {
                let evicted =
                    (listening.parked.len() >= MAX_IN_FLIGHT).then(|| listening.parked.pop_front()).flatten();
                listening.parked.push_back(id.clone());
                (true, evicted)
            } else {
                (false, None)
            }
        };
        if let Some(evicted) = evicted {
            let text = "the server answered the request with 202 Accepted, and too many others wait for \
                        their replies on the listening stream";
            self.fail(&evicted, FailureClass::ServerProtocol, text).await;
        }
        if !parked {
            let text = format!(
                "the server at {} answered the request with 202 Accepted, and no stream can carry its \
                 reply (there is no listening stream)",
                self.origin()
            );
            self.fail(&id, FailureClass::ServerProtocol, text).await;
        }
    }

    /// A message the listening stream carried: a reply to a parked request
    /// unparks it.
    fn unpark(&self, text: &str) {
        let mut listening = self.listening.lock().expect("listening lock");
        if listening.parked.is_empty() {
            return;
        }
        let peek = Peek::of(text);
        if let (None, Some(id)) = (&peek.method, &peek.id) {
            listening.parked.retain(|p| p != id);
        }
    }

    /// The listening stream stopped: the requests parked on it have nothing
    /// left to carry their replies.
    async fn listener_ended(&self) {
        let parked = {
            let mut listening = self.listening.lock().expect("listening lock");
            listening.live = false;
            // This task's own handle: kept, it would hold the ended task's
            // cell (2.4 KB) for as long as the binding lives.
            listening.task = None;
            std::mem::take(&mut listening.parked)
        };
        for id in parked {
            let text = "the server answered the request with 202 Accepted, and the listening stream \
                        that could carry its reply has ended";
            self.fail(&id, FailureClass::ServerProtocol, text).await;
        }
    }

    pub(super) fn start_listener(self: &Arc<Self>) {
        if !self.listen || self.is_closing() || self.is_stateless() {
            return;
        }
        let mut listening = self.listening.lock().expect("listening lock");
        if listening.live {
            return;
        }
        listening.live = true;
        let core = self.clone();
        listening.task = Some(tokio::spawn(async move {
            let inbound = core.inbound.clone();
            tokio::select! {
                _ = core.listen_loop() => {}
                _ = inbound.closed() => {}
            }
            core.listener_ended().await;
        }));
    }

    /// The `GET` listening stream, resumed while it brings messages.
    async fn listen_loop(&self) {
        let mut last: Option<String> = None;
        let mut retry: Option<Duration> = None;
        let mut failures = 0u32;
        // Bounded: every turn that brings no message counts, and they are
        // capped; the loop also ends with the connection.
        loop {
            match self.get(last.as_deref()).await {
                Err(error) => {
                    failures += 1;
                    tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "listening stream: {}", error.message());
                }
                Ok((response, sent)) => {
                    let status = response.status();
                    if status == StatusCode::NOT_FOUND {
                        if let Some(sent) = &sent {
                            if self.expire(sent).await {
                                self.deliver(Inbound::SessionExpired { id: None }).await;
                            }
                            return;
                        }
                    }
                    if !status.is_success() || body_kind(&response) != BodyKind::EventStream {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, status = status.as_u16(), "the server offers no listening stream");
                        return;
                    }
                    let mut reader = EventReader::new(response, self.max_frame, None);
                    reader.last_event_id = last.take();
                    reader.retry = retry;
                    let mut delivered = false;
                    let end = loop {
                        match reader.next().await {
                            Ok(Item::Message(text)) => {
                                delivered = true;
                                self.unpark(&text);
                                if !self.deliver(Inbound::Frame(text)).await {
                                    return;
                                }
                            }
                            Ok(Item::Damaged { reason, prefix, bytes }) => {
                                if !self.deliver(Inbound::Damaged { reason, prefix, bytes }).await {
                                    return;
                                }
                            }
                            Err(end) => break end,
                        }
                    };
                    if let End::Failed(error) = end {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "listening stream broke: {}", error.message());
                    }
                    last = reader.last_event_id;
                    retry = reader.retry;
                    failures = if delivered { 0 } else { failures + 1 };
                }
            }
            if self.is_closing() {
                return;
            }
            if failures >= self.resume.max_attempts {
                tracing::warn!(target: "mcp_stack::http", binding = %self.binding, origin = %self.origin(), "stopped listening after {failures} reconnections without a message");
                return;
            }
            tokio::time::sleep(self.resume.wait(retry, failures.max(1))).await;
        }
    }
}
