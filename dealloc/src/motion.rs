//! More of the buffer-reuse family, on deallocated IR (`memref.dealloc`).
//!
//! * `hoist-allocs`: a buffer allocated and freed in the same iteration of
//!   an `scf.for` / `scf.while` body, with a loop-invariant size, is
//!   allocated once before the loop and freed once after it; not out of
//!   a loop marked parallel (`onnxc.parallel`), whose threads need one each.
//! * `elide-copies`: `%a = alloc; copy %b -> %a; dealloc %b` (nothing
//!   touching `%a` before the copy, nor `%b` after it) becomes a use of
//!   `%b` itself: one allocation and one copy fewer.

use crate::ownership::MANUAL_DEALLOCATION;
use crate::support::{is_loop, ops_where};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{BlockId, InsertPoint, Module, OpId, Result, ValueId};
use ir::{MemrefOp, ScfOp};

pub struct HoistAllocs;

impl Pass for HoistAllocs {
    fn name(&self) -> &'static str {
        "hoist-allocs"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let mut total = 0;
        // Each round lifts buffers one loop level; stop when nothing moves.
        loop {
            let n = hoist_once(m);
            total += n;
            if n == 0 {
                break;
            }
        }
        cx.bump("hoist-allocs.hoisted", total as u64);
        Ok(())
    }
}

pub fn hoist_pass_info() -> PassInfo {
    PassInfo {
        name: "hoist-allocs",
        summary: "buffers allocated and freed in one loop iteration move out of the loop",
        create: |_| Ok(Box::new(HoistAllocs)),
    }
}

/// The unmarked `memref.dealloc` of `v` in block `b`, if it is the only free.
pub(crate) fn local_free(m: &Module, v: ValueId, b: BlockId) -> Option<OpId> {
    let frees: Vec<OpId> = m
        .users(v)
        .into_iter()
        .filter(|&u| m.is(u, MemrefOp::Dealloc) || m.is(u, MemrefOp::Realloc))
        .collect();
    match frees.as_slice() {
        [d] if m.is(*d, MemrefOp::Dealloc)
            && m.op_block(*d) == Some(b)
            && m.attr(*d, MANUAL_DEALLOCATION).is_none() =>
        {
            Some(*d)
        }
        _ => None,
    }
}

fn hoist_once(m: &mut Module) -> usize {
    let loops = ops_where(m, is_loop);
    let mut n = 0;
    for lp in loops {
        // Threads run a parallel loop's iterations: each needs its own.
        if m.attr(lp, ir::dialects::scf::PARALLEL).is_some() {
            continue;
        }
        // The body that runs once per iteration: scf.for's only block,
        // scf.while's `do` block.
        let region = if m.is(lp, ScfOp::While) { 1 } else { 0 };
        let Some(body) = m.region(lp, region).and_then(|r| m.entry_block(r)) else {
            continue;
        };
        let ops: Vec<OpId> = m.block_ops(body).collect();
        for op in ops {
            if !m.is(op, MemrefOp::Alloc) || m.attr(op, MANUAL_DEALLOCATION).is_some() {
                continue;
            }
            let invariant = m.operands(op).iter().all(|&s| {
                m.defining_op(s).is_none_or(|d| !m.is_ancestor(lp, d))
                    && !defined_by_arg_in(m, s, lp)
            });
            let Some(v) = m.result(op, 0) else { continue };
            let Some(free) = local_free(m, v, body) else {
                continue;
            };
            if !invariant {
                continue;
            }
            m.move_to(op, InsertPoint::Before(lp));
            m.move_to(free, InsertPoint::After(lp));
            n += 1;
        }
    }
    n
}

/// True if `v` is a block argument of a block inside `op`.
fn defined_by_arg_in(m: &Module, v: ValueId, op: OpId) -> bool {
    match m.value_def(v) {
        ir::ValueDef::BlockArg(b, _) => m.block_parent_op(b).is_some_and(|p| m.is_ancestor(op, p)),
        _ => false,
    }
}

pub struct ElideCopies;

impl Pass for ElideCopies {
    fn name(&self) -> &'static str {
        "elide-copies"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let copies = ops_where(m, |m, o| m.is(o, MemrefOp::Copy));
        let n = copies.into_iter().filter(|&c| elide(m, c)).count();
        cx.bump("elide-copies.elided", n as u64);
        Ok(())
    }
}

pub fn elide_pass_info() -> PassInfo {
    PassInfo {
        name: "elide-copies",
        summary: "alloc a; copy b -> a; dealloc b  =>  use b",
        create: |_| Ok(Box::new(ElideCopies)),
    }
}

/// Ops of `b`'s block strictly between `from` and `to`.
pub(crate) fn between(m: &Module, from: OpId, to: OpId) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut cur = m.next_op(from);
    while let Some(o) = cur {
        if o == to {
            return out;
        }
        out.push(o);
        cur = m.next_op(o);
    }
    out
}

/// True if `v` is an operand of `op` or of anything nested in it.
pub(crate) fn touches(m: &Module, op: OpId, v: ValueId) -> bool {
    m.collect_ops(op)
        .into_iter()
        .any(|o| m.operands(o).contains(&v))
}

fn elide(m: &mut Module, copy: OpId) -> bool {
    let (Some(src), Some(dst)) = (m.operand(copy, 0), m.operand(copy, 1)) else {
        return false;
    };
    let (Some(sa), Some(da)) = (m.defining_op(src), m.defining_op(dst)) else {
        return false;
    };
    let block = m.op_block(copy);
    let plain_alloc = |o: OpId| {
        m.is(o, MemrefOp::Alloc)
            && m.attr(o, MANUAL_DEALLOCATION).is_none()
            && m.op_block(o) == block
    };
    if !plain_alloc(sa) || !plain_alloc(da) || m.value_type(src) != m.value_type(dst) {
        return false;
    }
    let Some(b) = block else { return false };
    let Some(free) = local_free(m, src, b) else {
        return false;
    };
    // The destination is untouched before the copy, the source after it.
    if !m.is_before_in_block(da, copy) || !m.is_before_in_block(copy, free) {
        return false;
    }
    if between(m, da, copy).into_iter().any(|o| touches(m, o, dst))
        || between(m, copy, free)
            .into_iter()
            .any(|o| touches(m, o, src))
    {
        return false;
    }
    m.erase_op(copy);
    m.erase_op(free);
    m.replace_all_uses(dst, src);
    m.erase_op(da);
    true
}
