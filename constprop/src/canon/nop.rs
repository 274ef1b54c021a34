//! Ops that are identities for the operands they have: a Cast to the
//! operand's own type, a Concat of one input, an identity Transpose, a
//! Pad by zeros, a Tile by ones, and Reshape/Expand/Flatten/Squeeze/
//! Unsqueeze/Slice whose result has the operand's shape, known symbolically
//! (`#onnx.dims`) when dynamic. Each forwards its data operand.

use crate::fold::constant_operand;
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

pub struct ForwardNop;

/// Every dim of `t`, constant or symbolic; `None` when one is unknown.
pub fn known_dims(t: &Type) -> Option<Vec<ir::dim::DimExpr>> {
    t.as_tensor()?.sym_dims()?.into_iter().collect()
}

/// Whether `a` and `b` have one element type and the same known shape.
pub fn same_shape(m: &Module, a: ValueId, b: ValueId) -> bool {
    let (ta, tb) = (m.value_type(a), m.value_type(b));
    ta.element_type() == tb.element_type()
        && known_dims(ta).is_some_and(|da| known_dims(tb).is_some_and(|db| da == db))
}

/// Every element of constant operand `i` equals `v` (absent: `when_absent`).
fn all_equal(m: &Module, op: OpId, i: usize, v: i64, when_absent: bool) -> bool {
    if crate::fold::is_none(m, op, i) || m.operand(op, i).is_none() {
        return when_absent;
    }
    constant_operand(m, op, i).is_some_and(|e| e.iter().all(|w| w.i64() == v))
}

/// Whether `op` (of `kind`) returns its operand 0 unchanged.
fn is_nop(m: &Module, op: OpId, kind: OpKind, x: ValueId, r: ValueId) -> bool {
    match kind {
        OpKind::Cast | OpKind::CastLike => {
            m.value_type(x).element_type() == m.value_type(r).element_type()
                && m.value_type(x).as_tensor().is_some()
        }
        OpKind::Concat => m.operands(op).len() == 1,
        OpKind::Transpose => {
            let rank = m.value_type(x).shape().map(<[i64]>::len);
            match ops::Transpose::of(m, op).perm() {
                Some(p) => p.iter().enumerate().all(|(i, &a)| a == i as i64),
                None => rank.is_some_and(|r| r <= 1),
            }
        }
        OpKind::Pad => all_equal(m, op, 1, 0, false),
        OpKind::Tile => all_equal(m, op, 1, 1, false),
        OpKind::Slice => all_equal(m, op, 4, 1, true) && same_shape(m, x, r),
        OpKind::Reshape
        | OpKind::Expand
        | OpKind::Flatten
        | OpKind::Squeeze
        | OpKind::Unsqueeze => same_shape(m, x, r),
        _ => false,
    }
}

impl Pattern for ForwardNop {
    fn name(&self) -> &'static str {
        "forward-nop"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let Some(kind) = OpKind::of(m, op) else {
            return Ok(false);
        };
        let (Some(x), Some(r)) = (m.operand(op, 0), m.result(op, 0)) else {
            return Ok(false);
        };
        if m.results(op).len() != 1 || !is_nop(m, op, kind, x, r) {
            return Ok(false);
        }
        m.replace_all_uses(r, x);
        m.erase_op(op);
        Ok(true)
    }
}
