//! Compress (data-dependent size: count, allocate, fill),
//! ReverseSequence and Det.

use crate::convert::{dims, Lowering};
use crate::kernels::support::checks;
use crate::kernels::support::index::to_index;
use crate::kernels::{
    support::alloc_result, support::elem_of, support::finish, support::shape_of,
    support::store_converted,
};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{CmpF, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

/// Compress: the selected slices along `axis` (or of the flattened input).
pub fn compress(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Compress::INPUT)?;
    let cond = cx.input(b.m, op, ops::Compress::CONDITION)?;
    let rank = shape_of(b.m, x).len();
    let axis = match ops::Compress::of(b.m, op).axis() {
        Some(a) => Some(crate::kernels::support::axis(b.m, op, a, rank)?),
        None => None,
    };
    let bounds = Bounds::new(b);
    // Flattened: view x as 1-D.
    let (x, axis) = match axis {
        Some(a) => (x, a),
        None => {
            let dx = dims(b, x);
            let mut n = bounds.one;
            for d in dx {
                n = b.muli(n, d);
            }
            let elem = elem_of(b.m, x);
            let ty = ir::Type::memref(vec![ir::DYN], elem);
            (
                crate::kernels::support::views::reinterpret(b, x, &ty, &[ir::DYN], &[n]),
                0,
            )
        }
    };
    let dx = dims(b, x);
    let Some(&nc) = dims(b, cond).first() else {
        return Err(op_error(b.m, op, "the condition must be 1-D"));
    };
    let len = b.minsi(nc, dx[axis]);
    let count = reduce_nest(b, &bounds, &[len], bounds.zero, &mut |b, i, acc| {
        let c = b.load(cond, i);
        let inc = b.addi(acc, bounds.one);
        b.select(c, inc, acc)
    });
    let mut od = dx.clone();
    od[axis] = count;
    let out = alloc_result(b, op, 0, &od)?;
    let mut outer = dx.clone();
    outer[axis] = bounds.one;
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        reduce_nest(b, &bounds, &[len], bounds.zero, &mut |b, i, pos| {
            let c = b.load(cond, i);
            let mut xi = ovs.to_vec();
            xi[axis] = i[0];
            let mut oi = ovs.to_vec();
            oi[axis] = pos;
            let xi2 = xi.clone();
            let oi2 = oi.clone();
            b.scf_if(
                c,
                &[],
                &mut |b| {
                    let v = b.load(x, &xi2);
                    b.store(v, out, &oi2);
                    Vec::new()
                },
                None,
            );
            let inc = b.addi(pos, bounds.one);
            b.select(c, inc, pos)
        });
    });
    Ok(vec![out])
}

pub fn reverse_sequence(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::ReverseSequence::INPUT)?;
    let lens = cx.input(b.m, op, ops::ReverseSequence::SEQUENCE_LENS)?;
    let rank = shape_of(b.m, x).len();
    let view = ops::ReverseSequence::of(b.m, op);
    let bax = crate::kernels::support::axis(b.m, op, view.batch_axis(), rank)?;
    let tax = crate::kernels::support::axis(b.m, op, view.time_axis(), rank)?;
    let dx = dims(b, x);
    let dl = dims(b, lens);
    let Some(&nl) = dl.first() else {
        return Err(op_error(b.m, op, "sequence_lens must be 1-D"));
    };
    checks::equal(
        b,
        op,
        nl,
        dx[bax],
        "sequence_lens differs from the batch dim",
    )?;
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    // Each length at most the time dim (one pass over the batch).
    loop_nest(b, &bounds, &[nl], &mut |b, i| {
        let l = b.load(lens, i);
        let l = to_index(b, l);
        let ok = b.cmpi(CmpI::Sle, l, dx[tax]);
        checks::assert(b, op, ok, "a sequence length exceeds the time dim");
    });
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let l = b.load(lens, &[ivs[bax]]);
        let l = to_index(b, l);
        let t = ivs[tax];
        let inside = b.cmpi(CmpI::Slt, t, l);
        let last = b.subi(l, bounds.one);
        let rt = b.subi(last, t);
        let mut xi = ivs.to_vec();
        xi[tax] = b.select(inside, rt, t);
        let v = b.load(x, &xi);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

/// Det of each trailing n×n matrix: Gaussian elimination with partial
/// pivoting in f64 on a scratch copy (a zero pivot gives 0).
pub fn det(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Det::X)?;
    let sx = shape_of(b.m, x);
    let r = sx.len();
    if r < 2 {
        return Err(op_error(
            b.m,
            op,
            "Det needs square matrices in the last two dims",
        ));
    }
    let dx = dims(b, x);
    let nv = dx[r - 1];
    checks::equal(b, op, dx[r - 2], nv, "the last two dims differ")?;
    let out = alloc_result(b, op, 0, &dx[..r - 2])?;
    let elem = elem_of(b.m, x);
    let f64t = ir::Type::f64();
    let bounds = Bounds::new(b);
    let one = bounds.one;
    let n = sx[r - 1];
    let dynamic = if n == ir::DYN { vec![nv, nv] } else { vec![] };
    let a = crate::convert::alloc(b, &ir::Type::memref(vec![n, n], f64t.clone()), &dynamic);
    let mut err = None;
    loop_nest(b, &bounds, &dx[..r - 2], &mut |b, batch| {
        let at = |i: ValueId, j: ValueId| -> Vec<ValueId> {
            let mut idx = batch.to_vec();
            idx.extend([i, j]);
            idx
        };
        loop_nest(b, &bounds, &[nv, nv], &mut |b, ij| {
            let v = b.load(x, &at(ij[0], ij[1]));
            store_converted(b, op, v, &f64t, a, ij, &mut err);
        });
        let init = b.constant(&f64t, 1.0);
        let d = reduce_nest(b, &bounds, &[nv], init, &mut |b, k, det| {
            let k = k[0];
            // Pivot: the largest |a[i, k]| for i >= k.
            let z = b.constant(&f64t, -1.0);
            let best = b.scf_for(k, nv, one, &[k, z], |b, i, acc| {
                let v = b.load(a, &[i, k]);
                let m = b.absf(v);
                let gt = b.cmpf(CmpF::Ogt, m, acc[1]);
                vec![b.select(gt, i, acc[0]), b.select(gt, m, acc[1])]
            });
            let p = b.m.results(best)[0];
            // Swap rows k and p (a no-op when equal).
            loop_nest(b, &bounds, &[nv], &mut |b, j| {
                let (u, v) = (b.load(a, &[k, j[0]]), b.load(a, &[p, j[0]]));
                b.store(v, a, &[k, j[0]]);
                b.store(u, a, &[p, j[0]]);
            });
            let swapped = b.cmpi(CmpI::Ne, p, k);
            let neg = b.negf(det);
            let det = b.select(swapped, neg, det);
            let piv = b.load(a, &[k, k]);
            let zf = b.constant(&f64t, 0.0);
            let singular = b.cmpf(CmpF::Oeq, piv, zf);
            let k1 = b.addi(k, one);
            b.scf_for(k1, nv, one, &[], |b, i, _| {
                let lik = b.load(a, &[i, k]);
                let f = b.div(lik, piv);
                let f = b.select(singular, zf, f);
                b.scf_for(k, nv, one, &[], |b, j, _| {
                    let akj = b.load(a, &[k, j]);
                    let aij = b.load(a, &[i, j]);
                    let t = b.mul(f, akj);
                    let v = b.sub(aij, t);
                    b.store(v, a, &[i, j]);
                    Vec::new()
                });
                Vec::new()
            });
            b.mul(det, piv)
        });
        store_converted(b, op, d, &elem, out, batch, &mut err);
    });
    finish(err, vec![out])
}
