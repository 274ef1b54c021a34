//! The cross-daemon compile locks `onnxc:l:<key>`. A lock's value is
//! `onnxc-lock1 <token> <lifetime ms>`, set with `SET NX PX lifetime` and
//! renewed to that lifetime. A value of another form, one without an
//! expiry or with more time left than its lifetime is not a live onnxc
//! lock (someone who can write to Redis wrote it, or an old build did): a
//! waiter ignores it after a bounded wait (`Service::drive_shared`)
//! instead of waiting forever.

use super::{lock, millis, script, Key, Lock, Shared};
use crate::cache::hex;
use std::sync::atomic::Ordering;
use std::time::Duration;

const PREFIX: &str = "onnxc-lock1";
/// Longer lifetimes than this are not an onnxc lock's.
const MAX_LIFETIME_MS: u64 = 3_600_000;

/// `SET NX PX` in a script flagged `allow-oom` (Redis 7): a Redis full
/// under `maxmemory` with `noeviction` refuses every plain write, which
/// would stop the fleet's dedup exactly when artifacts no longer fit; a
/// lock is a few dozen bytes that expire.
const TAKE: &str = "#!lua flags=allow-oom\n\
     return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])";
/// A waiter's mark `onnxc:w:<key>`, set for ARGV[1] ms.
const MARK_WAITING: &str = "#!lua flags=allow-oom\n\
     return redis.call('set', KEYS[1], '1', 'PX', ARGV[1])";
/// Stores the artifact KEYS[1] for ARGV[2] ms if a waiter marked KEYS[2]:
/// used when a full Redis refused the normal store, so that the daemons
/// that waited for this compile still get its result (dedup goes on);
/// the overshoot is one artifact per joined compile, for one lock
/// lifetime.
const HAND_OFF: &str = "#!lua flags=allow-oom\n\
     if redis.call('exists', KEYS[2]) == 0 then return 0 end \
     redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1";
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

fn waiter_key(key: &Key) -> String {
    format!("onnxc:w:{}", hex(key))
}

/// The command that takes a lock: `TAKE`, or a plain `SET` for a Redis
/// without script flags.
fn take(legacy: bool, key: &Key, value: &str, life: u64) -> redis::Cmd {
    let lock = lock_key(key);
    if legacy {
        let mut cmd = redis::cmd("SET");
        cmd.arg(lock).arg(value).arg("NX").arg("PX").arg(life);
        return cmd;
    }
    let mut cmd = script(TAKE, &[&lock]);
    cmd.arg(value).arg(life);
    cmd
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
        let attempt = |legacy| self.with_conn(|c| take(legacy, key, &value, life).query(c));
        // Redis before 7 has no script flags: a plain SET from then on.
        let legacy = self.legacy_redis.load(Ordering::Relaxed);
        let mut set: Option<Option<String>> = attempt(legacy);
        if set.is_none() && !legacy && self.is_up() {
            set = attempt(true);
            if set.is_some() {
                self.legacy_redis.store(true, Ordering::Relaxed);
            }
        }
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
        let reply: Option<Option<(Vec<u8>, i64)>> =
            self.with_conn(|c| script(INSPECT, &[&lock_key(key)]).query(c));
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

    fn run_on_lock(&self, body: &str, key: &Key, value: &[u8]) {
        let _ = self.with_conn(|c| script(body, &[&lock_key(key)]).arg(value).query::<i64>(c));
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
                script(RENEW, &[&lock_key(&key)])
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

    /// Tells the holder of `key`'s lock that a daemon waits for it.
    pub fn mark_waiting(&self, key: &Key) {
        let life = millis(self.cfg.lock_ttl);
        let _ = self.with_conn(|c| {
            script(MARK_WAITING, &[&waiter_key(key)])
                .arg(life)
                .query::<Option<String>>(c)
        });
    }

    /// Stores a signed entry the normal store was refused, for one lock
    /// lifetime, if a daemon waits for it; whether it did.
    pub(super) fn hand_off(&self, key: &Key, value: &[u8]) -> bool {
        let stored = self.with_conn(|c| {
            script(HAND_OFF, &[&super::artifact_key(key), &waiter_key(key)])
                .arg(value)
                .arg(millis(self.cfg.lock_ttl))
                .query::<i64>(c)
        });
        stored == Some(1)
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
