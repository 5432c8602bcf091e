//! The ordered hand-off from a binding's connection reader to the host:
//! every call's progress reports and the server's log records go through
//! one queue, to one task, in the order the server sent them.
//!
//! Why one queue: a server interleaves its log records with a call's
//! progress reports on one stream (FastMCP's `ctx.info` between
//! `ctx.report_progress`), and a host that shows both (the `mcp`
//! command's stderr) must show them in that order. Two tasks, one for
//! progress and one for logs, each drain their own queue when scheduled,
//! and the order between them is lost.
//!
//! The reader never waits: it pushes and returns. What is queued is
//! bounded per producer: [`PROGRESS_QUEUE`](super::router::PROGRESS_QUEUE)
//! undelivered reports per call, and `LOG_QUEUE` undelivered log records
//! per binding, each counted by a [`Pending`] that the producer checks
//! before it pushes and the task lowers after it delivers; past it, the
//! newest is dropped (and counted by the producer). The price of one
//! order is that a slow sink (a progress sink, or a log service that
//! takes its time) delays what comes after it, for every call of the
//! binding, and so a call's reply, which waits for its own reports
//! (within its deadline); never the reader. A sink that panics costs only
//! that report.

use crate::request::{ProgressSink, ProgressUpdate};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, oneshot};

/// A delivery of another kind (a log record to the host's log service),
/// made by its producer so that this queue need not know its types (the
/// handlers are a floor above this module): run on a task of its own, so
/// that a panic costs only that item.
pub(crate) type Job =
    Box<dyn FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send>;

/// How many items of one producer (a call's reports, a binding's log
/// records) are queued and not yet delivered.
#[derive(Debug, Default)]
pub(crate) struct Pending(AtomicUsize);

impl Pending {
    /// Counts one more item unless `bound` are already pending.
    pub(crate) fn take(&self, bound: usize) -> bool {
        self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < bound).then_some(n + 1)).is_ok()
    }

    fn done(&self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One item for the delivery task.
enum Delivery {
    Progress {
        sink: ProgressSink,
        update: ProgressUpdate,
        pending: Arc<Pending>,
    },
    Job {
        job: Job,
        pending: Arc<Pending>,
    },
    /// Answered once everything queued before it was delivered.
    Flush(oneshot::Sender<()>),
}

/// A binding's delivery queue. Clones share it; its task starts with the
/// first item (so that one can be made outside a runtime) and ends when
/// every clone is gone.
#[derive(Clone, Default)]
pub(crate) struct Deliveries {
    tx: Arc<OnceLock<mpsc::UnboundedSender<Delivery>>>,
}

impl std::fmt::Debug for Deliveries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliveries").field("started", &self.tx.get().is_some()).finish()
    }
}

impl Deliveries {
    fn push(&self, item: Delivery) -> Result<(), Delivery> {
        let tx = self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(deliver(rx));
            tx
        });
        tx.send(item).map_err(|e| e.0)
    }

    /// Queues a call's report, already counted in `pending`.
    pub(crate) fn progress(&self, sink: ProgressSink, update: ProgressUpdate, pending: Arc<Pending>) {
        if let Err(Delivery::Progress { pending, .. }) =
            self.push(Delivery::Progress { sink, update, pending })
        {
            pending.done();
        }
    }

    /// Queues a job (a log record's delivery), already counted in
    /// `pending`.
    pub(crate) fn job(&self, job: Job, pending: Arc<Pending>) {
        if let Err(Delivery::Job { pending, .. }) = self.push(Delivery::Job { job, pending }) {
            pending.done();
        }
    }

    /// A receiver answered once everything queued so far was delivered
    /// (or the task is gone: then nothing more will be).
    pub(crate) fn flush(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        // On failure the sender is dropped, and the receiver returns at once.
        let _ = self.push(Delivery::Flush(tx));
        rx
    }
}

async fn deliver(mut rx: mpsc::UnboundedReceiver<Delivery>) {
    while let Some(item) = rx.recv().await {
        match item {
            Delivery::Progress { sink, update, pending } => {
                if std::panic::catch_unwind(AssertUnwindSafe(|| sink.deliver(update))).is_err() {
                    tracing::debug!(target: "mcp_stack::inbound", "a progress sink panicked");
                }
                pending.done();
            }
            Delivery::Job { job, pending } => {
                // On a task of its own, so that a panic costs only the item.
                if tokio::spawn(job()).await.is_err() {
                    tracing::debug!(target: "mcp_stack::inbound", "a delivery panicked");
                }
                pending.done();
            }
            Delivery::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}
