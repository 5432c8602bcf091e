//! The 50 MB result cases: each client in a process of its own
//! (`vs-rmcp --http-child CASE CLIENT ERA URL CALLS`), so that its memory
//! is its own.
//!
//! The child connects, makes one small call (what is set up lazily is not
//! counted), then for each of `CALLS` calls of 50 MB: resets the process's
//! resident high-water mark (`5` written to `/proc/self/clear_refs` makes
//! `VmHWM` the current `VmRSS`), reads `VmRSS`, times the call (sent,
//! received whole, checked, its result dropped), and reads `VmHWM`. The
//! peak is `VmHWM - VmRSS` before the call: the most resident memory the
//! call added at any moment, wherever it went (buffers, the parsed
//! message, the result, the runtime's tasks). The child prints the mean
//! seconds per call and the largest peak; the server is another process
//! and is not counted.
//!
//! What it cannot show: memory that was reserved but never touched
//! (virtual only), and a peak shorter than the kernel's accounting of RSS
//! (it is updated as pages fault in, so none is missed for memory
//! written).

use serde_json::json;
use std::time::Instant;

use super::session::Session;
use super::{Case, Client, HUGE_BYTES};
use crate::Era;

/// In the child: `calls` calls of the 50 MB `case`; prints "seconds peak".
pub(crate) async fn child(case: Case, client: Client, era: Era, url: &str, calls: usize) -> String {
    let url = super::url(url, case == Case::HugeSse, 1);
    let session = Session::open(client, era, &url, 1).await;
    let small = json!({ "text": "hi" });
    session.calls(1, 1, small.as_object().expect("an object")).await;
    let huge = json!({ "bytes": HUGE_BYTES });
    let huge = huge.as_object().expect("an object");
    let (mut seconds, mut peak) = (0.0, 0u64);
    for _ in 0..calls {
        reset_high_water();
        let before = status_kib("VmRSS:");
        let begun = Instant::now();
        session.calls(1, 1, huge).await;
        seconds += begun.elapsed().as_secs_f64();
        let high = status_kib("VmHWM:");
        peak = peak.max(high.saturating_sub(before) * 1024);
    }
    session.close().await;
    format!("{} {peak}", seconds / calls as f64)
}

/// Runs the child for `client` on `case`; its seconds per call and peak
/// bytes.
pub(crate) fn in_own_process(case: Case, client: Client, era: Era, url: &str, calls: usize) -> (f64, f64) {
    let me = std::env::current_exe().expect("the bench's path");
    let out = std::process::Command::new(me)
        .args(["--http-child", case.key(), client.key(), era.arg(), url, &calls.to_string()])
        .output()
        .expect("run the child");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut figures = text.split_whitespace().map(|f| f.parse::<f64>().expect("a number"));
    (figures.next().expect("seconds"), figures.next().expect("peak"))
}

fn reset_high_water() {
    std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs resets VmHWM");
}

/// A `kB` field of `/proc/self/status`.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a kB figure")
}
