//! Ops that assemble or generate tensors: Concat, Split, Shape, Size,
//! Range, Tile, Expand, ConstantOfShape, EyeLike. Sizes read from tensors
//! at runtime become dynamic allocation sizes.

use crate::convert::{dims, Lowering};
use crate::kernels::data::slice::{subview, Ix};
use crate::kernels::support::checks;
use crate::kernels::support::index::{from_index, index_at, to_index};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::memref::DISJOINT_SLOT;
use ir::dialects::op_error;
use ir::Attribute;
use ir::MemrefOp;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

pub fn concat(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let n = b.m.operands(op).len();
    let inputs: Vec<ValueId> = (0..n)
        .map(|i| cx.input(b.m, op, i))
        .collect::<Result<_>>()?;
    let Some(&first) = inputs.first() else {
        return Err(op_error(b.m, op, "expects inputs"));
    };
    let rank = shape_of(b.m, first).len();
    let axis = crate::kernels::support::axis(b.m, op, ops::Concat::of(b.m, op).axis(), rank)?;
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
        total = b.addi(total, d[axis]);
    }
    out_dims[axis] = total;
    let out = alloc_result(b, op, 0, &out_dims)?;
    // Each input is copied into its slot, a view of the result: the
    // dealloc stage's write-into-destination then computes it there.
    for (&v, &off) in inputs.iter().zip(&offsets) {
        let slot = slot_of(b, out, v, axis, off);
        let marker = [(DISJOINT_SLOT, Attribute::Unit)];
        b.op(MemrefOp::Copy, &[v, slot], &[], &marker);
    }
    Ok(vec![out])
}

/// The view of `out` that input `v` fills: `v`'s dims, at `offset` along
/// `axis`.
fn slot_of(b: &mut Builder<'_>, out: ValueId, v: ValueId, axis: usize, offset: ValueId) -> ValueId {
    let rank = shape_of(b.m, v).len();
    let shape = shape_of(b.m, v);
    let sizes: Vec<Ix> = dims(b, v).into_iter().map(Ix::V).collect();
    let offsets: Vec<Ix> = (0..rank)
        .map(|k| match (k == axis, b.index_value(offset)) {
            (false, _) => Ix::C(0),
            (true, Some(c)) => Ix::C(c),
            (true, None) => Ix::V(offset),
        })
        .collect();
    subview(b, out, &offsets, &sizes, &vec![1; rank], &shape)
}

pub fn split(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Split::INPUT)?;
    let rank = shape_of(b.m, x).len();
    let axis = crate::kernels::support::axis(b.m, op, ops::Split::of(b.m, op).axis(), rank)?;
    let nout = b.m.results(op).len();
    let dx = dims(b, x);
    let sizes: Vec<ValueId> = if cx.has_input(b.m, op, ops::Split::SPLIT) {
        let s = cx.input(b.m, op, ops::Split::SPLIT)?;
        (0..nout).map(|j| index_at(b, s, Some(j as i64))).collect()
    } else {
        // Equal parts, the last one smaller (ceil division).
        let k = b.const_index(nout as i64);
        let chunk = b.ceildivsi(dx[axis], k);
        let mut v = Vec::new();
        let mut left = dx[axis];
        for _ in 0..nout {
            let s = b.minsi(chunk, left);
            left = b.subi(left, s);
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
            ii[axis] = b.addi(ivs[axis], off);
            let v = b.load(x, &ii);
            b.store(v, out, ivs);
        });
        offset = b.addi(offset, s);
        outs.push(out);
    }
    Ok(outs)
}

pub fn shape(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Shape::DATA)?;
    let rank = shape_of(b.m, x).len() as i64;
    let view = ops::Shape::of(b.m, op);
    let start = onnx::axis::clamp_index(view.start(), rank);
    let end = onnx::axis::clamp_index(view.end().unwrap_or(rank), rank);
    let dx = dims(b, x);
    let n = (end - start).max(0);
    let nv = b.const_index(n);
    let out = alloc_result(b, op, 0, &[nv])?;
    for k in 0..n {
        let d = dx[(start + k) as usize];
        let v = from_index(b, d, &Type::i64());
        let i = b.const_index(k);
        b.store(v, out, &[i]);
    }
    Ok(vec![out])
}

pub fn size(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Size::DATA)?;
    let dx = dims(b, x);
    let mut n = b.const_index(1);
    for d in dx {
        n = b.muli(n, d);
    }
    let out = alloc_result(b, op, 0, &[])?;
    let v = from_index(b, n, &Type::i64());
    b.store(v, out, &[]);
    Ok(vec![out])
}

pub fn range(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let start = cx.input(b.m, op, ops::Range::START)?;
    let limit = cx.input(b.m, op, ops::Range::LIMIT)?;
    let delta = cx.input(b.m, op, ops::Range::DELTA)?;
    let t = elem_of(b.m, start);
    let (s, l, d) = (b.load(start, &[]), b.load(limit, &[]), b.load(delta, &[]));
    // n = max(ceil((limit - start) / delta), 0), computed in f64.
    let f = Type::f64();
    let (sf, lf, df) = (
        scalar::convert(b, op, s, &f)?,
        scalar::convert(b, op, l, &f)?,
        scalar::convert(b, op, d, &f)?,
    );
    let diff = b.subf(lf, sf);
    let q = b.divf(diff, df);
    let c = b.ceil(q);
    let zero = b.constant(&f, 0.0);
    let c = b.maximumf(c, zero);
    let n = to_index(b, c);
    let out = alloc_result(b, op, 0, &[n])?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &[n], &mut |b, ivs| {
        let i = from_index(b, ivs[0], &t);
        let step = b.mul(i, d);
        let v = b.add(s, step);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

pub fn tile(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Tile::INPUT)?;
    let reps = cx.input(b.m, op, ops::Tile::REPEATS)?;
    let dx = dims(b, x);
    let out_dims: Vec<ValueId> = dx
        .iter()
        .enumerate()
        .map(|(j, &d)| {
            let r = index_at(b, reps, Some(j as i64));
            checks::non_negative(b, op, r, &format!("repeats entry {j} is negative"))?;
            Ok(b.muli(d, r))
        })
        .collect::<Result<_>>()?;
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let idx: Vec<ValueId> = ivs.iter().zip(&dx).map(|(&i, &d)| b.remui(i, d)).collect();
        let v = b.load(x, &idx);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

/// Expand: broadcast `x` to `shape` (NumPy rules, either side may be 1).
pub fn expand(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Expand::INPUT)?;
    let s = cx.input(b.m, op, ops::Expand::SHAPE)?;
    let what = "the length of the shape input";
    let out_rank = crate::kernels::support::ranked_result(b.m, op, 0, what)?.len();
    let dx = dims(b, x);
    if shape_of(b.m, s).len() != 1 || dx.len() > out_rank {
        return Err(op_error(b.m, op, "Expand needs a 1-D shape"));
    }
    let n = dims(b, s)[0];
    let r = b.const_index(out_rank as i64);
    let msg = "the shape's length differs from the result rank";
    if dx.len() < out_rank {
        checks::equal(b, op, n, r, msg)?;
    } else {
        checks::compare(b, op, CmpI::Sle, n, r, msg)?;
    }
    let one = b.const_index(1);
    let zero = b.const_index(0);
    let mut out_dims = Vec::with_capacity(out_rank);
    for j in 0..out_rank {
        let xk = (j + dx.len()).checked_sub(out_rank);
        let xd = xk.map_or(one, |k| dx[k]);
        // Shape entries align to the right: entry j + n - rank, if any.
        let jv = b.const_index(j as i64);
        let t = b.addi(jv, n);
        let k = b.subi(t, r);
        let sd = match b.index_value(k) {
            Some(k) if k >= 0 => index_at(b, s, Some(k)),
            Some(_) => one,
            None => {
                let present = b.cmpi(CmpI::Sge, k, zero);
                let k = b.select(present, k, zero);
                let v = b.load(s, &[k]);
                let v = to_index(b, v);
                b.select(present, v, one)
            }
        };
        // NumPy rules: 1 against 0 gives 0, so not the larger of the two.
        let (o, _) = checks::broadcast_dim(b, &[(0, xd), (1, sd)]);
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
                    let is1 = b.cmpi(CmpI::Eq, dx[k], bounds.one);
                    b.select(is1, bounds.zero, ivs[k + off])
                }
            })
            .collect();
        let v = b.load(x, &idx);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

pub fn constant_of_shape(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let s = cx.input(b.m, op, ops::ConstantOfShape::INPUT)?;
    let ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let rank = ty.shape().map_or(0, <[i64]>::len);
    let elem = ty.element_type().clone();
    let v = ops::ConstantOfShape::of(b.m, op)
        .value()
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
        b.constant(&elem, v)
    };
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| b.store(c, out, ivs));
    Ok(vec![out])
}

pub fn eye_like(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::EyeLike::INPUT)?;
    let dx = dims(b, x);
    if dx.len() != 2 {
        return Err(op_error(b.m, op, "expects a 2-D input"));
    }
    let k = ops::EyeLike::of(b.m, op).k();
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .element_type()
        .clone();
    let (one, zero) = if elem == Type::i1() {
        (b.const_bool(true), b.const_bool(false))
    } else {
        (b.constant(&elem, 1.0), b.constant(&elem, 0.0))
    };
    let kv = b.const_index(k);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let ik = b.addi(ivs[0], kv);
        let on = b.cmpi(CmpI::Eq, ivs[1], ik);
        let v = b.select(on, one, zero);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}
