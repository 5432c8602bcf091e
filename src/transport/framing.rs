//! Newline-delimited framing with a bound enforced while reading.
//!
//! [`FrameReader`] splits a byte stream into frames at `\n` (a `\r` before it
//! is tolerated and removed) and never holds more than `max_frame_bytes` (plus
//! one byte for a possible `\r`) of one frame, besides its fixed read buffer
//! of [`READ_BUFFER_BYTES`]. A longer line is read to its newline and thrown
//! away as it arrives, keeping only its first [`DAMAGED_PREFIX_BYTES`] bytes
//! and its length, and is returned as [`Inbound::Damaged`]; so is a line that
//! is not UTF-8. Empty and whitespace-only lines are skipped. The reader does
//! not look inside a frame: telling JSON from anything else is the engine's
//! job.

use std::io;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{Inbound, DAMAGED_PREFIX_BYTES};

/// The size of a [`FrameReader`]'s fixed read buffer, in bytes.
pub const READ_BUFFER_BYTES: usize = 16 << 10;

/// The reason given for a frame over its bound.
const OVER_LIMIT_REASON: &str = "frame exceeds max_frame_bytes";
/// The reason given for a frame that is not UTF-8.
const NOT_UTF8_REASON: &str = "frame is not valid UTF-8";

/// Reads newline-delimited frames from `R`, bounding each while it is read.
///
/// [`FrameReader::next_frame`] is cancel-safe: its only suspension point is
/// one read into the fixed buffer, and the reader's state changes only after
/// that read completes, so dropping the future (in a `select!` or on a
/// deadline) loses no bytes.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    /// The fixed read buffer; `buf[start..end]` is not yet consumed.
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// The frame being assembled (never longer than `max_frame_bytes + 1`).
    line: Vec<u8>,
    /// Set once the current line is known to be over the bound.
    overflow: Option<Overflow>,
    max_frame_bytes: usize,
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
            buf: vec![0u8; READ_BUFFER_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::new(),
            overflow: None,
            max_frame_bytes: max_frame_bytes.max(1),
            peak: 0,
            eof: false,
        }
    }

    /// The bound on one frame, in bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// The most bytes this reader ever held for one frame (not counting its
    /// fixed read buffer of [`READ_BUFFER_BYTES`]). Never more than
    /// `max_frame_bytes + 1`.
    pub fn peak_buffered(&self) -> usize {
        self.peak
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// Reads the next frame.
    ///
    /// Returns `Ok(None)` at the end of the stream, after delivering a final
    /// line that had no newline (if it was not blank). An over-long or
    /// non-UTF-8 line is returned as [`Inbound::Damaged`] and the reader goes
    /// on with the next line. An I/O error is returned as is.
    pub async fn next_frame(&mut self) -> io::Result<Option<Inbound>> {
        loop {
            if self.start == self.end {
                if self.eof {
                    return Ok(self.finish_line());
                }
                let n = self.reader.read(&mut self.buf[..]).await?;
                self.start = 0;
                self.end = n;
                if n == 0 {
                    self.eof = true;
                }
                continue;
            }
            let avail = &self.buf[self.start..self.end];
            match avail.iter().position(|&b| b == b'\n') {
                Some(pos) => {
                    let (start, end) = (self.start, self.start + pos);
                    self.start = end + 1;
                    self.append(start, end);
                    if let Some(frame) = self.finish_line() {
                        return Ok(Some(frame));
                    }
                }
                None => {
                    let (start, end) = (self.start, self.end);
                    self.start = self.end;
                    self.append(start, end);
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn all_frames<R: AsyncRead + Unpin>(reader: &mut FrameReader<R>) -> Vec<Inbound> {
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.unwrap() {
            out.push(frame);
        }
        out
    }

    fn frame(text: &str) -> Inbound {
        Inbound::Frame(text.to_string())
    }

    #[tokio::test]
    async fn a_64_mib_line_is_damaged_without_being_held() {
        const MAX: usize = 1 << 20;
        const HUGE: u64 = 64 << 20;
        // Streams 64 MiB without ever holding it.
        let stream = tokio::io::repeat(b'a')
            .take(HUGE)
            .chain(&b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"[..]);
        let mut reader = FrameReader::new(stream, MAX);
        match reader.next_frame().await.unwrap() {
            Some(Inbound::Damaged { reason, prefix, bytes }) => {
                assert_eq!(reason, OVER_LIMIT_REASON);
                assert_eq!(prefix, "a".repeat(DAMAGED_PREFIX_BYTES));
                assert_eq!(bytes, HUGE);
            }
            other => panic!("expected a damaged frame, got {other:?}"),
        }
        assert!(reader.peak_buffered() <= MAX + READ_BUFFER_BYTES, "peak {}", reader.peak_buffered());
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Some(frame(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
        );
        assert_eq!(reader.next_frame().await.unwrap(), None);
        assert!(reader.peak_buffered() <= MAX + 1);
    }

    #[tokio::test]
    async fn a_frame_of_exactly_the_bound_is_delivered() {
        let data = format!("{}\r\n{}\n{}\n", "x".repeat(8), "y".repeat(8), "z".repeat(9));
        let mut reader = FrameReader::new(data.as_bytes(), 8);
        let frames = all_frames(&mut reader).await;
        assert_eq!(frames[0], frame("xxxxxxxx"));
        assert_eq!(frames[1], frame("yyyyyyyy"));
        assert!(matches!(&frames[2], Inbound::Damaged { bytes: 9, .. }), "{frames:?}");
        assert_eq!(frames.len(), 3);
        assert!(reader.peak_buffered() <= 9);
    }

    #[tokio::test]
    async fn non_json_is_just_a_frame() {
        let mut reader = FrameReader::new(&b"hello, not json\n"[..], 1024);
        assert_eq!(all_frames(&mut reader).await, vec![frame("hello, not json")]);
    }

    #[tokio::test]
    async fn crlf_is_tolerated() {
        let mut reader = FrameReader::new(&b"{\"a\":1}\r\n{\"b\":2}\r\n"[..], 1024);
        assert_eq!(all_frames(&mut reader).await, vec![frame("{\"a\":1}"), frame("{\"b\":2}")]);
    }

    #[tokio::test]
    async fn empty_and_blank_lines_are_skipped() {
        let mut reader = FrameReader::new(&b"\n\r\n  \t \n{}\n\n \r\n[]\n\n"[..], 1024);
        assert_eq!(all_frames(&mut reader).await, vec![frame("{}"), frame("[]")]);
    }

    #[tokio::test]
    async fn a_partial_last_line_is_delivered() {
        let mut reader = FrameReader::new(&b"{\"a\":1}\n{\"b\":2}"[..], 1024);
        assert_eq!(all_frames(&mut reader).await, vec![frame("{\"a\":1}"), frame("{\"b\":2}")]);
        // The end stays the end.
        assert_eq!(reader.next_frame().await.unwrap(), None);

        let mut reader = FrameReader::new(&b"{}\n   "[..], 1024);
        assert_eq!(all_frames(&mut reader).await, vec![frame("{}")]);
    }

    #[tokio::test]
    async fn an_over_long_partial_last_line_is_damaged() {
        let data = "q".repeat(100);
        let mut reader = FrameReader::new(data.as_bytes(), 10);
        let frames = all_frames(&mut reader).await;
        assert!(matches!(&frames[..], [Inbound::Damaged { bytes: 100, .. }]), "{frames:?}");
    }

    #[tokio::test]
    async fn invalid_utf8_is_damaged_and_the_next_line_survives() {
        let mut reader = FrameReader::new(&b"\xff\xfe{\"id\":7}\n{\"ok\":true}\n"[..], 1024);
        let frames = all_frames(&mut reader).await;
        match &frames[0] {
            Inbound::Damaged { reason, prefix, bytes } => {
                assert_eq!(reason, NOT_UTF8_REASON);
                assert!(prefix.ends_with("{\"id\":7}"), "{prefix:?}");
                assert_eq!(*bytes, 10);
            }
            other => panic!("expected a damaged frame, got {other:?}"),
        }
        assert_eq!(frames[1], frame("{\"ok\":true}"));
        assert_eq!(frames.len(), 2);
    }

    #[tokio::test]
    async fn lines_split_across_reads_are_joined() {
        // A reader that yields one byte per read.
        let (client, mut server) = tokio::io::duplex(1);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server.write_all(b"{\"split\":true}\n\xe2\x82").await.unwrap();
            server.write_all(b"\xac\n").await.unwrap();
        });
        let mut reader = FrameReader::new(client, 64);
        assert_eq!(reader.next_frame().await.unwrap(), Some(frame("{\"split\":true}")));
        assert_eq!(reader.next_frame().await.unwrap(), Some(frame("€")));
        writer.await.unwrap();
        assert_eq!(reader.next_frame().await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_damaged_prefix_is_bounded() {
        let data = format!("{}\nok\n", "é".repeat(1000));
        let mut reader = FrameReader::new(data.as_bytes(), 100);
        let frames = all_frames(&mut reader).await;
        match &frames[0] {
            Inbound::Damaged { prefix, bytes, .. } => {
                assert!(prefix.len() <= DAMAGED_PREFIX_BYTES);
                assert!(prefix.starts_with('é'));
                assert_eq!(*bytes, 2000);
            }
            other => panic!("expected a damaged frame, got {other:?}"),
        }
        assert_eq!(frames[1], frame("ok"));
    }
}
