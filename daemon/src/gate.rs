//! Before authentication (`--auth-token-file`): connections that have
//! not proved the token are few and the oldest give way to new ones, so
//! tokenless clients cannot take the slots token holders need, and their
//! failures are logged sparingly.

use super::addr::Stream;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Tokenless connections one address may hold.
const PRE_AUTH_PER_PEER: usize = 4;

/// Connections that have not proved the token yet. When they are as many
/// as the gate holds, a new one closes the oldest: a flood that connects
/// and waits holds nothing, and a client that sends its token at once
/// (as `onnxc client` does) gets in.
pub struct Gate {
    max: usize,
    state: Mutex<State>,
}

struct Held {
    peer: Option<IpAddr>,
    evicted: Arc<AtomicBool>,
    /// A handle on the connection, to end it when it is evicted (its
    /// thread would otherwise notice only at its next read timeout, and
    /// a churning flood would fill `--max-connections` meanwhile).
    stream: Option<Stream>,
}

#[derive(Default)]
struct State {
    next: u64,
    /// Oldest first.
    slots: BTreeMap<u64, Held>,
    /// Per peer address (unix sockets are counted in the total only).
    by_peer: HashMap<Option<IpAddr>, usize>,
}

impl State {
    fn forget(&mut self, peer: Option<IpAddr>) {
        if let Some(n) = self.by_peer.get_mut(&peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_peer.remove(&peer);
            }
        }
    }
}

/// A connection's place in the gate, given back when it proves the token
/// or closes.
pub struct Slot {
    gate: Arc<Gate>,
    seq: u64,
    evicted: Arc<AtomicBool>,
}

impl Slot {
    /// A newer tokenless connection took this one's place.
    pub fn evicted(&self) -> bool {
        self.evicted.load(Ordering::SeqCst)
    }
}

impl Gate {
    /// At most `max` (at least 1) tokenless connections in all.
    pub fn new(max: usize) -> Arc<Gate> {
        Arc::new(Gate {
            max: max.max(1),
            state: Mutex::new(State::default()),
        })
    }

    /// A slot for a new connection from `peer`; `None` when that address
    /// already holds its share. `stream` is ended if the slot is evicted.
    pub fn admit(gate: &Arc<Gate>, peer: Option<IpAddr>, stream: Option<Stream>) -> Option<Slot> {
        let mut st = gate.state.lock().unwrap_or_else(|p| p.into_inner());
        let mine = st.by_peer.get(&peer).copied().unwrap_or(0);
        if peer.is_some() && mine >= PRE_AUTH_PER_PEER {
            return None;
        }
        if st.slots.len() >= gate.max {
            if let Some((_, oldest)) = st.slots.pop_first() {
                oldest.evicted.store(true, Ordering::SeqCst);
                if let Some(s) = &oldest.stream {
                    s.shutdown();
                }
                st.forget(oldest.peer);
            }
        }
        *st.by_peer.entry(peer).or_insert(0) += 1;
        let seq = st.next;
        st.next += 1;
        let evicted = Arc::new(AtomicBool::new(false));
        let held = Held {
            peer,
            evicted: evicted.clone(),
            stream,
        };
        st.slots.insert(seq, held);
        Some(Slot {
            gate: gate.clone(),
            seq,
            evicted,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut st = self.gate.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(held) = st.slots.remove(&self.seq) {
            st.forget(held.peer);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_tokenless_connection_gives_way() {
        let gate = Gate::new(5);
        let ip = |n: u8| Some(IpAddr::from([127, 0, 0, n]));
        let first: Vec<Slot> = (0..4)
            .filter_map(|_| Gate::admit(&gate, ip(1), None))
            .collect();
        assert_eq!(first.len(), 4);
        assert!(
            Gate::admit(&gate, ip(1), None).is_none(),
            "a peer's share is 4"
        );
        let _second = Gate::admit(&gate, ip(2), None).unwrap();
        assert!(first.iter().all(|s| !s.evicted()), "5 fit");
        let _third = Gate::admit(&gate, ip(3), None).unwrap();
        assert!(
            first[0].evicted() && !first[1].evicted(),
            "the oldest gave way"
        );
        assert!(
            Gate::admit(&gate, ip(1), None).is_some(),
            "ip 1 holds 3 live ones now"
        );
        drop(first);
        let st = gate.state.lock().unwrap();
        assert_eq!((st.slots.len(), st.by_peer.len()), (2, 2));
    }
}
