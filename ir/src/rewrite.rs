//! Greedy pattern rewriting: a top-down worklist over the ops under a root,
//! re-queuing whatever a rewrite touched, until nothing changes or a bound
//! is hit (then the caller gets a non-convergence warning).

use crate::diag::{Diagnostic, Result};
use crate::entity::EntityRef;
use crate::module::{Module, OpId};
use std::collections::VecDeque;

/// A local rewrite. `root` limits which op names it is tried on.
pub trait Pattern: Send + Sync {
    fn name(&self) -> &'static str;
    /// Op name this pattern applies to; `None` tries it on every op.
    fn root(&self) -> Option<&'static str> {
        None
    }
    /// Rewrites `op` if it matches; returns whether the IR changed.
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool>;
}

#[derive(Clone, Debug)]
pub struct GreedyConfig {
    /// Full sweeps over the root before giving up.
    pub max_iterations: usize,
    /// Total successful rewrites before giving up (guards against cycles).
    pub max_rewrites: usize,
    /// Erase pure ops whose results are unused.
    pub erase_dead: bool,
}

impl Default for GreedyConfig {
    fn default() -> Self {
        GreedyConfig {
            max_iterations: 10,
            max_rewrites: 1_000_000,
            erase_dead: true,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GreedyReport {
    pub converged: bool,
    pub rewrites: usize,
    pub erased: usize,
    pub iterations: usize,
}

impl GreedyReport {
    /// A warning when the driver stopped before reaching a fixed point.
    pub fn warning(&self, what: &str) -> Option<Diagnostic> {
        (!self.converged).then(|| {
            Diagnostic::warning(format!(
                "{what} did not converge after {} iterations and {} rewrites",
                self.iterations, self.rewrites
            ))
        })
    }
}

fn is_dead(m: &Module, op: OpId) -> bool {
    m.is_pure(op)
        && !m.results(op).is_empty()
        && m.regions(op).is_empty()
        && m.results(op).iter().all(|&r| !m.has_uses(r))
}

/// Applies `patterns` to every op nested under `root` (not `root` itself).
pub fn apply_greedily(
    m: &mut Module,
    root: OpId,
    patterns: &[&dyn Pattern],
    cfg: &GreedyConfig,
) -> Result<GreedyReport> {
    let mut report = GreedyReport::default();
    let mut queued = crate::entity::SecondaryMap::<OpId, bool>::default();
    for iteration in 0..cfg.max_iterations {
        report.iterations = iteration + 1;
        let mut changed = false;
        let mut work: VecDeque<OpId> = m
            .collect_ops(root)
            .into_iter()
            .filter(|&o| o != root)
            .collect();
        for &o in &work {
            queued[o] = true;
        }
        while let Some(op) = work.pop_front() {
            crate::cancel::check()?;
            queued[op] = false;
            if m.is_erased(op) || m.op_block(op).is_none() || !m.is_ancestor(root, op) {
                continue;
            }
            if cfg.erase_dead && is_dead(m, op) {
                let defs: Vec<OpId> = m
                    .operands(op)
                    .iter()
                    .filter_map(|&v| m.defining_op(v))
                    .collect();
                m.erase_op(op);
                report.erased += 1;
                changed = true;
                for d in defs {
                    push(&mut work, &mut queued, d);
                }
                continue;
            }
            let name = m.name(op).as_str();
            let arena_before = m.arena_sizes().0;
            let mut applied = false;
            for p in patterns {
                if p.root().is_some_and(|r| r != name) {
                    continue;
                }
                if p.rewrite(m, op)? {
                    applied = true;
                    break;
                }
            }
            if !applied {
                continue;
            }
            changed = true;
            report.rewrites += 1;
            if report.rewrites >= cfg.max_rewrites {
                return Ok(report);
            }
            // Re-queue the op, its neighbours, and every op the rewrite created.
            if !m.is_erased(op) {
                push(&mut work, &mut queued, op);
                for &r in m.results(op) {
                    for u in m.users(r) {
                        push(&mut work, &mut queued, u);
                    }
                }
                let defs: Vec<OpId> = m
                    .operands(op)
                    .iter()
                    .filter_map(|&v| m.defining_op(v))
                    .collect();
                for d in defs {
                    push(&mut work, &mut queued, d);
                }
            }
            for i in arena_before..m.arena_sizes().0 {
                let new = OpId::new(i);
                if !m.is_erased(new) {
                    push(&mut work, &mut queued, new);
                    for &r in m.results(new) {
                        for u in m.users(r) {
                            push(&mut work, &mut queued, u);
                        }
                    }
                }
            }
        }
        if !changed {
            report.converged = true;
            return Ok(report);
        }
    }
    Ok(report)
}

fn push(work: &mut VecDeque<OpId>, queued: &mut crate::entity::SecondaryMap<OpId, bool>, op: OpId) {
    if !queued[op] {
        queued[op] = true;
        work.push_back(op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::Attribute;
    use crate::builder::Builder;
    use crate::ops::ArithOp;
    use crate::types::Type;

    /// Folds `arith.addi` of two constants.
    struct FoldAdd;
    impl Pattern for FoldAdd {
        fn name(&self) -> &'static str {
            "fold-addi"
        }
        fn root(&self) -> Option<&'static str> {
            Some(ArithOp::Addi.name())
        }
        fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
            let vals: Option<Vec<i64>> = m
                .operands(op)
                .iter()
                .map(|&v| {
                    let d = m.defining_op(v)?;
                    if !m.is(d, ArithOp::Constant) {
                        return None;
                    }
                    m.attr(d, "value")?.as_int()
                })
                .collect();
            let Some(vals) = vals else { return Ok(false) };
            let sum: i64 = vals.iter().sum();
            let mut b = Builder::new(m, crate::module::InsertPoint::Before(op));
            let c = b.const_index(sum);
            m.replace_op(op, &[c]);
            Ok(true)
        }
    }

    /// Rewrites forever: `x -> x` with a fresh attribute each time.
    struct Spin;
    impl Pattern for Spin {
        fn name(&self) -> &'static str {
            "spin"
        }
        fn root(&self) -> Option<&'static str> {
            Some("test.sink")
        }
        fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
            let n = m.attr(op, "n").and_then(Attribute::as_int).unwrap_or(0);
            m.set_attr(op, "n", Attribute::i64(n + 1));
            Ok(true)
        }
    }

    fn chain(m: &mut Module) -> OpId {
        let body = m.body();
        let mut b = Builder::at_end(m, body);
        let (f, entry) = b.func("f", vec![], vec![Type::Index]);
        let mut b = Builder::at_end(m, entry);
        let mut acc = b.const_index(1);
        for i in 0..50 {
            let c = b.const_index(i);
            acc = b.same(ArithOp::Addi, &[acc, c]);
        }
        b.op("test.sink", &[acc], &[], &[]);
        b.ret(&[acc]);
        f
    }

    #[test]
    fn folds_a_chain_to_one_constant() {
        let mut m = Module::new();
        let f = chain(&mut m);
        let report = apply_greedily(&mut m, f, &[&FoldAdd], &GreedyConfig::default()).unwrap();
        assert!(report.converged);
        assert_eq!(report.rewrites, 50);
        crate::verify::verify(&m).unwrap();
        // func + constant + sink + return (dead constants erased)
        assert_eq!(m.collect_ops(f).len(), 4);
    }

    #[test]
    fn reports_non_convergence() {
        let mut m = Module::new();
        let f = chain(&mut m);
        let cfg = GreedyConfig {
            max_iterations: 3,
            max_rewrites: 1000,
            ..GreedyConfig::default()
        };
        let report = apply_greedily(&mut m, f, &[&Spin], &cfg).unwrap();
        assert!(!report.converged);
        assert!(report.warning("canonicalize").is_some());
    }
}
