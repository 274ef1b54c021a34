//! MaxPool, AveragePool (count_include_pad), GlobalAveragePool, GlobalMaxPool,
//! MaxUnpool.

use super::scalar;
use super::window::{Window, WindowAttrs};
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds};
use ir::builder::Cmp;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, ValueId, DYN};
use onnx::ops;

/// The reduction of a pool: MaxPool / GlobalMaxPool or AveragePool /
/// GlobalAveragePool.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PoolKind {
    Max,
    Average,
}

/// The attributes of a windowed pool: the kernel, the window, and
/// AveragePool's `ceil_mode` and `count_include_pad`.
struct PoolAttrs<'m> {
    kernel: Vec<i64>,
    window: WindowAttrs<'m>,
    ceil_mode: bool,
    include_pad: bool,
}

impl<'m> PoolAttrs<'m> {
    fn of(m: &'m Module, op: OpId, kind: PoolKind) -> PoolAttrs<'m> {
        match kind {
            PoolKind::Max => {
                let v = ops::MaxPool::of(m, op);
                PoolAttrs {
                    kernel: v.kernel_shape(),
                    window: v.into(),
                    ceil_mode: v.ceil_mode() != 0,
                    include_pad: false,
                }
            }
            PoolKind::Average => {
                let v = ops::AveragePool::of(m, op);
                PoolAttrs {
                    kernel: v.kernel_shape(),
                    window: v.into(),
                    ceil_mode: v.ceil_mode() != 0,
                    include_pad: v.count_include_pad() != 0,
                }
            }
        }
    }
}

pub fn pool(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: PoolKind,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let is_max = kind == PoolKind::Max;
    let wants_indices = is_max && b.m.result(op, 1).is_some_and(|r| b.m.has_uses(r));
    let sx = shape_of(b.m, x);
    let PoolAttrs {
        kernel,
        window,
        ceil_mode,
        include_pad,
    } = PoolAttrs::of(b.m, op, kind);
    if sx.len() != kernel.len() + 2 {
        return Err(op_error(
            b.m,
            op,
            "kernel_shape rank must match the spatial rank of X",
        ));
    }
    let out_shape = shape_of_result(b, op)?;
    if out_shape[2..].contains(&DYN) {
        return Err(op_error(
            b.m,
            op,
            "pooling needs static output spatial dims",
        ));
    }
    let win = Window::new(b.m, op, kernel.clone(), window, &sx, &out_shape)?;
    let dx = dims(b, x);
    let mut out_dims = vec![dx[0], dx[1]];
    for &d in &out_shape[2..] {
        out_dims.push(b.const_index(d));
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    if !is_max && !elem.is_float() {
        return Err(op_error(
            b.m,
            op,
            "AveragePool expects floating-point input",
        ));
    }
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let red: Vec<ValueId> = kernel.iter().map(|&k| b.const_index(k)).collect();
    let full: i64 = kernel.iter().product();
    loop_nest_by_work(b, &bounds, &out_dims, &out_dims, &mut |b, ivs| {
        let init = neutral(b, kind, &elem);
        let mut r = reduce_nest(b, &bounds, &red, init, &mut |b, k, acc| {
            let (pos, inside) = win.input_indices(b, &ivs[2..], k, &dx[2..], zero);
            let mut xidx = vec![ivs[0], ivs[1]];
            xidx.extend(pos);
            let xv = b.load(x, &xidx);
            // Out-of-range taps contribute the reduction's neutral value.
            let neutral = neutral(b, kind, &elem);
            let xv = b.select(inside, xv, neutral);
            combine(b, kind, acc, xv)
        });
        if !is_max {
            // count_include_pad counts the pads but not what ceil_mode's
            // last window reaches beyond them.
            let n = if include_pad && !ceil_mode {
                b.constant(&elem, full as f64)
            } else {
                valid_taps(b, &win, ivs, &dx, &elem, include_pad)
            };
            r = b.divf(r, n);
        }
        b.store(r, out, ivs);
    });
    if !wants_indices {
        return Ok(vec![out]);
    }
    let indices = argmax_indices(b, op, &win, x, out, &dx, &out_dims)?;
    Ok(vec![out, indices])
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

/// MaxPool's `Indices`: for each output, the flat input index (row-major,
/// or spatially column-major with `storage_order = 1`) of the first in-range
/// tap equal to the maximum; pads are never chosen.
fn argmax_indices(
    b: &mut Builder<'_>,
    op: OpId,
    win: &Window,
    x: ValueId,
    max: ValueId,
    dx: &[ValueId],
    out_dims: &[ValueId],
) -> Result<ValueId> {
    let indices = alloc_result(b, op, 1, out_dims)?;
    let column_major = ops::MaxPool::of(b.m, op).storage_order() != 0;
    let spatial = dx.len() - 2;
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let red: Vec<ValueId> = win.kernel.iter().map(|&k| b.const_index(k)).collect();
    let mut spatial_size = b.const_index(1);
    for &d in &dx[2..] {
        spatial_size = b.mul(spatial_size, d);
    }
    loop_nest(b, &bounds, out_dims, &mut |b, ivs| {
        let best = b.load(max, ivs);
        let plane = b.mul(ivs[0], dx[1]);
        let plane = b.add(plane, ivs[1]);
        let base = b.mul(plane, spatial_size);
        let none = b.const_int(-1, ir::Type::i64());
        let found = reduce_nest(b, &bounds, &red, none, &mut |b, k, acc| {
            let (pos, inside) = win.input_indices(b, &ivs[2..], k, &dx[2..], zero);
            let mut xidx = vec![ivs[0], ivs[1]];
            xidx.extend_from_slice(&pos);
            let xv = b.load(x, &xidx);
            let equal = b.cmp(Cmp::Eq, xv, best);
            // Flat offset within the plane, in the requested storage order.
            let order: Vec<usize> = if column_major {
                (0..spatial).collect()
            } else {
                (0..spatial).rev().collect()
            };
            let mut offset = zero;
            let mut stride = b.const_index(1);
            for i in order {
                let term = b.mul(pos[i], stride);
                offset = b.add(offset, term);
                stride = b.mul(stride, dx[i + 2]);
            }
            let flat = b.add(base, offset);
            let flat = b.index_cast(flat, ir::Type::i64());
            let unset = b.cmp(Cmp::Eq, acc, none);
            let take = b.andi(unset, equal);
            let take = b.andi(take, inside);
            b.select(take, flat, acc)
        });
        b.store(found, indices, ivs);
    });
    Ok(indices)
}

/// Number of kernel taps inside the input (or inside input and pads, with
/// `include_pad`) for this output position, as a float.
fn valid_taps(
    b: &mut Builder<'_>,
    win: &Window,
    ivs: &[ValueId],
    dx: &[ValueId],
    elem: &ir::Type,
    include_pad: bool,
) -> ValueId {
    let mut total: Option<ValueId> = None;
    for i in 0..win.kernel.len() {
        // Count per dim = #{k : lo <= o*s + k*d - p < hi}; computed by a loop.
        let bounds = Bounds::new(b);
        let zero = bounds.zero;
        let (lo, hi) = if include_pad {
            let lo = b.const_index(-win.pad_begin[i]);
            let pe = b.const_index(win.pad_end[i]);
            (lo, b.add(dx[i + 2], pe))
        } else {
            (zero, dx[i + 2])
        };
        let kdim = b.const_index(win.kernel[i]);
        let cnt = reduce_nest(b, &bounds, &[kdim], zero, &mut |b, k, acc| {
            let pos = win.position(b, i, ivs[i + 2], k[0]);
            let ge = b.cmp(Cmp::Ge, pos, lo);
            let lt = b.cmp(Cmp::Lt, pos, hi);
            let ok = b.andi(ge, lt);
            let one = b.const_index(1);
            let inc = b.select(ok, one, zero);
            b.add(acc, inc)
        });
        total = Some(match total {
            Some(t) => b.mul(t, cnt),
            None => cnt,
        });
    }
    let t = total.unwrap_or(b.const_index(1));
    let as_int = b.index_cast(t, ir::Type::i64());
    b.sitofp(as_int, elem.clone())
}

fn shape_of_result(b: &Builder<'_>, op: OpId) -> Result<Vec<i64>> {
    let ty = super::result_memref_type(b.m, op, 0)?;
    Ok(ty.shape().map(<[i64]>::to_vec).unwrap_or_default())
}

pub fn global_pool(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: PoolKind,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
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
    let elem = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let spatial = dx[2..].to_vec();
    loop_nest(b, &bounds, &[dx[0], dx[1]], &mut |b, ivs| {
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
    });
    Ok(vec![out])
}

/// MaxUnpool: zeros, with each input value stored where its flat index
/// points in the unpooled shape `(in - 1)·stride - pads + kernel` (the top-left
/// corner of a larger `output_shape`, as the reference).
pub fn max_unpool(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let ind = cx.input(b.m, op, 1)?;
    let out_shape = shape_of_result(b, op)?;
    let sx = shape_of(b.m, x);
    let attrs = ops::MaxUnpool::of(b.m, op);
    let kernel = attrs.kernel_shape();
    let sp = kernel.len();
    let strides = attrs.strides().unwrap_or_else(|| vec![1; sp]);
    let pads = attrs.pads().unwrap_or_else(|| vec![0; 2 * sp]);
    if out_shape.contains(&DYN)
        || sx.contains(&DYN)
        || shape_of(b.m, ind) != sx
        || sx.len() != sp + 2
        || out_shape.len() != sp + 2
        || strides.len() != sp
        || pads.len() != 2 * sp
    {
        return Err(op_error(
            b.m,
            op,
            "MaxUnpool needs static shapes, indices shaped like X and window attributes per spatial dim",
        ));
    }
    let mut unpooled = sx[..2].to_vec();
    for d in 0..sp {
        unpooled.push((sx[d + 2] - 1) * strides[d] - (pads[d] + pads[sp + d]) + kernel[d]);
    }
    let od: Vec<ValueId> = out_shape.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let zero_v = b.zero(&elem);
    loop_nest(b, &bounds, &od, &mut |b, ivs| b.store(zero_v, out, ivs));
    let total: i64 = unpooled.iter().product();
    let ud: Vec<ValueId> = unpooled.iter().map(|&d| b.const_index(d)).collect();
    let dx = dims(b, x);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let i = b.load(ind, ivs);
        let i = super::build::to_index(b, i);
        // Indices outside the unpooled tensor, or positions outside the
        // result, are dropped.
        let ge = b.cmp(Cmp::Ge, i, bounds.zero);
        let n = b.const_index(total);
        let lt = b.cmp(Cmp::Lt, i, n);
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
