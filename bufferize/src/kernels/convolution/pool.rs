//! GlobalAveragePool, GlobalMaxPool, MaxUnpool; the kind of a pool.

use crate::convert::{dims, Lowering};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds, PARALLEL_MIN_WORK};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

/// The reduction of a pool: MaxPool / GlobalMaxPool or AveragePool /
/// GlobalAveragePool.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PoolKind {
    Max,
    Average,
}

/// The start of a pool's reduction: the lowest value for max, else 0.
fn neutral(b: &mut Builder<'_>, kind: PoolKind, elem: &ir::Type) -> ValueId {
    match kind {
        PoolKind::Max => scalar::lowest(b, elem),
        PoolKind::Average => b.zero(elem),
    }
}

/// One step of a pool's reduction: the max (NaN propagates) or the sum.
fn combine(b: &mut Builder<'_>, kind: PoolKind, acc: ValueId, v: ValueId) -> ValueId {
    match kind {
        PoolKind::Max => b.max(acc, v),
        PoolKind::Average => b.add(acc, v),
    }
}

pub fn global_pool(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: PoolKind,
) -> Result<Vec<ValueId>> {
    // X of GlobalMaxPool and GlobalAveragePool
    let x = cx.input(b.m, op, ops::GlobalMaxPool::X)?;
    let sx = shape_of(b.m, x);
    if sx.len() < 3 {
        return Err(op_error(b.m, op, "expects input of rank >= 3"));
    }
    let dx = dims(b, x);
    let mut out_dims = vec![dx[0], dx[1]];
    for _ in 2..sx.len() {
        out_dims.push(b.const_index(1));
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    // Each channel's plane folded in vectors, like a ReduceMax/Mean over
    // the trailing dims (a scalar chain of NaN-propagating maxima was 4×
    // a static build's, whose LLVM unrolled the known plane).
    let as_reduce = match kind {
        PoolKind::Max => crate::kernels::nn::reduce::Reduce::Max,
        PoolKind::Average => crate::kernels::nn::reduce::Reduce::Mean,
    };
    if crate::kernels::nn::reduce::rows(cx, b, op, as_reduce, (x, &dx, 2), out)? {
        return Ok(vec![out]);
    }
    let elem = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let spatial = dx[2..].to_vec();
    loop_nest_by_work(
        b,
        &bounds,
        &[dx[0], dx[1]],
        &dx,
        PARALLEL_MIN_WORK,
        &mut |b, ivs| {
            let init = neutral(b, kind, &elem);
            let r = reduce_nest(b, &bounds, &spatial, init, &mut |b, k, acc| {
                let mut idx = ivs.to_vec();
                idx.extend_from_slice(k);
                let v = b.load(x, &idx);
                combine(b, kind, acc, v)
            });
            let r = match kind {
                PoolKind::Max => r,
                PoolKind::Average => {
                    let mut n = b.const_index(1);
                    for &d in &spatial {
                        n = b.mul(n, d);
                    }
                    let as_int = b.index_cast(n, ir::Type::i64());
                    let nf = b.sitofp(as_int, elem.clone());
                    b.divf(r, nf)
                }
            };
            let mut idx = ivs.to_vec();
            idx.extend(std::iter::repeat_n(zero, sx.len() - 2));
            b.store(r, out, &idx);
        },
    );
    Ok(vec![out])
}

/// MaxUnpool: zeros, with each input value stored where its flat index
/// points in the unpooled shape `(in - 1)·stride - pads + kernel` (the top-left
/// corner of a larger `output_shape`, as the reference).
pub fn max_unpool(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::MaxUnpool::X)?;
    let ind = cx.input(b.m, op, ops::MaxUnpool::I)?;
    let given = cx.optional_input(b.m, op, ops::MaxUnpool::OUTPUT_SHAPE)?;
    let sx = shape_of(b.m, x);
    let attrs = ops::MaxUnpool::of(b.m, op);
    let kernel = attrs.kernel_shape();
    let sp = kernel.len();
    let strides = attrs.strides().unwrap_or_else(|| vec![1; sp]);
    let pads = attrs.pads().unwrap_or_else(|| vec![0; 2 * sp]);
    if shape_of(b.m, ind).len() != sx.len()
        || sx.len() != sp + 2
        || strides.len() != sp
        || pads.len() != 2 * sp
    {
        return Err(op_error(
            b.m,
            op,
            "MaxUnpool needs indices of X's rank and window attributes per spatial dim",
        ));
    }
    let dx = dims(b, x);
    let di = dims(b, ind);
    for (d, (&a, &c)) in di.iter().zip(&dx).enumerate() {
        crate::kernels::support::checks::equal(
            b,
            op,
            a,
            c,
            &format!("indices dim {d} differs from X's"),
        )?;
    }
    // The unpooled extents (in - 1)·stride - pads + kernel.
    let mut ud = dx[..2].to_vec();
    for d in 0..sp {
        let one = b.const_index(1);
        let m1 = b.subi(dx[d + 2], one);
        let s = crate::loops::scale_add(b, None, m1, strides[d]);
        let c = b.const_index(kernel[d] - pads[d] - pads[sp + d]);
        let e = b.addi(s, c);
        // An empty extent drops every index; 1 keeps the decoding defined.
        ud.push(b.maxsi(e, one));
    }
    let od: Vec<ValueId> = match given {
        Some(g) => (0..sp as i64 + 2)
            .map(|d| crate::kernels::support::index::index_at(b, g, Some(d)))
            .collect(),
        None => ud.clone(),
    };
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let zero_v = b.zero(&elem);
    loop_nest(b, &bounds, &od, &mut |b, ivs| b.store(zero_v, out, ivs));
    let total = crate::kernels::support::checks::count(b, &ud);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let i = b.load(ind, ivs);
        let i = crate::kernels::support::index::to_index(b, i);
        // Indices outside the unpooled tensor, or positions outside the
        // result, are dropped.
        let ge = b.cmp(Cmp::Ge, i, bounds.zero);
        let lt = b.cmp(Cmp::Lt, i, total);
        let mut ok = b.andi(ge, lt);
        let mut rest = b.select(ok, i, bounds.zero);
        let mut idx = vec![bounds.zero; ud.len()];
        for d in (0..ud.len()).rev() {
            let p = b.remui(rest, ud[d]);
            rest = b.divui(rest, ud[d]);
            let fits = b.cmp(Cmp::Lt, p, od[d]);
            ok = b.andi(ok, fits);
            idx[d] = p;
        }
        let idx: Vec<ValueId> = idx
            .into_iter()
            .map(|p| b.select(ok, p, bounds.zero))
            .collect();
        let old = b.load(out, &idx);
        let v = b.select(ok, v, old);
        b.store(v, out, &idx);
    });
    Ok(vec![out])
}
