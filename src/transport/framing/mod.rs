//! Newline-delimited framing with a bound enforced while reading.
//!
//! [`FrameReader`] splits a byte stream into frames at `\n` (a `\r` before it
//! is tolerated and removed) and never holds more than `max_frame_bytes` (plus
//! one byte for a possible `\r`) of one frame, besides its read buffer of
//! at most [`READ_BUFFER_BYTES`]. A longer line is read to its newline and thrown
//! away as it arrives, keeping only its first [`DAMAGED_PREFIX_BYTES`] bytes
//! and its length, and is returned as [`Inbound::Damaged`]; so is a line that
//! is not UTF-8. Empty and whitespace-only lines are skipped. The reader does
//! not look inside a frame: telling JSON from anything else is the engine's
//! job.
//!
//! # Messages split over lines
//!
//! A server that pretty-prints its JSON sends one message over several lines,
//! which newline-delimited framing cannot carry: each line alone is no
//! message. [`SplitCheck`] (which the stdio transport runs over its frames)
//! recognises it, so that the request it answered fails at once instead of
//! at its deadline. The decision: such a message is **not** reassembled and
//! used (the specification says a message has no embedded newline, and a
//! client that joined lines would also join a torn line with whatever came
//! next); it is reported once, as one [`Inbound::Damaged`] frame (a warning)
//! whose reason says it was split over lines, and when it was a response,
//! its request ends with `framing` ([`Inbound::RequestFailed`]). The
//! connection goes on.
//!
//! A line starts a split message when it opens a JSON object or array that
//! it does not close (its last character is not the closing one, and
//! counting brackets outside strings leaves some open). The lines after it
//! are joined to it (at most `max_frame_bytes` of them are kept) until the
//! brackets balance. A line that is a whole JSON-RPC message by itself ends
//! the joining early: what was joined is reported as damaged, and the line
//! is delivered as usual. A line that starts with `{` and ends with `}` is
//! always taken as a whole message, without counting, so a well-behaved
//! server costs no scan.
//!
//! # The read buffer
//!
//! A reader that is idle or sees small reads waits with no buffer at all:
//! [`read_ready`] polls with [`MIN_READ_BUFFER_BYTES`] on the stack and
//! keeps only what it read, so an idle connection holds nothing for its
//! reads (it held 4 KiB, a tenth of an idle binding). A read that fills
//! that turns to the spare capacity of a `Vec` (never zeroed), which
//! doubles while reads fill it (a large result, many queued replies) up to
//! [`READ_BUFFER_BYTES`], and goes back to the stack at the first small
//! read: a busy connection reads up to 64 KiB a system call. Newlines are
//! found with `memchr`. Measured with bench/vs-rmcp (2026-12-03, 7 rounds
//! each, 1 MiB text results): the fixed, zeroed 16 KiB buffer scanned byte
//! by byte reached 0.86 of the JSON floor's calls a second, this reader
//! 0.99.
//!
//! Once a line in progress is longer than the largest read buffer (a large
//! result), the reader reads the rest of it straight into the line
//! ([`FrameReader::read_into_line`]) instead of copying it over from the
//! buffer, and hands what follows its newline back to the buffer.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::Poll;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

use super::{Inbound, DAMAGED_PREFIX_BYTES};
use crate::error::FailureClass;
use crate::protocol::jsonrpc::{EnvelopeError, Message};

/// The most a [`FrameReader`]'s read buffer grows to, in bytes.
pub(crate) const READ_BUFFER_BYTES: usize = 64 << 10;
/// What a [`FrameReader`] reads at most while it holds no buffer
/// ([`read_ready`]'s bytes on the stack).
pub(crate) const MIN_READ_BUFFER_BYTES: usize = 4 << 10;

/// One read from `reader` of at most [`MIN_READ_BUFFER_BYTES`], whose bytes
/// are handed to `take` (empty at the end of the stream). While it waits
/// it holds no memory: each poll reads into a buffer on its own stack
/// (never zeroed), which is gone when the poll returns pending. For a
/// reader that is mostly idle, such as a server's stdout between calls or
/// its stderr.
pub(crate) async fn read_ready<R: AsyncRead + Unpin, T>(
    reader: &mut R,
    mut take: impl FnMut(&[u8]) -> T,
) -> io::Result<T> {
    std::future::poll_fn(|cx| {
        let mut probe = [MaybeUninit::<u8>::uninit(); MIN_READ_BUFFER_BYTES];
        let mut buf = ReadBuf::uninit(&mut probe);
        match Pin::new(&mut *reader).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(take(buf.filled()))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// The reason given for a frame over its bound.
const OVER_LIMIT_REASON: &str = "frame exceeds max_frame_bytes";
/// The reason given for a frame that is not UTF-8.
const NOT_UTF8_REASON: &str = "frame is not valid UTF-8";

/// Reads newline-delimited frames from `R`, bounding each while it is read.
///
/// The reader the stdio transport reads a server's stdout with, public so
/// that a transport written outside the crate over any byte stream (a Unix
/// socket, a serial line, a pipe) frames the way stdio does and keeps the
/// rules of [`crate::transport`] without copying it: a line over
/// `max_frame_bytes` is never held whole, and it and a line that is not
/// UTF-8 come back as [`Inbound::Damaged`], after which reading goes on.
/// A `\r` before the `\n` is removed; blank lines are skipped. It does not
/// look inside a frame (telling JSON from anything else is the engine's
/// job). `examples/unix_socket/` is a transport built on it.
///
/// [`FrameReader::next_frame`] is cancel-safe: its only suspension point is
/// one read into the buffer, and the reader's state changes only after that
/// read completes, so dropping the future (in a `select!` or on a deadline)
/// loses no bytes.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    /// What was read; `buf[start..]` is not yet consumed.
    buf: Vec<u8>,
    start: usize,
    /// The capacity the next read is given.
    want: usize,
    /// The frame being assembled (never longer than `max_frame_bytes + 1`).
    line: Vec<u8>,
    /// Set once the current line is known to be over the bound.
    overflow: Option<Overflow>,
    max_frame_bytes: usize,
    /// How long a line in progress must be for the rest of it to be read
    /// straight into it ([`FrameReader::reads_into_line`]).
    direct_from: usize,
    peak: usize,
    eof: bool,
}

/// What is kept of a line that is being discarded.
#[derive(Debug)]
struct Overflow {
    prefix: Vec<u8>,
    bytes: u64,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader over `reader` that accepts frames of at most
    /// `max_frame_bytes` bytes (not counting the line ending). A bound of `0`
    /// is taken as `1`.
    pub fn new(reader: R, max_frame_bytes: usize) -> Self {
        FrameReader {
            reader,
            buf: Vec::new(),
            start: 0,
            want: MIN_READ_BUFFER_BYTES,
            line: Vec::new(),
            overflow: None,
            max_frame_bytes: max_frame_bytes.max(1),
            direct_from: READ_BUFFER_BYTES,
            peak: 0,
            eof: false,
        }
    }

    #[cfg(any(test, feature = "fuzzing"))]
    /// The most bytes this reader ever held for one frame (not counting its
    /// read buffer of at most [`READ_BUFFER_BYTES`]). Never more than
    /// `max_frame_bytes + 1`.
    pub(crate) fn peak_buffered(&self) -> usize {
        self.peak
    }

    #[cfg(any(test, feature = "fuzzing"))]
    /// Reads lines longer than `bytes` straight into the line, rather than
    /// from [`READ_BUFFER_BYTES`] on: what the reader delivers is the same,
    /// which the tests and the fuzz target check with short lines.
    pub(crate) fn reading_into_lines_from(mut self, bytes: usize) -> Self {
        self.direct_from = bytes;
        self
    }

    /// Reads the next frame.
    ///
    /// Returns `Ok(None)` at the end of the stream, after delivering a final
    /// line that had no newline (if it was not blank). An over-long or
    /// non-UTF-8 line is returned as [`Inbound::Damaged`] and the reader goes
    /// on with the next line. An I/O error is returned as is.
    pub async fn next_frame(&mut self) -> io::Result<Option<Inbound>> {
        loop {
            if self.start == self.buf.len() {
                if self.eof {
                    return Ok(self.finish_line());
                }
                if self.reads_into_line() {
                    self.read_into_line().await?;
                } else {
                    self.read().await?;
                }
                continue;
            }
            let avail = &self.buf[self.start..];
            match memchr::memchr(b'\n', avail) {
                Some(pos) => {
                    let (start, end) = (self.start, self.start + pos);
                    self.start = end + 1;
                    if self.is_whole_small_rest(pos) {
                        // The line is all that is left of a small read
                        // (a reply between idle waits, in a buffer of its
                        // own size): it becomes the frame, not a copy.
                        let mut line = std::mem::take(&mut self.buf);
                        line.truncate(end);
                        line.drain(..start);
                        self.start = 0;
                        self.peak = self.peak.max(line.len());
                        self.line = line;
                    } else {
                        self.append(start, end);
                    }
                    if let Some(frame) = self.finish_line() {
                        return Ok(Some(frame));
                    }
                }
                None => {
                    let (start, end) = (self.start, self.buf.len());
                    self.start = end;
                    self.append(start, end);
                }
            }
        }
    }

    /// One read into an emptied buffer of `want` bytes of capacity, then
    /// the capacity for the next: doubled when this read filled it, back to
    /// the minimum when it was small. At the minimum the reader waits with
    /// no buffer ([`read_ready`]) and keeps only the bytes it read.
    async fn read(&mut self) -> io::Result<()> {
        self.buf.clear();
        self.start = 0;
        let (n, room) = if self.want <= MIN_READ_BUFFER_BYTES {
            self.buf = Vec::new();
            let buf = &mut self.buf;
            let n = read_ready(&mut self.reader, |bytes| {
                buf.extend_from_slice(bytes);
                bytes.len()
            })
            .await?;
            (n, MIN_READ_BUFFER_BYTES)
        } else {
            if self.buf.capacity() > self.want {
                self.buf.shrink_to(self.want);
            } else {
                self.buf.reserve_exact(self.want);
            }
            let room = self.buf.capacity();
            (self.reader.read_buf(&mut self.buf).await?, room)
        };
        if n == 0 {
            self.eof = true;
        } else if n >= room {
            self.want = (room * 2).clamp(MIN_READ_BUFFER_BYTES, READ_BUFFER_BYTES);
        } else if n < MIN_READ_BUFFER_BYTES / 4 {
            self.want = MIN_READ_BUFFER_BYTES;
        }
        Ok(())
    }

    /// Whether the next read goes straight into the line: a line longer
    /// than the largest read buffer is being assembled (a large result),
    /// within its bound, with room for at least one more byte. A shorter
    /// one (the end of a burst of replies that a read cut) is read on
    /// through the buffer: reading it into the line would copy the replies
    /// after it back out, and read less at a time.
    fn reads_into_line(&self) -> bool {
        self.line.len() >= self.direct_from
            && self.overflow.is_none()
            && self.line.len() <= self.max_frame_bytes
    }

    /// One read into the spare capacity of the line being assembled, not
    /// into the read buffer: the rest of a large frame is then not copied
    /// from the buffer into the line (a third of what a client did with a
    /// 1 MiB result: `bench/vs-rmcp`'s callgrind count). The line grows by
    /// doubling, never past the bound plus one byte (for a `\r`), and a
    /// read takes no more than that leaves, nor more than
    /// [`READ_BUFFER_BYTES`] (as much as a pipe gives at once). What
    /// follows a newline in the read (the next frames) goes to the read
    /// buffer, to be framed as usual, and so stays within that buffer's
    /// bound; a line that reaches the frame bound without one is read on
    /// through the buffer, where [`FrameReader::append`] finds it over the
    /// bound. Cancel-safe as [`FrameReader::read`] is: the line grows only
    /// when the read completes.
    async fn read_into_line(&mut self) -> io::Result<()> {
        let bound = self.max_frame_bytes + 1;
        let len = self.line.len();
        if self.line.capacity() == len {
            let target = (len * 2).min(bound);
            self.line.reserve_exact(target - len);
        }
        // At most a read buffer's worth: what follows the newline is moved
        // to the read buffer, which stays within its bound.
        let room = (self.line.capacity().min(bound) - len).min(READ_BUFFER_BYTES);
        let n = (&mut self.reader).take(room as u64).read_buf(&mut self.line).await?;
        if n == 0 {
            self.eof = true;
            return Ok(());
        }
        if let Some(pos) = memchr::memchr(b'\n', &self.line[len..]) {
            let end = len + pos;
            self.buf.clear();
            self.buf.extend_from_slice(&self.line[end..]);
            self.start = 0;
            self.line.truncate(end);
        }
        self.peak = self.peak.max(self.line.len());
        Ok(())
    }

    /// Whether the line just found (`pos` bytes, its newline the last byte
    /// read) can take the read buffer itself: nothing of it is held yet,
    /// it is within the bound, and the buffer is a small one read at rest
    /// (a large one is kept for the next read, and must not become a
    /// short frame's capacity).
    fn is_whole_small_rest(&self, pos: usize) -> bool {
        self.line.is_empty()
            && self.overflow.is_none()
            && self.start == self.buf.len()
            && self.buf.capacity() <= MIN_READ_BUFFER_BYTES
            && pos <= self.max_frame_bytes + 1
    }

    /// Adds `buf[from..to]` to the current line, switching to discarding it
    /// once it would pass the bound.
    fn append(&mut self, from: usize, to: usize) {
        let piece = &self.buf[from..to];
        if let Some(over) = &mut self.overflow {
            keep_prefix(&mut over.prefix, piece);
            over.bytes += piece.len() as u64;
            return;
        }
        // One byte of slack for a `\r` that the newline will show to be part
        // of the line ending.
        if self.line.len() + piece.len() > self.max_frame_bytes + 1 {
            let mut prefix = Vec::with_capacity(DAMAGED_PREFIX_BYTES);
            keep_prefix(&mut prefix, &self.line);
            keep_prefix(&mut prefix, piece);
            let bytes = (self.line.len() + piece.len()) as u64;
            // Release the memory now rather than when the line ends.
            self.line = Vec::new();
            self.overflow = Some(Overflow { prefix, bytes });
            return;
        }
        self.line.extend_from_slice(piece);
        self.peak = self.peak.max(self.line.len());
    }

    /// Ends the current line (at a newline or at the end of the stream) and
    /// turns it into what the caller receives; `None` for a blank line.
    fn finish_line(&mut self) -> Option<Inbound> {
        if let Some(over) = self.overflow.take() {
            return Some(damaged(OVER_LIMIT_REASON, &over.prefix, over.bytes));
        }
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            // Keep the allocation of a short line for the next one.
            if line.capacity() <= READ_BUFFER_BYTES {
                line.clear();
                self.line = line;
            }
            return None;
        }
        if line.len() > self.max_frame_bytes {
            return Some(damaged(OVER_LIMIT_REASON, &line, line.len() as u64));
        }
        match String::from_utf8(line) {
            Ok(text) => Some(Inbound::Frame(text)),
            Err(err) => {
                let bytes = err.as_bytes();
                Some(damaged(NOT_UTF8_REASON, bytes, bytes.len() as u64))
            }
        }
    }
}

/// Appends to `prefix` as much of `piece` as fits in
/// [`DAMAGED_PREFIX_BYTES`].
fn keep_prefix(prefix: &mut Vec<u8>, piece: &[u8]) {
    let room = DAMAGED_PREFIX_BYTES.saturating_sub(prefix.len());
    prefix.extend_from_slice(&piece[..room.min(piece.len())]);
}

fn damaged(reason: &str, start: &[u8], bytes: u64) -> Inbound {
    let start = &start[..start.len().min(DAMAGED_PREFIX_BYTES)];
    let mut prefix = String::from_utf8_lossy(start).into_owned();
    crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
    Inbound::Damaged { reason: reason.to_string(), prefix, bytes }
}

/// Recognises messages split over several lines (see the
/// [module docs](self)): fed every frame a [`FrameReader`] returns, it hands
/// back what to deliver instead.
#[derive(Debug)]
pub(crate) struct SplitCheck {
    max_frame_bytes: usize,
    split: Option<Split>,
}

/// A split message being joined.
#[derive(Debug)]
struct Split {
    /// The lines joined by `\n`, while they fit in the frame bound.
    text: String,
    over: bool,
    bytes: u64,
    lines: usize,
    brackets: Brackets,
}

/// Counts open brackets outside strings, across lines.
#[derive(Debug, Default, Clone, Copy)]
struct Brackets {
    open: usize,
    in_string: bool,
    escaped: bool,
}

impl Brackets {
    fn scan(&mut self, line: &str) {
        for &b in line.as_bytes() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.open += 1,
                b']' | b'}' => self.open = self.open.saturating_sub(1),
                _ => {}
            }
        }
    }
}

impl SplitCheck {
    /// A check that keeps at most `max_frame_bytes` of one split message.
    pub(crate) fn new(max_frame_bytes: usize) -> Self {
        SplitCheck { max_frame_bytes: max_frame_bytes.max(1), split: None }
    }

    #[cfg(feature = "fuzzing")]
    /// Whether lines are being joined (a split message has begun).
    pub(crate) fn is_joining(&self) -> bool {
        self.split.is_some()
    }

    /// Takes one frame; what to deliver goes to `out` (nothing while a split
    /// message is being joined, at most two items otherwise).
    pub(crate) fn feed(&mut self, inbound: Inbound, out: &mut impl Extend<Inbound>) {
        let Inbound::Frame(line) = inbound else {
            // A damaged line inside a split message is part of it.
            if let (Some(split), Inbound::Damaged { bytes, .. }) = (&mut self.split, &inbound) {
                split.over = true;
                split.bytes += bytes;
                split.lines += 1;
                return;
            }
            out.extend([inbound]);
            return;
        };
        if self.split.is_some() {
            if is_whole_message(&line) {
                self.abandon(out);
                out.extend([Inbound::Frame(line)]);
                return;
            }
            self.join(line, out);
            return;
        }
        if let Some(brackets) = opens_a_split(&line) {
            self.split =
                Some(Split { bytes: line.len() as u64, text: line, over: false, lines: 1, brackets });
            return;
        }
        out.extend([Inbound::Frame(line)]);
    }

    /// The stream ended: a split message still being joined is reported.
    pub(crate) fn finish(&mut self, out: &mut impl Extend<Inbound>) {
        self.abandon(out);
    }

    fn join(&mut self, line: String, out: &mut impl Extend<Inbound>) {
        let Some(split) = &mut self.split else { return };
        split.bytes += 1 + line.len() as u64;
        split.lines += 1;
        split.brackets.scan(&line);
        if !split.over && split.text.len() + 1 + line.len() <= self.max_frame_bytes {
            split.text.push('\n');
            split.text.push_str(&line);
        } else if !split.over {
            split.over = true;
            // Release the memory now rather than when the message ends.
            split.text = String::new();
        }
        if split.brackets.open == 0 && !split.brackets.in_string {
            if let Some(split) = self.split.take() {
                report(split, out);
            }
        }
    }

    /// Reports what was joined as lines that form no message.
    fn abandon(&mut self, out: &mut impl Extend<Inbound>) {
        if let Some(split) = self.split.take() {
            let lines = match split.lines {
                1 => "1 line that forms".to_string(),
                n => format!("{n} lines that form"),
            };
            let reason = format!(
                "{lines} no message: the start of a message split over several lines \
                 (pretty-printed JSON?) that did not end"
            );
            out.extend([Inbound::Damaged { reason, prefix: String::new(), bytes: split.bytes }]);
        }
    }
}

/// Reports a split message that ended: a warning, and for a response, the
/// failure of its request.
fn report(split: Split, out: &mut impl Extend<Inbound>) {
    let Split { text, over, bytes, lines, .. } = split;
    let what = if over {
        None
    } else {
        match Message::parse(&text) {
            Ok(Message::Response(response)) => Some(Ok(response.id)),
            Err(EnvelopeError::ResultAndError(id)) => Some(Ok(id)),
            Err(EnvelopeError::TooDeep(deep)) if deep.method().is_none() => deep.id().cloned().map(Ok),
            Ok(Message::Request(_)) => Some(Err("a server request")),
            Ok(Message::Notification(_)) => Some(Err("a notification")),
            Err(EnvelopeError::TooDeep(_)) => Some(Err("a server message")),
            Err(_) => None,
        }
    };
    let over_text = if over { ", over max_frame_bytes once joined" } else { "" };
    let rule = "(pretty-printed JSON?); stdio carries one message per line";
    match what {
        Some(Ok(id)) => {
            let reason = format!("a reply to request {id} split over several lines ({lines} lines) {rule}");
            out.extend([Inbound::Damaged { reason, prefix: String::new(), bytes }]);
            let message = format!("the server split its reply over {lines} lines {rule}");
            out.extend([Inbound::RequestFailed {
                id,
                class: FailureClass::Framing,
                message,
                http_status: None,
                retry_after: None,
            }]);
        }
        Some(Err(kind)) => {
            let reason = format!("{kind} split over several lines ({lines} lines) {rule}; dropped");
            out.extend([Inbound::Damaged { reason, prefix: String::new(), bytes }]);
        }
        None => {
            let reason = format!(
                "a message split over several lines ({lines} lines) that is no message{over_text} {rule}"
            );
            out.extend([Inbound::Damaged { reason, prefix: String::new(), bytes }]);
        }
    }
}

/// The bracket count after `line`, when it starts a split message: it opens
/// an object or array and leaves some open (outside a string).
fn opens_a_split(line: &str) -> Option<Brackets> {
    let trimmed = line.trim();
    let (first, last) = (trimmed.as_bytes().first()?, trimmed.as_bytes().last()?);
    let closes = match first {
        b'{' => b'}',
        b'[' => b']',
        _ => return None,
    };
    if *last == closes {
        return None;
    }
    let mut brackets = Brackets::default();
    brackets.scan(trimmed);
    (brackets.open > 0 && !brackets.in_string).then_some(brackets)
}

/// Whether `line` is a whole JSON-RPC message by itself.
fn is_whole_message(line: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Envelope {
        jsonrpc: Option<serde::de::IgnoredAny>,
    }
    let trimmed = line.trim();
    trimmed.starts_with('{')
        && trimmed.ends_with('}')
        && serde_json::from_str::<Envelope>(trimmed).is_ok_and(|e| e.jsonrpc.is_some())
}

#[cfg(test)]
mod tests;
