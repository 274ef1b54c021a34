//! Reductions: Reduce* (axes as operand or attribute, keepdims,
//! noop_with_empty_axes) and ArgMax/ArgMin.

use super::{tensor, Ctx};
use ir::{Diagnostic, Type, DYN};

#[rustfmt::skip]
const REDUCTIONS: &[&str] = &[
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
];

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    if REDUCTIONS.contains(&kind) {
        return Ok(Some(vec![tensor(reduce(cx)?, cx.elem(0)?)]));
    }
    if kind == "ArgMax" || kind == "ArgMin" {
        let shape = match cx.shape(0)? {
            Some(s) => {
                let axis = cx.axis(cx.attr_int("axis", 0), s.len())?;
                Some(reduced(&s, &[axis], cx.attr_int("keepdims", 1) != 0))
            }
            None => None,
        };
        return Ok(Some(vec![tensor(shape, Type::i64())]));
    }
    Ok(None)
}

/// `shape` with `axes` removed, or set to 1 when `keep`.
fn reduced(shape: &[i64], axes: &[usize], keep: bool) -> Vec<i64> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

fn reduce(cx: &Ctx<'_>) -> Result<Option<Vec<i64>>, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let keep = cx.attr_int("keepdims", 1) != 0;
    let axes = if cx.operand(1).is_some() {
        match cx.const_ints(1) {
            Some(a) => Some(a),
            // Unknown axes: the rank survives with keepdims, or drops by
            // their count when that is static.
            None if keep => return Ok(Some(vec![DYN; s.len()])),
            None => {
                let rank = cx
                    .static_len(1)
                    .filter(|&k| k > 0)
                    .map(|k| s.len().checked_sub(k));
                return match rank {
                    Some(Some(r)) => Ok(Some(vec![DYN; r])),
                    Some(None) => Err(cx.err("more axes than dims")),
                    None => Ok(None),
                };
            }
        }
    } else {
        cx.attr_ints("axes")
    };
    let axes = axes.unwrap_or_default();
    if axes.is_empty() {
        if cx.attr_int("noop_with_empty_axes", 0) != 0 {
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
