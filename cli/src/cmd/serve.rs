//! `onnxc serve --listen unix:PATH|tcp:127.0.0.1:PORT`: the compile daemon.

use super::{CmdResult, Failure};
use crate::daemon::{addr, server, service};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// unix:PATH or tcp:HOST:PORT (port 0 picks a free one; the address is
    /// printed on stdout).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Allow a TCP address that is not loopback (the protocol has no
    /// authentication).
    #[arg(long)]
    pub allow_remote: bool,
    /// Paths in requests (models, outputs) must resolve inside this
    /// directory [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Compile worker threads [default: number of cores].
    #[arg(long)]
    pub workers: Option<usize>,
    /// Compiles waiting for a worker before requests get `busy`.
    #[arg(long, default_value_t = 16)]
    pub queue: usize,
    /// Bound of the artifact cache (K/M/G suffixes).
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    pub cache_bytes: u64,
    /// Persist cache entries here (checksummed, written atomically).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Largest model accepted, by path or inline (K/M/G suffixes).
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    pub max_model_bytes: u64,
    /// Per-request deadline in seconds.
    #[arg(long, default_value_t = 120.0)]
    pub request_timeout: f64,
    /// Simultaneous client connections; more get `busy`.
    #[arg(long, default_value_t = 64)]
    pub max_connections: usize,
    /// Close connections idle for this many seconds.
    #[arg(long, default_value_t = 600.0)]
    pub idle_timeout: f64,
}

/// `123`, `64K`, `256M`, `2G` (binary multiples; `KiB`/`MiB`/`GiB` too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| format!("invalid size '{s}'"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("invalid size unit in '{s}' (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size '{s}' is too large"))
}

fn secs(s: f64, what: &str) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(s).map_err(|_| Failure::Io(format!("invalid {what} '{s}'")))
}

pub fn run(args: ServeArgs) -> CmdResult {
    let listen = addr::Addr::parse(&args.listen).map_err(Failure::Io)?;
    let root = match &args.root {
        Some(r) => r.clone(),
        None => std::env::current_dir()
            .map_err(|e| Failure::Io(format!("no current directory: {e}")))?,
    };
    let root = root
        .canonicalize()
        .map_err(|e| super::io_err("open root", &root, e))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cfg = service::Config {
        root,
        workers: args.workers.unwrap_or(cores).max(1),
        queue: args.queue,
        cache_bytes: args.cache_bytes,
        cache_dir: args.cache_dir.clone(),
        max_model_bytes: args.max_model_bytes,
        request_timeout: secs(args.request_timeout, "--request-timeout")?,
    };
    let opts = server::ServerOptions {
        max_connections: args.max_connections.max(1),
        idle_timeout: secs(args.idle_timeout, "--idle-timeout")?,
    };
    let svc = service::Service::new(cfg).map_err(|e| Failure::Io(format!("cannot start: {e}")))?;
    let listener = addr::Listener::bind(&listen, args.allow_remote).map_err(Failure::Io)?;
    server::serve(Arc::new(svc), listener, &opts).map_err(|e| Failure::Io(format!("serve: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes() {
        assert_eq!(super::parse_size("256M"), Ok(256 << 20));
        assert_eq!(super::parse_size("12"), Ok(12));
        assert_eq!(super::parse_size("1 GiB"), Ok(1 << 30));
        assert!(super::parse_size("1T").is_err());
        assert!(super::parse_size("M").is_err());
    }
}
