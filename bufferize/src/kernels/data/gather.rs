//! Indexing ops: Gather, GatherElements, CumSum, Trilu, ArrayFeatureExtractor.

use crate::convert::{dims, Lowering};
use crate::kernels::support::checks;
use crate::kernels::support::index::wrap;
use crate::kernels::support::index::{index_at, to_index};
use crate::kernels::{support::alloc_result, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// CumSum or CumProd.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Cumulative {
    Sum,
    Prod,
}

/// Asserts that an operand's dims `di` are within the data's `dx`
/// (except on `axis`): the kernels address the data with them.
pub(crate) fn within(
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
            checks::compare(b, op, CmpI::Sle, i, x, &msg)?;
        }
    }
    Ok(())
}

pub fn gather(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Gather::DATA)?;
    let ind = cx.input(b.m, op, ops::Gather::INDICES)?;
    let rank = shape_of(b.m, x).len();
    let axis = crate::kernels::support::axis(b.m, op, ops::Gather::of(b.m, op).axis(), rank)?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    let q = di.len();
    let mut out_dims = dx[..axis].to_vec();
    out_dims.extend_from_slice(&di);
    out_dims.extend_from_slice(&dx[axis + 1..]);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    let msg = checks::index_msg(b, op, ops::Gather::INDICES, dx[axis], axis)?;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let i = b.load(ind, &ivs[axis..axis + q]);
        let i = to_index(b, i);
        let i = checks::index_if(b, op, i, dx[axis], msg.as_deref());
        let mut xi = ivs[..axis].to_vec();
        xi.push(i);
        xi.extend_from_slice(&ivs[axis + q..]);
        let v = b.load(x, &xi);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

pub fn gather_elements(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::GatherElements::DATA)?;
    let ind = cx.input(b.m, op, ops::GatherElements::INDICES)?;
    let rank = shape_of(b.m, x).len();
    let axis =
        crate::kernels::support::axis(b.m, op, ops::GatherElements::of(b.m, op).axis(), rank)?;
    let dx = dims(b, x);
    let di = dims(b, ind);
    within(b, op, ("indices", &di), &dx, Some(axis))?;
    let out = alloc_result(b, op, 0, &di)?;
    let bounds = Bounds::new(b);
    let msg = checks::index_msg(b, op, ops::GatherElements::INDICES, dx[axis], axis)?;
    loop_nest(b, &bounds, &di, &mut |b, ivs| {
        let i = b.load(ind, ivs);
        let i = to_index(b, i);
        let i = checks::index_if(b, op, i, dx[axis], msg.as_deref());
        let mut xi = ivs.to_vec();
        xi[axis] = i;
        let v = b.load(x, &xi);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

/// CumSum/CumProd along a (possibly runtime) axis: each output folds its prefix
/// (or suffix when `reverse`), excluding itself when `exclusive`.
pub fn cumulative(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: Cumulative,
) -> Result<Vec<ValueId>> {
    let prod = kind == Cumulative::Prod;
    // X and axis of CumSum and CumProd
    let x = cx.input(b.m, op, ops::CumSum::X)?;
    let av = cx.input(b.m, op, ops::CumSum::AXIS)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let (exclusive, reverse) = match kind {
        Cumulative::Sum => {
            let v = ops::CumSum::of(b.m, op);
            (v.exclusive() != 0, v.reverse() != 0)
        }
        Cumulative::Prod => {
            let v = ops::CumProd::of(b.m, op);
            (v.exclusive() != 0, v.reverse() != 0)
        }
    };
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
            b.cmpi(CmpI::Eq, a, dv)
        })
        .collect();
    // Length of the axis: select over the dims.
    let mut len = bounds.zero;
    for d in 0..rank {
        len = b.select(is_axis[d], dx[d], len);
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = crate::kernels::support::elem_of(b.m, x);
    let pred = match (reverse, exclusive) {
        (false, false) => CmpI::Sle,
        (false, true) => CmpI::Slt,
        (true, false) => CmpI::Sge,
        (true, true) => CmpI::Sgt,
    };
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let mut pos = bounds.zero;
        for d in 0..rank {
            pos = b.select(is_axis[d], ivs[d], pos);
        }
        let init = b.constant(&elem, if prod { 1.0 } else { 0.0 });
        let s = reduce_nest(b, &bounds, &[len], init, &mut |b, k, acc| {
            let idx: Vec<ValueId> = (0..rank)
                .map(|d| b.select(is_axis[d], k[0], ivs[d]))
                .collect();
            let v = b.load(x, &idx);
            let inc = b.cmpi(pred, k[0], pos);
            let sum = if prod { b.mul(acc, v) } else { b.add(acc, v) };
            b.select(inc, sum, acc)
        });
        b.store(s, out, ivs);
    });
    Ok(vec![out])
}

pub fn trilu(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Trilu::INPUT)?;
    let rank = shape_of(b.m, x).len();
    if rank < 2 {
        return Err(op_error(b.m, op, "expects rank >= 2"));
    }
    let upper = ops::Trilu::of(b.m, op).upper() != 0;
    let k = if cx.has_input(b.m, op, ops::Trilu::K) {
        let kv = cx.input(b.m, op, ops::Trilu::K)?;
        let r = shape_of(b.m, kv).len();
        index_at(b, kv, (r == 1).then_some(0))
    } else {
        b.const_index(0)
    };
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = crate::kernels::support::elem_of(b.m, x);
    let zero = if elem == Type::i1() {
        b.const_bool(false)
    } else {
        b.constant(&elem, 0.0)
    };
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let (i, j) = (ivs[rank - 2], ivs[rank - 1]);
        let ik = b.addi(i, k);
        // upper keeps j >= i + k; lower keeps j <= i + k.
        let keep = b.cmpi(if upper { CmpI::Sge } else { CmpI::Sle }, j, ik);
        let v = b.load(x, ivs);
        let r = b.select(keep, v, zero);
        b.store(r, out, ivs);
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
    let x = cx.input(b.m, op, ops::ArrayFeatureExtractor::X)?;
    let ind = cx.input(b.m, op, ops::ArrayFeatureExtractor::Y)?;
    let rank = shape_of(b.m, x).len();
    let out_rank = crate::kernels::support::result_memref_type(b.m, op, 0)?
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
        let i = b.load(ind, &[last]);
        let i = to_index(b, i);
        let i = checks::index(b, op, i, dx[rank - 1], &msg);
        let mut xi = if rank == 1 {
            Vec::new()
        } else {
            ivs[..rank - 1].to_vec()
        };
        xi.push(i);
        let v = b.load(x, &xi);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

/// Number of entries of a 1-D index tensor.
fn index_at_dims(b: &mut Builder<'_>, ind: ValueId) -> ValueId {
    let d = dims(b, ind);
    let mut n = b.const_index(1);
    for v in d {
        n = b.muli(n, v);
    }
    n
}
