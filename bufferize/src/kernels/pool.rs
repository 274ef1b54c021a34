//! MaxPool, AveragePool (count_include_pad), GlobalAveragePool, GlobalMaxPool,
//! MaxUnpool.

use super::scalar::{self, constant};
use super::window::Window;
use super::{alloc_result, attr_int, attr_ints, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId, DYN};

pub fn pool(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId, kind: &str) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let wants_indices = kind == "MaxPool" && b.m.result(op, 1).is_some_and(|r| b.m.has_uses(r));
    let sx = shape_of(b.m, x);
    let Some(kernel) = attr_ints(b.m, op, "kernel_shape") else {
        return Err(op_error(b.m, op, "requires 'kernel_shape'"));
    };
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
    let win = Window::new(b.m, op, kernel.clone(), &sx, &out_shape)?;
    let is_max = kind == "MaxPool";
    let include_pad = attr_int(b.m, op, "count_include_pad", 0) != 0;
    let ceil_mode = attr_int(b.m, op, "ceil_mode", 0) != 0;
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
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let init = if is_max {
            scalar::lowest(b, &elem)
        } else {
            constant(b, &elem, 0.0)
        };
        let mut r = reduce_nest(b, &bounds, &red, init, &mut |b, k, acc| {
            let (pos, inside) = win.input_indices(b, &ivs[2..], k, &dx[2..], zero);
            let mut xidx = vec![ivs[0], ivs[1]];
            xidx.extend(pos);
            let xv = load_at(b, x, &xidx);
            // Out-of-range taps contribute the reduction's neutral value.
            let neutral = if is_max {
                scalar::lowest(b, &elem)
            } else {
                constant(b, &elem, 0.0)
            };
            let xv = loops::select(b, inside, xv, neutral);
            if is_max {
                scalar::max(b, acc, xv)
            } else {
                scalar::add(b, acc, xv)
            }
        });
        if !is_max {
            // count_include_pad counts the pads but not what ceil_mode's
            // last window reaches beyond them.
            let n = if include_pad && !ceil_mode {
                constant(b, &elem, full as f64)
            } else {
                valid_taps(b, &win, ivs, &dx, &elem, include_pad)
            };
            r = b.same("arith.divf", &[r, n]);
        }
        store_at(b, r, out, ivs);
    });
    if !wants_indices {
        return Ok(vec![out]);
    }
    let indices = argmax_indices(b, op, &win, x, out, &dx, &out_dims)?;
    Ok(vec![out, indices])
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
    let column_major = attr_int(b.m, op, "storage_order", 0) != 0;
    let spatial = dx.len() - 2;
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let red: Vec<ValueId> = win.kernel.iter().map(|&k| b.const_index(k)).collect();
    let elem = elem_of(b.m, x);
    let oeq = ir::dialects::arith::CMPF_PREDICATES
        .iter()
        .position(|&p| p == "oeq")
        .unwrap_or(1) as i64;
    let mut spatial_size = b.const_index(1);
    for &d in &dx[2..] {
        spatial_size = loops::mul(b, spatial_size, d);
    }
    loop_nest(b, &bounds, out_dims, &mut |b, ivs| {
        let best = load_at(b, max, ivs);
        let plane = loops::mul(b, ivs[0], dx[1]);
        let plane = loops::add(b, plane, ivs[1]);
        let base = loops::mul(b, plane, spatial_size);
        let none = b.const_int(-1, ir::Type::i64());
        let found = reduce_nest(b, &bounds, &red, none, &mut |b, k, acc| {
            let (pos, inside) = win.input_indices(b, &ivs[2..], k, &dx[2..], zero);
            let mut xidx = vec![ivs[0], ivs[1]];
            xidx.extend_from_slice(&pos);
            let xv = load_at(b, x, &xidx);
            let equal = if elem.is_float() {
                b.op1(
                    "arith.cmpf",
                    &[xv, best],
                    ir::Type::i1(),
                    &[("predicate", ir::Attribute::i64(oeq))],
                )
            } else {
                b.op1(
                    "arith.cmpi",
                    &[xv, best],
                    ir::Type::i1(),
                    &[("predicate", ir::Attribute::i64(0))],
                )
            };
            // Flat offset within the plane, in the requested storage order.
            let order: Vec<usize> = if column_major {
                (0..spatial).collect()
            } else {
                (0..spatial).rev().collect()
            };
            let mut offset = zero;
            let mut stride = b.const_index(1);
            for i in order {
                let term = loops::mul(b, pos[i], stride);
                offset = loops::add(b, offset, term);
                stride = loops::mul(b, stride, dx[i + 2]);
            }
            let flat = loops::add(b, base, offset);
            let flat = b.op1("arith.index_cast", &[flat], ir::Type::i64(), &[]);
            let unset = b.op1(
                "arith.cmpi",
                &[acc, none],
                ir::Type::i1(),
                &[("predicate", ir::Attribute::i64(0))],
            );
            let take = loops::and(b, unset, equal);
            let take = loops::and(b, take, inside);
            loops::select(b, take, flat, acc)
        });
        store_at(b, found, indices, ivs);
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
            (lo, loops::add(b, dx[i + 2], pe))
        } else {
            (zero, dx[i + 2])
        };
        let kdim = b.const_index(win.kernel[i]);
        let cnt = reduce_nest(b, &bounds, &[kdim], zero, &mut |b, k, acc| {
            let pos = win.position(b, i, ivs[i + 2], k[0]);
            let ge = loops::cmp(b, "sge", pos, lo);
            let lt = loops::cmp(b, "slt", pos, hi);
            let ok = loops::and(b, ge, lt);
            let one = b.const_index(1);
            let inc = loops::select(b, ok, one, zero);
            loops::add(b, acc, inc)
        });
        total = Some(match total {
            Some(t) => loops::mul(b, t, cnt),
            None => cnt,
        });
    }
    let t = total.unwrap_or(b.const_index(1));
    let i64t = ir::Type::i64();
    let as_int = b.op1("arith.index_cast", &[t], i64t, &[]);
    b.op1("arith.sitofp", &[as_int], elem.clone(), &[])
}

fn shape_of_result(b: &Builder<'_>, op: OpId) -> Result<Vec<i64>> {
    let ty = super::result_memref_type(b.m, op, 0)?;
    Ok(ty.shape().map(<[i64]>::to_vec).unwrap_or_default())
}

pub fn global_pool(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
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
    let is_max = kind == "GlobalMaxPool";
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let spatial = dx[2..].to_vec();
    loop_nest(b, &bounds, &[dx[0], dx[1]], &mut |b, ivs| {
        let init = if is_max {
            scalar::lowest(b, &elem)
        } else {
            constant(b, &elem, 0.0)
        };
        let r = reduce_nest(b, &bounds, &spatial, init, &mut |b, k, acc| {
            let mut idx = ivs.to_vec();
            idx.extend_from_slice(k);
            let v = load_at(b, x, &idx);
            if is_max {
                scalar::max(b, acc, v)
            } else {
                scalar::add(b, acc, v)
            }
        });
        let r = if is_max {
            r
        } else {
            let mut n = b.const_index(1);
            for &d in &spatial {
                n = loops::mul(b, n, d);
            }
            let as_int = b.op1("arith.index_cast", &[n], ir::Type::i64(), &[]);
            let nf = b.op1("arith.sitofp", &[as_int], elem.clone(), &[]);
            b.same("arith.divf", &[r, nf])
        };
        let mut idx = ivs.to_vec();
        idx.extend(std::iter::repeat_n(zero, sx.len() - 2));
        store_at(b, r, out, &idx);
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
    let kernel = attr_ints(b.m, op, "kernel_shape").unwrap_or_default();
    let sp = kernel.len();
    let strides = attr_ints(b.m, op, "strides").unwrap_or_else(|| vec![1; sp]);
    let pads = attr_ints(b.m, op, "pads").unwrap_or_else(|| vec![0; 2 * sp]);
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
    let zero_v = constant(b, &elem, 0.0);
    loop_nest(b, &bounds, &od, &mut |b, ivs| store_at(b, zero_v, out, ivs));
    let total: i64 = unpooled.iter().product();
    let ud: Vec<ValueId> = unpooled.iter().map(|&d| b.const_index(d)).collect();
    let dx = dims(b, x);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = load_at(b, x, ivs);
        let i = load_at(b, ind, ivs);
        let i = super::build::to_index(b, i);
        // Indices outside the unpooled tensor, or positions outside the
        // result, are dropped.
        let ge = loops::cmp(b, "sge", i, bounds.zero);
        let n = b.const_index(total);
        let lt = loops::cmp(b, "slt", i, n);
        let mut ok = loops::and(b, ge, lt);
        let mut rest = loops::select(b, ok, i, bounds.zero);
        let mut idx = vec![bounds.zero; ud.len()];
        for d in (0..ud.len()).rev() {
            let p = b.same("arith.remui", &[rest, ud[d]]);
            rest = b.same("arith.divui", &[rest, ud[d]]);
            let fits = loops::cmp(b, "slt", p, od[d]);
            ok = loops::and(b, ok, fits);
            idx[d] = p;
        }
        let idx: Vec<ValueId> = idx
            .into_iter()
            .map(|p| loops::select(b, ok, p, bounds.zero))
            .collect();
        let old = load_at(b, out, &idx);
        let v = scalar::select(b, ok, v, old);
        store_at(b, v, out, &idx);
    });
    Ok(vec![out])
}
