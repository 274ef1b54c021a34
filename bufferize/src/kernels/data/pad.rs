//! Pad in every mode (constant, reflect, edge, wrap), pads and constant
//! from operands (runtime values allowed), optional axes (constant or
//! runtime). Negative pads crop.

use crate::convert::{dims, Lowering};
use crate::kernels::support::index::index_at;
use crate::kernels::{
    support::alloc_result, support::constant_ints, support::elem_of, support::shape_of,
};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// Where a position outside the input reads from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Constant,
    Reflect,
    Edge,
    Wrap,
}

pub fn pad(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Pad::DATA)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let mode = match ops::Pad::of(b.m, op).mode() {
        "edge" => Mode::Edge,
        "reflect" => Mode::Reflect,
        "wrap" => Mode::Wrap,
        _ => Mode::Constant,
    };
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let (begin, end) = amounts(cx, b, op, rank, &bounds)?;
    let cval = if cx.has_input(b.m, op, ops::Pad::CONSTANT_VALUE) {
        let c = cx.input(b.m, op, ops::Pad::CONSTANT_VALUE)?;
        let r = shape_of(b.m, c).len();
        let idx: Vec<ValueId> = (0..r).map(|_| bounds.zero).collect();
        b.load(c, &idx)
    } else if elem == Type::i1() {
        b.const_bool(false)
    } else {
        b.zero(&elem)
    };
    let out_dims: Vec<ValueId> = (0..rank)
        .map(|d| {
            let s = b.addi(dx[d], begin[d]);
            b.addi(s, end[d])
        })
        .collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let mut idx = Vec::with_capacity(rank);
        let mut inside = b.const_bool(true);
        for d in 0..rank {
            let s = b.subi(ivs[d], begin[d]);
            let i = match source_index(b, mode, s, dx[d], &bounds) {
                Source::At(i) => i,
                Source::IfInside(ok) => {
                    inside = b.andi(inside, ok);
                    b.select(ok, s, bounds.zero)
                }
            };
            idx.push(i);
        }
        let v = b.load(x, &idx);
        let r = if mode == Mode::Constant {
            b.select(inside, v, cval)
        } else {
            v
        };
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// The pads before and after each dim, from the `pads` operand over the
/// constant, runtime or default (all) `axes`.
fn amounts(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    rank: usize,
    bounds: &Bounds,
) -> Result<(Vec<ValueId>, Vec<ValueId>)> {
    let mut begin = vec![bounds.zero; rank];
    let mut end = vec![bounds.zero; rank];
    // Axes: constant, read at runtime (each listed dim picked by compares),
    // or all dims.
    let runtime_axes = match cx.optional_input(b.m, op, ops::Pad::AXES)? {
        Some(a) if constant_ints(b.m, op, ops::Pad::AXES).is_none() => Some(a),
        _ => None,
    };
    let axes: Vec<usize> = match constant_ints(b.m, op, ops::Pad::AXES) {
        Some(a) if cx.has_input(b.m, op, ops::Pad::AXES) => a
            .iter()
            .map(|&v| crate::kernels::support::axis(b.m, op, v, rank))
            .collect::<Result<_>>()?,
        _ => (0..rank).collect(),
    };
    if !cx.has_input(b.m, op, ops::Pad::PADS) {
        return Ok((begin, end));
    }
    let p = cx.input(b.m, op, ops::Pad::PADS)?;
    let Some(av) = runtime_axes else {
        let n = axes.len();
        for (j, &d) in axes.iter().enumerate() {
            begin[d] = index_at(b, p, Some(j as i64));
            end[d] = index_at(b, p, Some((j + n) as i64));
        }
        return Ok((begin, end));
    };
    let (Some(&n), Some(&np)) = (dims(b, av).first(), dims(b, p).first()) else {
        return Err(op_error(b.m, op, "pads and axes must be 1-D"));
    };
    let twice = b.addi(n, n);
    crate::kernels::support::checks::equal(
        b,
        op,
        np,
        twice,
        "pads does not have two entries per axis",
    )?;
    let r = b.const_index(rank as i64);
    // Each entry j sets the pads of the dim its axis names.
    let pick = |b: &mut Builder<'_>, j: ValueId, acc: &[ValueId]| -> Vec<ValueId> {
        let load = |b: &mut Builder<'_>, v: ValueId, i: ValueId| {
            let e = b.load(v, &[i]);
            crate::kernels::support::index::to_index(b, e)
        };
        let a = load(b, av, j);
        let a = crate::kernels::support::index::wrap(b, a, r, bounds.zero);
        let pb = load(b, p, j);
        let jn = b.addi(j, n);
        let pe = load(b, p, jn);
        let mut next = acc.to_vec();
        for d in 0..rank {
            let dv = b.const_index(d as i64);
            let hit = b.cmpi(CmpI::Eq, a, dv);
            next[d] = b.select(hit, pb, acc[d]);
            next[rank + d] = b.select(hit, pe, acc[rank + d]);
        }
        next
    };
    let mut acc: Vec<ValueId> = begin.into_iter().chain(end).collect();
    match b.index_value(n) {
        // A few entries known now: unrolled.
        Some(c) => {
            for j in 0..c {
                let jv = b.const_index(j);
                acc = pick(b, jv, &acc);
            }
        }
        None => {
            let f = b.scf_for(bounds.zero, n, bounds.one, &acc, |b, j, a| pick(b, j, a));
            acc = b.m.results(f).to_vec();
        }
    }
    let end = acc.split_off(rank);
    Ok((acc, end))
}

/// What an output position reads along one dim.
enum Source {
    /// This input index.
    At(ValueId),
    /// The offset itself when this condition holds, else the constant.
    IfInside(ValueId),
}

/// What output offset `s` (position minus the leading pad) reads along a
/// dim of size `n`.
fn source_index(
    b: &mut Builder<'_>,
    mode: Mode,
    s: ValueId,
    n: ValueId,
    bounds: &Bounds,
) -> Source {
    let (zero, one) = (bounds.zero, bounds.one);
    let dm1 = b.subi(n, one);
    let i = match mode {
        Mode::Edge => {
            let c = b.maxsi(s, zero);
            b.minsi(c, dm1)
        }
        Mode::Reflect => {
            let neg = b.subi(zero, s);
            let lt = b.cmpi(CmpI::Slt, s, zero);
            let s1 = b.select(lt, neg, s);
            let twice = b.addi(dm1, dm1);
            let back = b.subi(twice, s1);
            let ge = b.cmpi(CmpI::Sgt, s1, dm1);
            let r = b.select(ge, back, s1);
            // A dim of size 1 reflects onto itself.
            let c = b.maxsi(r, zero);
            b.minsi(c, dm1)
        }
        Mode::Wrap => {
            let r = b.remsi(s, n);
            let r = b.addi(r, n);
            b.remsi(r, n)
        }
        Mode::Constant => {
            let ge = b.cmpi(CmpI::Sge, s, zero);
            let lt = b.cmpi(CmpI::Slt, s, n);
            return Source::IfInside(b.andi(ge, lt));
        }
    };
    Source::At(i)
}
