//! The response to one `POST`: a session that expired, a `202` (parked on
//! the listening stream), an error status, or a JSON body read whole and
//! checked to answer its request. An SSE reply is handed to
//! [`resume`](super::resume).
//!
//! Apart from the call path because what a reply may carry (its own
//! request's response and no other) is a rule of its own.

use reqwest::header::HeaderValue;
use reqwest::StatusCode;
use std::sync::atomic::{AtomicBool, Ordering};

use super::refusal::{is_html, status_message};
use super::shared::Core;
use crate::error::{normalize_message, FailureClass};
use crate::protocol::RequestId;
use crate::transport::http::body::{body_kind, error_body_quote, read_body_bounded, BodyError, BodyKind};
use crate::transport::http::peek::{id_prefix, Peek};
use crate::transport::http::ERROR_BODY_QUOTE_BYTES;
use crate::transport::Inbound;

impl Core {
    /// Handles the response to the request `id`. `handoff`: see
    /// [`Core::stream_reply`].
    pub(super) async fn reply(
        &self,
        id: RequestId,
        response: crate::transport::http::HttpResponse,
        sent: Option<HeaderValue>,
        handoff: Option<&AtomicBool>,
    ) {
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            if let Some(sent) = &sent {
                self.expire(sent).await;
                self.deliver(Inbound::SessionExpired { id: Some(id) }).await;
                return;
            }
        }
        if status == StatusCode::ACCEPTED {
            return self.park(id).await;
        }
        if !status.is_success() {
            return self.refused(id, response).await;
        }
        let kind = body_kind(&response);
        self.json_replies.store(kind == BodyKind::Json, Ordering::Relaxed);
        match kind {
            BodyKind::Json => self.json_reply(id, response).await,
            BodyKind::EventStream => self.stream_reply(id, response, handoff).await,
            BodyKind::Other => {
                self.fail(
                    &id,
                    FailureClass::ServerProtocol,
                    format!(
                        "the server at {} answered with a body that is neither JSON nor SSE",
                        self.origin()
                    ),
                )
                .await
            }
        }
    }

    /// An error status: the server's JSON-RPC error for `id` if the body is
    /// one, else a failure of the call.
    async fn refused(&self, id: RequestId, response: crate::transport::http::HttpResponse) {
        let status = response.status();
        let retry_after = crate::transport::http::retry_after(status, response.headers());
        if body_kind(&response) == BodyKind::Json {
            if let Ok(body) = read_body_bounded(&self.client, response, self.max_frame.min(64 << 10)).await {
                let text = String::from_utf8_lossy(&body).into_owned();
                if Peek::of(&text).answers(&id) {
                    self.deliver(Inbound::Frame(text)).await;
                    return;
                }
                let quote = normalize_message(&text, ERROR_BODY_QUOTE_BYTES);
                return self
                    .fail_status(&id, status, retry_after, status_message(self.origin(), status, &quote))
                    .await;
            }
            return self
                .fail_status(&id, status, retry_after, status_message(self.origin(), status, ""))
                .await;
        }
        if is_html(&response) {
            // A web page, not an MCP endpoint: its markup says nothing to the
            // person, the URL does.
            let text = format!(
                "the server at {} answered HTTP {} with a web page: this URL is not an MCP endpoint \
                 (check its path; servers often serve MCP at /mcp)",
                self.origin(),
                status.as_u16()
            );
            return self.fail_status(&id, status, retry_after, text).await;
        }
        let quote = error_body_quote(&self.client, response).await;
        self.fail_status(&id, status, retry_after, status_message(self.origin(), status, &quote)).await;
    }

    async fn json_reply(&self, id: RequestId, response: crate::transport::http::HttpResponse) {
        let max = self.max_body.min(self.max_frame);
        match read_body_bounded(&self.client, response, max).await {
            // `Vec::from(Bytes)` takes the buffer without a copy when it is
            // the only owner (a whole body read into one buffer).
            Ok(body) => match String::from_utf8(Vec::from(body)) {
                Ok(text) => self.deliver_json(id, text).await,
                Err(_) => {
                    let text = format!(
                        "the server at {} answered with a JSON body that is not UTF-8",
                        self.origin()
                    );
                    self.fail(&id, FailureClass::ServerProtocol, text).await
                }
            },
            Err(BodyError::TooLarge { read }) => {
                let reason = format!(
                    "the reply body exceeds the bound of {max} bytes (max_body_bytes / max_frame_bytes)"
                );
                self.deliver(Inbound::Damaged { reason, prefix: id_prefix(&id), bytes: read }).await;
            }
            Err(BodyError::Failed(error)) => {
                self.fail(
                    &id,
                    FailureClass::Indeterminate,
                    format!("the reply body broke: {}", error.message()),
                )
                .await
            }
        }
    }

    /// The JSON body answering `id`: one message, or a batch of them
    /// (2025-03-26). Its messages are delivered, but for responses to other
    /// ids, which are dropped. Unless one was a well-formed success
    /// response to `id` (which ends the request for sure), the request is
    /// then reported failed, which the connection ignores when a delivered
    /// response ended it (see the [module docs](self)). Skipping the report
    /// on success saves ~9.7k instructions of a ~175k call (its message
    /// formatted and normalized twice; callgrind, bench/vs-rmcp --transport
    /// http).
    async fn deliver_json(&self, id: RequestId, text: String) {
        let why = if text.trim().is_empty() {
            "the JSON body is empty".to_string()
        } else if text.trim_start().starts_with('[') {
            match serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&text) {
                Ok(batch) => {
                    let mut why = JsonBody::default();
                    for message in batch {
                        if !self.deliver_one(&id, message.get().to_string(), &mut why, false).await {
                            return;
                        }
                    }
                    if why.ended {
                        return;
                    }
                    why.describe()
                }
                Err(_) => "the JSON body is not a JSON-RPC message".to_string(),
            }
        } else {
            let mut why = JsonBody::default();
            let alone = self.may_deliver_direct();
            if !self.deliver_one(&id, text, &mut why, alone).await || why.ended {
                return;
            }
            why.describe()
        };
        let text = format!("the server at {} did not answer the request: {why}", self.origin());
        self.fail(&id, FailureClass::ServerProtocol, text).await;
    }

    /// One message of a JSON body answering `id`. Returns `false` when
    /// nobody reads any more. `alone`: the body is this one message (and
    /// the handshake is over), so a response to `id` may go straight to
    /// its call ([`Core::deliver_in_order`]); anything else is queued.
    async fn deliver_one(&self, id: &RequestId, text: String, why: &mut JsonBody, alone: bool) -> bool {
        let Some(peek) = Peek::parse(&text) else {
            why.unreadable = true;
            return true;
        };
        let mut direct = false;
        if peek.method.is_none() {
            match &peek.id {
                Some(answered) if answered == id => {
                    why.answered = true;
                    why.ended |= peek.is_result();
                    direct = alone;
                }
                Some(other) => {
                    why.other = Some(other.clone());
                    return self.stray(id, other).await;
                }
                None => {}
            }
        }
        self.deliver_in_order(text, &mut direct).await
    }

    /// A response to `other` read from the reply to `id`: dropped, since a
    /// response belongs to its own request's reply (delivered, it would end
    /// call `other` with whatever another stream said). Reported as
    /// [`Inbound::Dropped`] for the 1st, 2nd, 4th, 8th, … one of the
    /// connection, so that a flood gives a few warnings. Returns `false`
    /// when nobody reads any more.
    pub(super) async fn stray(&self, id: &RequestId, other: &RequestId) -> bool {
        let dropped = self.strays.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(target: "mcp_stack::http", binding = %self.binding, "dropped a response to {other} on the reply to {id}");
        if !dropped.is_power_of_two() {
            return true;
        }
        let reason = format!(
            "dropped a response to request {} that came with the reply to request {id}: a response \
             belongs to its own request's stream ({dropped} such responses dropped so far)",
            normalize_message(&other.to_string(), 64)
        );
        self.deliver(Inbound::Dropped { reason }).await
    }
}

/// What the messages of a JSON body said about the request they answer.
#[derive(Debug, Default)]
struct JsonBody {
    answered: bool,
    /// The response delivered ends the request for sure (a well-formed
    /// success): nothing more need be said.
    ended: bool,
    unreadable: bool,
    other: Option<RequestId>,
}

impl JsonBody {
    fn describe(&self) -> String {
        if self.answered {
            "its response is not a usable JSON-RPC response".into()
        } else if let Some(other) = &self.other {
            format!("the JSON body answers another request (id {other})")
        } else if self.unreadable {
            "the JSON body is not a JSON-RPC message".into()
        } else {
            "the JSON body carries no response to it".into()
        }
    }
}
