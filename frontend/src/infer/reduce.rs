//! Reductions: Reduce* (axes as an operand, keepdims,
//! noop_with_empty_axes) and ArgMax/ArgMin.

use super::dims::{self, Dims};
use super::{Ctx, Inferred};
use ir::{Diagnostic, Type};
use onnx::ops;

/// One result of `dims` and `elem`.
fn one(d: Option<Dims>, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(d, elem)]))
}

/// The attributes every Reduce* op has.
pub(super) struct Reduce {
    keepdims: bool,
    noop_with_empty_axes: bool,
}

/// The [`Reduce`] attributes of a Reduce* view.
macro_rules! reduce_of {
    ($view:ident, $cx:expr) => {{
        let v = ops::$view::of($cx.m, $cx.op);
        Reduce {
            keepdims: v.keepdims() != 0,
            noop_with_empty_axes: v.noop_with_empty_axes() != 0,
        }
    }};
}

pub(super) fn reduce_l1(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceL1, cx))
}
pub(super) fn reduce_l2(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceL2, cx))
}
pub(super) fn reduce_log_sum(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceLogSum, cx))
}
pub(super) fn reduce_log_sum_exp(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceLogSumExp, cx))
}
pub(super) fn reduce_max(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceMax, cx))
}
pub(super) fn reduce_mean(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceMean, cx))
}
pub(super) fn reduce_min(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceMin, cx))
}
pub(super) fn reduce_prod(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceProd, cx))
}
pub(super) fn reduce_sum(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceSum, cx))
}
pub(super) fn reduce_sum_square(cx: &Ctx<'_>) -> Inferred {
    reduce(cx, reduce_of!(ReduceSumSquare, cx))
}

pub(super) fn arg_max(cx: &Ctx<'_>) -> Inferred {
    let v = ops::ArgMax::of(cx.m, cx.op);
    arg(cx, v.axis(), v.keepdims() != 0)
}

pub(super) fn arg_min(cx: &Ctx<'_>) -> Inferred {
    let v = ops::ArgMin::of(cx.m, cx.op);
    arg(cx, v.axis(), v.keepdims() != 0)
}

/// ArgMax/ArgMin: indices along one axis.
fn arg(cx: &Ctx<'_>, axis: i64, keep: bool) -> Inferred {
    let shape = match cx.dims(0)? {
        Some(s) => {
            let axis = cx.axis(axis, s.len())?;
            Some(reduced(&s, &[axis], keep))
        }
        None => None,
    };
    one(shape, Type::i64())
}

/// `shape` with `axes` removed, or set to 1 when `keep`.
fn reduced(shape: &[dims::Dim], axes: &[usize], keep: bool) -> Dims {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match (axes.contains(&i), keep) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(dims::c(1)),
            (true, false) => None,
        })
        .collect()
}

fn reduce(cx: &Ctx<'_>, r: Reduce) -> Inferred {
    one(reduce_shape(cx, &r)?, cx.elem(0)?)
}

fn reduce_shape(cx: &Ctx<'_>, r: &Reduce) -> Result<Option<Dims>, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    let keep = r.keepdims;
    let axes = if cx.operand(1).is_some() {
        match cx.const_ints(1) {
            Some(a) => a,
            // Unknown axes: the rank survives with keepdims, or drops by
            // their count when that is static.
            None if keep => return Ok(Some(vec![None; s.len()])),
            None => {
                let rank = cx
                    .static_len(1)
                    .filter(|&k| k > 0)
                    .map(|k| s.len().checked_sub(k));
                return match rank {
                    Some(Some(r)) => Ok(Some(vec![None; r])),
                    Some(None) => Err(cx.err("more axes than dims")),
                    None => Ok(None),
                };
            }
        }
    } else {
        Vec::new()
    };
    if axes.is_empty() {
        if r.noop_with_empty_axes {
            return Ok(Some(s));
        }
        let all: Vec<usize> = (0..s.len()).collect();
        return Ok(Some(reduced(&s, &all, keep)));
    }
    let mut norm = Vec::with_capacity(axes.len());
    for &a in &axes {
        let n = cx.axis(a, s.len())?;
        if !norm.contains(&n) {
            norm.push(n);
        }
    }
    Ok(Some(reduced(&s, &norm, keep)))
}
