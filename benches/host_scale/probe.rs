//! What the bench reads of its own process (Linux): resident and peak
//! memory from `/proc/self/status`, CPU time, its child processes from
//! `/proc/*/stat`, and the open-file limit it raises.

use std::time::Duration;

/// A `kB` field of `/proc/self/status`, in bytes.
fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// This process's threads now (the runtime's workers and its blocking
/// pool, whose idle threads live on for 10 s).
pub fn threads() -> u64 {
    status_kb("Threads") / 1024
}

/// Resident memory now (`VmRSS`), in bytes.
pub fn rss() -> u64 {
    status_kb("VmRSS")
}

/// Resident memory after glibc returns what it can of its free memory to
/// the system (`malloc_trim`): closer to what is live than [`rss`], which
/// also counts what the allocator kept of freed blocks.
pub fn rss_trimmed() -> u64 {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory of glibc's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
    rss()
}

/// The highest resident memory since the last [`reset_peak`] (`VmHWM`).
pub fn peak() -> u64 {
    status_kb("VmHWM")
}

/// Resets `VmHWM` to the current resident memory (Linux 4.0+: `5` into
/// `/proc/self/clear_refs`). Each case also runs in a fresh process, so a
/// kernel without it only makes the peak include the process's start.
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The CPU time of the whole process (every thread).
pub fn cpu() -> Duration {
    let t =
        nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID).expect("process CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

/// This process's children, alive and zombie: (alive, zombies), not
/// counting the process `except` (the HTTP server the bench started).
pub fn children(except: Option<u32>) -> (usize, usize) {
    let me = std::process::id();
    let (mut alive, mut zombies) = (0, 0);
    let Ok(dir) = std::fs::read_dir("/proc") else { return (0, 0) };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if Some(pid) == except {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // pid (comm) state ppid …; comm may hold spaces and parentheses.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        let mut fields = rest.split_whitespace();
        let (state, ppid) = (fields.next(), fields.next().and_then(|p| p.parse::<u32>().ok()));
        if ppid == Some(me) {
            if state == Some("Z") {
                zombies += 1;
            } else {
                alive += 1;
            }
        }
    }
    (alive, zombies)
}

/// Raises the soft open-file limit to the hard one (at most 65,536): 1,000
/// stdio children hold three pipes each in the bench, and the HTTP server
/// a socket per connection. Returns the soft limit in force.
pub fn raise_open_files() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return 0 };
    let want = hard.min(65_536);
    if soft < want && setrlimit(Resource::RLIMIT_NOFILE, want, hard).is_ok() {
        return want;
    }
    soft
}

/// This process's open sockets and pipes, from `/proc/self/fd`.
pub fn sockets_and_pipes() -> (usize, usize) {
    let (mut sockets, mut pipes) = (0, 0);
    for entry in std::fs::read_dir("/proc/self/fd").into_iter().flatten().flatten() {
        match std::fs::read_link(entry.path()).map(|t| t.to_string_lossy().into_owned()) {
            Ok(t) if t.starts_with("socket:") => sockets += 1,
            Ok(t) if t.starts_with("pipe:") => pipes += 1,
            _ => {}
        }
    }
    (sockets, pipes)
}
