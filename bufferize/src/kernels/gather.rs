//! Indexing ops: Gather, GatherElements, CumSum, Trilu, ArrayFeatureExtractor.

use super::build::{index_at, to_index};
use super::checks;
use super::reduce::normalize_axis;
use super::scalar::{self, constant};
use super::{alloc_result, attr_int, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

/// A possibly negative index made non-negative: `i < 0 ? i + d : i`.
pub(super) fn wrap(b: &mut Builder<'_>, i: ValueId, d: ValueId, zero: ValueId) -> ValueId {
    let neg = loops::cmp(b, "slt", i, zero);
    let w = loops::add(b, i, d);
    loops::select(b, neg, w, i)
}

/// Asserts that an operand's dims `di` are within the data's `dx`
/// (except on `axis`): the kernels address the data with them.
pub(super) fn within(
    b: &mut Builder<'_>,
    op: OpId,
    (name, di): (&str, &[ValueId]),
    dx: &[ValueId],
    axis: Option<usize>,
) -> Result<()> {
    if di.len() != dx.len() {
        return Err(op_error(b.m, op, format!("{name} and data differ in rank")));
    }
    for (k, (&i, &x)) in di.iter().zip(dx).enumerate() {
        if Some(k) != axis {
            let msg = format!("{name} dim {k} exceeds the data's");
            checks::compare(b, op, "sle", i, x, &msg)?;
        }
    }
    Ok(())
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
    let msg = checks::index_msg(b, op, 1, dx[axis], axis)?;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let i = load_at(b, ind, &ivs[axis..axis + q]);
        let i = to_index(b, i);
        let i = checks::index_if(b, op, i, dx[axis], msg.as_deref());
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
    within(b, op, ("indices", &di), &dx, Some(axis))?;
    let out = alloc_result(b, op, 0, &di)?;
    let bounds = Bounds::new(b);
    let msg = checks::index_msg(b, op, 1, dx[axis], axis)?;
    loop_nest(b, &bounds, &di, &mut |b, ivs| {
        let i = load_at(b, ind, ivs);
        let i = to_index(b, i);
        let i = checks::index_if(b, op, i, dx[axis], msg.as_deref());
        let mut xi = ivs.to_vec();
        xi[axis] = i;
        let v = load_at(b, x, &xi);
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

/// ArrayFeatureExtractor: the entries of the last axis that `indices` name
/// (a 1-D input gives one row).
pub fn array_feature_extractor(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let ind = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let out_rank = super::result_memref_type(b.m, op, 0)?
        .shape()
        .map_or(0, <[i64]>::len);
    if rank == 0 || out_rank != rank.max(2) {
        return Err(op_error(b.m, op, "unexpected ArrayFeatureExtractor ranks"));
    }
    let dx = dims(b, x);
    let n = index_at_dims(b, ind);
    let bounds = Bounds::new(b);
    let mut od: Vec<ValueId> = if rank == 1 {
        vec![bounds.one]
    } else {
        dx[..rank - 1].to_vec()
    };
    od.push(n);
    let out = alloc_result(b, op, 0, &od)?;
    let msg = checks::range_msg(rank - 1);
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let last = ivs[ivs.len() - 1];
        let i = load_at(b, ind, &[last]);
        let i = to_index(b, i);
        let i = checks::index(b, op, i, dx[rank - 1], &msg);
        let mut xi = if rank == 1 {
            Vec::new()
        } else {
            ivs[..rank - 1].to_vec()
        };
        xi.push(i);
        let v = load_at(b, x, &xi);
        store_at(b, v, out, ivs);
    });
    Ok(vec![out])
}

/// Number of entries of a 1-D index tensor.
fn index_at_dims(b: &mut Builder<'_>, ind: ValueId) -> ValueId {
    let d = dims(b, ind);
    let mut n = b.const_index(1);
    for v in d {
        n = loops::mul(b, n, v);
    }
    n
}
