//! The buffer-reuse family (after MLIR-HLO), on deallocated IR.
//!
//! * `buffer-reuse`: an allocation takes over a buffer freed earlier in the
//!   same block when type, dynamic sizes and alignment match: the free and
//!   the allocation both disappear. Any freed buffer of the block qualifies,
//!   not only the one freed just before, so a straight chain ping-pongs
//!   between two buffers.
//! * `promote-buffers-to-stack`: small statically shaped allocations of a
//!   function's entry block that never leave the function become
//!   `memref.alloca` (default budget: 1024 bytes per buffer, 16 KiB per
//!   function; options `max-bytes`, `max-total-bytes`). Runs before
//!   ownership-based deallocation, which never frees `alloca`.

use crate::alias::AliasInfo;
use crate::ownership::MANUAL_DEALLOCATION;
use ir::dialects::is_memref;
use ir::entity::{EntitySet, SecondaryMap};
use ir::pass::{Pass, PassContext, PassInfo, PassOptions};
use ir::{Attribute, BlockId, Builder, InsertPoint, Module, OpId, Result, Type, ValueId};
use std::collections::HashMap;

pub struct BufferReuse;

impl Pass for BufferReuse {
    fn name(&self) -> &'static str {
        "buffer-reuse"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let mut n = 0;
        for f in m.top_level_ops("func.func") {
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
    if !m.is(alloc, "memref.alloc") || m.attr(alloc, MANUAL_DEALLOCATION).is_some() {
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
        if m.is(op, "memref.dealloc") && m.attr(op, MANUAL_DEALLOCATION).is_none() {
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
        for f in m.top_level_ops("func.func") {
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
            "small static allocations of the entry block that never escape become memref.alloca",
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
/// that something other than ownership-based deallocation frees.
fn escaping(m: &Module, f: OpId, alias: &mut AliasInfo) -> EntitySet<ValueId> {
    let mut out = EntitySet::new();
    for op in m.collect_ops(f) {
        let leaves = m.is(op, "func.return")
            || m.is(op, "scf.yield")
            || m.is(op, "scf.condition")
            || m.is(op, "memref.realloc")
            || m.is(op, "memref.dealloc")
            || m.is(op, "bufferization.dealloc")
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
    }
    out
}

fn promote(m: &mut Module, f: OpId, max_bytes: u64, max_total: u64) -> usize {
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return 0;
    };
    let mut alias = AliasInfo::new();
    let esc = escaping(m, f, &mut alias);
    let mut total = 0u64;
    let mut n = 0;
    let ops: Vec<OpId> = m.block_ops(entry).collect();
    for op in ops {
        if !m.is(op, "memref.alloc")
            || m.attr(op, MANUAL_DEALLOCATION).is_some()
            || !m.operands(op).is_empty()
        {
            continue;
        }
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
        let nr = Builder::new(m, InsertPoint::Before(op))
            .with_loc(loc)
            .alloca(&ty, &[]);
        // The allocation's attributes (alignment, ...) carry over.
        if let Some(new) = m.defining_op(nr) {
            for (k, v) in m.attrs(op).to_vec() {
                m.set_attr(new, k.as_str(), v);
            }
        }
        m.replace_all_uses(r, nr);
        m.erase_op(op);
        n += 1;
    }
    n
}
