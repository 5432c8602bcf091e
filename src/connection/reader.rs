//! The reader task: it takes every frame the transport receives and
//! dispatches it — a reply to its pending call, a notification to the
//! inbound handler, a server request to be served (on a task of its own,
//! bounded) or dropped as the era says — and turns a damaged frame into a
//! warning, or into the end of the one call whose id it names.

use serde_json::{Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::{mpsc, Semaphore};

use super::{ConnectionState, Shared, MAX_CONCURRENT_SERVER_REQUESTS, MAX_REPLY_BACKLOG, REPLY_STALL};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::jsonrpc::{codes, EnvelopeError, TooDeep, MAX_MESSAGE_DEPTH};
use crate::protocol::progress::CancelledParams;
use crate::protocol::{methods, ErrorObject, Message, Notification, Request, RequestId, Response};
use crate::transport::Inbound;

pub(super) async fn read_loop(shared: Arc<Shared>, mut receiver: Box<dyn crate::transport::MessageReceiver>) {
    let permits = Arc::new(Semaphore::new(MAX_CONCURRENT_SERVER_REQUESTS));
    loop {
        // Stop reading once the connection was closed on purpose.
        let mut state = shared.state.subscribe();
        let next = tokio::select! {
            next = receiver.recv() => next,
            _ = state.wait_for(|s| *s != ConnectionState::Open) => return,
        };
        match next {
            Ok(Some(Inbound::Frame(text))) => {
                if !dispatch(&shared, &permits, &text).await {
                    return;
                }
            }
            Ok(Some(Inbound::Damaged { reason, prefix, bytes })) => {
                shared.warn(format!("dropped a damaged frame of {bytes} bytes: {reason}"));
                if let Some(id) = sniff_id(&prefix) {
                    let error = Error::new(
                        FailureClass::LimitExceeded,
                        format!("the reply ({bytes} bytes) was dropped: {reason}"),
                    );
                    shared.fail(&id, error);
                }
            }
            Ok(Some(Inbound::Dropped { reason })) => shared.warn(reason),
            Ok(Some(Inbound::Session(change))) => shared.inbound.session(change),
            Ok(Some(Inbound::RequestFailed { id, class, message, http_status, retry_after })) => {
                let mut error = Error::new(class, message);
                if let Some(status) = http_status {
                    error = error.with_http_status(status);
                }
                if let Some(delay) = retry_after {
                    error = error.with_retry_after(delay);
                }
                shared.fail(&id, error);
            }
            Ok(Some(Inbound::SessionExpired { id })) => match id {
                Some(id) => {
                    let error = Error::new(
                        FailureClass::TransportClosed,
                        "the server no longer knows the session (HTTP 404); the request was not processed",
                    )
                    .with_http_status(404)
                    .with_source(crate::transport::SessionExpired);
                    shared.fail(&id, error);
                }
                None => shared.warn("the server no longer knows the session (HTTP 404)".to_string()),
            },
            Ok(None) => {
                shared.finish(FailureClass::TransportClosed, "the server closed the connection");
                return;
            }
            Err(e) => {
                shared.finish(e.class(), e.message());
                return;
            }
        }
    }
}

impl Shared {
    /// A message handed over by the transport's task ([`DirectSink`]): a
    /// response or a notification, handled as [`dispatch`] handles them.
    /// `false` leaves it to the reader: the connection is no longer open
    /// (the reader stops reading then), or `text` is a server request
    /// (served on a task, under the reader's permits) or does not parse
    /// (the reader reports it as any damaged frame).
    ///
    /// [`DirectSink`]: crate::transport::DirectSink
    pub(super) fn take_direct(&self, text: &str) -> bool {
        if *self.state.borrow() != ConnectionState::Open {
            return false;
        }
        match Message::parse_with(text, &|id| self.bound_of(id)) {
            Ok(message) => self.handle_at_once(message).is_none(),
            Err(_) => false,
        }
    }

    /// Handles a response (its call completes) or a notification (a
    /// cancellation stops what it names being served; every one goes to
    /// the inbound handler); a server request is handed back.
    fn handle_at_once(&self, message: Message) -> Option<Request> {
        match message {
            Message::Response(response) => self.complete(response),
            Message::Notification(notification) => {
                if notification.method == methods::NOTIFICATIONS_CANCELLED {
                    stop_served(self, &notification);
                }
                self.inbound.notification(notification)
            }
            Message::Request(request) => return Some(request),
        }
        None
    }
}

/// Handles one frame. Returns `false` when the connection ended meanwhile
/// (the reply backlog stayed full). A server request's serving is boxed:
/// inline, its future would be held by every idle reader.
pub(super) async fn dispatch(shared: &Arc<Shared>, permits: &Arc<Semaphore>, text: &str) -> bool {
    match Message::parse_with(text, &|id| shared.bound_of(id)) {
        Ok(message) => {
            if let Some(request) = shared.handle_at_once(message) {
                return Box::pin(serve(shared, permits, request)).await;
            }
        }
        Err(EnvelopeError::TooDeep(deep)) => return Box::pin(too_deep(shared, deep)).await,
        Err(EnvelopeError::ResultAndError(id)) => {
            let error =
                Error::new(FailureClass::ServerProtocol, "the response carries both result and error");
            if !shared.fail(&id, error) {
                shared.warn(format!("ignored a contradictory reply to unknown id {id}"));
            }
        }
        Err(e) => {
            shared.warn(format!("dropped a damaged message: {e}"));
            // A reply that serde refuses (a lone surrogate in a string, say)
            // ends its own call now rather than at its deadline.
            if let Some(id) = sniff_reply_id(text) {
                shared.fail(
                    &id,
                    Error::new(FailureClass::ServerProtocol, format!("the reply was damaged: {e}")),
                );
            }
        }
    }
    true
}

/// A message deeper than [`MAX_MESSAGE_DEPTH`]: a reply ends its call with
/// `limit_exceeded` and the [`TooDeep`] as the source (which keeps the raw
/// result for a caller that reads it piece by piece); a server request gets
/// an "invalid request" error (when the era serves any); anything else is a
/// warning.
pub(super) async fn too_deep(shared: &Arc<Shared>, deep: TooDeep) -> bool {
    match (deep.method(), deep.id().cloned()) {
        (None, Some(id)) => {
            let error = Error::new(
                FailureClass::LimitExceeded,
                format!("the reply nests deeper than {MAX_MESSAGE_DEPTH} levels"),
            )
            .with_source(deep);
            if !shared.fail(&id, error) {
                shared.warn(format!("ignored a reply to unknown id {id} that nests too deep"));
            }
        }
        (Some(method), Some(id)) => {
            if !shared.admit_server_request(method) {
                return true;
            }
            shared.warn(format!("refused a server request {method:?} that nests too deep"));
            let text = format!("the request nests deeper than {MAX_MESSAGE_DEPTH} levels");
            let error = ErrorObject::new(codes::INVALID_REQUEST, text);
            return shared.reply_from_reader(Response::error(id, error)).await;
        }
        (method, None) => {
            let what = method.map(|m| format!(" {m:?}")).unwrap_or_default();
            shared.warn(format!("dropped a message{what} that nests deeper than {MAX_MESSAGE_DEPTH} levels"));
        }
    }
    true
}

/// Serves one server request: `ping` and refusals are answered by the
/// reader itself, through the reply backlog; the rest on a handler task.
/// Returns `false` when the connection ended meanwhile.
pub(super) async fn serve(shared: &Arc<Shared>, permits: &Arc<Semaphore>, request: Request) -> bool {
    if !shared.admit_server_request(&request.method) {
        return true;
    }
    if request.method == methods::PING {
        return shared.reply_from_reader(Response::result(request.id, Value::Object(Map::new()))).await;
    }
    let Ok(permit) = permits.clone().try_acquire_owned() else {
        let error = ErrorObject::new(codes::INTERNAL_ERROR, "too many concurrent server requests");
        return shared.reply_from_reader(Response::error(request.id, error)).await;
    };
    let id = request.id.clone();
    let number = shared.last_served.fetch_add(1, Ordering::Relaxed) + 1;
    let serving = Serving { shared: shared.clone(), id: id.clone(), number };
    let task_shared = shared.clone();
    // Locked across the spawn, so that a task that ends at once removes its
    // entry after it was made, not before.
    let mut table = shared.serving.lock().expect("serving lock");
    let task = tokio::spawn(async move {
        let _serving = serving;
        let outcome = task_shared.inbound.request(&request.method, request.params).await;
        let response = match outcome {
            Ok(result) => Response::result(request.id, result),
            Err(error) => Response::error(request.id, error),
        };
        // The permit is kept until the reply is queued, so that handler
        // tasks stay bounded however long the backlog stays full.
        task_shared.reply_from_task(response).await;
        drop(permit);
    });
    table.insert(id, (number, task.abort_handle()));
    true
}

impl Shared {
    /// Whether the era serves a server request of `method`; when it does
    /// not, the request is dropped, with a warning for the 1st, 2nd, 4th, …
    /// one (a flood gives a few).
    pub(super) fn admit_server_request(&self, method: &str) -> bool {
        let era = self.era.read().expect("era lock").clone();
        if era.serves_server_requests() {
            return true;
        }
        let dropped = self.unserved.fetch_add(1, Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            self.warn(format!(
                "dropped the server's request {:?} unanswered: in protocol version {} a server asks only \
                 through input_required results ({dropped} such requests dropped so far)",
                normalize_message(method, 64),
                era.protocol_version()
            ));
        }
        false
    }

    /// Queues a reply the reader makes. When the backlog is full the reader
    /// waits for room (reading nothing, which pushes back on the server), up
    /// to [`REPLY_STALL`]; then the connection ends with `limit_exceeded`.
    /// Returns `false` when the connection has ended.
    pub(super) async fn reply_from_reader(&self, response: Response) -> bool {
        self.start_writer();
        let text = Message::Response(response).to_json();
        let permit = match self.replies.try_reserve() {
            Ok(permit) => permit,
            Err(mpsc::error::TrySendError::Closed(())) => return false,
            Err(mpsc::error::TrySendError::Full(())) => {
                let mut state = self.state.subscribe();
                tokio::select! {
                    room = tokio::time::timeout(REPLY_STALL, self.replies.reserve()) => match room {
                        Ok(Ok(permit)) => permit,
                        Ok(Err(_)) => return false,
                        Err(_) => {
                            let text = format!(
                                "the server sent requests faster than it read the replies: {MAX_REPLY_BACKLOG} \
                                 replies waited {} s for the writer",
                                REPLY_STALL.as_secs()
                            );
                            self.finish(FailureClass::LimitExceeded, &text);
                            return false;
                        }
                    },
                    _ = state.wait_for(|s| *s != ConnectionState::Open) => return false,
                }
            }
        };
        permit.send(text);
        true
    }

    /// Queues a handler's reply, waiting for room as long as the connection
    /// is open.
    pub(super) async fn reply_from_task(&self, response: Response) {
        self.start_writer();
        let text = Message::Response(response).to_json();
        let mut state = self.state.subscribe();
        tokio::select! {
            _ = self.replies.send(text) => {}
            _ = state.wait_for(|s| *s != ConnectionState::Open) => {}
        }
    }
}

/// A served request's entry in [`Shared::serving`], removed when its task
/// ends or is stopped (the task's future, which holds this, is dropped).
pub(super) struct Serving {
    shared: Arc<Shared>,
    id: RequestId,
    number: u64,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let mut table = self.shared.serving.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if table.get(&self.id).is_some_and(|(number, _)| *number == self.number) {
            table.remove(&self.id);
        }
    }
}

/// Stops the server request a `notifications/cancelled` names, if it is
/// still being served. One that already ended, or that was never seen, is
/// ignored, as the specification allows.
pub(super) fn stop_served(shared: &Shared, notification: &Notification) {
    let Some(params) = notification.params.clone() else { return };
    let Ok(CancelledParams { request_id: Some(id), .. }) = serde_json::from_value(params) else { return };
    let entry = shared.serving.lock().expect("serving lock").remove(&id);
    if let Some((_, task)) = entry {
        task.abort();
    }
}

/// Finds the `"id"` of a frame from its first bytes, when it is there: the
/// common envelopes put it early. A best effort that never guesses: anything
/// that is not plainly an integer or a simple string gives `None`.
pub(super) fn sniff_id(prefix: &str) -> Option<RequestId> {
    let at = prefix.find("\"id\"")?;
    let rest = prefix[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        let end = s.find('"')?;
        let id = &s[..end];
        return (!id.contains('\\')).then(|| RequestId::String(id.to_string()));
    }
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    let after = rest[digits.len()..].chars().next()?;
    if !(after == ',' || after == '}' || after.is_whitespace()) {
        return None;
    }
    digits.parse().ok().map(RequestId::Number)
}

/// Finds the id of a damaged *reply*: only from the part before its
/// `"result"` or `"error"` member, and never in a frame that names a
/// `"method"` there (a server request's id is in another id space).
pub(super) fn sniff_reply_id(text: &str) -> Option<RequestId> {
    let end = ["\"result\"", "\"error\""].iter().filter_map(|k| text.find(k)).min()?;
    let head = &text[..end];
    if head.contains("\"method\"") {
        return None;
    }
    sniff_id(head)
}
