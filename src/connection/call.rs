//! One exchange: a request given an id, entered in the table of pending
//! calls, handed to the writer, and ended by its reply (or by the end of the
//! connection); a caller that gives up removes its entry and, when the
//! request had left, cancels it the era's way.

use serde_json::{Map, Value};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::era::RequestMeta;
use super::error::{unanswered, RpcError};
use super::{ConnectionState, Pending, Shared, MAX_WARNING_BYTES};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::bounded_list::ListBound;
use crate::protocol::{methods, Message, Outcome, RequestId, Response};
use crate::request::McpRequest;
use crate::transport::{Exchange, WireHeaders};

/// A request's extension the connection fills with the JSON-RPC id it gives
/// the request (the last one, when a request is sent again): for what must
/// recognise messages that name the request, such as the notifications of a
/// `subscriptions/listen` stream, stamped with its id.
#[derive(Debug, Clone, Default)]
pub(crate) struct AssignedId(Arc<Mutex<Option<RequestId>>>);

impl AssignedId {
    /// The id given, once the request was made.
    pub(crate) fn get(&self) -> Option<RequestId> {
        self.0.lock().expect("assigned id lock").clone()
    }

    pub(super) fn set(&self, id: &RequestId) {
        *self.0.lock().expect("assigned id lock") = Some(id.clone());
    }
}

impl Shared {
    /// Sends one request with a new id and waits for its reply.
    pub(super) async fn request(self: Arc<Self>, req: &McpRequest) -> Result<Value, Error> {
        self.check_open_to_send()?;
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        if let Some(slot) = req.extensions.get::<AssignedId>() {
            slot.set(&id);
        }
        let (tx, rx) = oneshot::channel();
        let bound = req.extensions.get::<ListBound>().cloned();
        self.pending.lock().expect("pending lock").insert(id.clone(), Pending { tx, written: false, bound });
        let mut guard = PendingGuard { shared: self.clone(), id: id.clone(), sent: false, done: false };
        // `finish` marks the state closed before it drains the table: if it
        // ran between the check above and the insert, it missed this entry,
        // and nobody would ever answer it. Seeing the state still open here
        // means any later `finish` will find the entry.
        self.check_open_to_send()?;

        // The caller's `mcp.request` span (crate::layer::trace), when there
        // is one, learns the id and version this send goes out with.
        let span = tracing::Span::current();
        span.record("jsonrpc.request.id", tracing::field::display(&id));
        let method = req.method.as_str();
        let (text, headers) = {
            let era = self.era.read().expect("era lock");
            if !era.protocol_version().is_empty() {
                span.record("mcp.protocol.version", era.protocol_version());
            }
            let headers =
                if self.sender.carries_headers() { era.wire_headers(req) } else { WireHeaders::default() };
            let meta = era.request_meta();
            let params = req.params();
            let bare_ping = params.is_empty() && meta.is_none() && method == methods::PING;
            (request_json(&id, method, (!bare_ping).then_some(params), meta), headers)
        };
        tracing::trace!(target: "mcp_stack::wire", %id, method, bytes = text.len(), "request sent");
        let exchange = self.enqueue_with(text, headers, Some(id.clone())).await?;
        guard.sent = true;

        let outcome = match exchange {
            None => rx.await,
            Some(exchange) => reply_running(exchange, rx).await,
        };
        guard.done = true;
        tracing::trace!(target: "mcp_stack::wire", %id, ok = matches!(outcome, Ok(Ok(_))), "reply");
        match outcome {
            Ok(result) => result,
            // Our entry was dropped without an answer; it had been sent, so
            // its outcome is unknown (unless the connection was closed on
            // purpose).
            Err(_) => Err(match &*self.state.borrow() {
                ConnectionState::Closed { class, message } => unanswered(*class, message, true),
                ConnectionState::Open => {
                    Error::new(FailureClass::Indeterminate, "connection lost before the reply")
                }
            }),
        }
    }

    /// The bound the reply to `id` is parsed within, if its request is a
    /// bounded list request.
    pub(super) fn bound_of(&self, id: &RequestId) -> Option<ListBound> {
        self.pending.lock().expect("pending lock").get(id).and_then(|p| p.bound.clone())
    }

    pub(super) fn complete(&self, response: Response) {
        let pending = self.pending.lock().expect("pending lock").remove(&response.id);
        let Some(pending) = pending else {
            self.warn(format!("ignored a reply to unknown request id {}", response.id));
            return;
        };
        let result = match response.outcome {
            Outcome::Result(value) => Ok(value),
            Outcome::Error(e) => Err(self.era.read().expect("era lock").classify_error(RpcError {
                code: e.code,
                message: normalize_message(&e.message, MAX_WARNING_BYTES),
                data: e.data.map(|mut data| {
                    crate::redact::scrub_value(&mut data);
                    data
                }),
            })),
        };
        let _ = pending.tx.send(result);
    }

    pub(super) fn fail(&self, id: &RequestId, error: Error) -> bool {
        let pending = self.pending.lock().expect("pending lock").remove(id);
        match pending {
            Some(p) => {
                let _ = p.tx.send(Err(error));
                true
            }
            None => false,
        }
    }
}

/// Waits for the reply on `rx` while running the request's `exchange` on
/// this task (see [`Exchange`]); what is left of the exchange when the
/// reply comes first goes on a task of its own.
///
/// The reply the exchange delivers while this task polls it must not wake
/// this task again: tokio would put it back in its queue as a task that
/// yielded, and wake another worker to take it. So while the exchange
/// runs, `rx` is looked at with a waker that does nothing, and is only
/// left with this task's waker after the exchange was polled: a reply
/// another task delivers meanwhile is seen by that last look.
async fn reply_running<T>(
    exchange: Exchange,
    mut rx: oneshot::Receiver<T>,
) -> Result<T, oneshot::error::RecvError> {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};
    let mut exchange = Some(exchange);
    let outcome = std::future::poll_fn(|cx| {
        if let Some(running) = exchange.as_mut() {
            if let Poll::Ready(outcome) = Pin::new(&mut rx).poll(&mut Context::from_waker(Waker::noop())) {
                return Poll::Ready(outcome);
            }
            if Pin::new(running).poll(cx).is_ready() {
                exchange = None;
            }
        }
        Pin::new(&mut rx).poll(cx)
    })
    .await;
    if let Some(rest) = exchange {
        tokio::spawn(rest);
    }
    outcome
}

/// Removes a call's pending entry when its future is dropped early, and
/// cancels it on the wire if it had been sent.
pub(super) struct PendingGuard {
    shared: Arc<Shared>,
    id: RequestId,
    sent: bool,
    done: bool,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let removed = self.shared.pending.lock().expect("pending lock").remove(&self.id);
        // A request the writer had not written yet is never written (the
        // writer skips it): nothing to cancel.
        let written = removed.is_some_and(|pending| pending.written);
        if !(written && self.sent) || self.shared.check_open().is_err() {
            return;
        }
        self.shared.abandoned.store(true, std::sync::atomic::Ordering::Relaxed);
        let notice = self.shared.era.read().expect("era lock").cancel_notice(&self.id);
        let notice = notice.map(|n| Message::Notification(n).to_json());
        let shared = self.shared.clone();
        let id = self.id.clone();
        // Cancel through the writer so the notice is ordered after the
        // request; a transport with its own way (closing a stream) is asked
        // directly when the era has no notice.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                match notice {
                    Some(text) => {
                        let _ = shared.enqueue(text).await;
                    }
                    None => {
                        let _ = shared.sender.cancel(&id, None).await;
                    }
                }
            });
        }
    }
}

/// A JSON-RPC request's text, serialized from borrowed parts: the same text
/// as `Message::Request(Request::new(..)).to_json()`, without building (and
/// copying the params into) an owned [`Request`](crate::protocol::Request).
///
/// `meta`, the era's entries ([`Era::request_meta`](super::era::Era::request_meta)),
/// is merged into the params' `_meta` as they are written: the era's
/// entries replace the caller's of the same name, and a `_meta` that is not
/// an object is replaced. With `meta`, the params are written even when
/// `params` is `None`.
pub(super) fn request_json(
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    meta: Option<&RequestMeta>,
) -> String {
    #[derive(serde::Serialize)]
    struct RequestRef<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<Params<'a>>,
    }
    let empty = Map::new();
    let params = match (params, meta) {
        (None, None) => None,
        (params, meta) => Some(Params { params: params.unwrap_or(&empty), meta }),
    };
    let envelope = RequestRef { jsonrpc: crate::protocol::jsonrpc::JSONRPC_VERSION, id, method, params };
    // Room for a small request and the era's entries at once, rather than
    // growing from serde_json's 128 bytes.
    let mut text = Vec::with_capacity(256 + meta.map_or(0, |m| m.whole().get().len()));
    serde_json::to_writer(&mut text, &envelope).expect("JSON-RPC envelopes always serialize");
    String::from_utf8(text).expect("serde_json writes UTF-8")
}

/// A request's params as written: the caller's, with the era's `_meta`
/// entries merged in.
struct Params<'a> {
    params: &'a Map<String, Value>,
    meta: Option<&'a RequestMeta>,
}

impl serde::Serialize for Params<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Some(meta) = self.meta else { return self.params.serialize(serializer) };
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.params {
            if key != "_meta" {
                map.serialize_entry(key, value)?;
            }
        }
        match self.params.get("_meta") {
            Some(Value::Object(callers)) if !callers.is_empty() => {
                map.serialize_entry("_meta", &MergedMeta { callers, era: meta })?
            }
            _ => map.serialize_entry("_meta", meta.whole())?,
        }
        map.end()
    }
}

/// The caller's `_meta` entries that the era does not set, then the era's.
struct MergedMeta<'a> {
    callers: &'a Map<String, Value>,
    era: &'a RequestMeta,
}

impl serde::Serialize for MergedMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.callers.iter().filter(|(key, _)| !self.era.contains(key)) {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in self.era.entries() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
