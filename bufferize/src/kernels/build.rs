//! Ops that assemble or generate tensors: Concat, Split, Shape, Size,
//! Range, Tile, Expand, ConstantOfShape, EyeLike. Sizes read from tensors
//! at runtime become dynamic allocation sizes.

use super::checks;
use super::reduce::normalize_axis;
use super::scalar::{self, constant};
use super::{alloc_result, attr_int, attr_ints, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Attribute, Builder, OpId, Result, Type, ValueId};

/// Element `j` of a 1-D (or 0-D) integer memref as an `index`.
pub fn index_at(b: &mut Builder<'_>, m: ValueId, j: Option<i64>) -> ValueId {
    let idx: Vec<ValueId> = j.map(|j| b.const_index(j)).into_iter().collect();
    let v = load_at(b, m, &idx);
    to_index(b, v)
}

pub fn to_index(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let t = b.m.value_type(v).clone();
    if t == Type::Index {
        return v;
    }
    let v = if t.is_float() {
        b.op1("arith.fptosi", &[v], Type::i64(), &[])
    } else {
        v
    };
    b.op1("arith.index_cast", &[v], Type::Index, &[])
}

pub fn from_index(b: &mut Builder<'_>, v: ValueId, t: &Type) -> ValueId {
    let i = b.op1("arith.index_cast", &[v], Type::i64(), &[]);
    if *t == Type::i64() {
        return i;
    }
    if t.is_float() {
        return b.op1("arith.sitofp", &[i], t.clone(), &[]);
    }
    if t.int_width().is_some_and(|w| w < 64) {
        return b.op1("arith.trunci", &[i], t.clone(), &[]);
    }
    i
}

fn max_index(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    b.same("arith.maxsi", &[x, y])
}

/// Copies `src` into `dst` at `offset` along `axis`.
fn copy_at(
    b: &mut Builder<'_>,
    bounds: &Bounds,
    src: ValueId,
    dst: ValueId,
    axis: usize,
    offset: ValueId,
) {
    let ds = dims(b, src);
    loop_nest(b, bounds, &ds, &mut |b, ivs| {
        let v = load_at(b, src, ivs);
        let mut oi = ivs.to_vec();
        oi[axis] = loops::add(b, ivs[axis], offset);
        store_at(b, v, dst, &oi);
    });
}

pub fn concat(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let n = b.m.operands(op).len();
    let inputs: Vec<ValueId> = (0..n)
        .map(|i| cx.input(b.m, op, i))
        .collect::<Result<_>>()?;
    let Some(&first) = inputs.first() else {
        return Err(op_error(b.m, op, "expects inputs"));
    };
    let rank = shape_of(b.m, first).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 0), rank)?;
    let mut out_dims = dims(b, first);
    let mut total = b.const_index(0);
    let mut offsets = Vec::new();
    for (i, &v) in inputs.iter().enumerate() {
        offsets.push(total);
        let d = dims(b, v);
        if d.len() != rank {
            return Err(op_error(b.m, op, "Concat inputs differ in rank"));
        }
        for (k, (&dk, &ok)) in d.iter().zip(&out_dims).enumerate() {
            if k != axis && i > 0 {
                let msg = format!("input {i} dim {k} differs from input 0's");
                checks::equal(b, op, dk, ok, &msg)?;
            }
        }
        total = loops::add(b, total, d[axis]);
    }
    out_dims[axis] = total;
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    for (&v, &off) in inputs.iter().zip(&offsets) {
        copy_at(b, &bounds, v, out, axis, off);
    }
    Ok(vec![out])
}

pub fn split(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 0), rank)?;
    let nout = b.m.results(op).len();
    let dx = dims(b, x);
    let sizes: Vec<ValueId> = if cx.has_input(b.m, op, 1) {
        let s = cx.input(b.m, op, 1)?;
        (0..nout).map(|j| index_at(b, s, Some(j as i64))).collect()
    } else if let Some(s) = attr_ints(b.m, op, "split") {
        s.iter().map(|&v| b.const_index(v)).collect()
    } else {
        // Equal parts, the last one smaller (ceil division).
        let k = b.const_index(nout as i64);
        let chunk = b.same("arith.ceildivsi", &[dx[axis], k]);
        let mut v = Vec::new();
        let mut left = dx[axis];
        for _ in 0..nout {
            let s = b.same("arith.minsi", &[chunk, left]);
            left = loops::sub(b, left, s);
            v.push(s);
        }
        v
    };
    if sizes.len() != nout {
        return Err(op_error(b.m, op, "split sizes do not match the outputs"));
    }
    for (j, &s) in sizes.iter().enumerate() {
        checks::non_negative(b, op, s, &format!("split size {j} is negative"))?;
    }
    let sum = checks::total(b, &sizes);
    checks::equal(
        b,
        op,
        sum,
        dx[axis],
        "the split sizes do not add up to the axis dim",
    )?;
    let bounds = Bounds::new(b);
    let mut offset = bounds.zero;
    let mut outs = Vec::new();
    for (j, &s) in sizes.iter().enumerate() {
        let mut od = dx.clone();
        od[axis] = s;
        let out = alloc_result(b, op, j, &od)?;
        let off = offset;
        loop_nest(b, &bounds, &od, &mut |b, ivs| {
            let mut ii = ivs.to_vec();
            ii[axis] = loops::add(b, ivs[axis], off);
            let v = load_at(b, x, &ii);
            store_at(b, v, out, ivs);
        });
        offset = loops::add(b, offset, s);
        outs.push(out);
    }
    Ok(outs)
}

pub fn shape(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len() as i64;
    let clampi = |v: i64| (if v < 0 { v + rank } else { v }).clamp(0, rank);
    let start = clampi(attr_int(b.m, op, "start", 0));
    let end = clampi(attr_int(b.m, op, "end", rank));
    let dx = dims(b, x);
    let n = (end - start).max(0);
    let nv = b.const_index(n);
    let out = alloc_result(b, op, 0, &[nv])?;
    for k in 0..n {
        let d = dx[(start + k) as usize];
        let v = from_index(b, d, &Type::i64());
        let i = b.const_index(k);
        store_at(b, v, out, &[i]);
    }
    Ok(vec![out])
}

pub fn size(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    let mut n = b.const_index(1);
    for d in dx {
        n = loops::mul(b, n, d);
    }
    let out = alloc_result(b, op, 0, &[])?;
    let v = from_index(b, n, &Type::i64());
    store_at(b, v, out, &[]);
    Ok(vec![out])
}

pub fn range(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let start = cx.input(b.m, op, 0)?;
    let limit = cx.input(b.m, op, 1)?;
    let delta = cx.input(b.m, op, 2)?;
    let t = elem_of(b.m, start);
    let (s, l, d) = (
        load_at(b, start, &[]),
        load_at(b, limit, &[]),
        load_at(b, delta, &[]),
    );
    // n = max(ceil((limit - start) / delta), 0), computed in f64.
    let f = Type::f64();
    let (sf, lf, df) = (
        scalar::convert(b, op, s, &f)?,
        scalar::convert(b, op, l, &f)?,
        scalar::convert(b, op, d, &f)?,
    );
    let diff = b.same("arith.subf", &[lf, sf]);
    let q = b.same("arith.divf", &[diff, df]);
    let c = b.same("math.ceil", &[q]);
    let zero = constant(b, &f, 0.0);
    let c = b.same("arith.maximumf", &[c, zero]);
    let n = to_index(b, c);
    let out = alloc_result(b, op, 0, &[n])?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &[n], &mut |b, ivs| {
        let i = from_index(b, ivs[0], &t);
        let step = scalar::mul(b, i, d);
        let v = scalar::add(b, s, step);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

pub fn tile(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let reps = cx.input(b.m, op, 1)?;
    let dx = dims(b, x);
    let out_dims: Vec<ValueId> = dx
        .iter()
        .enumerate()
        .map(|(j, &d)| {
            let r = index_at(b, reps, Some(j as i64));
            checks::non_negative(b, op, r, &format!("repeats entry {j} is negative"))?;
            Ok(loops::mul(b, d, r))
        })
        .collect::<Result<_>>()?;
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let idx: Vec<ValueId> = ivs
            .iter()
            .zip(&dx)
            .map(|(&i, &d)| b.same("arith.remui", &[i, d]))
            .collect();
        let v = load_at(b, x, &idx);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

/// Expand: broadcast `x` to `shape` (NumPy rules, either side may be 1).
pub fn expand(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let s = cx.input(b.m, op, 1)?;
    let out_rank = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map_or(0, <[i64]>::len);
    let dx = dims(b, x);
    let n = shape_of(b.m, s).first().copied().unwrap_or(0);
    if n < 0 || n as usize > out_rank || dx.len() > out_rank {
        return Err(op_error(b.m, op, "Expand needs a static shape length"));
    }
    let one = b.const_index(1);
    let mut out_dims = Vec::with_capacity(out_rank);
    for j in 0..out_rank {
        let xk = (j + dx.len()).checked_sub(out_rank);
        let xd = xk.map_or(one, |k| dx[k]);
        let sd = match (j + n as usize).checked_sub(out_rank) {
            Some(k) => index_at(b, s, Some(k as i64)),
            None => one,
        };
        let o = max_index(b, xd, sd);
        if let Some(k) = xk {
            checks::broadcasts(b, op, xd, o, &checks::broadcast_msg(0, k))?;
        }
        let msg = format!("shape entry {j} is not 1 and differs from the output dim");
        checks::broadcasts(b, op, sd, o, &msg)?;
        out_dims.push(o);
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    let off = out_rank - dx.len();
    let xs = shape_of(b.m, x);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let idx: Vec<ValueId> = (0..dx.len())
            .map(|k| {
                if xs[k] == 1 {
                    bounds.zero
                } else {
                    // A dynamic dim may still be 1 at runtime.
                    let is1 = loops::cmp(b, "eq", dx[k], bounds.one);
                    loops::select(b, is1, bounds.zero, ivs[k + off])
                }
            })
            .collect();
        let v = load_at(b, x, &idx);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

pub fn constant_of_shape(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let s = cx.input(b.m, op, 0)?;
    let ty = super::result_memref_type(b.m, op, 0)?;
    let rank = ty.shape().map_or(0, <[i64]>::len);
    let elem = ty.element_type().clone();
    let v =
        b.m.attr(op, "value")
            .and_then(Attribute::as_elements)
            .and_then(|e| e.iter().next())
            .map_or(0.0, |w| {
                if elem.is_float() {
                    w.f64()
                } else {
                    w.i64() as f64
                }
            });
    let out_dims: Vec<ValueId> = (0..rank).map(|j| index_at(b, s, Some(j as i64))).collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    let c = if elem == Type::i1() {
        b.const_bool(v != 0.0)
    } else {
        constant(b, &elem, v)
    };
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        store_at(b, c, out, ivs)
    });
    Ok(vec![out])
}

pub fn eye_like(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    if dx.len() != 2 {
        return Err(op_error(b.m, op, "expects a 2-D input"));
    }
    let k = attr_int(b.m, op, "k", 0);
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = super::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let (one, zero) = if elem == Type::i1() {
        (b.const_bool(true), b.const_bool(false))
    } else {
        (constant(b, &elem, 1.0), constant(b, &elem, 0.0))
    };
    let kv = b.const_index(k);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let ik = loops::add(b, ivs[0], kv);
        let on = loops::cmp(b, "eq", ivs[1], ik);
        let v = scalar::select(b, on, one, zero);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}
