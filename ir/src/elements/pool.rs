//! Accounting of the heap buffers constants own: every buffer made by
//! `pool::heap` counts while any view still holds it.

use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNT: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

/// Live heap buffers: count, bytes, and the peak of bytes so far.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub count: u64,
    pub bytes: u64,
    pub peak: u64,
}

pub fn stats() -> PoolStats {
    PoolStats {
        count: COUNT.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
        peak: PEAK.load(Ordering::Relaxed),
    }
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
