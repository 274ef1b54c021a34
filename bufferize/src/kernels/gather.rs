//! Indexing ops: Gather, GatherElements, Slice (runtime starts/ends/axes/
//! steps), CumSum, Trilu.

use super::build::{index_at, to_index};
use super::reduce::normalize_axis;
use super::scalar::{self, constant};
use super::{alloc_result, attr_int, constant_ints, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

/// A possibly negative index made non-negative: `i < 0 ? i + d : i`.
fn wrap(b: &mut Builder<'_>, i: ValueId, d: ValueId, zero: ValueId) -> ValueId {
    let neg = loops::cmp(b, "slt", i, zero);
    let w = loops::add(b, i, d);
    loops::select(b, neg, w, i)
}

pub fn gather(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let ind = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 0), rank)?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let q = di.len();
    let mut out_dims = dx[..axis].to_vec();
    out_dims.extend_from_slice(&di);
    out_dims.extend_from_slice(&dx[axis + 1..]);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let i = load_at(b, ind, &ivs[axis..axis + q]);
        let i = to_index(b, i);
        let i = wrap(b, i, dx[axis], bounds.zero);
        let mut xi = ivs[..axis].to_vec();
        xi.push(i);
        xi.extend_from_slice(&ivs[axis + q..]);
        let v = load_at(b, x, &xi);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

pub fn gather_elements(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let ind = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", 0), rank)?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let out = alloc_result(b, op, 0, &di)?;
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &di, &mut |b, ivs| {
        let i = load_at(b, ind, ivs);
        let i = to_index(b, i);
        let i = wrap(b, i, dx[axis], bounds.zero);
        let mut xi = ivs.to_vec();
        xi[axis] = i;
        let v = load_at(b, x, &xi);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

/// Slice: per dim a start and step (index values) and the result size.
pub fn slice(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let starts = cx.input(b.m, op, 1)?;
    let ends = cx.input(b.m, op, 2)?;
    let n = shape_of(b.m, starts).first().copied().unwrap_or(-1);
    if n < 0 {
        return Err(op_error(b.m, op, "Slice needs starts of static length"));
    }
    let axes = cx
        .has_input(b.m, op, 3)
        .then(|| cx.input(b.m, op, 3))
        .transpose()?;
    let steps = cx
        .has_input(b.m, op, 4)
        .then(|| cx.input(b.m, op, 4))
        .transpose()?;
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let rank_v = b.const_index(rank as i64);
    // Defaults: the whole dim with step 1.
    let mut st: Vec<ValueId> = vec![zero; rank];
    let mut en: Vec<ValueId> = dx.clone();
    let mut sp: Vec<ValueId> = vec![one; rank];
    let mut touched: Vec<Option<ValueId>> = vec![None; rank];
    let const_axes = if axes.is_some() {
        constant_ints(b.m, op, 3)
    } else {
        Some((0..n).collect())
    };
    for j in 0..n {
        let s = index_at(b, starts, Some(j));
        let e = index_at(b, ends, Some(j));
        let p = match steps {
            Some(v) => index_at(b, v, Some(j)),
            None => one,
        };
        match &const_axes {
            Some(ax) => {
                let a = ax.get(j as usize).copied().unwrap_or(j);
                let d = normalize_axis(b, op, a, rank)?;
                st[d] = s;
                en[d] = e;
                sp[d] = p;
                touched[d] = Some(b.const_bool(true));
            }
            None => {
                let Some(av) = axes else { continue };
                let a = index_at(b, av, Some(j));
                let a = wrap(b, a, rank_v, zero);
                for d in 0..rank {
                    let dv = b.const_index(d as i64);
                    let hit = loops::cmp(b, "eq", a, dv);
                    st[d] = loops::select(b, hit, s, st[d]);
                    en[d] = loops::select(b, hit, e, en[d]);
                    sp[d] = loops::select(b, hit, p, sp[d]);
                    let t = touched[d].unwrap_or_else(|| b.const_bool(false));
                    touched[d] = Some(b.same("arith.ori", &[t, hit]));
                }
            }
        }
    }
    let mut sizes = Vec::with_capacity(rank);
    let mut first = Vec::with_capacity(rank);
    for d in 0..rank {
        if touched[d].is_none() {
            sizes.push(dx[d]);
            first.push(zero);
            continue;
        }
        let dim = dx[d];
        let s = wrap(b, st[d], dim, zero);
        let e = wrap(b, en[d], dim, zero);
        let pos = loops::cmp(b, "sgt", sp[d], zero);
        let m1 = b.const_index(-1);
        let dm1 = loops::sub(b, dim, one);
        // step > 0: clamp to [0, dim]; step < 0: start to [0, dim-1], end to [-1, dim-1].
        let s_hi = loops::select(b, pos, dim, dm1);
        let e_lo = loops::select(b, pos, zero, m1);
        let e_hi = loops::select(b, pos, dim, dm1);
        let s = b.same("arith.maxsi", &[s, zero]);
        let s = b.same("arith.minsi", &[s, s_hi]);
        let e = b.same("arith.maxsi", &[e, e_lo]);
        let e = b.same("arith.minsi", &[e, e_hi]);
        let span = loops::sub(b, e, s);
        let cnt = b.same("arith.ceildivsi", &[span, sp[d]]);
        let cnt = b.same("arith.maxsi", &[cnt, zero]);
        sizes.push(cnt);
        first.push(s);
    }
    let out = alloc_result(b, op, 0, &sizes)?;
    loop_nest(b, &bounds, &sizes, &mut |b, ivs| {
        let idx: Vec<ValueId> = (0..rank)
            .map(|d| {
                let k = loops::mul(b, ivs[d], sp[d]);
                loops::add(b, first[d], k)
            })
            .collect();
        let v = load_at(b, x, &idx);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

/// CumSum/CumProd along a (possibly runtime) axis: each output folds its prefix
/// (or suffix when `reverse`), excluding itself when `exclusive`.
pub fn cumulative(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
) -> Result<Vec<ValueId>> {
    let prod = kind == "CumProd";
    let x = cx.input(b.m, op, 0)?;
    let av = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let exclusive = attr_int(b.m, op, "exclusive", 0) != 0;
    let reverse = attr_int(b.m, op, "reverse", 0) != 0;
    let bounds = Bounds::new(b);
    let a = {
        let r = shape_of(b.m, av).len();
        let v = index_at(b, av, (r == 1).then_some(0));
        let rv = b.const_index(rank as i64);
        wrap(b, v, rv, bounds.zero)
    };
    let is_axis: Vec<ValueId> = (0..rank)
        .map(|d| {
            let dv = b.const_index(d as i64);
            loops::cmp(b, "eq", a, dv)
        })
        .collect();
    // Length of the axis: select over the dims.
    let mut len = bounds.zero;
    for d in 0..rank {
        len = loops::select(b, is_axis[d], dx[d], len);
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = super::elem_of(b.m, x);
    let pred = match (reverse, exclusive) {
        (false, false) => "sle",
        (false, true) => "slt",
        (true, false) => "sge",
        (true, true) => "sgt",
    };
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let mut pos = bounds.zero;
        for d in 0..rank {
            pos = loops::select(b, is_axis[d], ivs[d], pos);
        }
        let init = constant(b, &elem, if prod { 1.0 } else { 0.0 });
        let s = loops::reduce_nest(b, &bounds, &[len], init, &mut |b, k, acc| {
            let idx: Vec<ValueId> = (0..rank)
                .map(|d| loops::select(b, is_axis[d], k[0], ivs[d]))
                .collect();
            let v = load_at(b, x, &idx);
            let inc = loops::cmp(b, pred, k[0], pos);
            let sum = if prod {
                scalar::mul(b, acc, v)
            } else {
                scalar::add(b, acc, v)
            };
            scalar::select(b, inc, sum, acc)
        });
        store_at(b, s, out, ivs);
    });
    Ok(vec![out])
}

pub fn trilu(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    if rank < 2 {
        return Err(op_error(b.m, op, "expects rank >= 2"));
    }
    let upper = attr_int(b.m, op, "upper", 1) != 0;
    let k = if cx.has_input(b.m, op, 1) {
        let kv = cx.input(b.m, op, 1)?;
        let r = shape_of(b.m, kv).len();
        index_at(b, kv, (r == 1).then_some(0))
    } else {
        b.const_index(0)
    };
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = super::elem_of(b.m, x);
    let zero = if elem == Type::i1() {
        b.const_bool(false)
    } else {
        constant(b, &elem, 0.0)
    };
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let (i, j) = (ivs[rank - 2], ivs[rank - 1]);
        let ik = loops::add(b, i, k);
        // upper keeps j >= i + k; lower keeps j <= i + k.
        let keep = loops::cmp(b, if upper { "sge" } else { "sle" }, j, ik);
        let v = load_at(b, x, ivs);
        let r = scalar::select(b, keep, v, zero);
        store_at(b, r, out, ivs);
    });
    Ok(vec![out])
}
