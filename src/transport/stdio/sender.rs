//! [`StdioSender`]: the writing half of a stdio connection (one line per
//! message on the child's stdin), and closing: stdin first, then `SIGTERM`
//! and `SIGKILL` to the whole process group.
//!
//! Apart from the receiver because the two halves run independently (a
//! write never waits on a read).

use async_trait::async_trait;
use nix::sys::signal::Signal;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, OnceCell};
use tokio::time::{timeout_at, Instant};

use super::process::Shared;
use crate::error::{Error, FailureClass};
use crate::transport::{BatchError, MessageSender};

pub(super) struct StdinState {
    pub(super) stdin: Option<ChildStdin>,
    /// A write began and did not finish (its future was dropped): the child
    /// may hold part of a line, which the next send ends first.
    pub(super) dirty: bool,
}

/// How long a child that was left running abandoned requests has to exit
/// at the end of its input before its group is signalled: an idle server
/// exits within milliseconds of it.
const ABANDONED_EXIT_WAIT: Duration = Duration::from_millis(100);

pub(super) struct StdioSender {
    pub(super) stdin: Mutex<StdinState>,
    pub(super) closed: OnceCell<()>,
    pub(super) shared: Arc<Shared>,
}

impl StdioSender {
    fn closed_error(&self, detail: &str) -> Error {
        Error::new(FailureClass::TransportClosed, format!("{}: {detail}", self.shared.origin))
            .with_binding(&self.shared.binding)
    }

    /// Ends the child and its group; `polite` is how long the child has to
    /// exit at the end of its input before the group is signalled.
    async fn shutdown(&self, polite: Duration) {
        let shared = &*self.shared;
        shared.closing.store(true, Ordering::SeqCst);
        let grace = shared.grace;

        // 1. End stdin, the polite request to exit. A send stuck on a full
        // pipe holds the lock; the signals below unstick it.
        let deadline = Instant::now() + polite;
        if let Ok(mut state) = timeout_at(deadline, self.stdin.lock()).await {
            if let Some(mut stdin) = state.stdin.take() {
                let _ = timeout_at(deadline, stdin.shutdown()).await;
            }
        }
        let _ = timeout_at(deadline, self.shared.exit.clone().wait_for(Option::is_some)).await;

        // 2. Whatever is left of the group gets SIGTERM, even if the child
        // itself has gone: what it started must not outlive it.
        if !shared.wait_group_gone(Instant::now()).await {
            shared.signal_all(Signal::SIGTERM);
            // 3. Then SIGKILL.
            if !shared.wait_group_gone(Instant::now() + grace).await {
                shared.signal_all(Signal::SIGKILL);
            }
        }

        // Reap.
        if shared.wait_exit(grace).await.is_none() {
            tracing::warn!(origin = %shared.origin, "stdio server did not exit after SIGKILL");
        }
        if shared.wait_group_gone(Instant::now() + grace).await {
            shared.group.released.store(true, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl MessageSender for StdioSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        if message.contains('\n') {
            return Err(Error::new(
                FailureClass::Framing,
                "message contains a newline, which would split its stdio frame",
            )
            .with_binding(&self.shared.binding));
        }
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(self.closed_error("transport closed"));
        }
        let mut state = self.stdin.lock().await;
        let StdinState { stdin, dirty } = &mut *state;
        let Some(stdin) = stdin.as_mut() else {
            return Err(self.closed_error("transport closed"));
        };
        let write_failed =
            |e: std::io::Error| self.closed_error(&format!("writing to the server failed: {e}"));
        if *dirty {
            // End the line a cancelled send left unfinished; the server skips
            // it as one damaged frame.
            stdin.write_all(b"\n").await.map_err(write_failed)?;
        }
        *dirty = true;
        let mut frame = message.into_bytes();
        frame.push(b'\n');
        stdin.write_all(&frame).await.map_err(write_failed)?;
        stdin.flush().await.map_err(write_failed)?;
        *dirty = false;
        Ok(())
    }

    /// One lock and one buffer for the whole batch, written with as few
    /// system calls as the pipe takes; the bytes written tell which
    /// messages were delivered whole.
    async fn send_batch(&self, messages: &[String]) -> Result<(), BatchError> {
        if let Some(bad) = messages.iter().position(|m| m.contains('\n')) {
            let error = Error::new(
                FailureClass::Framing,
                "message contains a newline, which would split its stdio frame",
            )
            .with_binding(&self.shared.binding);
            return Err(BatchError { sent: bad, error });
        }
        let none_sent = |error| BatchError { sent: 0, error };
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(none_sent(self.closed_error("transport closed")));
        }
        let mut state = self.stdin.lock().await;
        let StdinState { stdin, dirty } = &mut *state;
        let Some(stdin) = stdin.as_mut() else {
            return Err(none_sent(self.closed_error("transport closed")));
        };
        let write_failed =
            |e: std::io::Error| self.closed_error(&format!("writing to the server failed: {e}"));
        if *dirty {
            stdin.write_all(b"\n").await.map_err(|e| none_sent(write_failed(e)))?;
        }
        *dirty = true;
        let mut frames = Vec::with_capacity(messages.iter().map(|m| m.len() + 1).sum());
        let mut ends = Vec::with_capacity(messages.len());
        for message in messages {
            frames.extend_from_slice(message.as_bytes());
            frames.push(b'\n');
            ends.push(frames.len());
        }
        let mut written = 0;
        while written < frames.len() {
            let failed = match stdin.write(&frames[written..]).await {
                Ok(0) => Some(std::io::Error::from(std::io::ErrorKind::WriteZero)),
                Ok(n) => {
                    written += n;
                    None
                }
                Err(e) => Some(e),
            };
            if let Some(e) = failed {
                let sent = ends.iter().take_while(|end| **end <= written).count();
                return Err(BatchError { sent, error: write_failed(e) });
            }
        }
        stdin.flush().await.map_err(|e| BatchError { sent: messages.len(), error: write_failed(e) })?;
        *dirty = false;
        Ok(())
    }

    /// A frame (the message and its newline) of at most `PIPE_BUF` bytes,
    /// written with one non-blocking `write`: a pipe takes such a write
    /// whole or not at all (POSIX), so the child never sees part of it. A
    /// longer message, a pipe that is full, a send in progress (the lock is
    /// held) or one left unfinished: declined, for the writer.
    fn try_send(&self, message: String) -> Result<(), String> {
        if message.len() >= nix::libc::PIPE_BUF
            || message.contains('\n')
            || self.shared.closing.load(Ordering::SeqCst)
        {
            return Err(message);
        }
        let Ok(mut state) = self.stdin.try_lock() else { return Err(message) };
        let StdinState { stdin: Some(stdin), dirty } = &mut *state else { return Err(message) };
        if *dirty {
            return Err(message);
        }
        let mut frame = message.into_bytes();
        frame.push(b'\n');
        // Nothing waits on this waker: a pipe with no room declines, and
        // the writer, which polls it next, registers its own.
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(stdin).poll_write(&mut cx, &frame) {
            Poll::Ready(Ok(n)) if n == frame.len() => return Ok(()),
            // Not on a pipe (see above); should a reader of another kind
            // take part of it, the writer ends that line first, as after a
            // cancelled send, and sends the message whole.
            Poll::Ready(Ok(n)) if n > 0 => *dirty = true,
            _ => {}
        }
        frame.pop();
        Err(String::from_utf8(frame).expect("it was a String"))
    }

    async fn close(&self) -> Result<(), Error> {
        self.closed.get_or_init(|| self.shutdown(self.shared.grace)).await;
        Ok(())
    }

    /// A child still running abandoned work would not exit at the end of
    /// its input until that work is done: it gets a moment to exit (an idle
    /// one does, within milliseconds), then `SIGTERM`.
    async fn close_abandoning(&self) -> Result<(), Error> {
        let polite = self.shared.grace.min(ABANDONED_EXIT_WAIT);
        self.closed.get_or_init(|| self.shutdown(polite)).await;
        Ok(())
    }
}
