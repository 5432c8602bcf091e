//! An SSE reply to one request, read event by event and, when it ends
//! before the response, resumed with a `GET` and `Last-Event-ID` as the
//! [`ResumePolicy`] says.
//!
//! Apart from the JSON reply because resumption is a loop of its own, and
//! [`ResumePolicy`] is the one rule it shares with the listening stream.

use reqwest::StatusCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::shared::Core;
use crate::error::FailureClass;
use crate::protocol::RequestId;
use crate::transport::http::body::{body_kind, BodyKind};
use crate::transport::http::peek::Peek;
use crate::transport::http::sse::{End, EventReader, Item};
use crate::transport::Inbound;

/// How broken SSE streams are resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Reconnections in a row that bring no message before giving up.
    pub max_attempts: u32,
    /// The delay before a reconnection when the server gave no `retry`
    /// advice; it doubles with each attempt in a row, up to `max_delay`.
    /// A server's `retry` is honoured exactly, every time.
    pub delay: Duration,
    /// The longest delay without server advice.
    pub max_delay: Duration,
}

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy { max_attempts: 5, delay: Duration::from_secs(1), max_delay: Duration::from_secs(30) }
    }
}

impl ResumePolicy {
    /// The wait before reconnection attempt `attempt` (from 1).
    pub fn wait(&self, retry: Option<Duration>, attempt: u32) -> Duration {
        if let Some(retry) = retry {
            return retry;
        }
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.delay.saturating_mul(factor).min(self.max_delay)
    }
}

impl Core {
    /// An SSE reply to `id`, resumed as the specification says when it ends
    /// before the response. It carries requests and notifications, and its
    /// own response; a response to another request is dropped
    /// ([`Core::stray`]). `handoff` is raised once it brought a message
    /// besides the response (the stream of a call run on its caller's task
    /// then moves to a task of its own: see `post::HandOff`).
    pub(super) async fn stream_reply(
        &self,
        id: RequestId,
        response: crate::transport::http::HttpResponse,
        handoff: Option<&AtomicBool>,
    ) {
        let mut reader = EventReader::new(response, self.max_frame, Some(self.max_body));
        let mut attempts = 0u32;
        let mut damaged = false;
        // Until something of this reply is queued, its messages (progress,
        // the response) go straight to the connection from this task, in
        // order; from then on all are queued ([`Core::deliver_in_order`]).
        let mut direct = self.may_deliver_direct();
        // Bounded: every turn either returns or is a resumption attempt, and
        // attempts in a row without a message are capped.
        loop {
            let mut delivered = false;
            let end = loop {
                match reader.next().await {
                    Ok(Item::Message(text)) => {
                        let peek = Peek::of(&text);
                        if let Some(other) = peek.answers_other(&id) {
                            // Not a sign of life: a stream of these alone is
                            // not resumed without end.
                            if !self.stray(&id, other).await {
                                return;
                            }
                            continue;
                        }
                        let answered = peek.answers(&id);
                        // A well-formed success ends the request for sure.
                        let ended = answered && peek.is_result();
                        if !self.deliver_in_order(text, &mut direct).await {
                            return;
                        }
                        if ended {
                            return;
                        }
                        if answered {
                            // Ignored by the connection unless that response
                            // could not end the request.
                            let text =
                                "the server's response to the request is not a usable JSON-RPC response";
                            return self.fail(&id, FailureClass::ServerProtocol, text).await;
                        }
                        if let Some(handoff) = handoff {
                            handoff.store(true, Ordering::Relaxed);
                        }
                        delivered = true;
                    }
                    Ok(Item::Damaged { reason, prefix, bytes }) => {
                        damaged = true;
                        direct = false;
                        if !self.deliver(Inbound::Damaged { reason, prefix, bytes }).await {
                            return;
                        }
                    }
                    Err(end) => break end,
                }
            };
            if let End::BodyLimit { read } = end {
                let text = format!(
                    "the reply stream exceeded max_body_bytes ({}) after {read} bytes; it was abandoned",
                    self.max_body
                );
                return self.fail(&id, FailureClass::LimitExceeded, text).await;
            }
            if damaged {
                let text =
                    "the reply was dropped: an event of its stream exceeded max_frame_bytes or was not UTF-8";
                return self.fail(&id, FailureClass::LimitExceeded, text).await;
            }
            if let End::Failed(error) = &end {
                tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "reply stream broke: {}", error.message());
            }
            if delivered {
                attempts = 0;
            }
            if self.is_stateless() {
                // 2026-07-28 streams are not resumable: the request is lost.
                let text = "the reply stream ended before the reply (streams of this protocol version are not resumable)";
                return self.fail(&id, FailureClass::Indeterminate, text).await;
            }
            let Some(last) = reader.last_event_id.clone() else {
                let text = "the reply stream ended before the reply, without an event id to resume it from";
                return self.fail(&id, FailureClass::Indeterminate, text).await;
            };
            let retry = reader.retry;
            let next = loop {
                if attempts >= self.resume.max_attempts {
                    let text = format!("could not resume the reply stream after {attempts} attempts");
                    return self.fail(&id, FailureClass::Indeterminate, text).await;
                }
                attempts += 1;
                tokio::time::sleep(self.resume.wait(retry, attempts)).await;
                match self.get(Some(&last)).await {
                    Ok((response, sent)) => {
                        let status = response.status();
                        if status.is_success() && body_kind(&response) == BodyKind::EventStream {
                            break response;
                        }
                        if status == StatusCode::NOT_FOUND {
                            if let Some(sent) = &sent {
                                self.expire(sent).await;
                            }
                        }
                        let text = format!(
                            "the server cannot resume the reply stream (HTTP {}); the outcome is unknown",
                            status.as_u16()
                        );
                        return self.fail(&id, FailureClass::Indeterminate, text).await;
                    }
                    Err(error) => {
                        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, attempt = attempts, "resuming the reply stream: {}", error.message());
                    }
                }
            };
            let mut resumed = EventReader::new(next, self.max_frame, Some(self.max_body));
            resumed.last_event_id = Some(last);
            resumed.retry = retry;
            reader = resumed;
        }
    }
}
