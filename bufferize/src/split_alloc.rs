//! `split-alloc`: one allocation per logical value.
//!
//! A buffer that is completely overwritten (`memref.copy` into it) after
//! earlier uses holds two unrelated values in a row. Giving the second one
//! its own allocation (made right before the overwrite) lets deallocation
//! free the first value after its last use and lets buffer-reuse pick the
//! best buffer for the second, instead of one live range spanning both.
//!
//! Only buffers whose every use names them directly (`memref.load`,
//! `memref.store`, `memref.copy`, calls returning no memref, anywhere
//! below) are split: a view or an alias made before the overwrite would
//! otherwise see the wrong memory.

use ir::entity::{EntitySet, SecondaryMap};
use ir::pass::{FnPass, PassInfo, PassRegistry};
use ir::{BlockId, Builder, InsertPoint, Module, OpId, Result, ValueId};
use ir::{FuncOp, MemrefOp};

pub fn register(reg: &mut PassRegistry) {
    reg.add(PassInfo {
        name: "split-alloc",
        summary:
            "a buffer fully overwritten after earlier uses gets a new allocation for the new value",
        create: |_| {
            Ok(Box::new(FnPass {
                name: "split-alloc",
                f: |m, cx| {
                    let n = split_module(m)?;
                    cx.bump("split-alloc.split", n as u64);
                    Ok(())
                },
            }))
        },
    });
}

/// Splits every eligible allocation; returns how many new ones were made.
pub fn split_module(m: &mut Module) -> Result<usize> {
    let order = m.collect_ops(m.top());
    // Program order of the ops there are now (ids are not in order).
    let mut pos: SecondaryMap<OpId, Option<u32>> = SecondaryMap::default();
    for (i, &o) in order.iter().enumerate() {
        pos[o] = Some(i as u32);
    }
    let allocs: Vec<OpId> = order
        .into_iter()
        .filter(|&o| m.is(o, MemrefOp::Alloc) && m.regions(o).is_empty())
        .collect();
    let mut n = 0;
    for a in allocs {
        n += split_one(m, a, &pos);
    }
    Ok(n)
}

fn direct_uses_only(m: &Module, v: ValueId) -> bool {
    m.uses(v).iter().all(|u| {
        m.is(u.op, MemrefOp::Load)
            || (m.is(u.op, MemrefOp::Store) && u.index == 1)
            || m.is(u.op, MemrefOp::Copy)
            || (m.is(u.op, FuncOp::Call)
                && !m
                    .results(u.op)
                    .iter()
                    .any(|&r| ir::dialects::is_memref(m.value_type(r))))
    })
}

/// The top-level ops of `b` using `v` (directly or below), in order:
/// by `pos` (a walk of the whole block per buffer made the pass quadratic),
/// or by walking the block when a user was made after `pos` was taken.
fn users_in_order(
    m: &Module,
    b: BlockId,
    v: ValueId,
    pos: &SecondaryMap<OpId, Option<u32>>,
) -> Vec<OpId> {
    let mut tops: Vec<OpId> = m
        .uses(v)
        .iter()
        .filter_map(|u| m.ancestor_in_block(b, u.op))
        .collect();
    tops.sort_unstable();
    tops.dedup();
    if tops.iter().all(|&o| pos[o].is_some()) {
        tops.sort_by_key(|&o| pos[o]);
        return tops;
    }
    let set: EntitySet<OpId> = tops.into_iter().collect();
    m.block_ops(b).filter(|&o| set.contains(o)).collect()
}

fn split_one(m: &mut Module, alloc: OpId, pos: &SecondaryMap<OpId, Option<u32>>) -> usize {
    let (Some(v), Some(b)) = (m.result(alloc, 0), m.op_block(alloc)) else {
        return 0;
    };
    if !direct_uses_only(m, v) {
        return 0;
    }
    let users = users_in_order(m, b, v, pos);
    let mut current = v;
    let mut n = 0;
    for (k, &op) in users.iter().enumerate() {
        // A top-level copy into the buffer, after other uses, starts a new value.
        let overwrite = k > 0 && m.is(op, MemrefOp::Copy) && m.operand(op, 1) == Some(v);
        if overwrite && m.operand(op, 0) != Some(v) {
            let (sizes, ty) = (m.operands(alloc).to_vec(), m.value_type(v).clone());
            let attrs = m.attrs(alloc).to_vec();
            let loc = m.loc(op).clone();
            let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
            // A copy of the allocation (alignment and all).
            let nv = b.alloc(&ty, &sizes);
            if let Some(fresh) = m.defining_op(nv) {
                for (k, a) in attrs {
                    m.set_attr(fresh, k.as_str(), a);
                }
            }
            current = nv;
            n += 1;
        }
        if current != v {
            m.replace_uses_where(v, current, |m, u| m.is_ancestor(op, u.op));
        }
    }
    n
}
