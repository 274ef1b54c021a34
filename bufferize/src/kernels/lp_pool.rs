//! LpPool: `(Σ |x|^p)^(1/p)` over each window (padding contributes 0).

use super::scalar;
use super::{alloc_result, attr_int, attr_ints, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};

pub fn lp_pool(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let xs = shape_of(b.m, x);
    let os = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    let sp = xs.len().saturating_sub(2);
    let Some(kernel) = attr_ints(b.m, op, "kernel_shape").filter(|k| k.len() == sp) else {
        return Err(op_error(b.m, op, "needs kernel_shape"));
    };
    if os.len() != xs.len() || os.iter().chain(&xs).any(|&d| d < 0) {
        return Err(op_error(b.m, op, "LpPool needs static shapes"));
    }
    let ints =
        |name: &str, default: i64| attr_ints(b.m, op, name).unwrap_or_else(|| vec![default; sp]);
    let strides = ints("strides", 1);
    let dil = ints("dilations", 1);
    let pads = ints("pads", 0);
    let auto = attr_str(b.m, op, "auto_pad")
        .unwrap_or("NOTSET")
        .to_string();
    let p = attr_int(b.m, op, "p", 2);
    let begin: Vec<i64> = (0..sp)
        .map(|i| {
            let total =
                ((os[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - xs[2 + i]).max(0);
            match auto.as_str() {
                "SAME_UPPER" => total / 2,
                "SAME_LOWER" => total - total / 2,
                "VALID" => 0,
                _ => pads.get(i).copied().unwrap_or(0),
            }
        })
        .collect();
    let dx = dims(b, x);
    let od: Vec<ValueId> = os.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let kd: Vec<ValueId> = kernel.iter().map(|&k| b.const_index(k)).collect();
    let pf = scalar::constant(b, &elem, p as f64);
    let inv = scalar::constant(b, &elem, 1.0 / p as f64);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let zero = scalar::constant(b, &elem, 0.0);
        let s = reduce_nest(b, &bounds, &kd, zero, &mut |b, ks, acc| {
            let mut xi = vec![ivs[0], ivs[1]];
            let mut inside = b.const_bool(true);
            for i in 0..sp {
                let st = b.const_index(strides[i]);
                let dl = b.const_index(dil[i]);
                let pb = b.const_index(begin[i]);
                let a = loops::mul(b, ivs[2 + i], st);
                let k = loops::mul(b, ks[i], dl);
                let v = loops::add(b, a, k);
                let v = loops::sub(b, v, pb);
                let ge = loops::cmp(b, "sge", v, bounds.zero);
                let lt = loops::cmp(b, "slt", v, dx[2 + i]);
                let ok = loops::and(b, ge, lt);
                inside = loops::and(b, inside, ok);
                xi.push(loops::select(b, ok, v, bounds.zero));
            }
            let v = load_at(b, x, &xi);
            let a = b.same("math.absf", &[v]);
            let t = b.same("math.powf", &[a, pf]);
            let sum = scalar::add(b, acc, t);
            scalar::select(b, inside, sum, acc)
        });
        let r = b.same("math.powf", &[s, inv]);
        store_at(b, r, out, ivs);
    });
    Ok(vec![out])
}
