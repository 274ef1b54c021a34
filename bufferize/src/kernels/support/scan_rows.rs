//! The scan outputs of an ONNX Loop whose row count is known only as the
//! loop runs: the trip count M is absent, huge (torch writes INT64_MAX for
//! a while loop) or larger than the condition lets the loop run. Rows go
//! into a flat buffer that doubles (`memref.realloc`) whenever it is full,
//! so the copying stays linear in the rows written. Its size is computed
//! with an overflow check: a size no buffer can have saturates, and the
//! allocation then fails with the out-of-memory error (lower: alloc).
//!
//! Carried through the loop per output: the flat buffer, its capacity in
//! rows, and the slice dims (taken from the first slice; every later one
//! is checked against them).

use crate::convert::{alloc, dims};
use crate::kernels::support::checks;
use ir::builder::{CmpI, ViewOffset};
use ir::dialects::memref::DISJOINT_SLOT;
use ir::MemrefOp;
use ir::{Attribute, Builder, InsertPoint, OpId, Result, Type, ValueId, DYN};

/// Rows of the first allocation.
const FIRST_ROWS: i64 = 4;

/// One growing scan output: result type `[?, d1, ..., dr]`.
pub(crate) struct Growing {
    /// The result's memref type.
    pub ty: Type,
}

impl Growing {
    fn slice_shape(&self) -> Vec<i64> {
        self.ty
            .shape()
            .map(|s| s.get(1..).unwrap_or_default().to_vec())
            .unwrap_or_default()
    }
    fn flat_type(&self) -> Type {
        Type::memref(vec![DYN], self.ty.element_type().clone())
    }

    /// The carried values before the first iteration: an empty buffer, no
    /// capacity, the slice dims the result type fixes (0 for the others,
    /// what a loop that never runs gives).
    pub fn initial(&self, b: &mut Builder<'_>) -> Vec<ValueId> {
        let zero = b.const_index(0);
        let mut out = vec![alloc(b, &self.flat_type(), &[zero]), zero];
        for d in self.slice_shape() {
            out.push(b.const_index(if d == DYN { 0 } else { d }));
        }
        out
    }

    /// Stores slice `y` as row `i`, growing the buffer first when full;
    /// the carried values of the next iteration. When `y` is a buffer the
    /// body allocates, the row is made ready as soon as that buffer's dims
    /// are known, before the body computes what goes into it, and `y` is
    /// copied into it with a `DISJOINT_SLOT` copy: the dealloc stage's
    /// write-into-destination then computes `y` (and a Concat's inputs
    /// that make it) in the row.
    pub fn push(
        &self,
        b: &mut Builder<'_>,
        op: OpId,
        carried: &[ValueId],
        (y, i): (ValueId, ValueId),
        out: usize,
    ) -> Result<Vec<ValueId>> {
        let here = b.block();
        let alloc_of_y = b
            .m
            .defining_op(y)
            .filter(|&a| b.m.is(a, MemrefOp::Alloc) && here.is_some() && b.m.op_block(a) == here);
        let loc = b.loc.clone();
        let early = alloc_of_y.zip(here).and_then(|(a, blk)| {
            let at = earliest_point(b.m, a, blk);
            let mut early = Builder::new(b.m, at).with_loc(loc);
            let dy = crate::convert::given_dims(&mut early, y)?;
            Some(self.open_row(&mut early, op, carried, (&dy, i), out))
        });
        let (slot, next) = match early {
            Some(row) => row?,
            None => {
                let dy = dims(b, y);
                self.open_row(b, op, carried, (&dy, i), out)?
            }
        };
        b.op(
            MemrefOp::Copy,
            &[y, slot],
            &[],
            &[(DISJOINT_SLOT, Attribute::Unit)],
        );
        Ok(next)
    }

    /// Row `i` for a slice of dims `dy` (checked against the kept ones),
    /// after growing the buffer when full: the row's view (contiguous, at
    /// offset `i * row`) and the carried values of the next iteration.
    fn open_row(
        &self,
        b: &mut Builder<'_>,
        op: OpId,
        carried: &[ValueId],
        (dy, i): (&[ValueId], ValueId),
        out: usize,
    ) -> Result<(ValueId, Vec<ValueId>)> {
        let (flat, cap, kept) = (carried[0], carried[1], &carried[2..]);
        let zero = b.const_index(0);
        let first = b.cmpi(CmpI::Eq, i, zero);
        let mut now = Vec::with_capacity(dy.len());
        let shape = self.slice_shape();
        for (k, (&have, &want)) in kept.iter().zip(dy).enumerate() {
            if let Some(&d) = shape.get(k).filter(|&&d| d != DYN) {
                // The type fixes it for every slice.
                now.push(b.const_index(d));
                continue;
            }
            let d = b.select(first, want, have);
            let msg = format!("result {out}: slice dim {k} changes between iterations");
            checks::equal(b, op, want, d, &msg)?;
            now.push(d);
        }
        let row = crate::kernels::support::index::product(b, &now);
        let full = b.cmpi(CmpI::Uge, i, cap);
        let flat_ty = self.flat_type();
        let grown = b.scf_if(
            full,
            &[flat_ty.clone(), Type::Index],
            &mut |tb| {
                let (two, least) = (tb.const_index(2), tb.const_index(FIRST_ROWS));
                let doubled = tb.muli(cap, two);
                let rows = tb.maxsi(doubled, least);
                let elems = saturating_mul(tb, rows, row);
                vec![tb.realloc(flat, Some(elems), flat_ty.clone()), rows]
            },
            Some(&mut |_| vec![flat, cap]),
        );
        let (flat, cap) = (b.m.results(grown)[0], b.m.results(grown)[1]);
        let slot = self.row_view(b, flat, (i, row), &now);
        let mut next = vec![flat, cap];
        next.extend(now);
        Ok((slot, next))
    }

    /// Row `i` of `flat` as a row-major view of the slice shape at offset
    /// `i * row`.
    fn row_view(
        &self,
        b: &mut Builder<'_>,
        flat: ValueId,
        (i, row): (ValueId, ValueId),
        now: &[ValueId],
    ) -> ValueId {
        let offset = b.muli(i, row);
        let elem = self.ty.element_type().clone();
        let shape = self.slice_shape();
        b.row_major_view(flat, &elem, (&shape, now), ViewOffset::Value(offset))
    }

    /// The result after `trips` iterations: the first rows of the buffer.
    pub fn finish(&self, b: &mut Builder<'_>, carried: &[ValueId], trips: ValueId) -> ValueId {
        let mut sizes = vec![trips];
        sizes.extend_from_slice(&carried[2..]);
        let shape = self.ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
        crate::kernels::support::views::reinterpret(b, carried[0], &self.ty, &shape, &sizes)
    }

    /// How many values `initial` and `push` carry.
    pub fn carried_len(&self) -> usize {
        2 + self.slice_shape().len()
    }
}

/// The first point of block `blk` where the dims `alloc` takes are
/// defined: after the last of them the block defines, else its start.
fn earliest_point(m: &ir::Module, alloc: OpId, blk: ir::BlockId) -> InsertPoint {
    let mut last: Option<OpId> = None;
    for &v in m.operands(alloc) {
        let Some(d) = m.defining_op(v).and_then(|d| m.ancestor_in_block(blk, d)) else {
            continue;
        };
        if last.is_none_or(|l| m.is_before_in_block(l, d)) {
            last = Some(d);
        }
    }
    last.map_or(InsertPoint::Start(blk), InsertPoint::After)
}

/// `x * y` for sizes, or `i64::MAX` when the product does not fit (an
/// allocation of that many elements then fails cleanly).
fn saturating_mul(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let (one, max) = (b.const_index(1), b.const_index(i64::MAX));
    let y1 = b.maxsi(y, one);
    let limit = b.divsi(max, y1);
    let over = b.cmpi(CmpI::Sgt, x, limit);
    let p = b.muli(x, y);
    b.select(over, max, p)
}
