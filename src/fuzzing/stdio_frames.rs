//! The stdio frame decoder: `FrameReader` over arbitrary bytes arriving in
//! arbitrary pieces, then `SplitCheck` over its frames. Every frame stays
//! within its bound, nothing holds more than the bound, every damaged
//! frame's prefix is bounded, a split reply fails only with `framing`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, ReadBuf};

use crate::error::FailureClass;
use crate::transport::framing::{FrameReader, SplitCheck};
use crate::transport::{Inbound, DAMAGED_PREFIX_BYTES};

/// Yields its bytes at most `step` at a time.
struct Pieces<'a> {
    data: &'a [u8],
    step: usize,
}

impl AsyncRead for Pieces<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.step.min(self.data.len()).min(buf.remaining());
        let (head, tail) = self.data.split_at(n);
        buf.put_slice(head);
        self.data = tail;
        Poll::Ready(Ok(()))
    }
}

/// Polls a future that never waits (its reader is in memory).
fn ready<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("an in-memory read waited"),
    }
}

fn check(item: &Inbound, max: usize) {
    match item {
        Inbound::Frame(text) => {
            assert!(text.len() <= max, "a frame of {} bytes over {max}", text.len());
            assert!(!text.contains('\n'));
            // Blank means ASCII whitespace only (a vertical tab is not).
            assert!(!text.bytes().all(|b| b.is_ascii_whitespace()));
        }
        Inbound::Damaged { prefix, .. } => assert!(prefix.len() <= DAMAGED_PREFIX_BYTES),
        Inbound::RequestFailed { class, .. } => assert_eq!(*class, FailureClass::Framing),
        Inbound::SessionExpired { .. } | Inbound::Session(_) => panic!("stdio knows no session"),
        Inbound::Dropped { .. } => panic!("stdio has one stream: nothing arrives on another's"),
    }
}

/// Reads `data` (a bound, a piece size, then the bytes) and checks every
/// frame.
pub fn run(data: &[u8]) {
    let [bound, step, rest @ ..] = data else { return };
    let max = 1 + usize::from(*bound) * 4;
    let step = 1 + usize::from(*step) * 64;
    // Lines longer than half the bound are read straight into the line
    // (a path the reader otherwise takes from 64 KiB on).
    let mut reader = FrameReader::new(Pieces { data: rest, step }, max).reading_into_lines_from(max / 2);
    let mut split = SplitCheck::new(max);
    let mut out = Vec::new();
    // Bounded: every frame consumes at least one byte of the input.
    for _ in 0..=rest.len() {
        match ready(reader.next_frame()) {
            Ok(Some(item)) => {
                check(&item, max);
                split.feed(item, &mut out);
            }
            Ok(None) => break,
            Err(e) => panic!("an in-memory read failed: {e}"),
        }
        assert!(out.len() <= 2 * (rest.len() + 1));
    }
    assert_eq!(ready(reader.next_frame()).unwrap(), None, "the end stays the end");
    split.finish(&mut out);
    assert!(!split.is_joining());
    for item in &out {
        check(item, max);
    }
    assert!(reader.peak_buffered() <= max + 1, "held {} of a {max} bound", reader.peak_buffered());
}
