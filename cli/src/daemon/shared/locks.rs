//! The cross-daemon compile locks `onnxc:l:<key>`. A lock's value is
//! `onnxc-lock1 <token> <lifetime ms>`, set with `SET NX PX lifetime` and
//! renewed to that lifetime. A value of another form, one without an
//! expiry or with more time left than its lifetime is not a live onnxc
//! lock (someone who can write to Redis wrote it, or an old build did): a
//! waiter ignores it after a bounded wait (`Service::drive_shared`)
//! instead of waiting forever.

use super::{lock, millis, Key, Lock, Shared};
use crate::daemon::cache::hex;
use std::sync::atomic::Ordering;
use std::time::Duration;

const PREFIX: &str = "onnxc-lock1";
/// Longer lifetimes than this are not an onnxc lock's.
const MAX_LIFETIME_MS: u64 = 3_600_000;

/// Deletes the lock only if it still holds the value ARGV[1].
const DELETE_IF: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
/// Extends the lock only if it still holds our value.
const RENEW: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
     return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
/// The value and its milliseconds to live (-1: no expiry), or nil; a key
/// of another type (a hash written there) as an empty value.
const INSPECT: &str = "local t = redis.call('type', KEYS[1]).ok \
     if t == 'none' then return false end \
     if t ~= 'string' then return {'', -1} end \
     return {redis.call('get', KEYS[1]), redis.call('pttl', KEYS[1])}";
/// Deletes what `INSPECT` found foreign if it is still there: the same
/// value, or a key that is not a string.
const DELETE_FOREIGN: &str = "local t = redis.call('type', KEYS[1]).ok \
     if t ~= 'string' and t ~= 'none' then return redis.call('del', KEYS[1]) end \
     if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end \
     return 0";

/// What holds a compile lock that `try_lock` found taken.
#[derive(Debug, PartialEq, Eq)]
pub enum Holder {
    /// A live onnxc lock: its holder is compiling.
    Live,
    /// Gone since, or Redis unreachable: try again.
    Gone,
    /// Not a live onnxc lock: this value.
    Foreign(Vec<u8>),
}

fn lock_key(key: &Key) -> String {
    format!("onnxc:l:{}", hex(key))
}

/// Whether `value` with `pttl` ms to live is a live onnxc lock.
fn is_live(value: &[u8], pttl: i64) -> bool {
    let text = String::from_utf8_lossy(value);
    let mut parts = text.split(' ');
    let (Some(PREFIX), Some(token), Some(life), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Ok(life) = life.parse::<u64>() else {
        return false;
    };
    !token.is_empty()
        && life <= MAX_LIFETIME_MS
        && u64::try_from(pttl).is_ok_and(|left| left > 0 && left <= life)
}

impl Shared {
    /// Tries to take the compile lock of `key`.
    pub fn try_lock(&self, key: &Key) -> Lock {
        let life = millis(self.cfg.lock_ttl);
        let value = format!(
            "{PREFIX} {}-{} {life}",
            self.token_base,
            self.token_seq.fetch_add(1, Ordering::Relaxed)
        );
        let set: Option<Option<String>> = self.with_conn(|c| {
            redis::cmd("SET")
                .arg(lock_key(key))
                .arg(&value)
                .arg("NX")
                .arg("PX")
                .arg(life)
                .query(c)
        });
        match set {
            None => Lock::Unavailable,
            Some(None) => Lock::Held,
            Some(Some(_)) => {
                lock(&self.held).insert(*key, value);
                Lock::Acquired
            }
        }
    }

    /// What holds the lock of `key`.
    pub fn holder(&self, key: &Key) -> Holder {
        let reply: Option<Option<(Vec<u8>, i64)>> = self.with_conn(|c| {
            redis::cmd("EVAL")
                .arg(INSPECT)
                .arg(1)
                .arg(lock_key(key))
                .query(c)
        });
        match reply {
            Some(Some((value, pttl))) if !is_live(&value, pttl) => Holder::Foreign(value),
            Some(Some(_)) => Holder::Live,
            _ => Holder::Gone,
        }
    }

    /// Deletes a value that is not a live lock (if it is still there) and
    /// counts it.
    pub fn clear_foreign(&self, key: &Key, value: &[u8]) {
        tracing::warn!(key = %hex(key), "a compile lock that is not onnxc's ignored and deleted");
        self.stats.foreign_locks.fetch_add(1, Ordering::Relaxed);
        self.run_on_lock(DELETE_FOREIGN, key, value);
    }

    fn run_on_lock(&self, script: &str, key: &Key, value: &[u8]) {
        let _ = self.with_conn(|c| {
            redis::cmd("EVAL")
                .arg(script)
                .arg(1)
                .arg(lock_key(key))
                .arg(value)
                .query::<i64>(c)
        });
    }

    /// Releases our lock of `key` (no-op if it expired or is not ours).
    pub fn unlock(&self, key: &Key) {
        let Some(value) = lock(&self.held).remove(key) else {
            return;
        };
        self.run_on_lock(DELETE_IF, key, value.as_bytes());
    }

    /// Extends every lock this daemon holds; called every third of the
    /// lock's lifetime. A lock found lost is forgotten (its compile goes on
    /// and stores its artifact all the same: entries are content-addressed).
    pub fn renew_all(&self) {
        let held: Vec<(Key, String)> = lock(&self.held)
            .iter()
            .map(|(k, t)| (*k, t.clone()))
            .collect();
        for (key, value) in held {
            let renewed = self.with_conn(|c| {
                redis::cmd("EVAL")
                    .arg(RENEW)
                    .arg(1)
                    .arg(lock_key(&key))
                    .arg(&value)
                    .arg(millis(self.cfg.lock_ttl))
                    .query::<i64>(c)
            });
            if renewed == Some(0) {
                tracing::warn!(key = %hex(&key), "compile lock lost before renewal");
                lock(&self.held).remove(&key);
            }
        }
    }

    /// How long a waiter gives a value that is not a live lock before it
    /// ignores it: one lock lifetime.
    pub fn foreign_lock_grace(&self) -> Duration {
        self.cfg.lock_ttl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_onnxc_locks_with_an_expiry_are_live() {
        assert!(is_live(b"onnxc-lock1 abc-1 10000", 9000));
        assert!(!is_live(b"onnxc-lock1 abc-1 10000", -1), "no expiry");
        assert!(
            !is_live(b"onnxc-lock1 abc-1 10000", 20000),
            "more left than its life"
        );
        assert!(!is_live(b"onnxc-lock1 abc-1 99999999", 9000), "too long");
        assert!(!is_live(b"x", 9000));
        assert!(!is_live(b"onnxc-lock1  10000", 9000));
        assert!(!is_live(b"onnxc-lock1 abc 10 extra", 9));
        assert!(!is_live(b"\xff\xfe", 9));
    }
}
