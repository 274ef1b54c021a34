//! NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX reference
//! semantics: ignored targets weigh 0; `mean` divides by the weight sum).

use crate::convert::{alloc, dims, Lowering};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

struct Nll {
    weight: Option<ValueId>,
    reduction: String,
    ignore: Option<i64>,
}

/// The options of a loss op from its `ignore_index` and `reduction`.
fn options(
    cx: &Lowering,
    b: &Builder<'_>,
    op: OpId,
    ignore: Option<i64>,
    reduction: &str,
) -> Result<Nll> {
    Ok(Nll {
        weight: cx.optional_input(b.m, op, 2)?,
        reduction: reduction.to_string(),
        ignore,
    })
}

/// The loss of `logp` ([N, C, d...]) against `target` ([N, d...]) into a
/// new result 0.
fn nll(b: &mut Builder<'_>, op: OpId, logp: ValueId, target: ValueId, o: &Nll) -> Result<ValueId> {
    let dt = dims(b, target);
    let elem = elem_of(b.m, logp);
    let bounds = Bounds::new(b);
    let none = o.reduction == "none";
    let out = if none {
        alloc_result(b, op, 0, &dt)?
    } else {
        alloc_result(b, op, 0, &[])?
    };
    let wsum = alloc(b, &Type::memref(vec![], elem.clone()), &[]);
    let zero = b.constant(&elem, 0.0);
    if !none {
        b.store(zero, out, &[]);
        b.store(zero, wsum, &[]);
    }
    let tt = elem_of(b.m, target);
    loop_nest(b, &bounds, &dt, &mut |b, ivs| {
        let t = b.load(target, ivs);
        let ignored = match o.ignore {
            Some(ig) => {
                let c = b.const_int(ig, tt.clone());
                b.cmpi(CmpI::Eq, t, c)
            }
            None => b.const_bool(false),
        };
        let ti = crate::kernels::support::index::to_index(b, t);
        let ti = b.select(ignored, bounds.zero, ti);
        let mut xi = vec![ivs[0], ti];
        xi.extend_from_slice(&ivs[1..]);
        let v = b.load(logp, &xi);
        let one = b.constant(&elem, 1.0);
        let w = match o.weight {
            Some(wt) => b.load(wt, &[ti]),
            None => one,
        };
        let zero = b.constant(&elem, 0.0);
        let w = b.select(ignored, zero, w);
        let nv = b.sub(zero, v);
        let l = b.mul(nv, w);
        if none {
            b.store(l, out, ivs);
        } else {
            let acc = b.load(out, &[]);
            let s = b.add(acc, l);
            b.store(s, out, &[]);
            let wa = b.load(wsum, &[]);
            let ws = b.add(wa, w);
            b.store(ws, wsum, &[]);
        }
    });
    if o.reduction == "mean" {
        let s = b.load(out, &[]);
        let w = b.load(wsum, &[]);
        let m = b.div(s, w);
        b.store(m, out, &[]);
    } else if !none && o.reduction != "sum" {
        return Err(op_error(b.m, op, "unknown reduction"));
    }
    Ok(out)
}

pub fn nll_loss(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::NegativeLogLikelihoodLoss::INPUT)?;
    let t = cx.input(b.m, op, ops::NegativeLogLikelihoodLoss::TARGET)?;
    if shape_of(b.m, x).len() < 2 || !elem_of(b.m, x).is_float() {
        return Err(op_error(b.m, op, "expects a float input of rank >= 2"));
    }
    let v = ops::NegativeLogLikelihoodLoss::of(b.m, op);
    let o = options(cx, b, op, v.ignore_index(), v.reduction())?;
    Ok(vec![nll(b, op, x, t, &o)?])
}

pub fn softmax_cross_entropy(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::SoftmaxCrossEntropyLoss::SCORES)?;
    let t = cx.input(b.m, op, ops::SoftmaxCrossEntropyLoss::LABELS)?;
    if shape_of(b.m, x).len() < 2 || !elem_of(b.m, x).is_float() {
        return Err(op_error(b.m, op, "expects a float input of rank >= 2"));
    }
    let v = ops::SoftmaxCrossEntropyLoss::of(b.m, op);
    let o = options(cx, b, op, v.ignore_index(), v.reduction())?;
    let dx = dims(b, x);
    let with_logp = b.m.results(op).len() > 1;
    let logp = if with_logp {
        alloc_result(b, op, 1, &dx)?
    } else {
        let ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
        let shape = shape_of(b.m, x);
        let lt = Type::memref(shape.clone(), ty.element_type().clone());
        crate::convert::alloc_dims(b, &lt, &dx)
    };
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let mut outer = dx.clone();
    outer[1] = bounds.one;
    let c = dx[1];
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        let at = |k: ValueId| {
            let mut i = ovs.to_vec();
            i[1] = k;
            i
        };
        let lowest = scalar::lowest(b, &elem);
        let mx = reduce_nest(b, &bounds, &[c], lowest, &mut |b, k, acc| {
            let v = b.load(x, &at(k[0]));
            b.max(acc, v)
        });
        let zero = b.constant(&elem, 0.0);
        let s = reduce_nest(b, &bounds, &[c], zero, &mut |b, k, acc| {
            let v = b.load(x, &at(k[0]));
            let d = b.sub(v, mx);
            let e = b.exp(d);
            b.add(acc, e)
        });
        let ls = b.log(s);
        loop_nest(b, &bounds, &[c], &mut |b, k| {
            let idx = at(k[0]);
            let v = b.load(x, &idx);
            let d = b.sub(v, mx);
            let r = b.sub(d, ls);
            b.store(r, logp, &idx);
        });
    });
    let loss = nll(b, op, logp, t, &o)?;
    let mut res = vec![loss];
    if with_logp {
        res.push(logp);
    }
    Ok(res)
}
