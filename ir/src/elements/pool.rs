//! Accounting of constant buffers: every heap buffer made by `pool::heap`
//! counts while anything holds it (count, bytes, peak), and every distinct
//! buffer a live view holds, heap or a slice of the model file, counts in
//! `held` (what the constant GC reports after each pass, without walking
//! the IR).

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

static COUNT: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

/// Views per distinct buffer (start address, length) and their bytes.
static HELD: Mutex<Option<HashMap<(usize, usize), u64>>> = Mutex::new(None);
static HELD_BYTES: AtomicU64 = AtomicU64::new(0);

/// Live heap buffers: count, bytes, and the peak of bytes so far; `held`:
/// bytes of the distinct buffers live views hold.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub count: u64,
    pub bytes: u64,
    pub peak: u64,
    pub held: u64,
}

pub fn stats() -> PoolStats {
    PoolStats {
        count: COUNT.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
        peak: PEAK.load(Ordering::Relaxed),
        held: HELD_BYTES.load(Ordering::Relaxed),
    }
}

fn with_held(f: impl FnOnce(&mut HashMap<(usize, usize), u64>)) {
    // A poisoned lock only means another thread panicked mid-update.
    let mut g = HELD.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashMap::new));
}

/// A view holding `b` was made.
pub(super) fn retain(b: &Bytes) {
    if b.is_empty() {
        return;
    }
    with_held(|h| {
        let n = h.entry((b.as_ptr() as usize, b.len())).or_insert(0);
        if *n == 0 {
            HELD_BYTES.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
        *n += 1;
    });
}

/// A view holding `b` was dropped.
pub(super) fn release(b: &Bytes) {
    if b.is_empty() {
        return;
    }
    with_held(|h| {
        let key = (b.as_ptr() as usize, b.len());
        if let Some(n) = h.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                h.remove(&key);
                HELD_BYTES.fetch_sub(b.len() as u64, Ordering::Relaxed);
            }
        }
    });
}

struct Tracked(Vec<u8>);

impl AsRef<[u8]> for Tracked {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        COUNT.fetch_sub(1, Ordering::Relaxed);
        BYTES.fetch_sub(self.0.len() as u64, Ordering::Relaxed);
    }
}

/// Wraps a freshly computed buffer so the pool accounts for it.
pub fn heap(v: Vec<u8>) -> Bytes {
    if v.len() <= 16 {
        // Inline-sized scalars and splats: not worth tracking.
        return Bytes::from(v);
    }
    let n = v.len() as u64;
    COUNT.fetch_add(1, Ordering::Relaxed);
    let now = BYTES.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
    Bytes::from_owner(Tracked(v))
}

/// Live views holding `b` (for tests).
#[cfg(test)]
pub(super) fn views_of(b: &Bytes) -> u64 {
    let mut n = 0;
    with_held(|h| n = h.get(&(b.as_ptr() as usize, b.len())).copied().unwrap_or(0));
    n
}
