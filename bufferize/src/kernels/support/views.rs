//! Views the kernels share: row-major reinterpretations, merged dims, a
//! Transpose's checked permutation.

use ir::builder::ViewOffset;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// A row-major view of `x` with the given sizes (of a copy when `x` is a
/// strided view: reinterpret_cast drops the source's offset and strides).
pub fn reinterpret(
    b: &mut Builder<'_>,
    x: ValueId,
    ty: &Type,
    shape: &[i64],
    sizes: &[ValueId],
) -> ValueId {
    let x = crate::convert::contiguous(b, x);
    b.row_major_view(x, ty.element_type(), (shape, sizes), ViewOffset::Static(0))
}

/// A Transpose's permutation of a rank-`rank` input (reversed dims when
/// absent), checked to be one.
pub fn transpose_perm(m: &Module, op: OpId, rank: usize) -> Result<Vec<usize>> {
    let perm: Vec<i64> = ops::Transpose::of(m, op)
        .perm()
        .unwrap_or_else(|| (0..rank as i64).rev().collect());
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &p in &perm {
        match usize::try_from(p).ok().filter(|&p| p < rank) {
            Some(p) if !seen[p] => {
                seen[p] = true;
                out.push(p);
            }
            _ => break,
        }
    }
    if out.len() != rank || perm.len() != rank {
        return Err(op_error(
            m,
            op,
            "perm must be a permutation of the input dims",
        ));
    }
    Ok(out)
}

/// Dims (static `sv`, runtime `dv`) with each run `start..end` of `runs`
/// (covering every dim, in order) merged into one: the static shape and
/// the sizes.
pub fn merged_dims(
    b: &mut Builder<'_>,
    (sv, dv): (&[i64], &[ValueId]),
    runs: &[(usize, usize)],
) -> (Vec<i64>, Vec<ValueId>) {
    let shape = runs
        .iter()
        .map(|r| {
            sv[r.0..r.1]
                .iter()
                .try_fold(1i64, |acc, &d| (d != DYN).then(|| acc.saturating_mul(d)))
                .unwrap_or(DYN)
        })
        .collect();
    let sizes = runs
        .iter()
        .map(|r| crate::kernels::support::index::product(b, &dv[r.0..r.1]))
        .collect();
    (shape, sizes)
}

/// A row-major view of contiguous `v` with the merged dims `(shape,
/// sizes)` of [`merged_dims`].
pub fn merged_view(
    b: &mut Builder<'_>,
    v: ValueId,
    (shape, sizes): &(Vec<i64>, Vec<ValueId>),
) -> ValueId {
    let ty = Type::memref(shape.clone(), crate::kernels::support::elem_of(b.m, v));
    reinterpret(b, v, &ty, shape, sizes)
}
