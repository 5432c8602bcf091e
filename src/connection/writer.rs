//! The writer task: it owns the transport's sending half, so that a caller
//! dropped mid-write can never leave half a message on the wire, and writes
//! what the connection sends in order, replies to the server first.

use std::sync::Arc;
use tokio::sync::mpsc;

use super::error::unanswered;
use super::{ConnectionState, Outbound, Shared, WRITE_FAILURE_GRACE};
use crate::error::{Error, FailureClass};
use crate::protocol::RequestId;
use crate::transport::{MessageSender, WireHeaders};

impl Shared {
    pub(super) async fn enqueue(&self, text: String) -> Result<(), Error> {
        self.enqueue_with(text, WireHeaders::default(), None).await
    }

    pub(super) async fn enqueue_with(
        &self,
        text: String,
        headers: WireHeaders,
        id: Option<RequestId>,
    ) -> Result<(), Error> {
        self.outbound
            .send(Outbound { text, headers, id })
            .await
            .map_err(|_| Error::new(FailureClass::TransportClosed, "connection writer has stopped"))
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
/// - A notification or a reply that fails to send is a warning, not the end
///   of the connection: over HTTP each message is its own exchange, and a
///   transport that is really gone shows it on the next request or on its
///   reader.
pub(super) async fn write_loop(
    shared: std::sync::Weak<Shared>,
    sender: Arc<dyn MessageSender>,
    mut rx: mpsc::Receiver<Outbound>,
    mut replies: mpsc::Receiver<String>,
) {
    loop {
        let next = tokio::select! {
            biased;
            Some(text) = replies.recv() => Next::Reply(text),
            Some(outbound) = rx.recv() => Next::Message(outbound),
            else => return,
        };
        let (sent, id) = match next {
            Next::Reply(text) => (sender.send(text).await, None),
            Next::Message(Outbound { text, headers, id }) => {
                if let Some(id) = &id {
                    let Some(shared) = shared.upgrade() else { return };
                    if !shared.mark_written(id) {
                        continue;
                    }
                }
                let sent = match headers.is_empty() {
                    true => sender.send(text).await,
                    false => sender.send_request(text, headers).await,
                };
                (sent, id)
            }
        };
        let Err(e) = sent else { continue };
        let Some(shared) = shared.upgrade() else { return };
        let Some(id) = id else {
            if shared.check_open().is_ok() {
                shared.warn(format!("a notification or reply to the server could not be sent: {e}"));
            }
            continue;
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
        return;
    }
}
