//! Reduce* (axes constant, attribute or runtime; keepdims;
//! noop_with_empty_axes) and ArgMax/ArgMin.
//!
//! A reduction initializes the output with the identity, accumulates every
//! input element into the output position with the reduced dims pinned to
//! 0, then finishes (Mean divides, L2 takes the root, LogSum the log).

use super::scalar::{self, constant};
use super::{alloc_result, attr_int, attr_ints, constant_ints, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

/// Whether input dim `d` is reduced: known statically, or an `i1` at runtime.
#[derive(Clone, Copy)]
enum Flag {
    Static(bool),
    Dyn(ValueId),
}

pub fn normalize_axis(b: &Builder<'_>, op: OpId, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if !(0..r.max(1)).contains(&a) {
        return Err(op_error(
            b.m,
            op,
            format!("axis {axis} out of range for rank {rank}"),
        ));
    }
    Ok(a as usize)
}

/// The reduced-dim flags of a Reduce* op; `None` means "no-op".
fn flags(cx: &Lowering, b: &mut Builder<'_>, op: OpId, rank: usize) -> Result<Option<Vec<Flag>>> {
    let noop = attr_int(b.m, op, "noop_with_empty_axes", 0) != 0;
    let axes = if cx.has_input(b.m, op, 1) {
        match constant_ints(b.m, op, 1) {
            Some(a) => Some(a),
            None => return runtime_flags(cx, b, op, rank, noop).map(Some),
        }
    } else {
        attr_ints(b.m, op, "axes")
    };
    let axes = axes.unwrap_or_default();
    if axes.is_empty() {
        return Ok((!noop).then(|| vec![Flag::Static(true); rank]));
    }
    let mut f = vec![Flag::Static(false); rank];
    for a in axes {
        f[normalize_axis(b, op, a, rank)?] = Flag::Static(true);
    }
    Ok(Some(f))
}

/// Flags from an axes tensor known only at runtime.
fn runtime_flags(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    rank: usize,
    noop: bool,
) -> Result<Vec<Flag>> {
    let axes = cx.input(b.m, op, 1)?;
    if shape_of(b.m, axes).len() != 1 {
        return Err(op_error(b.m, op, "axes must be 1-D"));
    }
    let n = dims(b, axes)[0];
    let bounds = Bounds::new(b);
    let empty = loops::cmp(b, "eq", n, bounds.zero);
    let mut out = Vec::with_capacity(rank);
    for d in 0..rank {
        let fals = b.const_bool(false);
        let hit = loops::reduce_nest(b, &bounds, &[n], fals, &mut |b, iv, acc| {
            let a = load_at(b, axes, iv);
            let a = b.op1("arith.index_cast", &[a], Type::Index, &[]);
            let dp = b.const_index(d as i64);
            let dn = b.const_index(d as i64 - rank as i64);
            let e1 = loops::cmp(b, "eq", a, dp);
            let e2 = loops::cmp(b, "eq", a, dn);
            let e = b.same("arith.ori", &[e1, e2]);
            b.same("arith.ori", &[acc, e])
        });
        let f = if noop {
            hit
        } else {
            b.same("arith.ori", &[hit, empty])
        };
        out.push(Flag::Dyn(f));
    }
    Ok(out)
}

/// Output index of input position `ivs` (reduced dims pinned or dropped).
fn out_index(
    b: &mut Builder<'_>,
    flags: &[Flag],
    keep: bool,
    zero: ValueId,
    ivs: &[ValueId],
) -> Vec<ValueId> {
    let mut idx = Vec::with_capacity(ivs.len());
    for (f, &iv) in flags.iter().zip(ivs) {
        match f {
            Flag::Static(true) if !keep => {}
            Flag::Static(true) => idx.push(zero),
            Flag::Static(false) => idx.push(iv),
            Flag::Dyn(c) => idx.push(loops::select(b, *c, zero, iv)),
        }
    }
    idx
}

pub fn reduce(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let elem = super::elem_of(b.m, x);
    let Some(flags) = flags(cx, b, op, rank)? else {
        return super::shape::copy_op(cx, b, op);
    };
    let out_rank = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map_or(0, <[i64]>::len);
    // Runtime axes without keepdims: reduce into the keepdims form, then
    // view it with the kept dims (same element order).
    let squeeze_after = out_rank != rank && flags.iter().any(|f| matches!(f, Flag::Dyn(_)));
    let keep = out_rank == rank || squeeze_after;
    let bounds = Bounds::new(b);
    let one = bounds.one;
    let out_dims: Vec<ValueId> = {
        let mut v = Vec::new();
        for (f, &d) in flags.iter().zip(&dx) {
            match f {
                Flag::Static(true) if !keep => {}
                Flag::Static(true) => v.push(one),
                Flag::Static(false) => v.push(d),
                Flag::Dyn(c) => v.push(loops::select(b, *c, one, d)),
            }
        }
        v
    };
    let out = if squeeze_after {
        let ty = ir::Type::memref(vec![ir::DYN; rank], elem.clone());
        crate::convert::alloc(b, &ty, &out_dims)
    } else {
        alloc_result(b, op, 0, &out_dims)?
    };
    let init = match kind {
        "ReduceMax" => scalar::lowest(b, &elem),
        "ReduceMin" => scalar::highest(b, &elem),
        "ReduceProd" => constant(b, &elem, 1.0),
        _ => constant(b, &elem, 0.0),
    };
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        store_at(b, init, out, ivs)
    });
    let zero = bounds.zero;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = load_at(b, x, ivs);
        let oi = out_index(b, &flags, keep, zero, ivs);
        let acc = load_at(b, out, &oi);
        let r = match kind {
            "ReduceMax" => scalar::max(b, acc, v),
            "ReduceMin" => scalar::min(b, acc, v),
            "ReduceProd" => scalar::mul(b, acc, v),
            "ReduceL1" => {
                let a = if elem.is_float() {
                    b.same("math.absf", &[v])
                } else {
                    b.same("math.absi", &[v])
                };
                scalar::add(b, acc, a)
            }
            "ReduceL2" | "ReduceSumSquare" => {
                let sq = scalar::mul(b, v, v);
                scalar::add(b, acc, sq)
            }
            "ReduceLogSumExp" => {
                let e = b.same("math.exp", &[v]);
                scalar::add(b, acc, e)
            }
            _ => scalar::add(b, acc, v),
        };
        store_at(b, r, out, &oi);
    });
    // Finishing step.
    let count = if kind == "ReduceMean" {
        let mut n = one;
        for (f, &d) in flags.iter().zip(&dx) {
            let c = match f {
                Flag::Static(true) => d,
                Flag::Static(false) => one,
                Flag::Dyn(c) => loops::select(b, *c, d, one),
            };
            n = loops::mul(b, n, c);
        }
        let i = b.op1("arith.index_cast", &[n], Type::i64(), &[]);
        Some(scalar::convert(b, op, i, &elem)?)
    } else {
        None
    };
    let finish: Option<&str> = match kind {
        "ReduceL2" => Some("math.sqrt"),
        "ReduceLogSum" | "ReduceLogSumExp" => Some("math.log"),
        _ => None,
    };
    if count.is_some() || finish.is_some() {
        if finish.is_some() && !elem.is_float() && kind != "ReduceL2" {
            return Err(op_error(b.m, op, "expects a floating-point input"));
        }
        loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
            let v = load_at(b, out, ivs);
            let r = match (count, finish) {
                (Some(n), _) => scalar::div(b, v, n),
                (None, Some(f)) if elem.is_float() => b.same(f, &[v]),
                (None, _) => {
                    // Integer L2: root in f64, truncated back.
                    let f = Type::f64();
                    let vf = b.op1("arith.sitofp", &[v], f, &[]);
                    let s = b.same("math.sqrt", &[vf]);
                    b.op1("arith.fptosi", &[s], elem.clone(), &[])
                }
            };
            store_at(b, r, out, ivs);
        });
    }
    if squeeze_after {
        return Ok(vec![squeeze_view(b, op, out, &flags, &dx, out_rank)?]);
    }
    Ok(vec![out])
}

/// The keepdims-form `buf` viewed without the (runtime) reduced dims: kept
/// size `j` is the dim whose count of kept dims before it is `j`.
fn squeeze_view(
    b: &mut Builder<'_>,
    op: OpId,
    buf: ValueId,
    flags: &[Flag],
    dx: &[ValueId],
    out_rank: usize,
) -> Result<ValueId> {
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let mut pos = zero;
    let mut sizes = vec![one; out_rank];
    for (f, &d) in flags.iter().zip(dx) {
        let kept = match f {
            Flag::Static(r) => b.const_bool(!r),
            Flag::Dyn(c) => {
                let t = b.const_bool(true);
                b.same("arith.xori", &[*c, t])
            }
        };
        for (j, size) in sizes.iter_mut().enumerate() {
            let jv = b.const_index(j as i64);
            let here = loops::cmp(b, "eq", pos, jv);
            let hit = loops::and(b, kept, here);
            *size = loops::select(b, hit, d, *size);
        }
        let inc = loops::add(b, pos, one);
        pos = loops::select(b, kept, inc, pos);
    }
    let ty = super::result_memref_type(b.m, op, 0)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    Ok(super::shape::reinterpret(b, buf, &ty, &shape, &sizes))
}

/// ArgMax / ArgMin along `axis`, first or last index of the extremum.
pub fn arg(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId, kind: &str) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 0), rank)?;
    let keep = attr_int(b.m, op, "keepdims", 1) != 0;
    let last = attr_int(b.m, op, "select_last_index", 0) != 0;
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let mut out_dims = dx.clone();
    if keep {
        out_dims[axis] = bounds.one;
    } else {
        out_dims.remove(axis);
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    let mut outer = dx.clone();
    outer[axis] = bounds.one;
    let n = dx[axis];
    let elem = super::elem_of(b.m, x);
    let rel = match (kind, last) {
        ("ArgMax", false) => "gt",
        ("ArgMax", true) => "ge",
        (_, false) => "lt",
        (_, true) => "le",
    };
    loop_nest(b, &bounds, &outer, &mut |b, ivs| {
        let mut idx = ivs.to_vec();
        idx[axis] = bounds.zero;
        let first = load_at(b, x, &idx);
        let z = bounds.zero;
        let ivs_outer = ivs.to_vec();
        let l = b.scf_for(bounds.one, n, bounds.one, &[first, z], |b, iv, acc| {
            let mut idx = ivs_outer.clone();
            idx[axis] = iv;
            let v = load_at(b, x, &idx);
            let better = scalar::compare(b, rel, v, acc[0]);
            let bv = scalar::select(b, better, v, acc[0]);
            let bi = loops::select(b, better, iv, acc[1]);
            vec![bv, bi]
        });
        let _ = &elem;
        let best = b.m.results(l)[1];
        let i = b.op1("arith.index_cast", &[best], Type::i64(), &[]);
        let mut oi = ivs.to_vec();
        if !keep {
            oi.remove(axis);
        }
        store_at(b, i, out, &oi);
    });
    Ok(vec![out])
}
