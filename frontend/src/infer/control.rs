//! `If`, `Loop`, `Scan`: result types from the types their regions yield,
//! and the types of the body arguments from the operands.

use super::{norm_axis, tensor, Ctx};
use crate::dialect::YIELD;
use ir::{Attribute, Diagnostic, Module, OpId, Type, DYN};

/// The least general type covering both (dims that differ become `?`, a
/// rank mismatch gives an unranked tensor). The element type is `a`'s.
pub fn join(a: &Type, b: &Type) -> Type {
    let (Some(x), Some(y)) = (a.as_tensor(), b.as_tensor()) else {
        return a.clone();
    };
    match (&x.shape, &y.shape) {
        (Some(s), Some(t)) if s.len() == t.len() => Type::tensor(
            s.iter()
                .zip(t)
                .map(|(&p, &q)| if p == q { p } else { DYN })
                .collect(),
            x.elem.clone(),
        ),
        _ => Type::unranked_tensor(x.elem.clone()),
    }
}

/// Types of the values region `i` of `op` yields, if it ends in a yield.
pub fn yield_types(m: &Module, op: OpId, i: usize) -> Option<Vec<Type>> {
    let block = m.entry_block(m.region(op, i)?)?;
    let y = m.last_op(block).filter(|&t| m.is(t, YIELD))?;
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
    let a = norm_axis(axis, shape.len() + 1)
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
    let a = norm_axis(axis, shape.len())?;
    let mut s = shape.clone();
    s.remove(a);
    Some(Type::tensor(s, tt.elem.clone()))
}

fn int_list(cx: &Ctx<'_>, name: &str, n: usize) -> Vec<i64> {
    let mut v = cx.attr_ints(name).unwrap_or_default();
    v.resize(n, 0);
    v
}

/// Operand count split of a `Scan`: (states, scan inputs).
pub fn scan_split(m: &Module, op: OpId) -> Option<(usize, usize)> {
    let k = m.attr(op, "num_scan_inputs").and_then(Attribute::as_int)?;
    let k = usize::try_from(k).ok()?;
    let n = m.operands(op).len().checked_sub(k)?;
    Some((n, k))
}

/// Types of the scanned slices of a `Scan`'s inputs.
pub fn scan_slice_types(m: &Module, op: OpId) -> Option<Vec<Type>> {
    let (n, k) = scan_split(m, op)?;
    let axes = m
        .attr(op, "scan_input_axes")
        .and_then(Attribute::as_i64_list)
        .unwrap_or_default();
    (0..k)
        .map(|j| {
            let t = m.value_type(*m.operands(op).get(n + j)?);
            remove_dim(t, axes.get(j).copied().unwrap_or(0))
        })
        .collect()
}

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    let m = cx.m;
    let op = cx.op;
    let results = cx.num_results();
    match kind {
        "Yield" => Ok(Some(Vec::new())),
        "If" => {
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
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                if x.element_type() != y.element_type() {
                    return Err(cx.err(format!("branches yield {x} and {y} for result #{i}")));
                }
            }
            Ok(Some(a.iter().zip(&b).map(|(x, y)| join(x, y)).collect()))
        }
        "Loop" => {
            let Some(y) = yield_types(m, op, 0) else {
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
        "Scan" => {
            let Some(y) = yield_types(m, op, 0) else {
                return Ok(None);
            };
            let (n, k) = scan_split(m, op)
                .ok_or_else(|| cx.err("needs 'num_scan_inputs' <= its operand count"))?;
            if y.len() != results || n > results {
                return Err(cx.err(format!(
                    "body yields {} values for {n} states and {results} results",
                    y.len()
                )));
            }
            // The sequence length: the scan axis of the first scan input.
            let in_axes = int_list(cx, "scan_input_axes", k);
            let len = match (k, cx.shape(n)) {
                (0, _) | (_, Err(_)) | (_, Ok(None)) => DYN,
                (_, Ok(Some(s))) => norm_axis(in_axes[0], s.len())
                    .and_then(|a| s.get(a).copied())
                    .unwrap_or(DYN),
            };
            let out_axes = int_list(cx, "scan_output_axes", results - n);
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
        _ => Ok(None),
    }
}

/// Derived types of a body's block arguments (before refinement with
/// their declarations). `carried` are the current loop-carried types.
pub fn body_arg_types(m: &Module, op: OpId, carried: &[Type]) -> Option<Vec<Type>> {
    if m.is(op, "onnx.Loop") {
        let mut t = vec![
            tensor(Some(vec![]), Type::i64()),
            tensor(Some(vec![]), Type::i1()),
        ];
        t.extend_from_slice(carried);
        Some(t)
    } else if m.is(op, "onnx.Scan") {
        let mut t = carried.to_vec();
        t.extend(scan_slice_types(m, op)?);
        Some(t)
    } else {
        None
    }
}

/// Initial loop-carried types: the operands' (Loop: after M and cond).
pub fn initial_carried(m: &Module, op: OpId) -> Option<Vec<Type>> {
    let ops = m.operands(op);
    let vals = if m.is(op, "onnx.Loop") {
        ops.get(2..)?
    } else {
        let (n, _) = scan_split(m, op)?;
        ops.get(..n)?
    };
    Some(vals.iter().map(|&v| m.value_type(v).clone()).collect())
}

/// Carried types the body yields (Loop: after the condition).
pub fn yielded_carried(m: &Module, op: OpId, n: usize) -> Option<Vec<Type>> {
    let y = yield_types(m, op, 0)?;
    let skip = usize::from(m.is(op, "onnx.Loop"));
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
