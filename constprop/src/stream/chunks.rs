//! Packing computed views in chunks, in file order, with helpers: worker
//! threads claim chunks ahead of the writer, and the writer packs a chunk
//! itself when no worker has claimed it yet, so it never waits on a worker
//! that is not running (the machine may be busy) and never idles while
//! work is left.

use ir::elements::Elements;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Bytes packed per chunk.
const CHUNK_BYTES: usize = 2 << 20;

/// One chunk: elements `[start, start + n)` of a view.
struct Job<'a> {
    view: &'a Elements,
    start: usize,
    n: usize,
}

#[derive(Default)]
struct State {
    /// Packed chunks not written yet, by job number.
    done: BTreeMap<usize, Vec<u8>>,
    /// Jobs written so far.
    written: usize,
    /// Buffers to reuse.
    spare: Vec<Vec<u8>>,
    stop: bool,
}

/// The chunk jobs of some views and the state the threads share.
pub struct Chunks<'a> {
    jobs: Vec<Job<'a>>,
    /// The first job nobody has claimed.
    next: AtomicUsize,
    state: Mutex<State>,
    changed: Condvar,
    /// How far ahead of the writer workers may pack.
    ahead: usize,
}

/// Elements per chunk of `e`: about `CHUNK_BYTES`, a multiple of 8 so
/// sub-byte dtypes split on bytes.
fn chunk_elems(e: &Elements) -> usize {
    let bits = e.dtype().bits().max(1) as usize;
    ((CHUNK_BYTES * 8 / bits) / 8 * 8).max(8)
}

impl<'a> Chunks<'a> {
    /// The chunks of `views`, in order; `workers` threads will help.
    pub fn new(views: &[&'a Elements], workers: usize) -> Chunks<'a> {
        let mut jobs = Vec::new();
        for &view in views {
            let step = chunk_elems(view);
            let mut start = 0;
            while start < view.len() {
                jobs.push(Job {
                    view,
                    start,
                    n: step,
                });
                start += step;
            }
        }
        Chunks {
            jobs,
            next: AtomicUsize::new(0),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            ahead: 2 * workers + 2,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a packer panicked; the state is still valid.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, g: MutexGuard<'g, State>) -> MutexGuard<'g, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }

    /// Claims job `j` if nobody has.
    fn claim(&self, j: usize) -> bool {
        self.next
            .compare_exchange(j, j + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn pack(&self, j: usize, mut buf: Vec<u8>) -> Vec<u8> {
        buf.clear();
        if let Some(job) = self.jobs.get(j) {
            job.view.pack_range(job.start, job.n, &mut buf);
        }
        buf
    }

    /// A worker: packs unclaimed jobs up to `ahead` past the writer.
    pub fn work(&self) {
        loop {
            let j = self.next.load(Ordering::Acquire);
            if j >= self.jobs.len() {
                return;
            }
            let buf = {
                let mut g = self.lock();
                while !g.stop && j >= g.written + self.ahead {
                    g = self.wait(g);
                }
                if g.stop {
                    return;
                }
                g.spare.pop().unwrap_or_default()
            };
            if !self.claim(j) {
                self.lock().spare.push(buf);
                continue;
            }
            let packed =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.pack(j, buf)));
            let Ok(buf) = packed else {
                // The writer sees `stop` and fails instead of waiting.
                self.stop();
                return;
            };
            let mut g = self.lock();
            g.done.insert(j, buf);
            self.changed.notify_all();
        }
    }

    /// The writer's side: the packed bytes of the next `count` jobs, each
    /// passed to `write` in order.
    pub fn write_next(
        &self,
        count: usize,
        write: &mut impl FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        for _ in 0..count {
            let mut g = self.lock();
            let j = g.written;
            let buf = loop {
                if let Some(b) = g.done.remove(&j) {
                    drop(g);
                    break b;
                }
                if g.stop {
                    return Err(std::io::Error::other("packing a constant failed"));
                }
                if self.claim(j) {
                    // Nobody is on it: pack it here.
                    let spare = g.spare.pop().unwrap_or_default();
                    drop(g);
                    break self.pack(j, spare);
                }
                g = self.wait(g);
            };
            write(&buf)?;
            let mut g = self.lock();
            g.written = j + 1;
            g.spare.push(buf);
            self.changed.notify_all();
        }
        Ok(())
    }

    /// Jobs of a view of `e`'s size (the writer asks per payload).
    pub fn count(e: &Elements) -> usize {
        e.len().div_ceil(chunk_elems(e))
    }

    /// Stops the workers (the writer is done or failed).
    pub fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}
