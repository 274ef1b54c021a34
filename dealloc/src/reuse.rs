//! The buffer-reuse family (after MLIR-HLO), on deallocated IR.
//!
//! * `buffer-reuse`: an allocation takes over a buffer freed earlier in the
//!   same block when type, dynamic sizes and alignment match: the free and
//!   the allocation both disappear. Any freed buffer of the block qualifies,
//!   not only the one freed just before, so a straight chain ping-pongs
//!   between two buffers.
//! * `promote-buffers-to-stack`: small statically shaped allocations that
//!   never leave their block's region (not returned, yielded, passed to a
//!   branch, nor freed by anything but their own `memref.dealloc`) become
//!   `memref.alloca` at the start of the function (default budget: 1024
//!   bytes per buffer, 16 KiB per function; options `max-bytes`,
//!   `max-total-bytes`). Hoisting them there keeps a loop from growing the
//!   stack. Runs before ownership-based deallocation (which never frees
//!   `alloca`) or after it (the promoted buffers' frees are erased; the
//!   default pipeline runs it last, after `hoist-allocs`).

use crate::alias::{AliasInfo, Origin};
use crate::ownership::MANUAL_DEALLOCATION;
use ir::dialects::is_memref;
use ir::entity::{EntitySet, SecondaryMap};
use ir::pass::{Pass, PassContext, PassInfo, PassOptions};
use ir::{Attribute, BlockId, Builder, InsertPoint, Module, OpId, Result, Type, ValueDef, ValueId};
use ir::{BufferizationOp, FuncOp, MemrefOp, ScfOp};
use std::collections::HashMap;

pub struct BufferReuse;

impl Pass for BufferReuse {
    fn name(&self) -> &'static str {
        "buffer-reuse"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let mut n = 0;
        for f in m.top_level_ops(FuncOp::Func) {
            n += reuse_in(m, f);
        }
        cx.bump("buffer-reuse.reused", n as u64);
        Ok(())
    }
}

pub fn reuse_pass_info() -> PassInfo {
    PassInfo {
        name: "buffer-reuse",
        summary: "an allocation takes over a compatible buffer freed earlier in its block",
        create: |_| Ok(Box::new(BufferReuse)),
    }
}

/// What makes two allocations interchangeable.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    ty: Type,
    sizes: Vec<ValueId>,
    align: Option<i64>,
}

fn key(m: &Module, alloc: OpId) -> Option<Key> {
    if !m.is(alloc, MemrefOp::Alloc) || m.attr(alloc, MANUAL_DEALLOCATION).is_some() {
        return None;
    }
    let r = m.result(alloc, 0)?;
    Some(Key {
        ty: m.value_type(r).clone(),
        sizes: m.operands(alloc).to_vec(),
        align: m.attr(alloc, "alignment").and_then(Attribute::as_int),
    })
}

/// Reuses freed buffers in every block under `root`; returns how many.
pub fn reuse_in(m: &mut Module, root: OpId) -> usize {
    let blocks: Vec<BlockId> = m
        .collect_ops(root)
        .into_iter()
        .flat_map(|op| m.regions(op).to_vec())
        .flat_map(|r| m.region_blocks(r).to_vec())
        .collect();
    // A reused allocation's value stands for the buffer it took over. One
    // table for all the blocks: each block reads only its own values.
    let mut root: SecondaryMap<ValueId, Option<ValueId>> = SecondaryMap::default();
    blocks
        .into_iter()
        .map(|b| reuse_block(m, b, &mut root))
        .sum()
}

fn reuse_block(
    m: &mut Module,
    b: BlockId,
    root: &mut SecondaryMap<ValueId, Option<ValueId>>,
) -> usize {
    // Freed buffers by key: (buffer, the `memref.dealloc` freeing it). The
    // key is a type and sizes, not an entity: a hash map.
    let mut pool: HashMap<Key, Vec<(ValueId, OpId)>> = HashMap::new();
    // Decide first, rewrite after: erasing the frees before any use moves
    // keeps every use list short (a reused buffer collects many uses).
    let mut plan: Vec<(OpId, ValueId, OpId)> = Vec::new();
    for op in m.block_ops(b) {
        if m.is(op, MemrefOp::Dealloc) && m.attr(op, MANUAL_DEALLOCATION).is_none() {
            let Some(v) = m.operand(op, 0) else { continue };
            let Some(def) = m.defining_op(v) else {
                continue;
            };
            if m.op_block(def) != Some(b) {
                continue;
            }
            if let Some(k) = key(m, def) {
                let a = root[v].unwrap_or(v);
                pool.entry(k).or_default().push((a, op));
            }
            continue;
        }
        let Some(k) = key(m, op) else { continue };
        let Some((a, free)) = pool.get_mut(&k).and_then(Vec::pop) else {
            continue;
        };
        if let Some(r) = m.result(op, 0) {
            root[r] = Some(a);
            plan.push((op, a, free));
        }
    }
    for &(_, _, free) in &plan {
        m.erase_op(free);
    }
    for &(alloc, a, _) in &plan {
        if let Some(r) = m.result(alloc, 0) {
            m.replace_all_uses(r, a);
        }
        m.erase_op(alloc);
    }
    plan.len()
}

pub struct PromoteToStack {
    max_bytes: u64,
    max_total: u64,
}

impl Pass for PromoteToStack {
    fn name(&self) -> &'static str {
        "promote-buffers-to-stack"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let mut n = 0;
        for f in m.top_level_ops(FuncOp::Func) {
            n += promote(m, f, self.max_bytes, self.max_total);
        }
        cx.bump("promote-buffers-to-stack.promoted", n as u64);
        Ok(())
    }
}

pub fn promote_pass_info() -> PassInfo {
    PassInfo {
        name: "promote-buffers-to-stack",
        summary:
            "small static allocations that never escape become memref.alloca at the function entry",
        create: |o: &PassOptions| {
            Ok(Box::new(PromoteToStack {
                max_bytes: o.number("max-bytes")?.unwrap_or(1024),
                max_total: o.number("max-total-bytes")?.unwrap_or(16 * 1024),
            }))
        },
    }
}

/// Bytes of a statically shaped memref of scalars.
fn static_bytes(ty: &Type) -> Option<u64> {
    if !is_memref(ty) {
        return None;
    }
    let shape = ty.shape()?;
    let bits = u64::from(ty.element_type().bit_width()?);
    let mut n: u64 = bits.div_ceil(8);
    for &d in shape {
        n = n.checked_mul(u64::try_from(d).ok()?)?;
    }
    Some(n)
}

/// Allocations some value leaves the function or its region through, or
/// that something frees other than a `memref.dealloc` of the allocation
/// itself (which promotion erases).
fn escaping(m: &Module, f: OpId, alias: &mut AliasInfo) -> EntitySet<ValueId> {
    let mut out = EntitySet::new();
    for op in m.collect_ops(f) {
        let own_free = m.is(op, MemrefOp::Dealloc)
            && m.attr(op, MANUAL_DEALLOCATION).is_none()
            && m.operand(op, 0)
                .and_then(|v| m.defining_op(v))
                .is_some_and(|d| m.is(d, MemrefOp::Alloc));
        let leaves = m.is(op, FuncOp::Return)
            || m.is(op, ScfOp::Yield)
            || m.is(op, ScfOp::Condition)
            || m.is(op, MemrefOp::Realloc)
            || (m.is(op, MemrefOp::Dealloc) && !own_free)
            || m.is(op, BufferizationOp::Dealloc)
            || m.num_successors(op) > 0
            || (m.is_terminator(op) && m.parent_op(op) != Some(f));
        if !leaves {
            continue;
        }
        for &v in m.operands(op) {
            if is_memref(m.value_type(v)) {
                out.extend(alias.origins(m, v).allocs());
            }
        }
        let frees = m.is(op, MemrefOp::Dealloc)
            || m.is(op, BufferizationOp::Dealloc)
            || m.is(op, MemrefOp::Realloc);
        if frees && !own_free {
            freed_through_regions(m, op, alias, &mut out);
        }
    }
    out
}

/// A free of a region op's result or block argument may free any buffer
/// handed to that op (a loop init the loop owns): those escape too, through
/// enclosing region ops as well.
fn freed_through_regions(
    m: &Module,
    free: OpId,
    alias: &mut AliasInfo,
    out: &mut EntitySet<ValueId>,
) {
    let mut work: Vec<ValueId> = m
        .operands(free)
        .iter()
        .copied()
        .filter(|&v| is_memref(m.value_type(v)))
        .collect();
    let mut seen: EntitySet<OpId> = EntitySet::new();
    while let Some(v) = work.pop() {
        for o in alias.origins(m, v).list.clone() {
            let Origin::Unknown(u) = o else { continue };
            let owner = match m.value_def(u) {
                ValueDef::Result(d, _) => Some(d),
                ValueDef::BlockArg(b, _) => m.block_parent_op(b),
                ValueDef::Erased => None,
            };
            let Some(owner) = owner.filter(|&d| !m.regions(d).is_empty()) else {
                continue;
            };
            if !seen.insert(owner) {
                continue;
            }
            for &w in m.operands(owner) {
                if is_memref(m.value_type(w)) {
                    out.extend(alias.origins(m, w).allocs());
                    work.push(w);
                }
            }
        }
    }
}

/// Promotes the small allocations of `f`, in any block; each `alloca` goes
/// to the start of the entry block, so one inside a loop is made once (a
/// buffer that never leaves its block is dead before the next iteration
/// allocates it again). Their frees, if deallocation already ran, go.
fn promote(m: &mut Module, f: OpId, max_bytes: u64, max_total: u64) -> usize {
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return 0;
    };
    let mut alias = AliasInfo::new();
    let esc = escaping(m, f, &mut alias);
    let mut total = 0u64;
    let mut n = 0;
    let mut last: Option<OpId> = None;
    let allocs: Vec<OpId> = m
        .collect_ops(f)
        .into_iter()
        .filter(|&op| {
            m.is(op, MemrefOp::Alloc)
                && m.attr(op, MANUAL_DEALLOCATION).is_none()
                && m.operands(op).is_empty()
        })
        .collect();
    for op in allocs {
        let Some(r) = m.result(op, 0) else { continue };
        let Some(bytes) = static_bytes(m.value_type(r)) else {
            continue;
        };
        if esc.contains(r) || bytes > max_bytes || total + bytes > max_total {
            continue;
        }
        total += bytes;
        let ty = m.value_type(r).clone();
        let loc = m.loc(op).clone();
        let ip = last.map_or(InsertPoint::Start(entry), InsertPoint::After);
        let nr = Builder::new(m, ip).with_loc(loc).alloca(&ty, &[]);
        last = m.defining_op(nr);
        // The allocation's attributes (alignment, ...) carry over.
        if let Some(new) = last {
            for (k, v) in m.attrs(op).to_vec() {
                m.set_attr(new, k.as_str(), v);
            }
        }
        for u in m.users(r) {
            if m.is(u, MemrefOp::Dealloc) {
                m.erase_op(u);
            }
        }
        m.replace_all_uses(r, nr);
        m.erase_op(op);
        n += 1;
    }
    n
}
