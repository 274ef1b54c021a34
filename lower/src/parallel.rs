//! `lower-parallel{threads=N}`: every `scf.for` marked
//! [`scf::PARALLEL`] (the kernels mark loops whose iterations write
//! disjoint memory) becomes a call of a private function holding the loop
//! with its bounds as parameters:
//!
//! ```mlir
//! func.call @__onnxc_parallel0(%lb, %ub, %step, %captured...) {onnxc.parallel = N}
//! func.func private @__onnxc_parallel0(%lo, %hi, %step, ...) {onnxc.parallel_body} {
//!   scf.for %i = %lo to %hi step %c1 { ... }
//! }
//! ```
//!
//! The LLVM emitter turns the marked call into a
//! `GOMP_parallel_loop_dynamic` of a trampoline that unpacks a context
//! struct of the arguments and runs the function on each chunk of
//! `[lb, ub)` its thread claims; a team of one
//! (one iteration, one thread, or inside a running parallel region) calls
//! the function directly (see `llvm::parallel`). `N` is the compile-time
//! thread count, 0 for all cores of the machine that runs the code; the
//! environment variable `ONNXC_NUM_THREADS` overrides it at run time.
//!
//! Values from outside become arguments like in `outline-kernels` (whose
//! outliner this reuses, so equal loops share one function); constants and
//! scratch `memref.alloca`s that only the loop uses are cloned into the
//! function, so each thread has its own (promote-buffers-to-stack hoists
//! them to the function entry). Marked loops are taken innermost first: a
//! marked loop inside another becomes a marked call inside the outer
//! function, which runs serially when the outer one has a team.
//!
//! A marked loop holding a `cf.assert` (a runtime contract check) stays
//! serial: a failed check must abort or unwind on the caller's thread.
//!
//! With `threads=1` the marks are dropped and `__onnxc_num_threads()` is 1:
//! serial code without libgomp.

use crate::outline::Outliner;
use ir::dialects::scf;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{Attribute, Builder, InsertPoint, Module, OpId, Result, Type, ValueId};
use ir::{CfOp, FuncOp, MemrefOp, ScfOp};

/// Prefix of the outlined loop functions.
pub const PARALLEL_PREFIX: &str = "__onnxc_parallel";
/// Marks a function made by this pass (a unit attribute).
pub const BODY_ATTR: &str = "onnxc.parallel_body";

pub struct LowerParallel {
    /// Compile-time thread count; 0: all cores at run time.
    pub threads: u64,
}

impl Pass for LowerParallel {
    fn name(&self) -> &'static str {
        "lower-parallel"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        if self.threads == 1 {
            cx.bump("lower-parallel.serialized", serialize(m) as u64);
            return Ok(());
        }
        let (loops, funcs) = lower_parallel(m, self.threads);
        cx.bump("lower-parallel.loops", loops as u64);
        cx.bump("lower-parallel.functions", funcs as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "lower-parallel",
        summary:
            "loops marked onnxc.parallel to calls run by a GOMP team (threads=N, 0: all cores)",
        create: |opts| {
            let threads = opts.number("threads")?.unwrap_or(0);
            Ok(Box::new(LowerParallel { threads }))
        },
    }
}

fn marked_loops(m: &Module) -> Vec<OpId> {
    let mut out = Vec::new();
    for f in m.top_level_ops(FuncOp::Func) {
        for op in m.collect_ops(f) {
            if m.is(op, ScfOp::For) && m.attr(op, scf::PARALLEL).is_some() {
                out.push(op);
            }
        }
    }
    out
}

fn num_threads_calls(m: &Module) -> Vec<OpId> {
    let mut out = Vec::new();
    for f in m.top_level_ops(FuncOp::Func) {
        for op in m.collect_ops(f) {
            let callee = m.attr(op, "callee").and_then(Attribute::as_symbol);
            if m.is(op, FuncOp::Call) && callee == Some(scf::NUM_THREADS_FN) {
                out.push(op);
            }
        }
    }
    out
}

/// Drops the marks and makes `__onnxc_num_threads()` 1; returns the
/// number of loops.
fn serialize(m: &mut Module) -> usize {
    let loops = marked_loops(m);
    for &lp in &loops {
        m.remove_attr(lp, scf::PARALLEL);
    }
    for call in num_threads_calls(m) {
        let one = Builder::new(m, InsertPoint::Before(call)).const_index(1);
        if let Some(&r) = m.results(call).first() {
            m.replace_all_uses(r, one);
        }
        m.erase_op(call);
    }
    if let Some(decl) = m.lookup_symbol(scf::NUM_THREADS_FN) {
        m.erase_op(decl);
    }
    loops.len()
}

/// Outlines every marked loop; returns (loops, functions made).
pub fn lower_parallel(m: &mut Module, threads: u64) -> (usize, usize) {
    let team = Attribute::Int(threads as i64, Type::i64());
    for call in num_threads_calls(m) {
        m.set_attr(call, scf::PARALLEL, team.clone());
    }
    let mut out = Outliner::new(PARALLEL_PREFIX);
    let loops = marked_loops(m);
    // Innermost first: pre-order reversed visits a loop after the loops
    // inside it, so every loop taken is still where it was found.
    for &lp in loops.iter().rev() {
        outline_loop(m, &mut out, lp, &team);
    }
    (loops.len(), out.made())
}

fn outline_loop(m: &mut Module, out: &mut Outliner, lp: OpId, team: &Attribute) {
    let bounds: Vec<ValueId> = m.operands(lp).iter().take(3).copied().collect();
    m.remove_attr(lp, scf::PARALLEL);
    if bounds.len() != 3 || !m.results(lp).is_empty() {
        return;
    }
    // A failed runtime check aborts, or with `NAME_run_checked` jumps back
    // to the caller's frame: never from a team's thread.
    if m.collect_ops(lp).iter().any(|&o| m.is(o, CfOp::Assert)) {
        return;
    }
    let private = |m: &Module, v: ValueId| is_private_scratch(m, v, lp);
    let scratch: Vec<OpId> = m
        .collect_ops(lp)
        .iter()
        .flat_map(|&o| m.operands(o).to_vec())
        .filter(|&v| private(m, v))
        .filter_map(|v| m.defining_op(v))
        .collect();
    let (call, made) = out.outline(m, lp, &bounds, &private);
    // Each thread has its copy now.
    for d in scratch {
        if m.results(d).iter().all(|&r| m.users(r).is_empty()) {
            m.erase_op(d);
        }
    }
    if let Some((f, lead)) = made {
        m.set_attr(f, BODY_ATTR, Attribute::Unit);
        m.set_attr(f, crate::outline::KERNEL_ATTR, Attribute::Unit);
        // The loop now runs over the chunk it is given.
        m.set_operand(lp, 0, lead[0]);
        m.set_operand(lp, 1, lead[1]);
    }
    m.set_attr(call, scf::PARALLEL, team.clone());
}

/// A `memref.alloca` without operands whose every use is inside `lp`:
/// scratch each thread gets a copy of.
fn is_private_scratch(m: &Module, v: ValueId, lp: OpId) -> bool {
    m.defining_op(v)
        .is_some_and(|d| m.is(d, MemrefOp::Alloca) && m.operands(d).is_empty())
        && m.users(v).iter().all(|&u| m.is_ancestor(lp, u))
}
