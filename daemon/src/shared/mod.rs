//! The shared cache tier on Redis (`--cache redis://HOST:PORT/DB`), behind
//! the memory LRU and `--cache-dir`, in the manner of sccache's remote
//! backends. Several daemons behind a load balancer share it:
//!
//! * `onnxc:a:<key>` holds an artifact under its content address (the
//!   request's cache key), prefixed with a magic and a tag (`entry`):
//!   HMAC-SHA256 under the fleet secret of `--cache-key-file`, so a
//!   forged or moved entry is refused, else the payload's sha256, so a
//!   torn or foreign value is detected; entries larger than
//!   `--cache-max-entry` are not stored; every entry has a TTL.
//! * `onnxc:l:<key>` is the compile lock (`SET NX PX` with a random token,
//!   `locks`): the daemon holding it compiles; the others wait for the
//!   artifact and answer `joined`. The holder renews its locks every third
//!   of their lifetime; a holder that dies stops renewing, its lock
//!   expires and a waiter takes over. A value there that is not a live
//!   onnxc lock is ignored after one lock lifetime.
//!
//! Redis is never needed to serve: when it is unreachable every call
//! returns "unavailable" at once, the daemon keeps serving from its local
//! tiers, logs the outage once, and retries with a growing backoff.

mod locks;
pub use locks::Holder;

use super::cache::{hex, Key};
use super::entry::{self, Refused};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Connect timeout: Redis is expected nearby.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// Read/write timeout of one socket call: a live Redis answers within it
/// (a large artifact moves in many calls), a hung one is given up on and
/// the tier marked down, not waited for request after request.
const IO_TIMEOUT: Duration = Duration::from_secs(1);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 8;

/// The value only if it is at most ARGV[1] bytes: 0 when larger (a value
/// another writer stored is never read whole), nil when absent.
const GET_BOUNDED: &str = "local n = redis.call('strlen', KEYS[1]) \
     if n == 0 then return false end \
     if n > tonumber(ARGV[1]) then return 0 end \
     return redis.call('get', KEYS[1])";

pub struct SharedConfig {
    pub url: String,
    /// Larger artifacts are not stored in Redis.
    pub max_entry: u64,
    pub ttl: Duration,
    pub lock_ttl: Duration,
    /// The fleet secret entries are signed under (`--cache-key-file`).
    pub secret: Option<Vec<u8>>,
    /// Redis's password (`--cache-password-file`, `$ONNXC_REDIS_PASSWORD`):
    /// never in the URL, which `ps` shows.
    pub password: Option<String>,
}

#[derive(Default)]
pub struct SharedStats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub puts: AtomicU64,
    pub too_large: AtomicU64,
    pub corrupt: AtomicU64,
    /// Entries that failed authentication under the fleet secret.
    pub forged: AtomicU64,
    /// Signed entries this daemon, without the secret, cannot check.
    pub unverifiable: AtomicU64,
    pub errors: AtomicU64,
    /// Commands Redis answered with an error (OOM under `maxmemory`, a
    /// read-only replica): skipped; the tier stays up.
    pub refused: AtomicU64,
    /// Artifacts whose store was refused, handed to waiting daemons under
    /// a short lifetime instead (`locks::HAND_OFF`).
    pub handoffs: AtomicU64,
    /// Pooled connections found closed (a Redis restart), retried once.
    pub reconnects: AtomicU64,
    /// Flights that found another daemon's lock and waited for it.
    pub lock_waits: AtomicU64,
    /// Locks taken after waiting (the holder failed, gave up or died).
    pub takeovers: AtomicU64,
    /// Values under a lock key that were not a live onnxc lock, ignored.
    pub foreign_locks: AtomicU64,
    pub outages: AtomicU64,
}

/// What `try_lock` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Lock {
    Acquired,
    /// Another daemon is compiling this key.
    Held,
    /// Redis is unreachable: compile locally.
    Unavailable,
}

struct Health {
    down: bool,
    next_try: Instant,
    backoff: Duration,
}

pub struct Shared {
    client: redis::Client,
    cfg: SharedConfig,
    idle: Mutex<Vec<redis::Connection>>,
    health: Mutex<Health>,
    /// One caller at a time probes a Redis that is down.
    probing: AtomicBool,
    /// Locks this daemon holds: key → lock value.
    held: Mutex<HashMap<Key, String>>,
    token_base: String,
    token_seq: AtomicU64,
    /// Redis refused script flags (before 7): locks are a plain SET.
    legacy_redis: AtomicBool,
    pub stats: SharedStats,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Shared {
    /// Checks the URL; does not connect (Redis may come up later).
    pub fn new(cfg: SharedConfig) -> Result<Shared, String> {
        use redis::IntoConnectionInfo;
        let invalid = |e: redis::RedisError| format!("invalid --cache '{}': {e}", redact(&cfg.url));
        let mut info = cfg.url.as_str().into_connection_info().map_err(invalid)?;
        if let Some(p) = &cfg.password {
            let settings = info.redis_settings().clone().set_password(p);
            info = info.set_redis_settings(settings);
        }
        let client = redis::Client::open(info).map_err(invalid)?;
        Ok(Shared {
            client,
            cfg,
            idle: Mutex::new(Vec::new()),
            health: Mutex::new(Health {
                down: false,
                next_try: Instant::now(),
                backoff: BACKOFF_MIN,
            }),
            probing: AtomicBool::new(false),
            held: Mutex::new(HashMap::new()),
            token_base: random_hex(),
            token_seq: AtomicU64::new(0),
            legacy_redis: AtomicBool::new(false),
            stats: SharedStats::default(),
        })
    }

    /// Entries are signed under a fleet secret.
    pub fn signed(&self) -> bool {
        self.cfg.secret.is_some()
    }

    pub fn lock_ttl(&self) -> Duration {
        self.cfg.lock_ttl
    }

    pub fn is_up(&self) -> bool {
        !lock(&self.health).down
    }

    pub fn locks_held(&self) -> usize {
        lock(&self.held).len()
    }

    /// The URL without a password, for stats and logs.
    pub fn display_url(&self) -> String {
        redact(&self.cfg.url)
    }

    /// Runs one exchange on a pooled connection; `None` when Redis is down
    /// (or went down during the call, which then starts the backoff) or
    /// refused the command (which does not).
    fn with_conn<T>(
        &self,
        f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Option<T> {
        let probe = {
            let h = lock(&self.health);
            if h.down && Instant::now() < h.next_try {
                return None;
            }
            h.down
        };
        if probe && self.probing.swap(true, Ordering::SeqCst) {
            return None; // someone else is probing
        }
        let result = self.exchange(f);
        if probe {
            self.probing.store(false, Ordering::SeqCst);
        }
        match result {
            Ok(v) => {
                self.mark_up();
                Some(v)
            }
            Err(e) if answered(&e) => {
                // Redis is there and said no: the tier stays up.
                if self
                    .stats
                    .refused
                    .fetch_add(1, Ordering::Relaxed)
                    .is_multiple_of(1000)
                {
                    tracing::warn!(url = %self.display_url(), error = %e, "redis refused a command (logged every 1000th)");
                }
                None
            }
            Err(e) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                self.mark_down(&e);
                None
            }
        }
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let c = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
        c.set_read_timeout(Some(IO_TIMEOUT))?;
        c.set_write_timeout(Some(IO_TIMEOUT))?;
        Ok(c)
    }

    fn exchange<T>(
        &self,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        let pooled = lock(&self.idle).pop();
        let was_pooled = pooled.is_some();
        let mut conn = match pooled {
            Some(c) => c,
            None => self.connect()?,
        };
        let mut result = f(&mut conn);
        // A pooled connection Redis closed meanwhile (it restarted): once
        // more on a fresh one before calling it an outage.
        if was_pooled && result.as_ref().is_err_and(|e| e.is_connection_dropped()) {
            self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
            conn = self.connect()?;
            result = f(&mut conn);
        }
        // After a reply, even an error, the connection is in step; after
        // an I/O failure it may be mid-reply and is dropped.
        if result.as_ref().map_or_else(answered, |_| true) {
            let mut idle = lock(&self.idle);
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
        }
        result
    }

    fn mark_up(&self) {
        let mut h = lock(&self.health);
        if h.down {
            tracing::info!(url = %self.display_url(), "redis reachable again: shared cache tier back");
        }
        h.down = false;
        h.backoff = BACKOFF_MIN;
    }

    fn mark_down(&self, e: &redis::RedisError) {
        lock(&self.idle).clear();
        let mut h = lock(&self.health);
        if !h.down {
            self.stats.outages.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                url = %self.display_url(),
                error = %e,
                "redis unreachable: serving from the local cache tiers until it is back"
            );
            h.backoff = BACKOFF_MIN;
        } else {
            h.backoff = (h.backoff * 2).min(BACKOFF_MAX);
        }
        h.down = true;
        h.next_try = Instant::now() + h.backoff;
    }

    /// The artifact stored under `key`, verified; values larger than
    /// `--cache-max-entry` (plus the header) are not read.
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let k = artifact_key(key);
        let bound = self.cfg.max_entry.saturating_add(entry::HEADER as u64);
        let reply: redis::Value =
            self.with_conn(|c| script(GET_BOUNDED, &[&k]).arg(bound).query(c))?;
        let value = match reply {
            redis::Value::BulkString(v) => v,
            redis::Value::Int(_) => {
                self.stats.too_large.fetch_add(1, Ordering::Relaxed);
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            _ => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        let refused = match entry::unwrap(key, value, self.cfg.secret.as_deref()) {
            Ok(data) => {
                self.stats.hits.fetch_add(1, Ordering::Relaxed);
                return Some(data);
            }
            Err(r) => r,
        };
        self.stats.misses.fetch_add(1, Ordering::Relaxed);
        let delete = match refused {
            Refused::Corrupt => {
                tracing::warn!(key = %hex(key), "corrupt shared cache entry deleted");
                self.stats.corrupt.fetch_add(1, Ordering::Relaxed);
                true
            }
            Refused::Forged => {
                tracing::warn!(
                    key = %hex(key),
                    "shared cache entry failed authentication under --cache-key-file; deleted"
                );
                self.stats.forged.fetch_add(1, Ordering::Relaxed);
                true
            }
            Refused::Unverifiable => {
                self.stats.unverifiable.fetch_add(1, Ordering::Relaxed);
                false
            }
        };
        if delete {
            let _ = self.with_conn(|c| redis::cmd("DEL").arg(&k).query::<i64>(c));
        }
        None
    }

    /// Stores an artifact (best effort: too large or Redis down, skipped).
    pub fn put(&self, key: &Key, data: &[u8]) {
        if data.len() as u64 > self.cfg.max_entry {
            self.stats.too_large.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let value = entry::wrap(key, data, self.cfg.secret.as_deref());
        let ttl = millis(self.cfg.ttl);
        let stored = self.with_conn(|c| {
            redis::cmd("SET")
                .arg(artifact_key(key))
                .arg(&value)
                .arg("PX")
                .arg(ttl)
                .query::<()>(c)
        });
        if stored.is_some() {
            self.stats.puts.fetch_add(1, Ordering::Relaxed);
        } else if self.is_up() && self.hand_off(key, &value) {
            self.stats.handoffs.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `EVAL body` over `keys`; the caller adds the arguments.
fn script(body: &str, keys: &[&str]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(body).arg(keys.len());
    for k in keys {
        cmd.arg(*k);
    }
    cmd
}

/// Redis answered the command with an error reply (`-OOM ...`,
/// `-READONLY ...`): it is reachable.
fn answered(e: &redis::RedisError) -> bool {
    e.code().is_some()
}

/// `url` without its credentials (a password may itself hold '@').
pub fn redact(url: &str) -> String {
    match url.rsplit_once('@') {
        Some((scheme_user, host)) => {
            let scheme = scheme_user.split("//").next().unwrap_or("redis:");
            format!("{scheme}//***@{host}")
        }
        None => url.to_string(),
    }
}

/// The URL as the redis crate reads it (what `Shared::new` connects to).
fn url_info(url: &str) -> Option<redis::ConnectionInfo> {
    use redis::IntoConnectionInfo;
    url.into_connection_info().ok()
}

/// The URL carries a password (`redis://[user]:password@...`).
pub fn has_password(url: &str) -> bool {
    url_info(url).is_some_and(|i| i.redis_settings().password().is_some())
}

/// The URL's host is this machine: `localhost`, a loopback address or a
/// unix socket.
pub fn is_local(url: &str) -> bool {
    let Some(info) = url_info(url) else {
        return false;
    };
    match info.addr() {
        redis::ConnectionAddr::Tcp(host, _) | redis::ConnectionAddr::TcpTls { host, .. } => {
            host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        redis::ConnectionAddr::Unix(_) => true,
        _ => false,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn artifact_key(key: &Key) -> String {
    format!("onnxc:a:{}", hex(key))
}

/// 128 random bits in hex: lock tokens must differ between daemons.
fn random_hex() -> String {
    use std::io::Read;
    let mut b = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if from_os.is_err() {
        // Unlikely; pid and time still separate daemons.
        let seed = format!("{}-{:?}", std::process::id(), std::time::SystemTime::now());
        b.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_redacted_and_placed() {
        assert_eq!(
            redact("redis://user:p@ss@10.0.0.5:6379/0"),
            "redis://***@10.0.0.5:6379/0"
        );
        assert_eq!(
            redact("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert!(has_password("redis://:pw@h:1/0") && has_password("redis://u:p@ss@h/0"));
        assert!(!has_password("redis://u@h:1/0") && !has_password("redis://h:1/0"));
        for local in [
            "redis://127.0.0.1:6379/0",
            "redis://localhost/0",
            "redis://:pw@127.0.0.2:1",
            "redis://[::1]:6379",
        ] {
            assert!(is_local(local), "{local}");
        }
        for remote in [
            "redis://10.0.0.5:6379/0",
            "redis://cache.internal:6379",
            "redis://127.0.0.1@evil.example:6379",
            "redis://[2001:db8::1]:6379",
        ] {
            assert!(!is_local(remote), "{remote}");
        }
    }

    #[test]
    fn lock_tokens_differ() {
        assert_ne!(random_hex(), random_hex());
    }

    #[test]
    fn unreachable_redis_is_skipped_quickly() {
        // Port 1 on loopback: connection refused at once.
        let s = Shared::new(SharedConfig {
            url: "redis://127.0.0.1:1/0".into(),
            max_entry: 1 << 20,
            ttl: Duration::from_secs(60),
            lock_ttl: Duration::from_secs(1),
            secret: None,
            password: None,
        })
        .unwrap();
        let t = Instant::now();
        assert!(s.get(&[1; 32]).is_none());
        assert!(!s.is_up());
        assert_eq!(s.try_lock(&[1; 32]), Lock::Unavailable);
        s.put(&[1; 32], b"x");
        assert!(t.elapsed() < Duration::from_secs(2));
        assert_eq!(s.stats.outages.load(Ordering::Relaxed), 1);
        assert!(Shared::new(SharedConfig {
            url: "http://nope".into(),
            max_entry: 1,
            ttl: Duration::from_secs(1),
            lock_ttl: Duration::from_secs(1),
            secret: None,
            password: None,
        })
        .is_err());
    }
}
