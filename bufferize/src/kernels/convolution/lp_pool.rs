//! LpPool: `(Σ |x|^p)^(1/p)` over each window (padding contributes 0).

use crate::convert::{dims, Lowering};
use crate::kernels::convolution::window::Spatial;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId};
use onnx::ops;

pub fn lp_pool(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::LpPool::X)?;
    let sp = shape_of(b.m, x).len().saturating_sub(2);
    let attrs = ops::LpPool::of(b.m, op);
    let (kernel, p, ceil) = (attrs.kernel_shape(), attrs.p(), attrs.ceil_mode() != 0);
    if kernel.len() != sp || sp == 0 {
        return Err(op_error(b.m, op, "needs kernel_shape of the spatial rank"));
    }
    let win = Spatial::new(b.m, op, kernel.clone(), attrs.into())?.for_pool(ceil);
    let dx = dims(b, x);
    let place = win.runtime(b, &dx[2..]);
    let mut od = dx[..2].to_vec();
    od.extend(&place.outs);
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let kd: Vec<ValueId> = kernel.iter().map(|&k| b.const_index(k)).collect();
    let pf = b.constant(&elem, p as f64);
    let inv = b.constant(&elem, 1.0 / p as f64);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let zero = b.zero(&elem);
        let s = reduce_nest(b, &bounds, &kd, zero, &mut |b, ks, acc| {
            let (pos, inside) = win.input_indices(b, &place, &ivs[2..], ks);
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
