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
use crate::transport::{Inbound, MessageReceiver, ReplySink};

/// The inbound side every HTTP transport feeds: a bounded queue to the
/// connection's reader, and the signal that the transport was closed.
#[derive(Clone)]
pub(crate) struct InboundTx {
    tx: mpsc::Sender<Box<Result<Inbound, Error>>>,
    closed: watch::Receiver<bool>,
    /// The connection's [`ReplySink`], once it gave one.
    sink: Arc<OnceLock<ReplySink>>,
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

    /// Delivers `text`, a response that nothing before it on its stream
    /// waits to be read behind (see [`ReplySink`]): straight to its call
    /// when the connection takes it, else queued as [`Self::deliver`] does.
    pub(crate) async fn deliver_reply(&self, text: String) -> bool {
        if self.is_closed() {
            return false;
        }
        if self.sink.get().is_some_and(|sink| sink.deliver(&text)) {
            return true;
        }
        self.deliver(Ok(Inbound::Frame(text))).await
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
    sink: Arc<OnceLock<ReplySink>>,
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

    fn take_reply_sink(&mut self, sink: ReplySink) {
        let _ = self.sink.set(sink);
    }
}
