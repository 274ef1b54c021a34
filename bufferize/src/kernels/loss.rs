//! NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX reference
//! semantics: ignored targets weigh 0; `mean` divides by the weight sum).

use super::scalar::{self, constant};
use super::{alloc_result, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{alloc, dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

struct Nll {
    weight: Option<ValueId>,
    reduction: String,
    ignore: Option<i64>,
}

fn options(cx: &Lowering, b: &Builder<'_>, op: OpId) -> Result<Nll> {
    let weight = cx.optional_input(b.m, op, 2)?;
    let ignore = b.m.attr(op, "ignore_index").and_then(ir::Attribute::as_int);
    Ok(Nll {
        weight,
        reduction: attr_str(b.m, op, "reduction").unwrap_or("mean").to_string(),
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
    let zero = constant(b, &elem, 0.0);
    if !none {
        store_at(b, zero, out, &[]);
        store_at(b, zero, wsum, &[]);
    }
    let tt = elem_of(b.m, target);
    loop_nest(b, &bounds, &dt, &mut |b, ivs| {
        let t = load_at(b, target, ivs);
        let ignored = match o.ignore {
            Some(ig) => {
                let c = b.const_int(ig, tt.clone());
                scalar::cmpi(b, "eq", t, c)
            }
            None => b.const_bool(false),
        };
        let ti = super::build::to_index(b, t);
        let ti = loops::select(b, ignored, bounds.zero, ti);
        let mut xi = vec![ivs[0], ti];
        xi.extend_from_slice(&ivs[1..]);
        let v = load_at(b, logp, &xi);
        let one = constant(b, &elem, 1.0);
        let w = match o.weight {
            Some(wt) => load_at(b, wt, &[ti]),
            None => one,
        };
        let zero = constant(b, &elem, 0.0);
        let w = scalar::select(b, ignored, zero, w);
        let nv = scalar::sub(b, zero, v);
        let l = scalar::mul(b, nv, w);
        if none {
            store_at(b, l, out, ivs);
        } else {
            let acc = load_at(b, out, &[]);
            let s = scalar::add(b, acc, l);
            store_at(b, s, out, &[]);
            let wa = load_at(b, wsum, &[]);
            let ws = scalar::add(b, wa, w);
            store_at(b, ws, wsum, &[]);
        }
    });
    if o.reduction == "mean" {
        let s = load_at(b, out, &[]);
        let w = load_at(b, wsum, &[]);
        let m = scalar::div(b, s, w);
        store_at(b, m, out, &[]);
    } else if !none && o.reduction != "sum" {
        return Err(op_error(b.m, op, "unknown reduction"));
    }
    Ok(out)
}

pub fn nll_loss(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let t = cx.input(b.m, op, 1)?;
    if shape_of(b.m, x).len() < 2 || !elem_of(b.m, x).is_float() {
        return Err(op_error(b.m, op, "expects a float input of rank >= 2"));
    }
    let o = options(cx, b, op)?;
    Ok(vec![nll(b, op, x, t, &o)?])
}

pub fn softmax_cross_entropy(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let t = cx.input(b.m, op, 1)?;
    if shape_of(b.m, x).len() < 2 || !elem_of(b.m, x).is_float() {
        return Err(op_error(b.m, op, "expects a float input of rank >= 2"));
    }
    let o = options(cx, b, op)?;
    let dx = dims(b, x);
    let with_logp = b.m.results(op).len() > 1;
    let logp = if with_logp {
        alloc_result(b, op, 1, &dx)?
    } else {
        let ty = super::result_memref_type(b.m, op, 0)?;
        let shape = shape_of(b.m, x);
        let lt = Type::memref(shape.clone(), ty.element_type().clone());
        let dynamic: Vec<ValueId> = shape
            .iter()
            .zip(&dx)
            .filter(|(&d, _)| d == ir::DYN)
            .map(|(_, &v)| v)
            .collect();
        alloc(b, &lt, &dynamic)
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
            let v = load_at(b, x, &at(k[0]));
            scalar::max(b, acc, v)
        });
        let zero = constant(b, &elem, 0.0);
        let s = reduce_nest(b, &bounds, &[c], zero, &mut |b, k, acc| {
            let v = load_at(b, x, &at(k[0]));
            let d = scalar::sub(b, v, mx);
            let e = b.same("math.exp", &[d]);
            scalar::add(b, acc, e)
        });
        let ls = b.same("math.log", &[s]);
        loop_nest(b, &bounds, &[c], &mut |b, k| {
            let idx = at(k[0]);
            let v = load_at(b, x, &idx);
            let d = scalar::sub(b, v, mx);
            let r = scalar::sub(b, d, ls);
            store_at(b, r, logp, &idx);
        });
    });
    let loss = nll(b, op, logp, t, &o)?;
    let mut res = vec![loss];
    if with_logp {
        res.push(logp);
    }
    Ok(res)
}
