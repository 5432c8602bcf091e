//! The process group of a stdio server: who is still alive in it, read
//! from `/proc`, to show that closing a transport leaves no process behind.

use std::time::Duration;

/// Every live (not zombie) process, from `/proc/*/stat`: (pid, parent,
/// process group).
fn live_processes() -> Vec<(u32, u32, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parens.
        let Some(close) = stat.rfind(')') else { continue };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let (Some(state), Some(ppid), Some(pgrp)) = (fields.first(), fields.get(1), fields.get(2)) else {
            continue;
        };
        if !matches!(*state, "Z" | "X") {
            found.push((pid, ppid.parse().unwrap_or(0), pgrp.parse().unwrap_or(0)));
        }
    }
    found
}

/// Live processes whose process group is `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    live_processes().into_iter().filter(|(_, _, group)| *group == pgid).map(|(pid, _, _)| pid).collect()
}

/// Live processes whose parent is `parent`, with their process groups.
pub fn children_of(parent: u32) -> Vec<(u32, u32)> {
    live_processes()
        .into_iter()
        .filter(|(_, ppid, _)| *ppid == parent)
        .map(|(pid, _, group)| (pid, group))
        .collect()
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
