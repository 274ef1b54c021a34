//! Before authentication (`--auth-token-file`): connections that have
//! not proved the token are few, so tokenless clients cannot take the
//! slots token holders need, and their failures are logged sparingly.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Tokenless connections one address may hold.
const PRE_AUTH_PER_PEER: usize = 4;

/// Connections that have not proved the token yet: (all of them, per
/// peer address; unix sockets count in the total only).
pub struct Gate {
    max: usize,
    by_peer: Mutex<(usize, HashMap<Option<IpAddr>, usize>)>,
}

/// A connection's place in the gate, given back when it proves the token
/// or closes.
pub struct Slot {
    gate: Arc<Gate>,
    peer: Option<IpAddr>,
}

impl Gate {
    /// At most `max` (at least 1) tokenless connections in all.
    pub fn new(max: usize) -> Arc<Gate> {
        Arc::new(Gate {
            max: max.max(1),
            by_peer: Mutex::new((0, HashMap::new())),
        })
    }

    pub fn admit(gate: &Arc<Gate>, peer: Option<IpAddr>) -> Option<Slot> {
        let mut g = gate.by_peer.lock().unwrap_or_else(|p| p.into_inner());
        let (total, by_peer) = &mut *g;
        let mine = by_peer.get(&peer).copied().unwrap_or(0);
        if *total >= gate.max || (peer.is_some() && mine >= PRE_AUTH_PER_PEER) {
            return None;
        }
        by_peer.insert(peer, mine + 1);
        *total += 1;
        Some(Slot {
            gate: gate.clone(),
            peer,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut g = self.gate.by_peer.lock().unwrap_or_else(|p| p.into_inner());
        let (total, by_peer) = &mut *g;
        *total = total.saturating_sub(1);
        if let Some(n) = by_peer.get_mut(&self.peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                by_peer.remove(&self.peer);
            }
        }
    }
}

/// Logs a wrong or missing token with the peer, at most once a second
/// (a client may try thousands a second); the others are counted.
pub fn log_auth_failure(peer: Option<IpAddr>) {
    static LAST: AtomicU64 = AtomicU64::new(0);
    static SUPPRESSED: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if LAST.swap(now, Ordering::Relaxed) == now {
        SUPPRESSED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let also = SUPPRESSED.swap(0, Ordering::Relaxed);
    let peer = peer.map_or_else(|| "unix socket".to_string(), |p| p.to_string());
    tracing::warn!(%peer, suppressed = also, "wrong or missing token: connection closed");
}
