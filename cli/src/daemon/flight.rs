//! Identical in-flight requests share one compile: the first becomes the
//! leader and queues the work; the others wait on its `Flight`.

use super::protocol::{DiagOut, ErrorKind};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

pub enum Outcome {
    Done {
        data: Arc<Vec<u8>>,
        queue_ms: f64,
        compile_ms: f64,
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
pub struct Flight {
    done: Mutex<Option<Arc<Outcome>>>,
    cv: Condvar,
}

impl Flight {
    pub fn complete(&self, outcome: Outcome) {
        let mut done = match self.done.lock() {
            Ok(d) => d,
            Err(p) => p.into_inner(),
        };
        *done = Some(Arc::new(outcome));
        self.cv.notify_all();
    }

    /// The outcome, or `None` when `deadline` passes first.
    pub fn wait(&self, deadline: Instant) -> Option<Arc<Outcome>> {
        let mut done = match self.done.lock() {
            Ok(d) => d,
            Err(p) => p.into_inner(),
        };
        loop {
            if let Some(o) = done.as_ref() {
                return Some(o.clone());
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            done = match self.cv.wait_timeout(done, left) {
                Ok((d, _)) => d,
                Err(p) => p.into_inner().0,
            };
        }
    }
}
