//! LpPool: `(Σ |x|^p)^(1/p)` over each window (padding contributes 0).

use super::window::Window;
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

pub fn lp_pool(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let xs = shape_of(b.m, x);
    let os = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    let sp = xs.len().saturating_sub(2);
    let attrs = ops::LpPool::of(b.m, op);
    let kernel = attrs.kernel_shape();
    if kernel.len() != sp {
        return Err(op_error(b.m, op, "needs kernel_shape"));
    }
    if os.len() != xs.len() || os.iter().chain(&xs).any(|&d| d < 0) {
        return Err(op_error(b.m, op, "LpPool needs static shapes"));
    }
    let p = attrs.p();
    let win = Window::new(b.m, op, kernel.clone(), attrs.into(), &xs, &os)?;
    let dx = dims(b, x);
    let od: Vec<ValueId> = os.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let kd: Vec<ValueId> = kernel.iter().map(|&k| b.const_index(k)).collect();
    let pf = b.constant(&elem, p as f64);
    let inv = b.constant(&elem, 1.0 / p as f64);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let zero = b.zero(&elem);
        let s = reduce_nest(b, &bounds, &kd, zero, &mut |b, ks, acc| {
            let (pos, inside) = win.input_indices(b, &ivs[2..], ks, &dx[2..], bounds.zero);
            let mut xi = vec![ivs[0], ivs[1]];
            xi.extend(pos);
            let v = b.load(x, &xi);
            let a = b.absf(v);
            let t = b.powf(a, pf);
            let sum = b.add(acc, t);
            b.select(inside, sum, acc)
        });
        let r = b.powf(s, inv);
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}
