//! `onnxc serve`: a long-running compile daemon speaking newline-delimited
//! JSON (docs/DAEMON.md), with a content-addressed artifact cache.

pub mod addr;
pub mod auth;
pub mod b64;
pub mod build_id;
pub mod cache;
pub mod entry;
pub mod files;
pub mod flight;
pub mod gate;
pub mod metrics;
pub mod pool;
pub mod protocol;
pub mod reaper;
pub mod server;
pub mod service;
pub mod shared;
pub mod work;

/// A `kB` field of /proc/self/status (VmRSS, VmHWM), in KiB.
pub fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// Bytes the allocator has handed out and not had back (glibc's
/// `mallinfo2`: small blocks plus mmapped ones). Unlike the RSS it does
/// not move with arena fragmentation, so a leak shows as a trend.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_bytes() -> Option<u64> {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let info = unsafe { libc::mallinfo2() };
    u64::try_from(info.uordblks.saturating_add(info.hblkhd)).ok()
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_bytes() -> Option<u64> {
    None
}
