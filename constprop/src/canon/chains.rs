//! Two data-movement ops in a row become one when the inner result has no
//! other use: Transpose∘Transpose composes the permutations (identity →
//! gone), Unsqueeze∘Unsqueeze merges the axes, Squeeze of an Unsqueeze by
//! the same axes cancels, and a Reshape of a Reshape, Flatten, Squeeze or
//! Unsqueeze reshapes the original value.

use crate::fold::constant_operand;
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, ValueId};
use onnx::{ops, OpKind};

pub struct FuseChains;

/// The op defining operand 0 of `op` when `op` is its only user.
fn sole_producer(m: &Module, op: OpId) -> Option<(OpId, OpKind, ValueId)> {
    let v = m.operand(op, 0)?;
    if m.uses(v).len() != 1 {
        return None;
    }
    let d = m.defining_op(v)?;
    if m.results(d).len() != 1 {
        return None;
    }
    Some((d, OpKind::of(m, d)?, m.operand(d, 0)?))
}

fn rank(m: &Module, v: ValueId) -> Option<usize> {
    m.value_type(v).shape().map(<[i64]>::len)
}

fn ints(m: &Module, op: OpId, i: usize) -> Option<Vec<i64>> {
    Some(
        constant_operand(m, op, i)?
            .iter()
            .map(|w| w.i64())
            .collect(),
    )
}

fn i64s(m: &mut Module, before: OpId, v: &[i64]) -> Option<ValueId> {
    super::make_i64s(m, before, vec![v.len() as i64], v)
}

/// A Transpose's permutation (reversed dims when absent).
fn perm(m: &Module, op: OpId, rank: usize) -> Option<Vec<usize>> {
    let p = ops::Transpose::of(m, op)
        .perm()
        .unwrap_or_else(|| (0..rank as i64).rev().collect());
    onnx::axis::normalize_all(&p, rank).filter(|p| p.len() == rank)
}

/// `Transpose(Transpose(x, p1), p2)` → `Transpose(x, p1[p2[i]])`.
fn transposes(m: &mut Module, op: OpId, inner: OpId, x: ValueId) -> Option<()> {
    let r = rank(m, x)?;
    let (p1, p2) = (perm(m, inner, r)?, perm(m, op, r)?);
    let p: Vec<i64> = p2
        .iter()
        .map(|&i| p1.get(i).map(|&a| a as i64))
        .collect::<Option<_>>()?;
    m.set_attr(op, "perm", ir::attr::Attribute::i64_array(&p));
    m.set_operand(op, 0, x);
    Some(())
}

/// The positions a rank-`r` value's dims end up at after inserting `axes`
/// (normalized to the result rank); `None` for invalid axes.
fn inserted(r: usize, axes: &[i64]) -> Option<Vec<bool>> {
    let out = r + axes.len();
    let mut new = vec![false; out];
    for a in onnx::axis::normalize_all(axes, out)? {
        if std::mem::replace(new.get_mut(a)?, true) {
            return None;
        }
    }
    Some(new)
}

/// `Unsqueeze(Unsqueeze(x, a1), a2)` → `Unsqueeze(x, a)`.
fn unsqueezes(m: &mut Module, op: OpId, inner: OpId, x: ValueId) -> Option<()> {
    let r0 = rank(m, x)?;
    let (a1, a2) = (ints(m, inner, 1)?, ints(m, op, 1)?);
    let first = inserted(r0, &a1)?;
    let second = inserted(first.len(), &a2)?;
    // Walk the final dims: a dim not inserted by the outer op is the next
    // dim of the inner result.
    let mut inner_dims = first.into_iter();
    let mut axes = Vec::new();
    for (i, outer_new) in second.into_iter().enumerate() {
        if outer_new || inner_dims.next()? {
            axes.push(i as i64);
        }
    }
    let c = i64s(m, op, &axes)?;
    m.set_operands(op, &[x, c]);
    Some(())
}

/// `Squeeze(Unsqueeze(x, a), a)` → `x`.
fn squeeze_unsqueeze(m: &Module, op: OpId, inner: OpId, x: ValueId) -> Option<ValueId> {
    let r = rank(m, x)?;
    let n = r + ints(m, inner, 1)?.len();
    let mut a1 = onnx::axis::normalize_all(&ints(m, inner, 1)?, n)?;
    let mut a2 = onnx::axis::normalize_all(&ints(m, op, 1)?, n)?;
    a1.sort_unstable();
    a2.sort_unstable();
    (a1 == a2).then_some(x)
}

/// `Reshape(R(x), s)` → `Reshape(x, s)` for a reshape-like `R`, when `s`
/// has no `0` that would copy a dim of R's result.
fn reshapes(m: &mut Module, op: OpId, x: ValueId) -> Option<()> {
    let s = ints(m, op, 1)?;
    if ops::Reshape::of(m, op).allowzero() == 0 && s.contains(&0) {
        return None;
    }
    m.set_operand(op, 0, x);
    Some(())
}

/// The Concat axis of `op`, normalized to the rank of its result.
fn concat_axis(m: &Module, op: OpId) -> Option<usize> {
    let r = rank(m, m.result(op, 0)?)?;
    onnx::axis::normalize(ops::Concat::of(m, op).axis(), r)
}

/// `Concat(a, Concat(b, c), d)` → `Concat(a, b, c, d)` (same axis, the
/// inner one used only here).
fn concats(m: &mut Module, op: OpId) -> bool {
    let Some(axis) = concat_axis(m, op) else {
        return false;
    };
    let mut changed = false;
    let mut operands = Vec::new();
    for &v in m.operands(op) {
        let inner = m
            .defining_op(v)
            .filter(|&d| onnx::is(m, d, OpKind::Concat) && m.uses(v).len() == 1)
            .filter(|&d| concat_axis(m, d) == Some(axis));
        match inner {
            Some(d) => {
                operands.extend_from_slice(m.operands(d));
                changed = true;
            }
            None => operands.push(v),
        }
    }
    if changed {
        m.set_operands(op, &operands);
    }
    changed
}

impl Pattern for FuseChains {
    fn name(&self) -> &'static str {
        "fuse-chains"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let Some(kind) = OpKind::of(m, op) else {
            return Ok(false);
        };
        if kind == OpKind::Concat {
            return Ok(concats(m, op));
        }
        let Some((inner, ik, x)) = sole_producer(m, op) else {
            return Ok(false);
        };
        let done = match (ik, kind) {
            (OpKind::Transpose, OpKind::Transpose) => transposes(m, op, inner, x).is_some(),
            (OpKind::Unsqueeze, OpKind::Unsqueeze) => unsqueezes(m, op, inner, x).is_some(),
            (OpKind::Unsqueeze, OpKind::Squeeze) => match squeeze_unsqueeze(m, op, inner, x) {
                Some(x) => {
                    let Some(r) = m.result(op, 0) else {
                        return Ok(false);
                    };
                    m.replace_all_uses(r, x);
                    m.erase_op(op);
                    true
                }
                None => false,
            },
            (
                OpKind::Reshape | OpKind::Flatten | OpKind::Squeeze | OpKind::Unsqueeze,
                OpKind::Reshape,
            ) => reshapes(m, op, x).is_some(),
            _ => false,
        };
        if done && m.results(inner).iter().all(|&r| !m.has_uses(r)) {
            m.erase_op(inner);
        }
        Ok(done)
    }
}
