//! MatMul (batched, broadcast, 1-D operands) and Gemm as reduction nests.

use super::scalar::{self, constant};
use super::{
    alloc_result, attr_float, attr_int, elem_of, load_at as load, shape_of, store_at as store,
};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};

/// Batch indices of an operand: its leading dims aligned right to the
/// output's batch dims, broadcast (size-1) dims pinned to 0.
fn batch_index(
    shape: &[i64],
    batch_rank: usize,
    out_batch: &[i64],
    ivs: &[ValueId],
    zero: ValueId,
) -> Vec<ValueId> {
    let off = out_batch.len() - batch_rank;
    (0..batch_rank)
        .map(|k| {
            if shape[k] == 1 && out_batch[k + off] != 1 {
                zero
            } else {
                ivs[k + off]
            }
        })
        .collect()
}

pub fn matmul(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (a, w) = (cx.input(b.m, op, 0)?, cx.input(b.m, op, 1)?);
    let (sa, sb) = (shape_of(b.m, a), shape_of(b.m, w));
    if sa.is_empty() || sb.is_empty() {
        return Err(op_error(b.m, op, "MatMul operands must have rank >= 1"));
    }
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let (a_vec, b_vec) = (sa.len() == 1, sb.len() == 1);
    let mat_dims = usize::from(!a_vec) + usize::from(!b_vec);
    let Some(batch_rank) = out_shape.len().checked_sub(mat_dims) else {
        return Err(op_error(b.m, op, "inconsistent MatMul result rank"));
    };
    let out_batch = out_shape[..batch_rank].to_vec();
    let (a_batch, b_batch) = (sa.len().saturating_sub(2), sb.len().saturating_sub(2));
    let da = dims(b, a);
    let db = dims(b, w);
    let k_dim = da[da.len() - 1];
    // Output dims: batch dims from whichever operand is not broadcast there.
    let mut out_dims = Vec::new();
    for j in 0..batch_rank {
        let from_a = (j + a_batch)
            .checked_sub(batch_rank)
            .filter(|&k| sa[k] != 1)
            .map(|k| da[k]);
        let from_b = (j + b_batch)
            .checked_sub(batch_rank)
            .filter(|&k| sb[k] != 1)
            .map(|k| db[k]);
        out_dims.push(match (from_a, from_b) {
            (Some(v), _) | (None, Some(v)) => v,
            (None, None) => b.const_index(1),
        });
    }
    if !a_vec {
        out_dims.push(da[da.len() - 2]);
    }
    if !b_vec {
        out_dims.push(db[db.len() - 1]);
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let i = (!a_vec).then(|| ivs[batch_rank]);
        let j = (!b_vec).then(|| ivs[ivs.len() - 1]);
        let mut ai = batch_index(&sa, a_batch, &out_batch, ivs, zero);
        let mut bi = batch_index(&sb, b_batch, &out_batch, ivs, zero);
        let init = constant(b, &elem, 0.0);
        let sum = reduce_nest(b, &bounds, &[k_dim], init, &mut |b, k, acc| {
            let mut aidx = ai.clone();
            aidx.extend(i);
            aidx.push(k[0]);
            let mut bidx = bi.clone();
            bidx.push(k[0]);
            bidx.extend(j);
            let x = load(b, a, &aidx);
            let y = load(b, w, &bidx);
            let p = scalar::mul(b, x, y);
            scalar::add(b, acc, p)
        });
        ai.clear();
        bi.clear();
        store(b, sum, out, ivs);
    });
    Ok(vec![out])
}

/// Y = alpha * A' B' + beta * C, with C broadcast to (M, N).
pub fn gemm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let (a, w) = (cx.input(b.m, op, 0)?, cx.input(b.m, op, 1)?);
    let c = if cx.has_input(b.m, op, 2) {
        Some(cx.input(b.m, op, 2)?)
    } else {
        None
    };
    let (ta, tb) = (
        attr_int(b.m, op, "transA", 0) != 0,
        attr_int(b.m, op, "transB", 0) != 0,
    );
    let (alpha, beta) = (
        attr_float(b.m, op, "alpha", 1.0),
        attr_float(b.m, op, "beta", 1.0),
    );
    if shape_of(b.m, a).len() != 2 || shape_of(b.m, w).len() != 2 {
        return Err(op_error(b.m, op, "Gemm operands A and B must be 2-D"));
    }
    let da = dims(b, a);
    let db = dims(b, w);
    let (m_dim, k_dim) = if ta { (da[1], da[0]) } else { (da[0], da[1]) };
    let n_dim = if tb { db[0] } else { db[1] };
    let out = alloc_result(b, op, 0, &[m_dim, n_dim])?;
    let elem = elem_of(b.m, out);
    let c_shape = c.map(|c| shape_of(b.m, c)).unwrap_or_default();
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    loop_nest(b, &bounds, &[m_dim, n_dim], &mut |b, ivs| {
        let (i, j) = (ivs[0], ivs[1]);
        let init = constant(b, &elem, 0.0);
        let sum = reduce_nest(b, &bounds, &[k_dim], init, &mut |b, k, acc| {
            let aidx = if ta { [k[0], i] } else { [i, k[0]] };
            let bidx = if tb { [j, k[0]] } else { [k[0], j] };
            let x = load(b, a, &aidx);
            let y = load(b, w, &bidx);
            let p = scalar::mul(b, x, y);
            scalar::add(b, acc, p)
        });
        let mut r = sum;
        if alpha != 1.0 {
            let al = constant(b, &elem, alpha);
            r = scalar::mul(b, r, al);
        }
        if let Some(c) = c {
            // Unidirectional broadcast of C to (M, N).
            let off = 2 - c_shape.len().min(2);
            let idx: Vec<ValueId> = c_shape
                .iter()
                .enumerate()
                .map(|(k, &d)| if d == 1 { zero } else { ivs[k + off] })
                .collect();
            let mut cv = load(b, c, &idx);
            if beta != 1.0 {
                let be = constant(b, &elem, beta);
                cv = scalar::mul(b, cv, be);
            }
            r = scalar::add(b, r, cv);
        }
        store(b, r, out, ivs);
    });
    Ok(vec![out])
}
