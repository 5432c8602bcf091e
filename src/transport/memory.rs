//! An in-memory duplex transport, for embedding a server in-process and for
//! tests.
//!
//! [`duplex`] returns two connected [`Transport`]s; whatever one side sends,
//! the other receives. Each direction is a bounded channel, so a reader that
//! stops reading pushes back on the writer instead of growing a queue.
//! Frames over the receiver's bound are delivered as [`Inbound::Damaged`],
//! as any transport does.

use async_trait::async_trait;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

use super::{
    ConnectConfig, Inbound, MessageReceiver, MessageSender, RedactedOrigin, Transport, TransportFactory,
    DAMAGED_PREFIX_BYTES,
};
use crate::error::{Error, FailureClass};

/// Messages buffered per direction before the sender waits.
pub(crate) const MEMORY_CHANNEL_CAPACITY: usize = 64;

/// Creates two connected transports. `max_frame_bytes` bounds what each side
/// accepts.
pub fn duplex(max_frame_bytes: usize) -> (Transport, Transport) {
    let (a_tx, a_rx) = mpsc::channel(MEMORY_CHANNEL_CAPACITY);
    let (b_tx, b_rx) = mpsc::channel(MEMORY_CHANNEL_CAPACITY);
    (side(a_tx, b_rx, max_frame_bytes), side(b_tx, a_rx, max_frame_bytes))
}

fn side(tx: mpsc::Sender<String>, rx: mpsc::Receiver<String>, max: usize) -> Transport {
    Transport {
        sender: Arc::new(MemorySender { tx: Mutex::new(Some(tx)) }),
        receiver: Box::new(MemoryReceiver { rx, max_frame_bytes: max }),
    }
}

#[derive(Debug)]
struct MemorySender {
    tx: Mutex<Option<mpsc::Sender<String>>>,
}

#[async_trait]
impl MessageSender for MemorySender {
    async fn send(&self, message: String) -> Result<(), Error> {
        let tx = self.tx.lock().expect("sender lock").clone();
        match tx {
            Some(tx) => tx.send(message).await.map_err(|_| {
                Error::new(FailureClass::TransportClosed, "peer closed the in-memory transport")
            }),
            None => Err(Error::new(FailureClass::TransportClosed, "in-memory transport closed")),
        }
    }

    /// Into the channel when it has room.
    fn try_send(&self, message: String) -> Result<(), String> {
        match self.tx.lock().expect("sender lock").as_ref() {
            Some(tx) => tx.try_send(message).map_err(|e| e.into_inner()),
            None => Err(message),
        }
    }

    async fn close(&self) -> Result<(), Error> {
        // Dropping our sender ends the peer's receiver once it drains.
        self.tx.lock().expect("sender lock").take();
        Ok(())
    }
}

#[derive(Debug)]
struct MemoryReceiver {
    rx: mpsc::Receiver<String>,
    max_frame_bytes: usize,
}

#[async_trait]
impl MessageReceiver for MemoryReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        Ok(self.rx.recv().await.map(|frame| {
            if frame.len() > self.max_frame_bytes {
                let mut prefix = frame;
                let bytes = prefix.len() as u64;
                crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
                Inbound::Damaged { reason: "frame exceeds max_frame_bytes".into(), prefix, bytes }
            } else {
                Inbound::Frame(frame)
            }
        }))
    }
}

/// A factory that hands out the client side of an in-memory connection to a
/// server it starts for every connect.
///
/// `serve` is called once per connection with the server's side of a fresh
/// [`duplex`]; it should spawn the server and return. This is how the demo
/// server is mounted, and how tests build servers that misbehave on purpose.
pub struct MemoryFactory {
    serve: Arc<dyn Fn(Transport) -> Result<(), Error> + Send + Sync>,
    origin: RedactedOrigin,
    /// Which factory this is, in this process: the bindings that share it
    /// ([`Definition::with_factory`](crate::Definition::with_factory)) reach one server, and so
    /// share cached public results.
    instance: u64,
}

impl std::fmt::Debug for MemoryFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryFactory").field("origin", &self.origin).finish_non_exhaustive()
    }
}

impl MemoryFactory {
    /// A factory whose connections are served by `serve`. `name` becomes the
    /// origin `memory://name`.
    pub fn new(name: &str, serve: impl Fn(Transport) -> Result<(), Error> + Send + Sync + 'static) -> Self {
        MemoryFactory {
            serve: Arc::new(serve),
            origin: RedactedOrigin::from_redacted(format!("memory://{name}")),
            instance: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
        }
    }
}

#[async_trait]
impl TransportFactory for MemoryFactory {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.origin.clone()
    }

    /// The factory's instance: bindings that share one factory reach one
    /// server.
    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        h.update(std::process::id().to_be_bytes());
        h.update(self.instance.to_be_bytes());
        h.update(self.origin.as_str().as_bytes());
        Some(h.finalize().into())
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let (client, server) = duplex(config.max_frame_bytes);
        (self.serve)(server)?;
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_cross_and_close_ends_the_peer() {
        let (a, mut b) = duplex(16);
        a.sender.send("hello".into()).await.unwrap();
        assert_eq!(b.receiver.recv().await.unwrap(), Some(Inbound::Frame("hello".into())));
        a.sender.send("x".repeat(17)).await.unwrap();
        assert!(matches!(b.receiver.recv().await.unwrap(), Some(Inbound::Damaged { bytes: 17, .. })));
        a.sender.close().await.unwrap();
        assert_eq!(b.receiver.recv().await.unwrap(), None);
        assert!(a.sender.send("late".into()).await.is_err());
    }
}
