//! Tracing output captured as a user would see it: tracing-subscriber's
//! fmt layer, for an `EnvFilter` directive, writing into a buffer the test
//! reads.
//!
//! - [`capture`]: the current thread's subscriber (`set_default`). A test
//!   that checks for lines must not share its binary with tests that hit the
//!   same callsites on other threads without one (tracing's process-wide
//!   callsite cache can drop them; see tests/observability/spans.rs).
//! - [`global`]: one process-wide subscriber for the whole test binary, for
//!   checks that something never shows: it sees every event of every test
//!   on every thread, so an absence check cannot pass for want of capture.

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

/// The process-wide subscriber at TRACE, installed by the first caller in
/// this test binary, and everything it wrote (every test's events, from
/// every thread).
pub fn global() -> Capture {
    static GLOBAL: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    GLOBAL
        .get_or_init(|| {
            let capture = Capture::default();
            let subscriber = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
                .with_writer(capture.clone())
                .with_ansi(false)
                .finish();
            tracing::subscriber::set_global_default(subscriber)
                .expect("no other global subscriber in this test binary");
            capture
        })
        .clone()
}
