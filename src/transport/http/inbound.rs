//! The inbound side every HTTP transport feeds: a bounded queue from the
//! transport's tasks to the connection's reader ([`HttpReceiver`]), and the
//! switch that closes it.
//!
//! Apart from the transports because all three hand what they read to the
//! connection the same way.

use std::fmt;
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, watch};

use super::INBOUND_QUEUE;
use crate::error::Error;
use crate::transport::{DirectSink, Inbound, MessageReceiver};

/// The inbound side every HTTP transport feeds: a bounded queue to the
/// connection's reader, and the signal that the transport was closed.
#[derive(Clone)]
pub(crate) struct InboundTx {
    tx: mpsc::Sender<Box<Result<Inbound, Error>>>,
    closed: watch::Receiver<bool>,
    /// The connection's [`DirectSink`], once it gave one.
    sink: Arc<OnceLock<DirectSink>>,
}

impl fmt::Debug for InboundTx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboundTx").field("closed", &*self.closed.borrow()).finish()
    }
}

impl InboundTx {
    /// Queues one item; waits while the queue is full. Returns `false` when
    /// nobody reads any more (the transport was closed).
    pub(crate) async fn deliver(&self, item: Result<Inbound, Error>) -> bool {
        if self.is_closed() {
            return false;
        }
        let mut closed = self.closed.clone();
        tokio::select! {
            sent = self.tx.send(Box::new(item)) => sent.is_ok(),
            _ = closed.wait_for(|c| *c) => false,
        }
    }

    /// Hands `text` straight to the connection (see [`DirectSink`]):
    /// `Err` gives it back, to be queued with [`Self::deliver`], when there
    /// is no sink, the transport is closed, or the connection declined it.
    /// The caller keeps a stream's order: once one of its messages was
    /// queued, every later one is.
    pub(crate) fn try_direct(&self, text: String) -> Result<(), String> {
        match self.sink.get() {
            Some(sink) if !self.is_closed() && sink.deliver(&text) => Ok(()),
            _ => Err(text),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves when the transport is closed.
    pub(crate) async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }
}

/// The channel between an HTTP transport's tasks and its receiver, and the
/// switch that closes it. Its items are boxed: a tokio queue allocates its
/// first block of 32 slots when it is made, which for `Result<Inbound,
/// Error>` was 3.1 KB of every idle binding (`benches/host_scale`'s heap
/// profile); boxed, 256 bytes, for an allocation per message read.
pub(crate) fn inbound_channel() -> (InboundTx, HttpReceiver, Arc<watch::Sender<bool>>) {
    let (tx, rx) = mpsc::channel(INBOUND_QUEUE);
    let (closed_tx, closed) = watch::channel(false);
    let sink = Arc::new(OnceLock::new());
    (
        InboundTx { tx, closed: closed.clone(), sink: sink.clone() },
        HttpReceiver { rx, closed, sink },
        Arc::new(closed_tx),
    )
}

/// The receiving half of every HTTP transport: what the transport's tasks
/// queued, until the transport is closed.
pub(crate) struct HttpReceiver {
    rx: mpsc::Receiver<Box<Result<Inbound, Error>>>,
    closed: watch::Receiver<bool>,
    sink: Arc<OnceLock<DirectSink>>,
}

impl fmt::Debug for HttpReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpReceiver").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl MessageReceiver for HttpReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        if *self.closed.borrow() {
            return Ok(None);
        }
        let mut closed = self.closed.clone();
        tokio::select! {
            item = self.rx.recv() => match item.map(|boxed| *boxed) {
                Some(Ok(inbound)) => Ok(Some(inbound)),
                Some(Err(e)) => Err(e),
                None => Ok(None),
            },
            _ = closed.wait_for(|c| *c) => Ok(None),
        }
    }

    fn take_direct_sink(&mut self, sink: DirectSink) {
        let _ = self.sink.set(sink);
    }
}
