//! What the page is told as it happens: one broadcast of stream entries
//! (binding events, JSON-RPC traffic, elicitations, app messages and the
//! host's decisions), read by every open page through `GET /api/stream`,
//! and the elicitations waiting for a person's answer.
//!
//! Bounded everywhere: the broadcast keeps [`STREAM_CAPACITY`] entries
//! for a page that falls behind (which is then told how many it missed),
//! a traffic entry is cut at [`MAX_SHOWN_BYTES`], and at most
//! [`MAX_PENDING_ELICITATIONS`] questions wait at once (a server that asks
//! more is answered `cancel` at once).

use mcp_stack::handlers::{ElicitRequest, ElicitResult};
use mcp_stack::{Error, FailureClass};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, oneshot};

use super::tap::MAX_SHOWN_BYTES;

/// Entries a page may fall behind by before it misses some.
pub(crate) const STREAM_CAPACITY: usize = 1024;
/// Questions waiting for the person at once.
pub(crate) const MAX_PENDING_ELICITATIONS: usize = 16;

/// The inspector's stream and its waiting questions. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    tx: broadcast::Sender<Arc<str>>,
    next_id: AtomicU64,
    pending: Mutex<BTreeMap<u64, Pending>>,
}

struct Pending {
    request: ElicitRequest,
    answer: oneshot::Sender<ElicitResult>,
}

impl Hub {
    pub(crate) fn new() -> Hub {
        let (tx, _) = broadcast::channel(STREAM_CAPACITY);
        Hub {
            inner: Arc::new(Inner { tx, next_id: AtomicU64::new(1), pending: Mutex::new(BTreeMap::new()) }),
        }
    }

    /// Sends `entry` to every open page (none open: dropped).
    pub(crate) fn publish(&self, entry: Value) {
        let _ = self.inner.tx.send(entry.to_string().into());
    }

    /// A new reader of the stream, with the questions already waiting
    /// first (a page opened after a server asked still sees the question).
    pub(crate) fn subscribe(&self) -> (Vec<Arc<str>>, broadcast::Receiver<Arc<str>>) {
        let pending = self.inner.pending.lock().expect("hub");
        let rx = self.inner.tx.subscribe();
        let waiting = pending.iter().map(|(id, p)| question(*id, &p.request).to_string().into()).collect();
        (waiting, rx)
    }

    /// One JSON-RPC message that went `direction` ("in" or "out").
    pub(crate) fn traffic(&self, binding: &str, direction: &str, message: &str) {
        if self.inner.tx.receiver_count() == 0 {
            return;
        }
        let shown = mcp_stack::redact::scrub(cut(message, MAX_SHOWN_BYTES)).into_owned();
        self.publish(json!({
            "type": "traffic", "binding": binding, "direction": direction,
            "message": shown, "bytes": message.len(),
        }));
    }

    /// Asks the person through the page, and waits for the answer; the
    /// question is withdrawn from the page when the request ends first
    /// (this future dropped: the server cancelled, the deadline passed).
    pub(crate) async fn elicit(&self, request: ElicitRequest) -> Result<ElicitResult, Error> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = self.inner.pending.lock().expect("hub");
            if pending.len() >= MAX_PENDING_ELICITATIONS {
                return Ok(ElicitResult::cancel());
            }
            self.publish(question(id, &request));
            pending.insert(id, Pending { request, answer });
        }
        let _withdraw = Withdraw { hub: self, id };
        answered.await.map_err(|_| Error::new(FailureClass::Cancelled, "the inspector stopped"))
    }

    /// Answers question `id` with `action` (and, to accept a form, its
    /// `content`, checked against the requested schema first: a wrong
    /// answer is refused and the question stays).
    pub(crate) fn answer(&self, id: u64, action: &str, content: Option<Value>) -> Result<(), Error> {
        let mut pending = self.inner.pending.lock().expect("hub");
        let Some(waiting) = pending.get(&id) else {
            return Err(Error::new(
                FailureClass::NotFound,
                "no such question is waiting (answered or withdrawn)",
            ));
        };
        let result = match action {
            "decline" => ElicitResult::decline(),
            "cancel" => ElicitResult::cancel(),
            "accept" => {
                let content = match content {
                    None | Some(Value::Null) => Default::default(),
                    Some(Value::Object(content)) => content,
                    Some(_) => {
                        return Err(Error::new(FailureClass::InvalidArguments, "content is not an object"))
                    }
                };
                waiting.request.validate(&content)?;
                match waiting.request.mode {
                    mcp_stack::handlers::ElicitationMode::Url => ElicitResult::accept_url(),
                    _ => ElicitResult::accept(content),
                }
            }
            _ => {
                return Err(Error::new(
                    FailureClass::InvalidArguments,
                    "action is not one of accept, decline, cancel",
                ))
            }
        };
        let waiting = pending.remove(&id).expect("checked above");
        drop(pending);
        let _ = waiting.answer.send(result);
        self.publish(json!({ "type": "elicitation-done", "id": id }));
        Ok(())
    }
}

/// Takes a question off the page when its request ends unanswered.
struct Withdraw<'a> {
    hub: &'a Hub,
    id: u64,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let removed =
            self.hub.inner.pending.lock().map(|mut p| p.remove(&self.id).is_some()).unwrap_or(false);
        if removed {
            self.hub.publish(json!({ "type": "elicitation-done", "id": self.id }));
        }
    }
}

fn question(id: u64, request: &ElicitRequest) -> Value {
    json!({
        "type": "elicitation", "id": id, "binding": request.binding,
        "mode": match request.mode { mcp_stack::handlers::ElicitationMode::Url => "url", _ => "form" },
        "message": request.message, "schema": request.schema, "url": request.url,
    })
}

/// `text` cut at `max` bytes, on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_stack::handlers::ElicitationMode;

    fn form(schema: Value) -> ElicitRequest {
        ElicitRequest {
            binding: "b".into(),
            mode: ElicitationMode::Form,
            message: "name?".into(),
            schema: Some(schema),
            url: None,
            elicitation_id: None,
        }
    }

    #[tokio::test]
    async fn a_question_is_shown_answered_checked_and_withdrawn() {
        let hub = Hub::new();
        let (waiting, mut rx) = hub.subscribe();
        assert!(waiting.is_empty());
        let schema =
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let asking = tokio::spawn({
            let hub = hub.clone();
            let request = form(schema);
            async move { hub.elicit(request).await }
        });
        let shown: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(shown["type"], "elicitation");
        let id = shown["id"].as_u64().unwrap();
        // A page opened now sees it too.
        assert_eq!(hub.subscribe().0.len(), 1);
        // An answer that misses the required field is refused; the question stays.
        let e = hub.answer(id, "accept", Some(json!({}))).unwrap_err();
        assert_eq!(e.class(), FailureClass::ElicitationInvalid);
        assert_eq!(hub.answer(id, "maybe", None).unwrap_err().class(), FailureClass::InvalidArguments);
        hub.answer(id, "accept", Some(json!({"name": "Ada"}))).unwrap();
        let result = asking.await.unwrap().unwrap();
        assert_eq!(result, ElicitResult::accept(json!({"name": "Ada"}).as_object().unwrap().clone()));
        assert_eq!(hub.answer(id, "cancel", None).unwrap_err().class(), FailureClass::NotFound);
        // A request that ends unanswered takes its question off the page.
        let asking = tokio::spawn({
            let hub = hub.clone();
            async move { hub.elicit(form(json!({"type": "object"}))).await }
        });
        let _done: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        let _shown: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        asking.abort();
        let _ = asking.await;
        let withdrawn: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(withdrawn["type"], "elicitation-done");
        assert!(hub.subscribe().0.is_empty());
    }

    #[tokio::test]
    async fn questions_beyond_the_bound_are_cancelled_at_once() {
        let hub = Hub::new();
        let mut waiting = Vec::new();
        for _ in 0..MAX_PENDING_ELICITATIONS {
            let hub = hub.clone();
            waiting.push(tokio::spawn(async move { hub.elicit(form(json!({"type": "object"}))).await }));
        }
        for _ in 0..10_000 {
            if hub.subscribe().0.len() == MAX_PENDING_ELICITATIONS {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(hub.subscribe().0.len(), MAX_PENDING_ELICITATIONS);
        let over = hub.elicit(form(json!({"type": "object"}))).await.unwrap();
        assert_eq!(over, ElicitResult::cancel());
        waiting.iter().for_each(|w| w.abort());
    }

    #[tokio::test]
    async fn traffic_shown_is_scrubbed_of_secrets_and_cut() {
        let hub = Hub::new();
        let (_, mut rx) = hub.subscribe();
        let _secret = mcp_stack::redact::register("sk-inspect-0123456789");
        let message =
            format!(r#"{{"echo":"sk-inspect-0123456789","pad":"{}"}}"#, "x".repeat(2 * MAX_SHOWN_BYTES));
        hub.traffic("b", "in", &message);
        let shown: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        let text = shown["message"].as_str().unwrap();
        assert!(!text.contains("sk-inspect-0123456789") && text.contains("[redacted]"), "{text:.80}");
        assert!(text.len() <= MAX_SHOWN_BYTES + "[redacted]".len());
        assert_eq!(shown["bytes"], message.len());
        assert_eq!((shown["binding"].as_str(), shown["direction"].as_str()), (Some("b"), Some("in")));
    }

    #[test]
    fn traffic_is_cut_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("abc", 10), "abc");
    }
}
