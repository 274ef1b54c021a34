//! Softmax, LogSoftmax and Hardmax along one axis (the importer rewrites
//! the older opsets' 2-D coercion into this form).

use super::scalar;
use super::{alloc_result, shape_of};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds, PARALLEL_MIN_WORK};
use ir::builder::Cmp;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

/// Which normalization.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    Softmax,
    LogSoftmax,
    Hardmax,
}

pub fn softmax(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: Norm,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let axis = match kind {
        Norm::Softmax => ops::Softmax::of(b.m, op).axis(),
        Norm::LogSoftmax => ops::LogSoftmax::of(b.m, op).axis(),
        Norm::Hardmax => ops::Hardmax::of(b.m, op).axis(),
    };
    let axis = super::axis(b.m, op, axis, rank)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let mut outer_ubs = dx.clone();
    outer_ubs[axis] = bounds.one;
    let inner_ubs = [dx[axis]];
    let elem = super::elem_of(b.m, x);
    let merge = |outer: &[ValueId], inn: &[ValueId]| -> Vec<ValueId> {
        let mut idx = outer.to_vec();
        idx[axis] = inn[0];
        idx
    };
    loop_nest_by_work(
        b,
        &bounds,
        &outer_ubs,
        &dx,
        PARALLEL_MIN_WORK,
        &mut |b, ovs| {
            let lowest = scalar::lowest(b, &elem);
            let mx = reduce_nest(b, &bounds, &inner_ubs, lowest, &mut |b, ivs, acc| {
                let v = b.load(x, &merge(ovs, ivs));
                if kind == Norm::Hardmax {
                    // Strictly greater keeps the first maximum.
                    let gt = b.cmp(Cmp::Gt, v, acc);
                    b.select(gt, v, acc)
                } else {
                    b.max(acc, v)
                }
            });
            if kind == Norm::Hardmax {
                let zero = b.constant(&elem, 0.0);
                let one = b.constant(&elem, 1.0);
                let fals = b.const_bool(false);
                reduce_nest(b, &bounds, &inner_ubs, fals, &mut |b, ivs, done| {
                    let idx = merge(ovs, ivs);
                    let v = b.load(x, &idx);
                    let eq = b.cmp(Cmp::Eq, v, mx);
                    let t = b.const_bool(true);
                    let not_done = b.xori(done, t);
                    let hit = b.andi(eq, not_done);
                    let r = b.select(hit, one, zero);
                    b.store(r, out, &idx);
                    b.ori(done, hit)
                });
                return;
            }
            let acc_ty = scalar::sum_acc_type(&elem);
            let zero = b.constant(&acc_ty, 0.0);
            let sum = reduce_nest(b, &bounds, &inner_ubs, zero, &mut |b, ivs, acc| {
                let idx = merge(ovs, ivs);
                let v = b.load(x, &idx);
                let d = b.sub(v, mx);
                let e = b.exp(d);
                if kind == Norm::Softmax {
                    b.store(e, out, &idx);
                }
                let e = scalar::fcast(b, e, &acc_ty);
                b.add(acc, e)
            });
            let sum = scalar::fcast(b, sum, &elem);
            let log_sum = (kind == Norm::LogSoftmax).then(|| b.log(sum));
            loop_nest(b, &bounds, &inner_ubs, &mut |b, ivs| {
                let idx = merge(ovs, ivs);
                let r = match log_sum {
                    Some(ls) => {
                        let v = b.load(x, &idx);
                        let d = b.sub(v, mx);
                        b.sub(d, ls)
                    }
                    None => {
                        let e = b.load(out, &idx);
                        b.div(e, sum)
                    }
                };
                b.store(r, out, &idx);
            });
        },
    );
    Ok(vec![out])
}
