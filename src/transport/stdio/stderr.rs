//! The child's stderr: drained to its end by a task, so that a chatty
//! child never blocks on a full pipe; each line bounded, passed to the
//! diagnostics callback, and the last ones kept to explain a child that
//! dies or does not finish starting.
//!
//! Apart from the pipes of the protocol because stderr is not the
//! protocol: it is read whole, never parsed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex as StdMutex};
use tokio::process::ChildStderr;
use tokio::sync::watch;

use super::{STDERR_LINE_BYTES, STDERR_TAIL_LINES};
use crate::error::truncate_utf8;
use crate::transport::framing::read_ready;

/// The last stderr lines of one child.
pub(super) type StderrTail = Arc<StdMutex<VecDeque<String>>>;

/// The most recent lines of `tail` that fit in `max` bytes, oldest first and
/// joined by ` | ` (the last one cut when even it does not fit), or `None`
/// when there are none.
pub(super) fn summarize_tail(tail: &StdMutex<VecDeque<String>>, max: usize) -> Option<String> {
    let tail = tail.lock().unwrap_or_else(|e| e.into_inner());
    let mut kept = Vec::new();
    let mut used = 0;
    for line in tail.iter().rev() {
        if used + line.len() + 3 > max {
            if kept.is_empty() {
                let mut cut = line.clone();
                truncate_utf8(&mut cut, max);
                kept.push(cut);
            }
            break;
        }
        used += line.len() + 3;
        kept.push(line.clone());
    }
    if kept.is_empty() {
        return None;
    }
    kept.reverse();
    Some(kept.join(" | "))
}

/// Reads the child's stderr to its end, keeping the tail and feeding
/// diagnostics. Never stops reading early, so the child never blocks on it.
pub(super) async fn drain_stderr(
    mut stderr: ChildStderr,
    tail: Arc<StdMutex<VecDeque<String>>>,
    mut diagnostics: Option<Arc<dyn Fn(String) + Send + Sync>>,
    done: watch::Sender<bool>,
) {
    let mut line = StderrLine::default();
    loop {
        // No buffer is held while the child is quiet.
        let read = read_ready(&mut stderr, |mut chunk| {
            let n = chunk.len();
            while let Some(pos) = memchr::memchr(b'\n', chunk) {
                line.push(&chunk[..pos]);
                line.emit(&tail, &mut diagnostics);
                chunk = &chunk[pos + 1..];
            }
            line.push(chunk);
            n
        });
        if !matches!(read.await, Ok(n) if n > 0) {
            break;
        }
    }
    line.emit(&tail, &mut diagnostics);
    done.send_replace(true);
}

#[derive(Default)]
struct StderrLine {
    bytes: Vec<u8>,
    cut: bool,
}

impl StderrLine {
    fn push(&mut self, piece: &[u8]) {
        let room = STDERR_LINE_BYTES - self.bytes.len();
        if piece.len() > room {
            self.cut = true;
        }
        self.bytes.extend_from_slice(&piece[..room.min(piece.len())]);
    }

    fn emit(
        &mut self,
        tail: &StdMutex<VecDeque<String>>,
        diagnostics: &mut Option<Arc<dyn Fn(String) + Send + Sync>>,
    ) {
        if self.bytes.last() == Some(&b'\r') {
            self.bytes.pop();
        }
        let blank = self.bytes.iter().all(u8::is_ascii_whitespace);
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        self.bytes.clear();
        if std::mem::take(&mut self.cut) {
            truncate_utf8(&mut text, STDERR_LINE_BYTES - '…'.len_utf8());
            text.push('…');
        } else if blank {
            return;
        }
        {
            let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text.clone());
        }
        if let Some(callback) = diagnostics {
            let callback = callback.clone();
            // A panicking callback must not stop the drain (the child would
            // then block on a full pipe): it is dropped instead.
            let panicked =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || callback(text))).is_err();
            if panicked {
                tracing::warn!("the diagnostics callback panicked; stderr lines are no longer passed to it");
                *diagnostics = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_lines_are_bounded() {
        let tail = StdMutex::new(VecDeque::new());
        let mut diagnostics = None;
        let mut line = StderrLine::default();
        line.push(&[b'e'; 3000]);
        line.push(b"more");
        line.emit(&tail, &mut diagnostics);
        for i in 0..100 {
            line.push(format!("line {i}\r").as_bytes());
            line.emit(&tail, &mut diagnostics);
            line.push(b"  ");
            line.emit(&tail, &mut diagnostics);
        }
        let tail = tail.into_inner().unwrap();
        assert_eq!(tail.len(), STDERR_TAIL_LINES);
        assert_eq!(tail.back().unwrap(), "line 99");
        assert!(tail.iter().all(|l| l.len() <= STDERR_LINE_BYTES));
    }
}
