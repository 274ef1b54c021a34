//! Identical in-flight requests share one compile: the first becomes the
//! leader and starts the work; the others join its `Flight`. Every waiter
//! is counted: when the last one gives up (its deadline passed) the
//! flight's cancellation token stops the compile.

use super::protocol::{DiagOut, ErrorKind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Where a flight's artifact came from (the leader's `cache` field).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    /// Compiled here.
    Compiled,
    /// Found in the shared tier.
    SharedHit,
    /// Compiled by another daemon while this one waited on its lock.
    SharedJoined,
}

impl Source {
    pub fn cache_tag(self) -> &'static str {
        match self {
            Source::Compiled => "miss",
            Source::SharedHit => "hit",
            Source::SharedJoined => "joined",
        }
    }
}

pub enum Outcome {
    Done {
        data: Arc<Vec<u8>>,
        queue_ms: f64,
        compile_ms: f64,
        source: Source,
    },
    Failed {
        kind: ErrorKind,
        diagnostics: Vec<DiagOut>,
        queue_ms: f64,
        compile_ms: f64,
    },
    /// The queue was full when the leader tried to submit.
    Busy,
}

#[derive(Default)]
struct State {
    outcome: Option<Arc<Outcome>>,
    waiters: usize,
}

#[derive(Default)]
pub struct Flight {
    state: Mutex<State>,
    cv: Condvar,
    /// Set when no waiter is left: the compile stops (ir::cancel).
    pub cancel: ir::cancel::Token,
}

impl Flight {
    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(d) => d,
            Err(p) => p.into_inner(),
        }
    }

    pub fn complete(&self, outcome: Outcome) {
        self.state().outcome = Some(Arc::new(outcome));
        self.cv.notify_all();
    }

    /// One more request waits for this flight.
    pub fn join(&self) {
        self.state().waiters += 1;
    }

    /// A waiter gives up; true when it was the last one and the flight is
    /// not done (the caller then cancels it).
    pub fn leave(&self) -> bool {
        let mut s = self.state();
        s.waiters = s.waiters.saturating_sub(1);
        s.waiters == 0 && s.outcome.is_none()
    }

    /// The outcome, or `None` when `deadline` passes first.
    pub fn wait(&self, deadline: Instant) -> Option<Arc<Outcome>> {
        let mut s = self.state();
        loop {
            if let Some(o) = s.outcome.as_ref() {
                return Some(o.clone());
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            s = match self.cv.wait_timeout(s, left) {
                Ok((d, _)) => d,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn last_waiter_leaving_cancels() {
        let f = Flight::default();
        f.join();
        f.join();
        assert!(f.wait(Instant::now() + Duration::from_millis(1)).is_none());
        assert!(!f.leave(), "one waiter left");
        assert!(f.leave(), "the last one");
        f.join();
        f.complete(Outcome::Busy);
        assert!(!f.leave(), "done flights need no cancel");
        assert!(f.wait(Instant::now()).is_some());
    }
}
