//! The shared cache tier on Redis (`--cache redis://HOST:PORT/DB`), behind
//! the memory LRU and `--cache-dir`, in the manner of sccache's remote
//! backends. Several daemons behind a load balancer share it:
//!
//! * `onnxc:a:<key>` holds an artifact under its content address (the
//!   request's cache key), prefixed with a magic and the sha256 of the
//!   payload so a torn or foreign value is detected; entries larger than
//!   `--cache-max-entry` are not stored; every entry has a TTL.
//! * `onnxc:l:<key>` is the compile lock (`SET NX PX` with a random token):
//!   the daemon holding it compiles; the others wait for the artifact and
//!   answer `joined`. The holder renews its locks every third of their
//!   lifetime; a holder that dies stops renewing, its lock expires and a
//!   waiter takes over.
//!
//! Redis is never needed to serve: when it is unreachable every call
//! returns "unavailable" at once, the daemon keeps serving from its local
//! tiers, logs the outage once, and retries with a growing backoff.

use super::cache::{hex, Key};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 13] = b"ONNXC-SHARE1\n";
/// Connect timeout: Redis is expected nearby.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// Read/write timeout of one command (an artifact may be large).
const IO_TIMEOUT: Duration = Duration::from_secs(10);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 8;

/// Deletes the lock only if it still holds our token.
const UNLOCK: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
/// The value only if it is at most ARGV[1] bytes: 0 when larger (a value
/// another writer stored is never read whole), nil when absent.
const GET_BOUNDED: &str = "local n = redis.call('strlen', KEYS[1]) \
     if n == 0 then return false end \
     if n > tonumber(ARGV[1]) then return 0 end \
     return redis.call('get', KEYS[1])";
/// Extends the lock only if it still holds our token.
const RENEW: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
     return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";

pub struct SharedConfig {
    pub url: String,
    /// Larger artifacts are not stored in Redis.
    pub max_entry: u64,
    pub ttl: Duration,
    pub lock_ttl: Duration,
}

#[derive(Default)]
pub struct SharedStats {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub puts: AtomicU64,
    pub too_large: AtomicU64,
    pub corrupt: AtomicU64,
    pub errors: AtomicU64,
    /// Flights that found another daemon's lock and waited for it.
    pub lock_waits: AtomicU64,
    /// Locks taken after waiting (the holder failed, gave up or died).
    pub takeovers: AtomicU64,
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
    /// Locks this daemon holds: key → token.
    held: Mutex<HashMap<Key, String>>,
    token_base: String,
    token_seq: AtomicU64,
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
        let client = redis::Client::open(cfg.url.as_str())
            .map_err(|e| format!("invalid --cache '{}': {e}", cfg.url))?;
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
            stats: SharedStats::default(),
        })
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
        match self.cfg.url.split_once('@') {
            Some((scheme_user, host)) => {
                let scheme = scheme_user.split("//").next().unwrap_or("redis:");
                format!("{scheme}//***@{host}")
            }
            None => self.cfg.url.clone(),
        }
    }

    /// Runs one exchange on a pooled connection; `None` when Redis is down
    /// (or went down during the call, which then starts the backoff).
    fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
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
            Err(e) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                self.mark_down(&e);
                None
            }
        }
    }

    fn exchange<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        let pooled = lock(&self.idle).pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => {
                let c = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
                c.set_read_timeout(Some(IO_TIMEOUT))?;
                c.set_write_timeout(Some(IO_TIMEOUT))?;
                c
            }
        };
        // A failed exchange drops its connection: it may be mid-reply.
        let v = f(&mut conn)?;
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
        Ok(v)
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
        let bound = self.cfg.max_entry.saturating_add((MAGIC.len() + 32) as u64);
        let reply: redis::Value = self.with_conn(|c| {
            redis::cmd("EVAL")
                .arg(GET_BOUNDED)
                .arg(1)
                .arg(&k)
                .arg(bound)
                .query(c)
        })?;
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
        match unwrap_entry(value) {
            Some(data) => {
                self.stats.hits.fetch_add(1, Ordering::Relaxed);
                Some(data)
            }
            None => {
                tracing::warn!(key = %hex(key), "corrupt shared cache entry deleted");
                self.stats.corrupt.fetch_add(1, Ordering::Relaxed);
                let _ = self.with_conn(|c| redis::cmd("DEL").arg(&k).query::<i64>(c));
                None
            }
        }
    }

    /// Stores an artifact (best effort: too large or Redis down, skipped).
    pub fn put(&self, key: &Key, data: &[u8]) {
        if data.len() as u64 > self.cfg.max_entry {
            self.stats.too_large.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let value = wrap_entry(data);
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
        }
    }

    /// Tries to take the compile lock of `key`.
    pub fn try_lock(&self, key: &Key) -> Lock {
        let token = format!(
            "{}-{}",
            self.token_base,
            self.token_seq.fetch_add(1, Ordering::Relaxed)
        );
        let set: Option<Option<String>> = self.with_conn(|c| {
            redis::cmd("SET")
                .arg(lock_key(key))
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(millis(self.cfg.lock_ttl))
                .query(c)
        });
        match set {
            None => Lock::Unavailable,
            Some(None) => Lock::Held,
            Some(Some(_)) => {
                lock(&self.held).insert(*key, token);
                Lock::Acquired
            }
        }
    }

    /// Releases our lock of `key` (no-op if it expired or is not ours).
    pub fn unlock(&self, key: &Key) {
        let Some(token) = lock(&self.held).remove(key) else {
            return;
        };
        let _ = self.with_conn(|c| {
            redis::cmd("EVAL")
                .arg(UNLOCK)
                .arg(1)
                .arg(lock_key(key))
                .arg(&token)
                .query::<i64>(c)
        });
    }

    /// Extends every lock this daemon holds; called every third of the
    /// lock's lifetime. A lock found lost is forgotten (its compile goes on
    /// and stores its artifact all the same: entries are content-addressed).
    pub fn renew_all(&self) {
        let held: Vec<(Key, String)> = lock(&self.held)
            .iter()
            .map(|(k, t)| (*k, t.clone()))
            .collect();
        for (key, token) in held {
            let renewed = self.with_conn(|c| {
                redis::cmd("EVAL")
                    .arg(RENEW)
                    .arg(1)
                    .arg(lock_key(&key))
                    .arg(&token)
                    .arg(millis(self.cfg.lock_ttl))
                    .query::<i64>(c)
            });
            if renewed == Some(0) {
                tracing::warn!(key = %hex(&key), "compile lock lost before renewal");
                lock(&self.held).remove(&key);
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn artifact_key(key: &Key) -> String {
    format!("onnxc:a:{}", hex(key))
}

fn lock_key(key: &Key) -> String {
    format!("onnxc:l:{}", hex(key))
}

fn wrap_entry(data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(MAGIC.len() + 32 + data.len());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&Sha256::digest(data));
    v.extend_from_slice(data);
    v
}

fn unwrap_entry(mut value: Vec<u8>) -> Option<Vec<u8>> {
    let header = MAGIC.len() + 32;
    if value.len() < header || !value.starts_with(MAGIC) {
        return None;
    }
    let data = value.split_off(header);
    let sum = value.get(MAGIC.len()..)?;
    (Sha256::digest(&data).as_slice() == sum).then_some(data)
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
    fn entries_are_verified() {
        let v = wrap_entry(b"artifact");
        assert_eq!(unwrap_entry(v.clone()).unwrap(), b"artifact");
        let mut bad = v.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(unwrap_entry(bad).is_none());
        assert!(unwrap_entry(v[..20].to_vec()).is_none());
        assert!(unwrap_entry(b"foreign value".to_vec()).is_none());
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
        })
        .is_err());
    }
}
