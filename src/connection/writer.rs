//! The writer task: it owns the transport's sending half, so that a caller
//! dropped mid-write can never leave half a message on the wire, and writes
//! what the connection sends in order, replies to the server first.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::mpsc;

use super::error::unanswered;
use super::{ConnectionState, Outbound, Shared, WRITE_FAILURE_GRACE};
use crate::error::{Error, FailureClass};
use crate::protocol::RequestId;
use crate::transport::{BatchError, Exchange, MessageSender, WireHeaders};

impl Shared {
    pub(super) async fn enqueue(&self, text: String) -> Result<(), Error> {
        // A message without an id is never left an exchange to run.
        self.enqueue_with(text, WireHeaders::default(), None).await.map(drop)
    }

    /// Hands a message to the writer, or writes it at once when it is
    /// alone ([`Shared::write_at_once`]); a request written so may leave
    /// its exchange for the caller to run.
    pub(super) async fn enqueue_with(
        &self,
        text: String,
        headers: WireHeaders,
        id: Option<RequestId>,
    ) -> Result<Option<Exchange>, Error> {
        let (text, headers) = match self.write_at_once(text, headers, id.as_ref()) {
            Ok(exchange) => return Ok(exchange),
            Err(handed_back) => handed_back,
        };
        self.start_writer();
        // Counted as it enters the queue, with nothing to cancel between.
        let permit = self
            .outbound
            .reserve()
            .await
            .map_err(|_| Error::new(FailureClass::TransportClosed, "connection writer has stopped"))?;
        self.queued.fetch_add(1, Ordering::SeqCst);
        permit.send(Box::new(Outbound { text, headers, id }));
        Ok(None)
    }

    /// Starts the writer's task, unless it runs: called before anything
    /// is queued for it (a request, a notification, a reply to the
    /// server). Spawning a task costs a connect about 12 µs on one CPU
    /// (`bench/vs-rmcp`, `connect`: waking a worker and switching to it
    /// and back), and an idle connection the task's memory.
    pub(super) fn start_writer(&self) {
        let Some(parts) = self.writer.lock().expect("writer lock").take() else { return };
        tokio::spawn(write_loop(self.this.clone(), parts.sender, parts.outbound, parts.replies));
    }

    /// Writes a lone message from the caller's task, sparing the wake-up
    /// of the writer's: a message, when nothing waits for the writer
    /// (`queued`) and no other request is in flight, is offered to
    /// [`MessageSender::try_send`] (a request: to
    /// [`MessageSender::try_send_request`], with its headers). `Err` hands
    /// it back for the queue: more is in flight (the writer batches it), or
    /// the transport would have to wait.
    ///
    /// Order is kept: what one task sent before this is written already
    /// (`queued` counts it until the writer is done with it). A reply to
    /// the server queued meanwhile may go after it; the two come from
    /// different tasks, so neither was first. A request is marked written
    /// and offered under the table's lock, so that an end of the connection
    /// meanwhile cannot take it for written before it was (or the other way
    /// round); one nobody waits for any more is not sent, as the writer
    /// would skip it.
    ///
    /// `bench/vs-rmcp`, one CPU, sequential `tools/call` on 2025-11-25
    /// (medians of 5 interleaved runs): 45,800 → 51,000 calls/s, against
    /// the JSON floor's 50,100 and rmcp's 34,500.
    fn write_at_once(
        &self,
        text: String,
        headers: WireHeaders,
        id: Option<&RequestId>,
    ) -> Result<Option<Exchange>, (String, WireHeaders)> {
        if self.queued.load(Ordering::SeqCst) != 0 {
            return Err((text, headers));
        }
        let mut pending = self.pending.lock().expect("pending lock");
        if pending.len() > usize::from(id.is_some()) {
            return Err((text, headers));
        }
        let Some(id) = id else {
            if !headers.is_empty() {
                return Err((text, headers));
            }
            return self.sender.try_send(text).map(|()| None).map_err(|text| (text, headers));
        };
        let Some(entry) = pending.get_mut(id) else { return Ok(None) };
        let sent = self.sender.try_send_request(text, headers);
        entry.written = sent.is_ok();
        sent
    }

    /// A request marked written that a failed batch never wrote: its end
    /// is `transport_closed` (safe to send again), not `indeterminate`.
    pub(super) fn unmark_written(&self, id: &RequestId) {
        if let Some(pending) = self.pending.lock().expect("pending lock").get_mut(id) {
            pending.written = false;
        }
    }

    /// The writer is about to hand request `id` to the transport: marks it
    /// written. `false` when nobody waits for it any more (its caller gave
    /// up, or the connection ended): then it is not sent at all.
    pub(super) fn mark_written(&self, id: &RequestId) -> bool {
        match self.pending.lock().expect("pending lock").get_mut(id) {
            Some(pending) => {
                pending.written = true;
                true
            }
            None => false,
        }
    }
}

/// The most messages one batch takes (see [`write_loop`]).
const MAX_BATCH_MESSAGES: usize = 64;
/// A batch takes no more once it holds this many bytes.
const MAX_BATCH_BYTES: usize = 64 << 10;

/// Messages taken to be written together, with their ids.
#[derive(Default)]
struct Batch {
    messages: Vec<(String, Option<RequestId>)>,
    bytes: usize,
}

/// What the writer takes next.
pub(super) enum Next {
    Reply(String),
    Message(Outbound),
}

/// Writes what the connection sends, in order, replies to the server first.
///
/// - A request is written only while its caller still waits for it (else it
///   is skipped), and marked written first ([`Shared::mark_written`]).
/// - A request the transport refused to send ends at once with
///   `transport_closed` (the transport's error means it was not delivered;
///   `indeterminate` when the transport says it may have been), and the
///   connection ends: a transport that cannot send a request is gone. The
///   requests still queued behind it were never written, so they end
///   `transport_closed` too.
/// - What is queued when the writer wakes goes in one batch (at most
///   [`MAX_BATCH_MESSAGES`], until [`MAX_BATCH_BYTES`]), handed to the
///   transport at once ([`MessageSender::send_batch`]: one system call on
///   stdio for all of it). Each request in it is
///   checked and marked as when sent alone; a request with HTTP headers
///   goes on its own.
/// - When the writer holds one message while other requests are in
///   flight, it first lets the tasks that are ready run once
///   (`yield_now`): their replies tend to arrive together, and their
///   callers' next requests are then a moment away. Without it the writer,
///   woken by each caller in turn, wrote one message per system call, and
///   32 calls in flight on one CPU ran no faster than one at a time
///   (`bench/vs-rmcp`: 55,000 calls/s; with it, 98,000, against the JSON
///   floor's 102,000). A lone call does not wait.
/// - A notification or a reply that fails to send is a warning, not the end
///   of the connection: over HTTP each message is its own exchange, and a
///   transport that is really gone shows it on the next request or on its
///   reader.
pub(super) async fn write_loop(
    shared: std::sync::Weak<Shared>,
    sender: Arc<dyn MessageSender>,
    mut rx: mpsc::Receiver<Box<Outbound>>,
    mut replies: mpsc::Receiver<String>,
) {
    // A request with HTTP headers taken while gathering a batch: it goes
    // on its own, next.
    let mut held: Option<Outbound> = None;
    // Kept from batch to batch, so that writing a message allocates
    // nothing here.
    let mut batch = Batch::default();
    // Messages taken from `rx`: all but `held` are done with at the top of
    // the loop, and leave the connection's count (`Shared::queued`).
    let mut taken = 0;
    loop {
        let done = taken - usize::from(held.is_some());
        if done > 0 {
            if let Some(shared) = shared.upgrade() {
                shared.queued.fetch_sub(done, Ordering::SeqCst);
            }
            taken -= done;
        }
        let next = match held.take() {
            Some(outbound) => Next::Message(outbound),
            None => tokio::select! {
                biased;
                Some(text) = replies.recv() => Next::Reply(text),
                Some(outbound) = rx.recv() => {
                    taken += 1;
                    Next::Message(*outbound)
                }
                else => return,
            },
        };
        // What is queued besides goes with it in one batch.
        batch.bytes = 0;
        let take = |text: String, id: Option<RequestId>, batch: &mut Batch| {
            if still_wanted(&shared, id.as_ref()) {
                batch.bytes += text.len();
                batch.messages.push((text, id));
            }
        };
        match next {
            Next::Reply(text) => take(text, None, &mut batch),
            Next::Message(Outbound { text, headers, id }) if !headers.is_empty() => {
                if !still_wanted(&shared, id.as_ref()) {
                    continue;
                }
                let sent = sender.send_request(text, headers).await;
                if let Err(error) = sent {
                    if !Box::pin(failed_write(&shared, error, id, &mut rx)).await {
                        return;
                    }
                }
                continue;
            }
            Next::Message(Outbound { text, id, .. }) => take(text, id, &mut batch),
        }
        let mut yielded = false;
        while batch.messages.len() < MAX_BATCH_MESSAGES && batch.bytes < MAX_BATCH_BYTES {
            if let Ok(text) = replies.try_recv() {
                take(text, None, &mut batch);
                continue;
            }
            match rx.try_recv().map(|outbound| *outbound) {
                Ok(Outbound { text, headers, id }) if headers.is_empty() => {
                    taken += 1;
                    take(text, id, &mut batch);
                }
                Ok(outbound) => {
                    taken += 1;
                    held = Some(outbound);
                    break;
                }
                Err(_) if !yielded && batch.messages.len() == 1 && others_in_flight(&shared) => {
                    yielded = true;
                    tokio::task::yield_now().await;
                }
                Err(_) => break,
            }
        }
        if batch.messages.len() == 1 {
            let (text, id) = batch.messages.pop().expect("one message");
            if let Err(error) = sender.send(text).await {
                if !Box::pin(failed_write(&shared, error, id, &mut rx)).await {
                    return;
                }
            }
            continue;
        }
        let (texts, ids): (Vec<String>, Vec<Option<RequestId>>) = batch.messages.drain(..).unzip();
        let mut start = 0;
        while start < texts.len() {
            let Err(BatchError { sent, error }) = sender.send_batch(&texts[start..]).await else { break };
            let at = start + sent;
            if let Some(id) = ids.get(at).cloned().flatten() {
                // The connection ends; what came after the failed request
                // was never written.
                if let Some(shared) = shared.upgrade() {
                    for id in ids.iter().skip(at + 1).flatten() {
                        shared.unmark_written(id);
                    }
                }
                Box::pin(failed_write(&shared, error, Some(id), &mut rx)).await;
                return;
            }
            // A notification or reply failed: a warning, and what came
            // after it is still sent.
            if !Box::pin(failed_write(&shared, error, None, &mut rx)).await {
                return;
            }
            start = at + 1;
        }
    }
}

/// Whether a message is still to be written: a reply or notification
/// always; a request while its caller waits for it, marked written now
/// ([`Shared::mark_written`]). A request nobody waits for any more is not
/// sent at all.
fn still_wanted(shared: &std::sync::Weak<Shared>, id: Option<&RequestId>) -> bool {
    match id {
        None => true,
        Some(id) => shared.upgrade().is_some_and(|shared| shared.mark_written(id)),
    }
}

/// Whether requests other than the one in hand await their replies.
fn others_in_flight(shared: &std::sync::Weak<Shared>) -> bool {
    shared.upgrade().is_some_and(|shared| shared.pending.lock().expect("pending lock").len() > 1)
}

/// A write the transport refused: a notification's or reply's failure is
/// a warning (`true`: go on); a request's ends it and the connection
/// (`false`). Boxed where it is awaited: it is rare, and inline its wait
/// would be held by every idle writer.
async fn failed_write(
    shared: &std::sync::Weak<Shared>,
    e: Error,
    id: Option<RequestId>,
    rx: &mut mpsc::Receiver<Box<Outbound>>,
) -> bool {
    let Some(shared) = shared.upgrade() else { return false };
    let Some(id) = id else {
        if shared.check_open().is_ok() {
            shared.warn(format!("a notification or reply to the server could not be sent: {e}"));
        }
        return true;
    };
    // Taken out of the table, so that the connection's end (below, or
    // the reader's) does not fail it `indeterminate`: it was not sent.
    let failed = shared.pending.lock().expect("pending lock").remove(&id);
    // A failed write usually means the server is gone, and the reader
    // is about to see the end of its output with a better diagnosis
    // (a child's exit status and last stderr lines). Give it a moment
    // to say so, and report that with the write error's class.
    let mut state = shared.state.subscribe();
    let closed = state.wait_for(|s| *s != ConnectionState::Open);
    let _ = tokio::time::timeout(WRITE_FAILURE_GRACE, closed).await;
    let ended = shared.state.borrow().clone();
    shared.finish(e.class(), e.message());
    if let Some(failed) = failed {
        // The write error says whether the request may have left
        // (`indeterminate`) or was refused for authorization; a close
        // on purpose meanwhile wins; the reader's diagnosis, when it
        // came first, is the better message.
        let (class, why) = match ended {
            ConnectionState::Closed { class: FailureClass::Shutdown, message } => {
                (FailureClass::Shutdown, message)
            }
            ConnectionState::Closed { message, .. } if !e.class().is_auth() => (e.class(), message),
            _ => (e.class(), e.message().to_string()),
        };
        let _ = failed.tx.send(Err(unanswered(class, &why, e.class() == FailureClass::Indeterminate)));
    }
    // What is still queued was never written: `finish` failed those
    // requests `transport_closed`, and nothing more is sent.
    rx.close();
    false
}
