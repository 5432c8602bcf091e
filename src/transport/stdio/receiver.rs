//! [`StdioReceiver`]: the reading half of a stdio connection, frames read
//! from the child's stdout within the frame bound, with a message split
//! over lines recognised, and a stdout that ends explained.
//!
//! Apart from the sender because the two halves run independently (a read
//! never waits on a write).

use async_trait::async_trait;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::process::ChildStdout;

use super::process::Shared;
use crate::error::Error;
use crate::transport::framing::{FrameReader, SplitCheck};
use crate::transport::{Inbound, MessageReceiver};

pub(super) struct StdioReceiver {
    pub(super) reader: FrameReader<ChildStdout>,
    pub(super) split: SplitCheck,
    /// What the split check handed back and is not yet delivered (at most
    /// two items).
    pub(super) ready: VecDeque<Inbound>,
    pub(super) shared: Arc<Shared>,
    pub(super) finished: bool,
}

#[async_trait]
impl MessageReceiver for StdioReceiver {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        // Each turn delivers, or reads one frame from the child, or ends;
        // the state changes only after a read completes, so this stays
        // cancel-safe.
        let end = loop {
            if let Some(ready) = self.ready.pop_front() {
                return Ok(Some(ready));
            }
            if self.finished {
                return Ok(None);
            }
            let end = match self.reader.next_frame().await {
                Ok(Some(inbound)) => {
                    self.split.feed(inbound, &mut self.ready);
                    continue;
                }
                Ok(None) => "closed its stdout".to_string(),
                Err(err) => format!("stdout read failed: {err}"),
            };
            // A split message cut short by the end is reported before it
            // (`ready` is empty here: everything in it was delivered).
            self.split.finish(&mut self.ready);
            if self.ready.is_empty() {
                break end;
            }
        };
        self.finished = true;
        if self.shared.closing.load(Ordering::SeqCst) {
            return Ok(None);
        }
        Err(self.shared.ended(&end).await)
    }
}
