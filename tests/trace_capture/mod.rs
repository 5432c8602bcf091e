//! Tracing output captured as a user would see it: tracing-subscriber's
//! fmt layer, for an `EnvFilter` directive, writing into a buffer the test
//! reads. The subscriber is the current thread's (`set_default`): a test
//! that checks for lines must not share its binary with tests that hit the
//! same callsites on other threads without one (see tests/observability.rs).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

/// Captures everything a tracing subscriber writes.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    pub fn lines_with(&self, needle: &str) -> Vec<String> {
        self.text().lines().filter(|l| l.contains(needle)).map(String::from).collect()
    }
}

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Capture {
    type Writer = Capture;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// A subscriber for `filter` (an `EnvFilter` directive, as in `RUST_LOG`)
/// writing into `capture`, set for the current thread.
pub fn capture(filter: &str) -> (Capture, tracing::subscriber::DefaultGuard) {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(capture.clone())
        .with_ansi(false)
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    (capture, guard)
}
