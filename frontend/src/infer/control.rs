//! `If`, `Loop`, `Scan`: result types from the types their regions yield,
//! and the types of the body arguments from the operands.

use super::{tensor, Ctx, Inferred};
use ir::{Diagnostic, Module, OpId, Type, DYN};
use onnx::axis::normalize;
use onnx::{ops, OpKind};

/// The least general type covering both (dims that differ, statically or
/// symbolically, become unknown; a rank mismatch gives an unranked
/// tensor). The element type is `a`'s.
pub fn join(a: &Type, b: &Type) -> Type {
    let (Some(x), Some(y)) = (a.as_tensor(), b.as_tensor()) else {
        return a.clone();
    };
    match (x.sym_dims(), y.sym_dims()) {
        (Some(s), Some(t)) if s.len() == t.len() => Type::tensor_dims(
            s.into_iter()
                .zip(t)
                .map(|(p, q)| if p == q { p } else { None })
                .collect(),
            x.elem.clone(),
        ),
        _ => Type::unranked_tensor(x.elem.clone()),
    }
}

/// Types of the values region `i` of `op` yields, if it ends in a yield.
pub fn yield_types(m: &Module, op: OpId, i: usize) -> Option<Vec<Type>> {
    let block = m.entry_block(m.region(op, i)?)?;
    let y = m
        .last_op(block)
        .filter(|&t| onnx::is(m, t, OpKind::Yield))?;
    Some(
        m.operands(y)
            .iter()
            .map(|&v| m.value_type(v).clone())
            .collect(),
    )
}

/// `t` with a new dim of `size` at `axis` (unranked stays unranked).
fn insert_dim(cx: &Ctx<'_>, t: &Type, axis: i64, size: i64) -> Result<Type, Diagnostic> {
    let Some(tt) = t.as_tensor() else {
        return Ok(t.clone());
    };
    let Some(shape) = &tt.shape else {
        return Ok(t.clone());
    };
    let a = normalize(axis, shape.len() + 1)
        .ok_or_else(|| cx.err(format!("scan output axis {axis} is out of range")))?;
    let mut s = shape.clone();
    s.insert(a, size);
    Ok(Type::tensor(s, tt.elem.clone()))
}

/// `t` without the dim at `axis`; `None` when the axis is out of range.
pub fn remove_dim(t: &Type, axis: i64) -> Option<Type> {
    let tt = t.as_tensor()?;
    let Some(shape) = &tt.shape else {
        return Some(t.clone());
    };
    let a = normalize(axis, shape.len())?;
    let mut s = shape.clone();
    s.remove(a);
    Some(Type::tensor(s, tt.elem.clone()))
}

/// `list` padded with zeros (the default axis) to `n` entries.
fn axes_list(list: Option<Vec<i64>>, n: usize) -> Vec<i64> {
    let mut v = list.unwrap_or_default();
    v.resize(n, 0);
    v
}

/// Operand count split of a `Scan`: (states, scan inputs).
pub fn scan_split(m: &Module, op: OpId) -> Option<(usize, usize)> {
    if !onnx::is(m, op, OpKind::Scan) {
        return None;
    }
    let k = usize::try_from(ops::Scan::of(m, op).num_scan_inputs()).ok()?;
    let n = m.operands(op).len().checked_sub(k)?;
    Some((n, k))
}

/// Types of the scanned slices of a `Scan`'s inputs.
pub fn scan_slice_types(m: &Module, op: OpId) -> Option<Vec<Type>> {
    let (n, k) = scan_split(m, op)?;
    let axes = ops::Scan::of(m, op).scan_input_axes().unwrap_or_default();
    (0..k)
        .map(|j| {
            let t = m.value_type(*m.operands(op).get(n + j)?);
            remove_dim(t, axes.get(j).copied().unwrap_or(0))
        })
        .collect()
}

/// The terminator of region bodies: no results.
pub(super) fn yield_(_cx: &Ctx<'_>) -> Inferred {
    Ok(Some(Vec::new()))
}

/// The join of what the two branches yield.
pub(super) fn if_(cx: &Ctx<'_>) -> Inferred {
    let (m, op, results) = (cx.m, cx.op, cx.num_results());
    let (Some(a), Some(b)) = (yield_types(m, op, 0), yield_types(m, op, 1)) else {
        return Ok(None);
    };
    if a.len() != results || b.len() != results {
        return Err(cx.err(format!(
            "branches yield {} and {} values for {results} results",
            a.len(),
            b.len()
        )));
    }
    // A branch that fails shape inference aborts if taken: the other one
    // alone types the results.
    let dead = |k| onnx::branches::branch_error(m, op, k).is_some();
    match (dead(0), dead(1)) {
        (false, true) => return Ok(Some(a)),
        (true, false) => return Ok(Some(b)),
        _ => {}
    }
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x.element_type() != y.element_type() {
            return Err(cx.err(format!("branches yield {x} and {y} for result #{i}")));
        }
    }
    Ok(Some(a.iter().zip(&b).map(|(x, y)| join(x, y)).collect()))
}

/// Carried values joined with their initial types; scan outputs stacked
/// along a new leading dim of unknown trip count.
pub(super) fn loop_(cx: &Ctx<'_>) -> Inferred {
    let results = cx.num_results();
    let Some(y) = yield_types(cx.m, cx.op, 0) else {
        return Ok(None);
    };
    let carried = cx.num_operands().saturating_sub(2);
    if y.len() != results + 1 || carried > results {
        return Err(cx.err(format!(
            "body yields {} values for {carried} loop-carried values and {results} results",
            y.len()
        )));
    }
    let mut out = Vec::with_capacity(results);
    for (i, t) in y.iter().skip(1).enumerate() {
        if i < carried {
            let init = cx.same_as(2 + i).unwrap_or_else(|_| t.clone());
            out.push(join(&init, t));
        } else {
            out.push(insert_dim(cx, t, 0, DYN)?);
        }
    }
    Ok(Some(out))
}

/// States joined with their initial types; scan outputs stacked along
/// their axis, as long as the scanned sequence.
pub(super) fn scan(cx: &Ctx<'_>) -> Inferred {
    let results = cx.num_results();
    let Some(y) = yield_types(cx.m, cx.op, 0) else {
        return Ok(None);
    };
    let (n, k) = scan_split(cx.m, cx.op)
        .ok_or_else(|| cx.err("needs 'num_scan_inputs' <= its operand count"))?;
    if y.len() != results || n > results {
        return Err(cx.err(format!(
            "body yields {} values for {n} states and {results} results",
            y.len()
        )));
    }
    let v = ops::Scan::of(cx.m, cx.op);
    // The sequence length: the scan axis of the first scan input.
    let in_axes = axes_list(v.scan_input_axes(), k);
    let len = match (k, cx.shape(n)) {
        (0, _) | (_, Err(_)) | (_, Ok(None)) => DYN,
        (_, Ok(Some(s))) => normalize(in_axes[0], s.len())
            .and_then(|a| s.get(a).copied())
            .unwrap_or(DYN),
    };
    let out_axes = axes_list(v.scan_output_axes(), results - n);
    let mut out = Vec::with_capacity(results);
    for (i, t) in y.iter().enumerate() {
        if i < n {
            let init = cx.same_as(i).unwrap_or_else(|_| t.clone());
            out.push(join(&init, t));
        } else {
            out.push(insert_dim(cx, t, out_axes[i - n], len)?);
        }
    }
    Ok(Some(out))
}

/// Derived types of a body's block arguments (before refinement with
/// their declarations). `carried` are the current loop-carried types.
pub fn body_arg_types(m: &Module, op: OpId, carried: &[Type]) -> Option<Vec<Type>> {
    if onnx::is(m, op, OpKind::Loop) {
        let mut t = vec![
            tensor(Some(vec![]), Type::i64()),
            tensor(Some(vec![]), Type::i1()),
        ];
        t.extend_from_slice(carried);
        Some(t)
    } else if onnx::is(m, op, OpKind::Scan) {
        let mut t = carried.to_vec();
        t.extend(scan_slice_types(m, op)?);
        Some(t)
    } else {
        None
    }
}

/// Initial loop-carried types: the operands' (Loop: after M and cond);
/// `None` for ops that are not loops.
pub fn initial_carried(m: &Module, op: OpId) -> Option<Vec<Type>> {
    let ops = m.operands(op);
    let vals = if onnx::is(m, op, OpKind::Loop) {
        ops.get(2..)?
    } else {
        // `scan_split` answers for Scan only.
        let (n, _) = scan_split(m, op)?;
        ops.get(..n)?
    };
    Some(vals.iter().map(|&v| m.value_type(v).clone()).collect())
}

/// Carried types the body yields (Loop: after the condition).
pub fn yielded_carried(m: &Module, op: OpId, n: usize) -> Option<Vec<Type>> {
    let y = yield_types(m, op, 0)?;
    let skip = usize::from(onnx::is(m, op, OpKind::Loop));
    y.get(skip..skip + n).map(<[Type]>::to_vec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[i64]) -> Type {
        Type::tensor(dims.to_vec(), Type::f32())
    }

    #[test]
    fn join_generalizes_dims_and_ranks() {
        assert_eq!(join(&t(&[2, 3]), &t(&[2, 3])), t(&[2, 3]));
        assert_eq!(join(&t(&[1, 3]), &t(&[2, 3])), t(&[DYN, 3]));
        assert_eq!(
            join(&t(&[3]), &t(&[3, 1])),
            Type::unranked_tensor(Type::f32())
        );
        assert_eq!(
            join(&Type::unranked_tensor(Type::f32()), &t(&[3])),
            Type::unranked_tensor(Type::f32())
        );
    }

    #[test]
    fn scan_slices_drop_the_axis() {
        assert_eq!(remove_dim(&t(&[5, 2, 3]), 0), Some(t(&[2, 3])));
        assert_eq!(remove_dim(&t(&[5, 2, 3]), -1), Some(t(&[5, 2])));
        assert_eq!(remove_dim(&t(&[5]), 3), None);
    }
}
