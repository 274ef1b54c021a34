//! `onnxc serve --listen unix:PATH|tcp:127.0.0.1:PORT`: the compile daemon.

use super::{CmdResult, Failure};
use daemon::{addr, server, service};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// unix:PATH or tcp:HOST:PORT (port 0 picks a free one; the address is
    /// printed on stdout).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Allow a TCP address that is not loopback; needs --auth-token-file.
    #[arg(long)]
    pub allow_remote: bool,
    /// A file whose first line is the token every request (but `health`)
    /// must carry in its `token` field; compared in constant time.
    #[arg(long, value_name = "FILE")]
    pub auth_token_file: Option<PathBuf>,
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
    /// Shared cache tier and cross-daemon compile locks:
    /// redis://HOST:PORT/DB.
    #[arg(long, value_name = "URL")]
    pub cache: Option<String>,
    /// A file whose first line is the fleet secret (at least 16 bytes; the
    /// file readable by its owner only): shared entries carry an
    /// HMAC-SHA256 under it, and entries without a valid one are refused.
    #[arg(long, value_name = "FILE")]
    pub cache_key_file: Option<PathBuf>,
    /// A file whose first line is Redis's password (mode 600; else
    /// $ONNXC_REDIS_PASSWORD). A password in the --cache URL is refused:
    /// any local user sees it in `ps`.
    #[arg(long, value_name = "FILE")]
    pub cache_password_file: Option<PathBuf>,
    /// Use a shared tier that is not on loopback without --cache-key-file:
    /// whoever can write to that Redis then chooses the code this daemon
    /// serves.
    #[arg(long)]
    pub trust_shared_cache: bool,
    /// Larger artifacts are not stored in the shared tier (K/M/G).
    #[arg(long, default_value = "64M", value_parser = parse_size)]
    pub cache_max_entry: u64,
    /// Lifetime of a shared entry, in seconds.
    #[arg(long, default_value_t = 7.0 * 86400.0)]
    pub cache_ttl: f64,
    /// Lifetime of a shared compile lock, in milliseconds; renewed every
    /// third of it while the compile runs, so a dead holder's lock expires
    /// within this time.
    #[arg(long, default_value_t = 10_000)]
    pub cache_lock_ms: u64,
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
    /// Seconds to complete a request line after its first byte; then the
    /// connection is closed.
    #[arg(long, default_value_t = 30.0)]
    pub line_timeout: f64,
    /// With --auth-token-file: seconds a connection has to prove the token
    /// (a request carrying it, e.g. `auth`) before it is closed; until then
    /// its request lines are at most 8 KiB.
    #[arg(long, default_value_t = 10.0)]
    pub auth_timeout: f64,
    /// Seconds a reply may wait for the client to read it; then the
    /// connection is closed.
    #[arg(long, default_value_t = 30.0)]
    pub write_timeout: f64,
    /// Serve Prometheus metrics (`GET /metrics`) on unix:PATH or
    /// tcp:HOST:PORT; a non-loopback address needs --allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Bound of the request bytes buffered across all connections; a line
    /// that would pass it is answered `busy` (K/M/G).
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    pub max_buffered_bytes: u64,
}

pub use pipeline::session_cache::parse_size;

fn secs(s: f64, what: &str) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(s).map_err(|_| Failure::Io(format!("invalid {what} '{s}'")))
}

/// The fleet secret of `--cache-key-file`; without one, a Redis that is
/// not on this machine needs `--trust-shared-cache`.
fn shared_secret(args: &ServeArgs, url: &str) -> Result<Option<Vec<u8>>, Failure> {
    use daemon::{auth, shared};
    match &args.cache_key_file {
        Some(f) => Ok(Some(
            auth::read_secret(f, "--cache-key-file")
                .map_err(Failure::Io)?
                .into_bytes(),
        )),
        None if args.trust_shared_cache || shared::is_local(url) => Ok(None),
        None => Err(Failure::Usage(format!(
            "--cache '{}' is not on this machine: give --cache-key-file (entries \
             are then signed and checked) or --trust-shared-cache (whoever can write \
             to it chooses the code this daemon serves)",
            shared::redact(url)
        ))),
    }
}

/// Redis's password: from `--cache-password-file` or the environment,
/// never from the URL.
fn redis_password(args: &ServeArgs, url: &str) -> Result<Option<String>, Failure> {
    if daemon::shared::has_password(url) {
        return Err(Failure::Usage(
            "--cache: a password in the URL is visible to every local user (ps); put it in \
             --cache-password-file or $ONNXC_REDIS_PASSWORD"
                .into(),
        ));
    }
    match &args.cache_password_file {
        Some(f) => daemon::auth::read_private(f, "--cache-password-file", 1)
            .map(Some)
            .map_err(Failure::Io),
        None => Ok(std::env::var("ONNXC_REDIS_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty())),
    }
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
    let token = match &args.auth_token_file {
        Some(f) => Some(daemon::auth::read_secret(f, "--auth-token-file").map_err(Failure::Io)?),
        None if args.allow_remote => {
            return Err(Failure::Usage(
                "--allow-remote needs --auth-token-file: a daemon on the network must \
                 authenticate its clients"
                    .into(),
            ))
        }
        None => None,
    };
    let shared = match &args.cache {
        Some(url) if url.starts_with("redis://") => Some(daemon::shared::SharedConfig {
            url: url.clone(),
            max_entry: args.cache_max_entry,
            ttl: secs(args.cache_ttl, "--cache-ttl")?,
            lock_ttl: Duration::from_millis(args.cache_lock_ms.max(30)),
            secret: shared_secret(&args, url)?,
            password: redis_password(&args, url)?,
        }),
        Some(url) => {
            return Err(Failure::Usage(format!(
                "--cache '{url}': only redis://HOST:PORT/DB is supported"
            )))
        }
        None => None,
    };
    let cfg = service::Config {
        root,
        workers: args.workers.unwrap_or(cores).max(1),
        queue: args.queue,
        cache_bytes: args.cache_bytes,
        cache_dir: args.cache_dir.clone(),
        shared,
        max_model_bytes: args.max_model_bytes,
        request_timeout: secs(args.request_timeout, "--request-timeout")?,
        token,
        tcp: matches!(listen, addr::Addr::Tcp(_)),
    };
    let opts = server::ServerOptions {
        max_connections: args.max_connections.max(1),
        idle_timeout: secs(args.idle_timeout, "--idle-timeout")?,
        line_timeout: secs(args.line_timeout, "--line-timeout")?,
        max_buffered: args.max_buffered_bytes,
        auth_timeout: secs(args.auth_timeout, "--auth-timeout")?,
        write_timeout: secs(args.write_timeout, "--write-timeout")?,
    };
    let svc = service::Service::new(cfg).map_err(|e| Failure::Io(format!("cannot start: {e}")))?;
    let listener = addr::Listener::bind(&listen, args.allow_remote).map_err(Failure::Io)?;
    let svc = Arc::new(svc);
    if let Some(m) = &args.metrics_listen {
        let a = addr::Addr::parse(m).map_err(Failure::Io)?;
        let l = addr::Listener::bind(&a, args.allow_remote).map_err(Failure::Io)?;
        tracing::info!(addr = %l.display(), "metrics");
        daemon::metrics::start(svc.clone(), l).map_err(|e| Failure::Io(format!("metrics: {e}")))?;
    }
    server::serve(svc, listener, &opts).map_err(|e| Failure::Io(format!("serve: {e}")))
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
