//! `expand-realloc`: `memref.realloc` as `memref.alloc` + an element copy
//! loop, leaving the old buffer to ownership-based deallocation (upstream's
//! `emit-deallocs=false`).
//!
//! `ownership-based-deallocation` handles a realloc directly (in place, no
//! copy) when its source is a buffer allocated in the same block that is
//! dead after it. The pass expands the others by default: a realloc of a
//! loop-carried buffer, of a branch result, of a function argument (whose
//! memory the caller still owns). Option `all` expands every realloc.

use crate::ownership::is_owned_allocation;
use ir::builder::CmpI;
use ir::pass::{Pass, PassContext, PassInfo, PassOptions};
use ir::MemrefOp;
use ir::{Builder, InsertPoint, Module, OpId, Result, Type, ValueId, DYN};

pub struct ExpandRealloc {
    all: bool,
}

impl Pass for ExpandRealloc {
    fn name(&self) -> &'static str {
        "expand-realloc"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let ops: Vec<OpId> = m
            .collect_ops(m.top())
            .into_iter()
            .filter(|&o| m.is(o, MemrefOp::Realloc))
            .collect();
        let mut n = 0u64;
        for op in ops {
            if used_later(m, op) {
                return Err(ir::dialects::op_error(
                    m,
                    op,
                    "the source of memref.realloc is used after the realloc (realloc frees it)",
                ));
            }
            if self.all || !handled_in_place(m, op) {
                expand(m, op);
                n += 1;
            }
        }
        cx.bump("expand-realloc.expanded", n);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "expand-realloc",
        summary: "memref.realloc to alloc + copy where deallocation cannot keep it (option all: every one)",
        create: |o: &PassOptions| Ok(Box::new(ExpandRealloc { all: o.flag("all") })),
    }
}

/// The realloc frees a buffer of its own block.
fn handled_in_place(m: &Module, op: OpId) -> bool {
    let Some(src) = m.operand(op, 0) else {
        return false;
    };
    let same_block = m.defining_op(src).and_then(|d| m.op_block(d)) == m.op_block(op);
    is_owned_allocation(m, src) && same_block
}

/// The source is used after the realloc (directly) in the realloc's block.
fn used_later(m: &Module, op: OpId) -> bool {
    let (Some(src), Some(block)) = (m.operand(op, 0), m.op_block(op)) else {
        return false;
    };
    m.users(src).into_iter().any(|u| {
        u != op
            && m.ancestor_in_block(block, u)
                .is_some_and(|a| a != op && m.is_before_in_block(op, a))
    })
}

fn expand(m: &mut Module, op: OpId) {
    let (Some(src), Some(res)) = (m.operand(op, 0), m.result(op, 0)) else {
        return;
    };
    let ty = m.value_type(res).clone();
    let src_ty = m.value_type(src).clone();
    let loc = m.loc(op).clone();
    let new_size = m.operand(op, 1);
    let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
    let dim = |b: &mut Builder<'_>, t: &Type, v: ValueId, dynamic: Option<ValueId>| match t
        .shape()
        .and_then(|s| s.first().copied())
    {
        Some(d) if d != DYN => b.const_index(d),
        _ => dynamic.unwrap_or_else(|| b.dim(v, 0)),
    };
    let old_n = dim(&mut b, &src_ty, src, None);
    let new_n = dim(&mut b, &ty, src, new_size);
    let sizes: Vec<ValueId> = new_size.into_iter().collect();
    let fresh = b.alloc(&ty, &sizes);
    // Copy min(old, new) elements.
    let less = b.cmpi(CmpI::Ult, old_n, new_n);
    let count = b.select(less, old_n, new_n);
    let zero = b.const_index(0);
    let one = b.const_index(1);
    b.scf_for(zero, count, one, &[], |b, i, _| {
        let x = b.load(src, &[i]);
        b.store(x, fresh, &[i]);
        Vec::new()
    });
    m.replace_all_uses(res, fresh);
    m.erase_op(op);
}
