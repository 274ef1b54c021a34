//! Cooperative cancellation of a compile. A [`Token`] is installed for the
//! current thread with [`scope`] or [`run`]; the pass manager checks it
//! between passes and long loops (constprop, bufferize, the LLVM emitter)
//! call [`check`] once per op or function. A thread-local keeps those hooks
//! one line and free of extra parameters; without a scope, `check` never
//! fails.
//!
//! Passes without a check of their own are covered by [`poll`], which the
//! arena calls as ops are created, erased, given attributes and walked: in
//! a cancelled [`run`] it unwinds (as rustc's fatal errors do) to `run`,
//! which turns it into the `compile cancelled` error. The module being
//! compiled is dropped on the way, so no pass sees it half-changed.

use crate::diag::{Diagnostic, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Shared flag: set once by whoever gives up on the compile.
#[derive(Clone, Default, Debug)]
pub struct Token(Arc<AtomicBool>);

impl Token {
    pub fn new() -> Token {
        Token::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Token>> = const { RefCell::new(None) };
}

/// Message of the diagnostic a cancelled compile fails with.
pub const CANCELLED: &str = "compile cancelled";

/// Runs `f` with `token` as this thread's cancellation token (the previous
/// one is restored afterwards, also on panic).
pub fn scope<R>(token: &Token, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Token>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let prev = CURRENT.with(|c| c.borrow_mut().replace(token.clone()));
    let _restore = Restore(prev);
    f()
}

/// True when this thread's compile has been cancelled.
pub fn cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(Token::is_cancelled))
}

/// `Err` once this thread's compile has been cancelled.
pub fn check() -> Result<()> {
    if cancelled() {
        Err(Diagnostic::error(CANCELLED))
    } else {
        Ok(())
    }
}

/// The unwind payload of [`poll`].
struct Cancelled;

/// Unwinds to the enclosing [`run`] once this thread's compile is
/// cancelled; a no-op outside a scope (the CLI never unwinds).
pub fn poll() {
    if cancelled() {
        std::panic::resume_unwind(Box::new(Cancelled));
    }
}

/// Runs `f` with `token` installed; a cancellation seen by [`poll`] ends
/// it with the `compile cancelled` error. Other panics go on unwinding.
pub fn run<T, E: From<Diagnostic>>(
    token: &Token,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scope(token, f))) {
        Ok(r) => r,
        Err(p) if p.is::<Cancelled>() => Err(Diagnostic::error(CANCELLED).into()),
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// This thread's token, to hand to helper threads or child processes.
pub fn current() -> Option<Token> {
    CURRENT.with(|c| c.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoped_and_restored() {
        assert!(check().is_ok());
        let t = Token::new();
        scope(&t, || {
            assert!(check().is_ok());
            t.cancel();
            assert_eq!(check().unwrap_err().message, CANCELLED);
            let inner = Token::new();
            scope(&inner, || assert!(check().is_ok()));
            assert!(check().is_err());
        });
        assert!(check().is_ok());
    }

    #[test]
    fn poll_unwinds_to_run() {
        poll(); // no scope: nothing happens
        struct Flag<'a>(&'a AtomicBool);
        impl Drop for Flag<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = AtomicBool::new(false);
        let t = Token::new();
        let r: Result<u32> = run(&t, || {
            poll();
            t.cancel();
            let _guard = Flag(&dropped);
            poll();
            unreachable!("poll unwinds once cancelled");
        });
        assert_eq!(r.unwrap_err().message, CANCELLED);
        assert!(dropped.load(Ordering::SeqCst), "dropped on the way out");
        assert!(check().is_ok(), "the scope ended");
        let r: Result<u32> = run(&Token::new(), || Ok(7));
        assert_eq!(r.unwrap(), 7);
        let other =
            std::panic::catch_unwind(|| run::<u32, Diagnostic>(&Token::new(), || panic!("bug")));
        assert!(other.is_err(), "other panics are not swallowed");
    }
}
