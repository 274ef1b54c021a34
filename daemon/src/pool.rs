//! A fixed set of worker threads fed by a bounded queue: when the queue is
//! full a submission fails at once (the caller answers `busy`) instead of
//! piling up work and memory.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub type Job = Box<dyn FnOnce() + Send>;

/// The queue is full, or the pool is stopping.
#[derive(Debug)]
pub struct Busy;

/// Compiles recurse over the IR: give workers a main-thread-sized stack.
const STACK: usize = 16 << 20;

pub struct Pool {
    tx: Mutex<Option<SyncSender<Job>>>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    queued: Arc<AtomicUsize>,
    running: Arc<AtomicUsize>,
    workers: usize,
}

impl Pool {
    pub fn new(workers: usize, queue: usize) -> std::io::Result<Pool> {
        let (tx, rx) = sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        let queued = Arc::new(AtomicUsize::new(0));
        let running = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for i in 0..workers.max(1) {
            let (rx, queued, running) = (rx.clone(), queued.clone(), running.clone());
            handles.push(
                std::thread::Builder::new()
                    .name(format!("onnxc-worker-{i}"))
                    .stack_size(STACK)
                    .spawn(move || worker(&rx, &queued, &running))?,
            );
        }
        Ok(Pool {
            tx: Mutex::new(Some(tx)),
            handles: Mutex::new(handles),
            queued,
            running,
            workers: workers.max(1),
        })
    }

    /// Queues a job; `Busy` when the queue is full or the pool is stopping.
    pub fn try_submit(&self, job: Job) -> Result<(), Busy> {
        let Ok(tx) = self.tx.lock() else {
            return Err(Busy);
        };
        let Some(tx) = tx.as_ref() else {
            return Err(Busy);
        };
        self.queued.fetch_add(1, Ordering::SeqCst);
        match tx.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.queued.fetch_sub(1, Ordering::SeqCst);
                Err(Busy)
            }
        }
    }

    /// Lets queued jobs finish, then joins the workers.
    pub fn shutdown(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let handles = match self.handles.lock() {
            Ok(mut h) => std::mem::take(&mut *h),
            Err(_) => Vec::new(),
        };
        for h in handles {
            let _ = h.join();
        }
    }

    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    pub fn workers(&self) -> usize {
        self.workers
    }
}

fn worker(rx: &Mutex<Receiver<Job>>, queued: &AtomicUsize, running: &AtomicUsize) {
    loop {
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else {
            return; // sender dropped: shutting down
        };
        queued.fetch_sub(1, Ordering::SeqCst);
        running.fetch_add(1, Ordering::SeqCst);
        // Jobs catch their own panics to answer their waiters; this is the
        // backstop that keeps the worker alive whatever happens.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        let was_last = running.fetch_sub(1, Ordering::SeqCst) == 1;
        if was_last && queued.load(Ordering::SeqCst) == 0 {
            super::reaper::trim_later();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn full_queue_refuses_and_panics_do_not_kill_workers() {
        let pool = Pool::new(1, 1).unwrap();
        let (gate_tx, gate_rx) = channel::<()>();
        let gate_rx = Mutex::new(gate_rx);
        let (done_tx, done_rx) = channel();
        // Occupy the worker, fill the queue: the next submission is refused.
        pool.try_submit(Box::new(move || {
            let _ = gate_rx.lock().map(|r| r.recv());
            panic!("worker job panics");
        }))
        .unwrap();
        while pool.running() == 0 {
            std::thread::yield_now();
        }
        pool.try_submit(Box::new(|| {})).unwrap();
        assert!(
            pool.try_submit(Box::new(|| {})).is_err(),
            "queue full: busy"
        );
        gate_tx.send(()).unwrap();
        // The worker survived the panic and keeps serving.
        let tx = done_tx.clone();
        while pool
            .try_submit(Box::new({
                let tx = tx.clone();
                move || tx.send(7).unwrap()
            }))
            .is_err()
        {
            std::thread::yield_now();
        }
        assert_eq!(
            done_rx.recv_timeout(std::time::Duration::from_secs(10)),
            Ok(7)
        );
        pool.shutdown();
    }
}
