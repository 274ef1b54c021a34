//! MaxPool, AveragePool (count_include_pad), GlobalAveragePool, GlobalMaxPool.

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
            let mut xidx = vec![ivs[0], ivs[1]];
            let mut inside = None;
            for i in 0..k.len() {
                let (pos, ok) = win.input_index(b, i, ivs[i + 2], k[i], dx[i + 2], zero);
                xidx.push(pos);
                inside = Some(match inside {
                    Some(p) => loops::and(b, p, ok),
                    None => ok,
                });
            }
            let xv = load_at(b, x, &xidx);
            // Out-of-range taps contribute the reduction's neutral value.
            let neutral = if is_max {
                scalar::lowest(b, &elem)
            } else {
                constant(b, &elem, 0.0)
            };
            let xv = match inside {
                Some(ok) => loops::select(b, ok, xv, neutral),
                None => xv,
            };
            if is_max {
                scalar::max(b, acc, xv)
            } else {
                scalar::add(b, acc, xv)
            }
        });
        if !is_max {
            let n = if include_pad {
                constant(b, &elem, full as f64)
            } else {
                valid_taps(b, &win, ivs, &dx, &elem)
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
            let mut xidx = vec![ivs[0], ivs[1]];
            let mut inside = None;
            let mut pos = Vec::with_capacity(spatial);
            for i in 0..spatial {
                let (p, ok) = win.input_index(b, i, ivs[i + 2], k[i], dx[i + 2], zero);
                xidx.push(p);
                pos.push(p);
                inside = Some(match inside {
                    Some(q) => loops::and(b, q, ok),
                    None => ok,
                });
            }
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
            let mut take = loops::and(b, unset, equal);
            if let Some(ok) = inside {
                take = loops::and(b, take, ok);
            }
            loops::select(b, take, flat, acc)
        });
        store_at(b, found, indices, ivs);
    });
    Ok(indices)
}

/// Number of kernel taps inside the input for this output position, as a float.
fn valid_taps(
    b: &mut Builder<'_>,
    win: &Window,
    ivs: &[ValueId],
    dx: &[ValueId],
    elem: &ir::Type,
) -> ValueId {
    let mut total: Option<ValueId> = None;
    for i in 0..win.kernel.len() {
        // Count per dim = #{k : 0 <= o*s + k*d - p < size}; computed by a loop.
        let bounds = Bounds::new(b);
        let zero = bounds.zero;
        let kdim = b.const_index(win.kernel[i]);
        let init = b.const_index(0);
        let cnt = reduce_nest(b, &bounds, &[kdim], init, &mut |b, k, acc| {
            let (_, ok) = win.input_index(b, i, ivs[i + 2], k[0], dx[i + 2], zero);
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
