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

use super::checks;
use crate::convert::{alloc, dims};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

/// Rows of the first allocation.
const FIRST_ROWS: i64 = 4;

/// One growing scan output: result type `[?, d1, ..., dr]`.
pub(super) struct Growing {
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
    /// the carried values of the next iteration.
    pub fn push(
        &self,
        b: &mut Builder<'_>,
        op: OpId,
        carried: &[ValueId],
        (y, i): (ValueId, ValueId),
        out: usize,
    ) -> Result<Vec<ValueId>> {
        let (flat, cap, kept) = (carried[0], carried[1], &carried[2..]);
        let dy = dims(b, y);
        let zero = b.const_index(0);
        let first = b.cmpi(CmpI::Eq, i, zero);
        let mut now = Vec::with_capacity(dy.len());
        for (k, (&have, &want)) in kept.iter().zip(&dy).enumerate() {
            let d = b.select(first, want, have);
            let msg = format!("result {out}: slice dim {k} changes between iterations");
            checks::equal(b, op, want, d, &msg)?;
            now.push(d);
        }
        let row = super::gemm::product(b, &now);
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
        let mut sizes = vec![cap];
        sizes.extend_from_slice(&now);
        let shape = self.ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
        let view = super::shape::reinterpret(b, flat, &self.ty, &shape, &sizes);
        let bounds = Bounds::new(b);
        loop_nest(b, &bounds, &now, &mut |b, ivs| {
            let v = b.load(y, ivs);
            let mut at = vec![i];
            at.extend_from_slice(ivs);
            b.store(v, view, &at);
        });
        let mut next = vec![flat, cap];
        next.extend(now);
        Ok(next)
    }

    /// The result after `trips` iterations: the first rows of the buffer.
    pub fn finish(&self, b: &mut Builder<'_>, carried: &[ValueId], trips: ValueId) -> ValueId {
        let mut sizes = vec![trips];
        sizes.extend_from_slice(&carried[2..]);
        let shape = self.ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
        super::shape::reinterpret(b, carried[0], &self.ty, &shape, &sizes)
    }

    /// How many values `initial` and `push` carry.
    pub fn carried_len(&self) -> usize {
        2 + self.slice_shape().len()
    }
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
