//! Reading an SSE (`text/event-stream`) body with bounds.
//!
//! The field syntax of each event is decoded by the `sse-stream` crate
//! (maintained, used by the Rust MCP SDK, strict about UTF-8 and the
//! `retry` field). That crate keeps no bound on the size of an event, so this
//! module cuts the byte stream into events first: [`EventSplitter`] finds the
//! blank line that ends each event (`\n`, `\r\n` or `\r` line ends, as the
//! SSE standard allows) and never holds more than the bound of one event.
//! An event over it is dropped as it streams by, and only its first
//! [`DAMAGED_PREFIX_BYTES`] and its length are kept, to report it as
//! damaged. Each complete event is then handed alone to a fresh decoder, so
//! a malformed event cannot end the stream either.
//!
//! [`EventReader`] adds the bound of the whole body, the last event id and
//! the server's `retry` advice.
//!
//! [`DAMAGED_PREFIX_BYTES`]: crate::transport::DAMAGED_PREFIX_BYTES

use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, Stream, StreamExt};
use sse_stream::{Sse, SseByteStream};
use std::pin::Pin;
use std::time::Duration;

use crate::error::Error;
use crate::transport::DAMAGED_PREFIX_BYTES;

/// Room for an event's field names and its `id`, `event` and `retry` lines,
/// on top of the frame bound that applies to its data.
pub(crate) const EVENT_OVERHEAD_BYTES: usize = 4096;

/// The largest event whose buffer the splitter keeps for the next ones.
const KEEP_BUFFER_BYTES: usize = 16 * 1024;

/// One event cut from the stream, or the trace of one that was too large.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block {
    /// The raw bytes of one whole event, ending with its blank line.
    Event(Bytes),
    /// An event over the bound, dropped while it streamed by.
    Oversized {
        /// Its first bytes.
        prefix: Bytes,
        /// Its length in bytes.
        bytes: u64,
    },
}

/// Cuts an SSE byte stream into events, holding at most `max` bytes of the
/// event being read.
#[derive(Debug)]
pub(crate) struct EventSplitter {
    max: usize,
    block: BytesMut,
    /// While an oversized event streams by: its length so far.
    oversized: Option<u64>,
    /// Whether the current line is empty so far.
    line_empty: bool,
    /// The previous byte was a `\r`: a `\n` now belongs to the same line end.
    after_cr: bool,
    /// Whether the start of the stream (and a byte order mark there) is
    /// still ahead.
    at_start: bool,
    /// How many bytes of a byte order mark the stream started with so far.
    bom_matched: usize,
}

impl EventSplitter {
    /// A splitter whose events may be at most `max` bytes long.
    pub(crate) fn new(max: usize) -> Self {
        EventSplitter {
            max: max.max(DAMAGED_PREFIX_BYTES),
            block: BytesMut::new(),
            oversized: None,
            line_empty: true,
            after_cr: false,
            at_start: true,
            bom_matched: 0,
        }
    }

    #[cfg(any(test, feature = "fuzzing"))]
    /// Bytes of the current event held right now (at most the bound).
    pub(crate) fn buffered(&self) -> usize {
        self.block.len()
    }

    /// Feeds a chunk; returns the events it completed.
    pub(crate) fn push(&mut self, mut chunk: &[u8]) -> Vec<Block> {
        let mut out = Vec::new();
        // A UTF-8 byte order mark may open the stream (SSE standard), and
        // may arrive split over chunks: its bytes are matched one by one.
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        while self.at_start && !chunk.is_empty() {
            if chunk[0] == BOM[self.bom_matched] {
                self.bom_matched += 1;
                chunk = &chunk[1..];
                self.at_start = self.bom_matched < BOM.len();
            } else {
                // Not a BOM after all: what matched so far is content.
                self.at_start = false;
                self.split(&BOM[..self.bom_matched], &mut out);
            }
        }
        self.split(chunk, &mut out);
        out
    }

    fn split(&mut self, mut chunk: &[u8], out: &mut Vec<Block>) {
        // Whole runs between line ends, found with memchr: a byte at a
        // time cost ~24 instructions a byte (81 % of a 50 MB event's
        // reading, callgrind, bench/vs-rmcp --transport http).
        while !chunk.is_empty() {
            if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
                // The `\n` of a `\r\n`: the `\r` already ended the line.
                chunk = &chunk[1..];
                continue;
            }
            let Some(at) = memchr::memchr2(b'\r', b'\n', chunk) else {
                self.line_empty = false;
                self.keep(chunk);
                break;
            };
            if at > 0 {
                self.line_empty = false;
                self.keep(&chunk[..at]);
            }
            self.after_cr = chunk[at] == b'\r';
            self.keep(b"\n");
            if self.line_empty {
                if let Some(block) = self.finish() {
                    out.push(block);
                }
            }
            self.line_empty = true;
            chunk = &chunk[at + 1..];
        }
    }

    /// Keeps `run` as part of the current event, or counts it once the
    /// event is over the bound (keeping its first bytes to report it).
    fn keep(&mut self, run: &[u8]) {
        if let Some(len) = self.oversized.as_mut() {
            *len += run.len() as u64;
            return;
        }
        if self.block.len() + run.len() > self.max {
            self.oversized = Some((self.block.len() + run.len()) as u64);
            let room = DAMAGED_PREFIX_BYTES.saturating_sub(self.block.len()).min(run.len());
            self.block.extend_from_slice(&run[..room]);
            self.block.truncate(DAMAGED_PREFIX_BYTES);
            return;
        }
        self.block.extend_from_slice(run);
    }

    /// Ends the current event (at its blank line).
    fn finish(&mut self) -> Option<Block> {
        // A small event is split off the buffer, which keeps its spare
        // room for the next events (taking it left an empty buffer, grown
        // again line by line for each event: three or four allocations an
        // event); a large one takes the buffer along, so that the memory
        // it needed is not held for the stream's life.
        let block = match self.block.len() <= KEEP_BUFFER_BYTES {
            true => self.block.split(),
            false => std::mem::take(&mut self.block),
        };
        match self.oversized.take() {
            Some(bytes) => Some(Block::Oversized { prefix: block.freeze(), bytes }),
            // Only line ends: no event.
            None if block.iter().all(|b| *b == b'\n') => None,
            None => Some(Block::Event(block.freeze())),
        }
    }
}

/// Decodes one whole event with `sse-stream`. `None` when it holds no event
/// (only comments), `Err` when it is not valid UTF-8.
pub(crate) fn decode(block: Bytes) -> Result<Option<Sse>, String> {
    let input = futures_util::stream::iter([Ok::<Bytes, std::io::Error>(block)]);
    let mut decoder = SseByteStream::new(input);
    // The input is already complete: the decoder never waits.
    match decoder.next().now_or_never().flatten() {
        None => Ok(None),
        Some(Ok(event)) => Ok(Some(event)),
        Some(Err(e)) => Err(e.to_string()),
    }
}

/// What the reader got from the stream.
#[derive(Debug)]
pub(crate) enum Item {
    /// A message event with data (the priming event and other events with
    /// empty data are consumed silently, after noting their id and retry).
    Message(String),
    /// An event that could not be delivered: over the frame bound, or not
    /// UTF-8. The stream goes on.
    Damaged {
        /// Why.
        reason: String,
        /// The first bytes of its data.
        prefix: String,
        /// How long it was.
        bytes: u64,
    },
}

/// Why a stream ended.
#[derive(Debug)]
pub(crate) enum End {
    /// The server ended the body.
    Eof,
    /// More than the body bound arrived; reading stopped there.
    BodyLimit {
        /// Bytes read when it stopped.
        read: u64,
    },
    /// The body broke.
    Failed(Error),
}

pub(crate) type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// Reads events from one SSE response body within the frame and body bounds,
/// keeping the last event id and the server's retry advice.
pub(crate) struct EventReader {
    body: ByteStream,
    splitter: EventSplitter,
    ready: std::collections::VecDeque<Block>,
    max_frame: usize,
    max_body: Option<usize>,
    read: u64,
    /// The type of events that carry messages (`message`; the legacy
    /// transport also reads `endpoint`).
    accept: &'static [&'static str],
    /// The id of the last event that set one (the SSE "last event ID").
    pub last_event_id: Option<String>,
    /// The server's last `retry` advice.
    pub retry: Option<Duration>,
    /// Events seen (of any kind, the priming one included).
    pub events: u64,
    /// The type of the last message returned (`message` when unnamed).
    pub last_type: String,
}

impl std::fmt::Debug for EventReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventReader")
            .field("read", &self.read)
            .field("events", &self.events)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl EventReader {
    /// Reads `response`: each event's data at most `max_frame` bytes, the
    /// whole body at most `max_body` bytes when given.
    pub(crate) fn new(
        response: crate::transport::http::HttpResponse,
        max_frame: usize,
        max_body: Option<usize>,
    ) -> Self {
        Self::from_stream(
            Box::pin(http_body_util::BodyDataStream::new(response.into_body())),
            max_frame,
            max_body,
        )
    }

    pub(crate) fn from_stream(body: ByteStream, max_frame: usize, max_body: Option<usize>) -> Self {
        EventReader {
            body,
            splitter: EventSplitter::new(max_frame.saturating_add(EVENT_OVERHEAD_BYTES)),
            ready: Default::default(),
            max_frame,
            max_body,
            read: 0,
            accept: &["message"],
            last_event_id: None,
            retry: None,
            events: 0,
            last_type: String::new(),
        }
    }

    /// Also delivers events of these types (the legacy transport's
    /// `endpoint`).
    pub(crate) fn accepting(mut self, types: &'static [&'static str]) -> Self {
        self.accept = types;
        self
    }

    /// The next message, or why the stream ended. Continues after an `End`
    /// are not meaningful.
    pub(crate) async fn next(&mut self) -> Result<Item, End> {
        // Bounded: every turn consumes a ready event or a chunk of a body
        // that is itself bounded, or returns.
        loop {
            while let Some(block) = self.ready.pop_front() {
                if let Some(item) = self.interpret(block) {
                    return Ok(item);
                }
            }
            match self.body.next().await {
                None => return Err(End::Eof),
                Some(Err(e)) => {
                    let error = Error::new(crate::FailureClass::TransportClosed, "the event stream broke")
                        .with_source(e.without_url());
                    return Err(End::Failed(error));
                }
                Some(Ok(chunk)) => {
                    self.read += chunk.len() as u64;
                    if let Some(max) = self.max_body {
                        if self.read > max as u64 {
                            return Err(End::BodyLimit { read: self.read });
                        }
                    }
                    self.ready.extend(self.splitter.push(&chunk));
                }
            }
        }
    }

    fn interpret(&mut self, block: Block) -> Option<Item> {
        self.events += 1;
        let block = match block {
            Block::Event(block) => block,
            Block::Oversized { prefix, bytes } => {
                return Some(Item::Damaged {
                    reason: format!("an event exceeds max_frame_bytes ({})", self.max_frame),
                    prefix: data_prefix(&prefix),
                    bytes,
                });
            }
        };
        let bytes = block.len() as u64;
        let event = match decode(block.clone()) {
            Ok(Some(event)) => event,
            Ok(None) => return None,
            Err(reason) => {
                return Some(Item::Damaged {
                    reason: format!("an event could not be decoded: {reason}"),
                    prefix: data_prefix(&block),
                    bytes,
                });
            }
        };
        if let Some(id) = event.id {
            // An empty id resets the last event id (SSE standard).
            self.last_event_id = (!id.is_empty()).then_some(id);
        }
        if let Some(ms) = event.retry {
            self.retry = Some(Duration::from_millis(ms));
        }
        let kind = event.event.filter(|e| !e.is_empty()).unwrap_or_else(|| "message".to_string());
        let data = event.data.unwrap_or_default();
        if data.is_empty() || !self.accept.contains(&kind.as_str()) {
            return None;
        }
        if data.len() > self.max_frame {
            let mut prefix = data;
            let bytes = prefix.len() as u64;
            crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
            return Some(Item::Damaged {
                reason: format!("an event exceeds max_frame_bytes ({})", self.max_frame),
                prefix,
                bytes,
            });
        }
        self.last_type = kind;
        Some(Item::Message(data))
    }
}

/// The start of an event's data, from the start of its raw bytes, for
/// diagnosis (and for the engine to find which request it answered).
fn data_prefix(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let data = text
        .find("data:")
        .map(|at| {
            let rest = &text[at + 5..];
            rest.strip_prefix(' ').unwrap_or(rest)
        })
        .unwrap_or(&text);
    let mut prefix = data.to_string();
    crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_event_leaves_no_buffer_behind_and_small_ones_a_small_one() {
        let mut s = EventSplitter::new(1 << 20);
        let large = format!("data: {}\n\n", "x".repeat(200_000));
        let out = s.push(large.as_bytes());
        assert_eq!(out, [Block::Event(Bytes::from(large.clone()))]);
        assert_eq!(s.block.capacity(), 0, "the large event took its buffer along");
        drop(out);

        let small: String = (0..50).map(|i| format!("data: {i}\n\n")).collect();
        let out = s.push(small.as_bytes());
        assert_eq!(out.len(), 50);
        let Block::Event(first) = &out[0] else { panic!("{:?}", out[0]) };
        assert_eq!(&first[..], b"data: 0\n\n");
        assert!(s.block.capacity() <= 2 * KEEP_BUFFER_BYTES);
    }

    fn split_all(input: &[u8], max: usize, width: usize) -> Vec<Block> {
        let mut s = EventSplitter::new(max);
        let mut out = Vec::new();
        for chunk in input.chunks(width) {
            out.extend(s.push(chunk));
            assert!(s.buffered() <= max.max(DAMAGED_PREFIX_BYTES));
        }
        out
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// However the body is cut into chunks, the same events come out,
        /// with the same bytes (the splitter finds line ends in whole runs).
        #[test]
        fn the_events_do_not_depend_on_the_chunks(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("[a-z: ]{0,40}").unwrap(),
                    proptest::sample::select(vec!["\n", "\r", "\r\n", "\n\n", "\r\r", "\u{feff}"])
                        .prop_map(String::from),
                ],
                0..60,
            ),
            width in 1usize..50,
            max in 1usize..400,
        ) {
            let input = parts.concat();
            let whole = split_all(input.as_bytes(), max, input.len().max(1));
            proptest::prop_assert_eq!(split_all(input.as_bytes(), max, width), whole);
        }
    }

    #[test]
    fn splits_on_every_kind_of_line_end_across_chunks() {
        let input =
            b"\xEF\xBB\xBFid: 1\ndata: a\n\nid: 2\r\ndata: b\r\n\r\ndata: c\r\rdata: d\n\n: comment only\n\n";
        for width in [1, 2, 3, 7, input.len()] {
            let blocks = split_all(input, 1024, width);
            let datas: Vec<_> = blocks
                .into_iter()
                .filter_map(|b| match b {
                    Block::Event(b) => decode(b).unwrap(),
                    _ => None,
                })
                .map(|e| (e.id, e.data))
                .collect();
            assert_eq!(
                datas,
                vec![
                    (Some("1".into()), Some("a".into())),
                    (Some("2".into()), Some("b".into())),
                    (None, Some("c".into())),
                    (None, Some("d".into())),
                ],
                "width {width}"
            );
        }
    }

    #[test]
    fn an_oversized_event_is_dropped_while_streaming_and_the_next_survives() {
        let big = format!("data: {{\"id\":7,{}}}\n\n", "x".repeat(100_000));
        let input = format!("{big}data: small\n\n");
        let blocks = split_all(input.as_bytes(), 1000, 333);
        assert_eq!(blocks.len(), 2);
        match &blocks[0] {
            Block::Oversized { prefix, bytes } => {
                assert!(prefix.len() <= DAMAGED_PREFIX_BYTES);
                assert_eq!(*bytes as usize, big.len());
                assert!(data_prefix(prefix).starts_with("{\"id\":7,"));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&blocks[1], Block::Event(b) if decode(b.clone()).unwrap().unwrap().data.as_deref() == Some("small"))
        );
    }

    #[tokio::test]
    async fn the_reader_tracks_ids_retry_and_skips_priming() {
        let chunks = vec![
            Ok(Bytes::from_static(b"id: e1\nretry: 250\ndata: \n\n")),
            Ok(Bytes::from_static(b"event: message\nid: e2\ndata: {\"a\":1}\n\nevent: other\ndata: x\n\n")),
            Ok(Bytes::from_static(b"data: \xff\xfe\n\n")),
        ];
        let body: ByteStream = Box::pin(futures_util::stream::iter(chunks));
        let mut r = EventReader::from_stream(body, 1024, Some(1 << 20));
        match r.next().await {
            Ok(Item::Message(m)) => assert_eq!(m, "{\"a\":1}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.last_event_id.as_deref(), Some("e2"));
        assert_eq!(r.retry, Some(Duration::from_millis(250)));
        assert!(matches!(r.next().await, Ok(Item::Damaged { .. })));
        assert!(matches!(r.next().await, Err(End::Eof)));
    }

    #[tokio::test]
    async fn the_body_bound_stops_reading() {
        let chunk = Bytes::from(format!("data: {}\n\n", "y".repeat(1000)));
        let body: ByteStream = Box::pin(futures_util::stream::iter(
            std::iter::repeat_n(chunk, 100).map(Ok::<_, reqwest::Error>),
        ));
        let mut r = EventReader::from_stream(body, 4096, Some(10_000));
        let mut messages = 0;
        let end = loop {
            match r.next().await {
                Ok(Item::Message(_)) => messages += 1,
                Ok(other) => panic!("{other:?}"),
                Err(end) => break end,
            }
        };
        assert!(matches!(end, End::BodyLimit { read } if read <= 10_000 + 1010));
        assert!(messages <= 10);
    }
}
