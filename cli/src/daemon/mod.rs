//! `onnxc serve`: a long-running compile daemon speaking newline-delimited
//! JSON (docs/DAEMON.md), with a content-addressed artifact cache.

pub mod addr;
pub mod auth;
pub mod b64;
pub mod cache;
pub mod files;
pub mod flight;
pub mod pool;
pub mod protocol;
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
