//! Reduce* (axes constant or runtime; keepdims;
//! noop_with_empty_axes) and ArgMax/ArgMin.
//!
//! A reduction initializes the output with the identity, accumulates every
//! input element into the output position with the reduced dims pinned to
//! 0, then finishes (Mean divides, L2 takes the root, LogSum the log).

use crate::convert::{dims, Lowering};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::constant_ints, support::shape_of};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The Reduce* ops.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    LogSum,
    LogSumExp,
    SumSquare,
}

/// ArgMax or ArgMin.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Max,
    Min,
}

impl Reduce {
    fn noop_with_empty_axes(self, m: &ir::Module, op: OpId) -> bool {
        let v = match self {
            Reduce::Sum => ops::ReduceSum::of(m, op).noop_with_empty_axes(),
            Reduce::Mean => ops::ReduceMean::of(m, op).noop_with_empty_axes(),
            Reduce::Max => ops::ReduceMax::of(m, op).noop_with_empty_axes(),
            Reduce::Min => ops::ReduceMin::of(m, op).noop_with_empty_axes(),
            Reduce::Prod => ops::ReduceProd::of(m, op).noop_with_empty_axes(),
            Reduce::L1 => ops::ReduceL1::of(m, op).noop_with_empty_axes(),
            Reduce::L2 => ops::ReduceL2::of(m, op).noop_with_empty_axes(),
            Reduce::LogSum => ops::ReduceLogSum::of(m, op).noop_with_empty_axes(),
            Reduce::LogSumExp => ops::ReduceLogSumExp::of(m, op).noop_with_empty_axes(),
            Reduce::SumSquare => ops::ReduceSumSquare::of(m, op).noop_with_empty_axes(),
        };
        v != 0
    }

    /// The identity the output starts from.
    fn init(self, b: &mut Builder<'_>, elem: &Type) -> ValueId {
        match self {
            Reduce::Max => scalar::lowest(b, elem),
            Reduce::Min => scalar::highest(b, elem),
            Reduce::Prod => b.one(elem),
            _ => b.zero(elem),
        }
    }

    /// `acc` with input element `v` folded in.
    fn step(self, b: &mut Builder<'_>, acc: ValueId, v: ValueId) -> ValueId {
        match self {
            Reduce::Max => b.max(acc, v),
            Reduce::Min => b.min(acc, v),
            Reduce::Prod => b.mul(acc, v),
            Reduce::L1 => {
                let a = if b.m.value_type(v).is_float() {
                    b.absf(v)
                } else {
                    b.absi(v)
                };
                b.add(acc, a)
            }
            Reduce::L2 | Reduce::SumSquare => {
                let sq = b.mul(v, v);
                b.add(acc, sq)
            }
            Reduce::LogSumExp => {
                let e = b.exp(v);
                b.add(acc, e)
            }
            Reduce::Sum | Reduce::Mean | Reduce::LogSum => b.add(acc, v),
        }
    }
}

/// Whether input dim `d` is reduced: known statically, or an `i1` at runtime.
#[derive(Clone, Copy)]
enum Flag {
    Static(bool),
    Dyn(ValueId),
}

/// The reduced-dim flags of a Reduce* op; `None` means "no-op".
fn flags(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    rank: usize,
    noop: bool,
) -> Result<Option<Vec<Flag>>> {
    // axes of each Reduce kind
    let axes = if cx.has_input(b.m, op, ops::ReduceSum::AXES) {
        match constant_ints(b.m, op, ops::ReduceSum::AXES) {
            Some(a) => a,
            None => return runtime_flags(cx, b, op, rank, noop).map(Some),
        }
    } else {
        Vec::new()
    };
    if axes.is_empty() {
        return Ok((!noop).then(|| vec![Flag::Static(true); rank]));
    }
    let mut f = vec![Flag::Static(false); rank];
    for a in axes {
        f[crate::kernels::support::axis(b.m, op, a, rank)?] = Flag::Static(true);
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
    // axes of each Reduce kind
    let axes = cx.input(b.m, op, ops::ReduceSum::AXES)?;
    if shape_of(b.m, axes).len() != 1 {
        return Err(op_error(b.m, op, "axes must be 1-D"));
    }
    let n = dims(b, axes)[0];
    let bounds = Bounds::new(b);
    let empty = b.cmpi(CmpI::Eq, n, bounds.zero);
    let mut out = Vec::with_capacity(rank);
    for d in 0..rank {
        let fals = b.const_bool(false);
        let hit = reduce_nest(b, &bounds, &[n], fals, &mut |b, iv, acc| {
            let a = b.load(axes, iv);
            let a = b.index_cast(a, Type::Index);
            let dp = b.const_index(d as i64);
            let dn = b.const_index(d as i64 - rank as i64);
            let e1 = b.cmpi(CmpI::Eq, a, dp);
            let e2 = b.cmpi(CmpI::Eq, a, dn);
            let e = b.ori(e1, e2);
            b.ori(acc, e)
        });
        let f = if noop { hit } else { b.ori(hit, empty) };
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
            Flag::Dyn(c) => idx.push(b.select(*c, zero, iv)),
        }
    }
    idx
}

pub fn reduce(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: Reduce,
) -> Result<Vec<ValueId>> {
    // data of each Reduce kind
    let x = cx.input(b.m, op, ops::ReduceSum::DATA)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let elem = crate::kernels::support::elem_of(b.m, x);
    let noop = kind.noop_with_empty_axes(b.m, op);
    let Some(flags) = flags(cx, b, op, rank, noop)? else {
        return crate::kernels::data::shape::copy_op(cx, b, op);
    };
    let out_rank = crate::kernels::support::result_memref_type(b.m, op, 0)?
        .shape()
        .map_or(0, <[i64]>::len);
    // Runtime axes without keepdims: reduce into the keepdims form, then
    // view it with the kept dims (same element order).
    let squeeze_after = out_rank != rank && flags.iter().any(|f| matches!(f, Flag::Dyn(_)));
    let keep = out_rank == rank || squeeze_after;
    let bounds = Bounds::new(b);
    let one = bounds.one;
    let mut out_dims = Vec::new();
    for (f, &d) in flags.iter().zip(&dx) {
        match f {
            Flag::Static(true) if !keep => {}
            Flag::Static(true) => out_dims.push(one),
            Flag::Static(false) => out_dims.push(d),
            Flag::Dyn(c) => out_dims.push(b.select(*c, one, d)),
        }
    }
    let out = if squeeze_after {
        let ty = ir::Type::memref(vec![ir::DYN; rank], elem.clone());
        crate::convert::alloc(b, &ty, &out_dims)
    } else {
        alloc_result(b, op, 0, &out_dims)?
    };
    if let Some(first) = trailing(&flags) {
        if rows(cx, b, op, kind, (x, &dx, first), out)? {
            return Ok(vec![out]);
        }
    }
    let init = kind.init(b, &elem);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| b.store(init, out, ivs));
    let zero = bounds.zero;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let v = b.load(x, ivs);
        let oi = out_index(b, &flags, keep, zero, ivs);
        let acc = b.load(out, &oi);
        let r = kind.step(b, acc, v);
        b.store(r, out, &oi);
    });
    finish(b, op, kind, (out, &out_dims), &flags, &dx, &bounds)?;
    if squeeze_after {
        return Ok(vec![squeeze_view(b, op, out, &flags, &dx, out_rank)?]);
    }
    Ok(vec![out])
}

/// The first reduced dim when exactly the trailing dims from it are.
fn trailing(flags: &[Flag]) -> Option<usize> {
    let reduced = |f: &Flag| matches!(f, Flag::Static(true));
    let first = flags.iter().position(reduced)?;
    let rest_static = flags.iter().all(|f| matches!(f, Flag::Static(_)));
    (rest_static && flags[first..].iter().all(reduced)).then_some(first)
}

/// A float reduction over the trailing dims from `first` as rows of a
/// contiguous input, each folded in vectors (parallel over rows); `false`
/// when the kind or the element type has no vector form here.
pub(crate) fn rows(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: Reduce,
    (x, dx, first): (ValueId, &[ValueId], usize),
    out: ValueId,
) -> Result<bool> {
    let elem = crate::kernels::support::elem_of(b.m, x);
    let lanes = crate::kernels::support::vector_lanes(&elem, cx.vector_bits);
    let vector_kind = matches!(
        kind,
        Reduce::Sum
            | Reduce::Mean
            | Reduce::SumSquare
            | Reduce::L1
            | Reduce::L2
            | Reduce::Max
            | Reduce::Min
    );
    if lanes == 0 || !vector_kind {
        return Ok(false);
    }
    let x = crate::convert::contiguous(b, x);
    let (rows, n) = (
        crate::kernels::support::index::product(b, &dx[..first]),
        crate::kernels::support::index::product(b, &dx[first..]),
    );
    let total = b.muli(rows, n);
    let (xf, of) = (
        crate::kernels::linalg::gemm::flat(b, x, total),
        crate::kernels::linalg::gemm::flat(b, out, rows),
    );
    let count = match kind {
        Reduce::Mean => {
            // An empty mean is 0 (onnxruntime's answer; ONNX leaves it
            // undefined): 0 / max(n, 1), never 0 / 0.
            let one = b.const_index(1);
            let n = b.maxsi(n, one);
            let i = b.index_cast(n, Type::i64());
            Some(scalar::convert(b, op, i, &elem)?)
        }
        _ => None,
    };
    let bounds = Bounds::new(b);
    let (init, lanes_kind) = match kind {
        Reduce::Max => (kind.init(b, &elem), ir::builder::Reduce::MaximumF),
        Reduce::Min => (kind.init(b, &elem), ir::builder::Reduce::MinimumF),
        _ => (b.zero(&elem), ir::builder::Reduce::Add),
    };
    let map = |b: &mut Builder<'_>, v: ValueId| match kind {
        Reduce::SumSquare | Reduce::L2 => b.mul(v, v),
        Reduce::L1 => b.absf(v),
        _ => v,
    };
    let step = |b: &mut Builder<'_>, acc: ValueId, v: ValueId| match kind {
        Reduce::Max => b.max(acc, v),
        Reduce::Min => b.min(acc, v),
        _ => b.add(acc, v),
    };
    let work = [rows, n];
    crate::loops::loop_nest_by_work(
        b,
        &bounds,
        &[rows],
        &work,
        crate::loops::PARALLEL_MIN_WORK,
        &mut |b, ivs| {
            let start = b.muli(ivs[0], n);
            let v = crate::kernels::support::vector_fold(
                b,
                (xf, start, n),
                (lanes, init),
                &map,
                &step,
                lanes_kind,
            );
            let v = match (kind, count) {
                (Reduce::L2, _) => b.sqrt(v),
                (_, Some(count)) => b.div(v, count),
                _ => v,
            };
            b.store(v, of, &[ivs[0]]);
        },
    );
    Ok(true)
}

/// The finishing pass over the output (`out`, its dims): Mean divides by
/// the count, L2 takes the root, LogSum(Exp) the log.
fn finish(
    b: &mut Builder<'_>,
    op: OpId,
    kind: Reduce,
    (out, out_dims): (ValueId, &[ValueId]),
    flags: &[Flag],
    dx: &[ValueId],
    bounds: &Bounds,
) -> Result<()> {
    let elem = crate::kernels::support::elem_of(b.m, out);
    let one = bounds.one;
    let count = if kind == Reduce::Mean {
        let mut n = one;
        for (f, &d) in flags.iter().zip(dx) {
            let c = match f {
                Flag::Static(true) => d,
                Flag::Static(false) => one,
                Flag::Dyn(c) => b.select(*c, d, one),
            };
            n = b.muli(n, c);
        }
        // An empty mean is 0, as in the row path above.
        let n = b.maxsi(n, one);
        let i = b.index_cast(n, Type::i64());
        Some(scalar::convert(b, op, i, &elem)?)
    } else {
        None
    };
    let root: Option<fn(&mut Builder<'_>, ValueId) -> ValueId> = match kind {
        Reduce::L2 => Some(|b, v| b.sqrt(v)),
        Reduce::LogSum | Reduce::LogSumExp => Some(|b, v| b.log(v)),
        _ => None,
    };
    if count.is_none() && root.is_none() {
        return Ok(());
    }
    if root.is_some() && !elem.is_float() && kind != Reduce::L2 {
        return Err(op_error(b.m, op, "expects a floating-point input"));
    }
    loop_nest(b, bounds, out_dims, &mut |b, ivs| {
        let v = b.load(out, ivs);
        let r = match (count, root) {
            (Some(n), _) => b.div(v, n),
            (None, Some(f)) if elem.is_float() => f(b, v),
            (None, _) => {
                // Integer L2: root in f64, truncated back.
                let vf = b.sitofp(v, Type::f64());
                let s = b.sqrt(vf);
                b.fptosi(s, elem.clone())
            }
        };
        b.store(r, out, ivs);
    });
    Ok(())
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
                b.xori(*c, t)
            }
        };
        for (j, size) in sizes.iter_mut().enumerate() {
            let jv = b.const_index(j as i64);
            let here = b.cmpi(CmpI::Eq, pos, jv);
            let hit = b.andi(kept, here);
            *size = b.select(hit, d, *size);
        }
        let inc = b.addi(pos, one);
        pos = b.select(kept, inc, pos);
    }
    let ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    Ok(crate::kernels::support::views::reinterpret(
        b, buf, &ty, &shape, &sizes,
    ))
}

/// ArgMax / ArgMin along `axis`, first or last index of the extremum.
pub fn arg(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId, kind: Arg) -> Result<Vec<ValueId>> {
    // data of ArgMax and ArgMin
    let x = cx.input(b.m, op, ops::ArgMax::DATA)?;
    let rank = shape_of(b.m, x).len();
    let (axis, keep, last) = match kind {
        Arg::Max => {
            let v = ops::ArgMax::of(b.m, op);
            (v.axis(), v.keepdims(), v.select_last_index())
        }
        Arg::Min => {
            let v = ops::ArgMin::of(b.m, op);
            (v.axis(), v.keepdims(), v.select_last_index())
        }
    };
    let axis = crate::kernels::support::axis(b.m, op, axis, rank)?;
    let (keep, last) = (keep != 0, last != 0);
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
    let rel = match (kind, last) {
        (Arg::Max, false) => Cmp::Gt,
        (Arg::Max, true) => Cmp::Ge,
        (Arg::Min, false) => Cmp::Lt,
        (Arg::Min, true) => Cmp::Le,
    };
    loop_nest(b, &bounds, &outer, &mut |b, ivs| {
        let mut idx = ivs.to_vec();
        idx[axis] = bounds.zero;
        let first = b.load(x, &idx);
        let z = bounds.zero;
        let ivs_outer = ivs.to_vec();
        let l = b.scf_for(bounds.one, n, bounds.one, &[first, z], |b, iv, acc| {
            let mut idx = ivs_outer.clone();
            idx[axis] = iv;
            let v = b.load(x, &idx);
            let better = b.cmp(rel, v, acc[0]);
            let bv = b.select(better, v, acc[0]);
            let bi = b.select(better, iv, acc[1]);
            vec![bv, bi]
        });
        let best = b.m.results(l)[1];
        let i = b.index_cast(best, Type::i64());
        let mut oi = ivs.to_vec();
        if !keep {
            oi.remove(axis);
        }
        b.store(i, out, &oi);
    });
    Ok(vec![out])
}
