//! Delivering a binding's events without ever blocking the binding: the
//! handler's queue, the broadcast behind [`EventStream`]s, and the count of
//! what was dropped.

use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::Stream;

use super::{Event, EVENT_QUEUE};

/// Receives a binding's events. Runs on the event task; may take its time
/// (events queue behind it, then drop), but should not block forever.
pub type EventHandler = Arc<dyn Fn(Event) + Send + Sync>;

/// One item of an [`EventStream`].
///
/// A stream reader that falls more than 1024 events behind loses
/// the oldest ones; it is told how many, once, at the place where they were
/// lost, and then reads on from the oldest event still held. A plain
/// enum rather than a `Result`, because falling behind is not the end of
/// the stream: `while let Some(Ok(event))` would stop reading at the first
/// gap.
// Nearly every item is an event: boxing it to shrink the rare count would
// cost an allocation per event read.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum EventItem {
    /// The next event.
    Event(Event),
    /// This many events were lost here because this reader fell behind.
    /// Other readers, and the handler of `Handlers::with_events`, are not
    /// affected, and the loss is not counted in
    /// [`Status::dropped_events`](crate::Status::dropped_events), which is
    /// the handler's.
    Missed(u64),
}

/// A binding's events as a [`Stream`] of
/// [`EventItem`]s, from `Binding::events`.
///
/// Every stream sees every event emitted after it was made, in the order
/// they were emitted, unless it falls more than 1024 events
/// behind: then it gets an [`EventItem::Missed`] and goes on. The binding
/// never waits for a stream, so a stream that is not read costs at most
/// 1024 held events, shared by all streams of the binding. The
/// stream ends when the binding and everything that reports on it are gone;
/// after `Binding::close`, the last event is the `StateChanged` to
/// [`State::Closed`](super::State::Closed).
///
/// Read it with any `StreamExt` (`tokio_stream`, `futures`), or with
/// [`EventStream::recv`]:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_stack::Error> {
/// use mcp_stack::EventItem;
/// use mcp_stack::{handlers::Handlers, Binding, Definition, Event, State};
///
/// let binding = Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default()).await?;
/// let mut events = binding.events();
/// binding.close().await;
/// while let Some(item) = events.recv().await {
///     match item {
///         EventItem::Event(Event::StateChanged { to: State::Closed, .. }) => break,
///         EventItem::Event(event) => println!("{event:?}"),
///         EventItem::Missed(n) => println!("fell behind by {n} events"),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct EventStream {
    inner: BroadcastStream<Event>,
}

impl EventStream {
    /// The next item, or `None` once the binding is gone.
    pub async fn recv(&mut self) -> Option<EventItem> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }
}

impl Stream for EventStream {
    type Item = EventItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<EventItem>> {
        Pin::new(&mut self.inner).poll_next(cx).map(|item| {
            item.map(|item| match item {
                Ok(event) => EventItem::Event(event),
                Err(BroadcastStreamRecvError::Lagged(missed)) => EventItem::Missed(missed),
            })
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

/// The sending side of a binding's events. Cheap to clone; clones share
/// the queue, the broadcast and the count of dropped events.
#[derive(Clone)]
pub(crate) struct EventBus {
    /// Boxed: a tokio mpsc allocates its first block of 32 slots when it is
    /// made, and at about 230 bytes an `Event` that was 7.4 KB of every
    /// binding's memory, idle or not (`benches/host_scale`); a box is 8.
    tx: Option<mpsc::Sender<Box<Event>>>,
    shared: Arc<Shared>,
}

struct Shared {
    dropped: AtomicU64,
    /// The streams' broadcast, made by the first `subscribe`: a broadcast
    /// channel holds its [`EVENT_QUEUE`] slots from the start, which a
    /// binding nobody streams from should not pay for.
    broadcast: OnceLock<broadcast::Sender<Event>>,
}

impl fmt::Debug for EventBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let streams = self.shared.broadcast.get().map_or(0, broadcast::Sender::receiver_count);
        f.debug_struct("EventBus").field("dropped", &self.dropped()).field("streams", &streams).finish()
    }
}

impl EventBus {
    /// A bus delivering to `handler` on its own task, and to the streams
    /// [`EventBus::subscribe`] makes; without either, events are discarded.
    pub(crate) fn new(handler: Option<EventHandler>) -> Self {
        let tx = handler.map(|handler| {
            let (tx, mut rx) = mpsc::channel::<Box<Event>>(EVENT_QUEUE);
            tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    handler(*event);
                }
            });
            tx
        });
        let shared = Shared { dropped: AtomicU64::new(0), broadcast: OnceLock::new() };
        EventBus { tx, shared: Arc::new(shared) }
    }

    /// Queues an event for the handler and the streams without waiting.
    pub(crate) fn emit(&self, event: Event) {
        // A stream that falls behind loses its oldest events in the
        // broadcast itself (and is told so); sending never waits.
        let streams = self.shared.broadcast.get().filter(|tx| tx.receiver_count() > 0);
        match (&self.tx, streams) {
            (Some(tx), Some(streams)) => {
                let _ = streams.send(event.clone());
                self.queue(tx, event);
            }
            (Some(tx), None) => self.queue(tx, event),
            (None, Some(streams)) => {
                let _ = streams.send(event);
            }
            (None, None) => {}
        }
    }

    fn queue(&self, tx: &mpsc::Sender<Box<Event>>, event: Event) {
        if tx.try_send(Box::new(event)).is_err() {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A stream of every event emitted from now on.
    pub(crate) fn subscribe(&self) -> EventStream {
        let tx = self.shared.broadcast.get_or_init(|| broadcast::channel(EVENT_QUEUE).0);
        EventStream { inner: BroadcastStream::new(tx.subscribe()) }
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;
    use tokio_test::{assert_pending, task};

    fn warning(i: usize) -> Event {
        Event::Warning { binding: "b".into(), text: format!("w{i}"), at: SystemTime::UNIX_EPOCH }
    }

    #[tokio::test]
    async fn each_stream_sees_every_event_emitted_after_it_was_made() {
        let bus = EventBus::new(None);
        let mut early = bus.subscribe();
        bus.emit(warning(1));
        let mut late = bus.subscribe();
        bus.emit(warning(2));

        assert_eq!(early.recv().await, Some(EventItem::Event(warning(1))));
        assert_eq!(early.recv().await, Some(EventItem::Event(warning(2))));
        assert_eq!(late.recv().await, Some(EventItem::Event(warning(2))));
        let mut next = task::spawn(late.recv());
        assert_pending!(next.poll());
        drop(next);

        // The stream ends once the bus is gone, after what it still holds.
        bus.emit(warning(3));
        drop(bus);
        assert_eq!(late.recv().await, Some(EventItem::Event(warning(3))));
        assert_eq!(late.recv().await, None);
    }

    #[tokio::test]
    async fn a_stream_that_falls_behind_is_told_how_many_it_missed_and_reads_on() {
        let bus = EventBus::new(None);
        let mut idle = bus.subscribe();
        let mut reader = bus.subscribe();
        let extra = 5;
        // Emitting never waits for a stream: nobody reads `idle` meanwhile.
        for i in 0..EVENT_QUEUE + extra {
            bus.emit(warning(i));
            assert_eq!(reader.recv().await, Some(EventItem::Event(warning(i))));
        }

        assert_eq!(idle.recv().await, Some(EventItem::Missed(extra as u64)));
        for i in extra..EVENT_QUEUE + extra {
            assert_eq!(idle.recv().await, Some(EventItem::Event(warning(i))), "event {i}");
        }
        bus.emit(warning(0));
        assert_eq!(idle.recv().await, Some(EventItem::Event(warning(0))));
        // A stream's loss is its own, not the handler's.
        assert_eq!(bus.dropped(), 0);
    }

    #[tokio::test]
    async fn the_handler_and_the_streams_get_the_same_events() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let bus = EventBus::new(Some(Arc::new(move |event| {
            let _ = tx.send(event);
        })));
        let mut stream = bus.subscribe();
        bus.emit(warning(1));
        assert_eq!(rx.recv().await, Some(warning(1)));
        assert_eq!(stream.recv().await, Some(EventItem::Event(warning(1))));
    }
}
