//! Softmax, LogSoftmax and Hardmax. Opset ≥ 13 normalizes along one axis;
//! older opsets coerce the input to 2-D at `axis` and normalize each row,
//! i.e. over every dim from `axis` on.

use super::scalar::{self, constant};
use super::{alloc_result, attr_int, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::{Builder, Module, OpId, Result, ValueId};

fn opset(m: &Module) -> i64 {
    m.attr(m.top(), "onnx.opset")
        .and_then(ir::Attribute::as_int)
        .unwrap_or(13)
}

pub fn softmax(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let legacy = opset(b.m) < 13;
    let default_axis = if legacy { 1 } else { -1 };
    let axis = super::reduce::normalize_axis(b, op, attr_int(b.m, op, "axis", default_axis), rank)?;
    let inner: Vec<usize> = if legacy {
        (axis..rank).collect()
    } else {
        vec![axis]
    };
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let outer_ubs: Vec<ValueId> = (0..rank)
        .map(|d| {
            if inner.contains(&d) {
                bounds.one
            } else {
                dx[d]
            }
        })
        .collect();
    let inner_ubs: Vec<ValueId> = inner.iter().map(|&d| dx[d]).collect();
    let elem = super::elem_of(b.m, x);
    let merge = |outer: &[ValueId], inn: &[ValueId]| -> Vec<ValueId> {
        let mut idx = outer.to_vec();
        for (&d, &v) in inner.iter().zip(inn) {
            idx[d] = v;
        }
        idx
    };
    loop_nest(b, &bounds, &outer_ubs, &mut |b, ovs| {
        let lowest = scalar::lowest(b, &elem);
        let mx = reduce_nest(b, &bounds, &inner_ubs, lowest, &mut |b, ivs, acc| {
            let v = load_at(b, x, &merge(ovs, ivs));
            if kind == "Hardmax" {
                // Strictly greater keeps the first maximum.
                let gt = scalar::compare(b, "gt", v, acc);
                scalar::select(b, gt, v, acc)
            } else {
                scalar::max(b, acc, v)
            }
        });
        if kind == "Hardmax" {
            let zero = constant(b, &elem, 0.0);
            let one = constant(b, &elem, 1.0);
            let fals = b.const_bool(false);
            reduce_nest(b, &bounds, &inner_ubs, fals, &mut |b, ivs, done| {
                let idx = merge(ovs, ivs);
                let v = load_at(b, x, &idx);
                let eq = scalar::compare(b, "eq", v, mx);
                let t = b.const_bool(true);
                let not_done = b.same("arith.xori", &[done, t]);
                let hit = b.same("arith.andi", &[eq, not_done]);
                let r = scalar::select(b, hit, one, zero);
                store_at(b, r, out, &idx);
                b.same("arith.ori", &[done, hit])
            });
            return;
        }
        let acc_ty = scalar::sum_acc_type(&elem);
        let zero = constant(b, &acc_ty, 0.0);
        let sum = reduce_nest(b, &bounds, &inner_ubs, zero, &mut |b, ivs, acc| {
            let idx = merge(ovs, ivs);
            let v = load_at(b, x, &idx);
            let d = scalar::sub(b, v, mx);
            let e = b.same("math.exp", &[d]);
            if kind == "Softmax" {
                store_at(b, e, out, &idx);
            }
            let e = scalar::fcast(b, e, &acc_ty);
            scalar::add(b, acc, e)
        });
        let sum = scalar::fcast(b, sum, &elem);
        let log_sum = (kind == "LogSoftmax").then(|| b.same("math.log", &[sum]));
        loop_nest(b, &bounds, &inner_ubs, &mut |b, ivs| {
            let idx = merge(ovs, ivs);
            let r = match log_sum {
                Some(ls) => {
                    let v = load_at(b, x, &idx);
                    let d = scalar::sub(b, v, mx);
                    scalar::sub(b, d, ls)
                }
                None => {
                    let e = load_at(b, out, &idx);
                    scalar::div(b, e, sum)
                }
            };
            store_at(b, r, out, &idx);
        });
    });
    Ok(vec![out])
}
