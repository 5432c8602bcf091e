//! The process group of a stdio server: who is still alive in it, read
//! from `/proc`, to show that closing a transport leaves no process behind.

use std::time::Duration;

/// Live (not zombie) processes whose process group is `pgid`, from
/// `/proc/*/stat`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parens.
        let Some(close) = stat.rfind(')') else { continue };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let (Some(state), Some(pgrp)) = (fields.first(), fields.get(2)) else { continue };
        if pgrp.parse::<u32>() == Ok(pgid) && !matches!(*state, "Z" | "X") {
            found.push(pid);
        }
    }
    found
}

/// Waits (bounded) until `pgid` has no live member; returns what is left.
pub async fn wait_group_empty(pgid: u32) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left = group_members(pgid);
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
