//! Frees what compiles leave behind on a thread of its own. Dropping a
//! large module is tens of milliseconds of `free`/`munmap` (90% of the
//! 60-100 ms between a cancelled compile's deadline and its worker taking
//! the next job, measured in the cancellation bench); handed to the
//! reaper, the worker answers, or takes its next job, at once.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::OnceLock;

enum Item {
    Drop(Box<dyn Send>),
    /// Hand malloc's free pages back once everything before it is freed.
    Trim,
}

/// Items sent and not yet handled (`stats.pool.reaping`).
static PENDING: AtomicUsize = AtomicUsize::new(0);
static REAPER: OnceLock<Option<Sender<Item>>> = OnceLock::new();

fn reaper() -> Option<&'static Sender<Item>> {
    REAPER
        .get_or_init(|| {
            let (tx, rx) = channel();
            std::thread::Builder::new()
                .name("onnxc-reaper".into())
                .spawn(move || reap(&rx))
                .ok()?;
            Some(tx)
        })
        .as_ref()
}

fn reap(rx: &Receiver<Item>) {
    while let Ok(item) = rx.recv() {
        handle_here(item);
        PENDING.fetch_sub(1, Ordering::SeqCst);
    }
}

fn send(item: Item) {
    let Some(r) = reaper() else {
        return handle_here(item);
    };
    PENDING.fetch_add(1, Ordering::SeqCst);
    if let Err(unsent) = r.send(item) {
        PENDING.fetch_sub(1, Ordering::SeqCst);
        handle_here(unsent.0);
    }
}

fn handle_here(item: Item) {
    match item {
        Item::Drop(value) => drop(value),
        Item::Trim => return_free_memory(),
    }
}

/// Drops `value` on the reaper thread (here when it cannot be started).
pub fn drop_later<T: Send + 'static>(value: T) {
    send(Item::Drop(Box::new(value)));
}

/// Gives malloc's free pages back to the system after everything sent so
/// far is freed: a compile's IR is freed into its thread's arena, where
/// glibc keeps it (the daemon's RSS wandered between 24 and 43 MiB over a
/// thousand compiles of the same models, with 3.9 MiB in use).
pub fn trim_later() {
    send(Item::Trim);
}

/// Items handed to the reaper and not yet freed.
pub fn pending() -> usize {
    PENDING.load(Ordering::SeqCst)
}

fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A value that goes to the reaper when dropped, also when a cancelled
/// compile unwinds past it.
pub struct Deferred<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> Deferred<T> {
    pub fn new(value: T) -> Deferred<T> {
        Deferred(Some(value))
    }

    /// The value, no longer deferred.
    pub fn into_inner(mut self) -> T {
        match self.0.take() {
            Some(v) => v,
            None => unreachable!("a Deferred holds its value until dropped"),
        }
    }
}

impl<T: Send + 'static> Deref for Deferred<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.0 {
            Some(v) => v,
            None => unreachable!("a Deferred holds its value until dropped"),
        }
    }
}

impl<T: Send + 'static> DerefMut for Deferred<T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.0 {
            Some(v) => v,
            None => unreachable!("a Deferred holds its value until dropped"),
        }
    }
}

impl<T: Send + 'static> Drop for Deferred<T> {
    fn drop(&mut self) {
        if let Some(v) = self.0.take() {
            drop_later(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn deferred_values_are_dropped_on_the_reaper() {
        struct Probe(Arc<Mutex<Option<String>>>);
        impl Drop for Probe {
            fn drop(&mut self) {
                let name = std::thread::current().name().map(str::to_string);
                *self.0.lock().unwrap() = name;
            }
        }
        let seen = Arc::new(Mutex::new(None));
        let d = Deferred::new(Probe(seen.clone()));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = d;
            panic!("a cancelled compile unwinds");
        }));
        assert!(unwound.is_err());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while seen.lock().unwrap().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(seen.lock().unwrap().as_deref(), Some("onnxc-reaper"));
        assert_eq!(Deferred::new(7).into_inner(), 7);
    }
}
