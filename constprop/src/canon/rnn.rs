//! RNN, GRU and LSTM inputs that default to zeros (bias, initial hidden and
//! cell state, peepholes) are omitted when they are known to be zeros,
//! though of a runtime shape: exporters build the zero state from the
//! batch size (`Shape → Gather → Concat → Expand(0)` or
//! `ConstantOfShape`), and with it gone that arithmetic goes too.

use crate::fold::{constant_operand, is_none};
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, ValueId};
use onnx::{ops, OpKind};

/// How far back through shape-only ops `is_zero` looks.
const MAX_DEPTH: usize = 8;

/// Whether every element of `v` is zero, whatever its shape.
pub fn is_zero(m: &Module, v: ValueId, depth: usize) -> bool {
    let Some(d) = m.defining_op(v) else {
        return false;
    };
    let operand_zero =
        |i: usize| depth < MAX_DEPTH && m.operand(d, i).is_some_and(|x| is_zero(m, x, depth + 1));
    match OpKind::of(m, d) {
        Some(OpKind::Constant) => constant_operand_value(m, d).is_some_and(|e| {
            let class = e.dtype().class();
            e.iter().all(|w| w.to_f64(class) == 0.0)
        }),
        Some(OpKind::ConstantOfShape) => ops::ConstantOfShape::of(m, d).value().is_none_or(|e| {
            let class = e.dtype().class();
            e.iter().all(|w| w.to_f64(class) == 0.0)
        }),
        Some(
            OpKind::Expand
            | OpKind::Reshape
            | OpKind::Squeeze
            | OpKind::Unsqueeze
            | OpKind::Flatten
            | OpKind::Transpose
            | OpKind::Slice
            | OpKind::Identity
            | OpKind::Cast
            | OpKind::Tile,
        ) => operand_zero(0),
        _ => false,
    }
}

fn constant_operand_value(m: &Module, c: OpId) -> Option<ir::elements::Elements> {
    ops::Constant::of(m, c).value().cloned()
}

pub struct ZeroRecurrentInputs;

impl Pattern for ZeroRecurrentInputs {
    fn name(&self) -> &'static str {
        "zero-recurrent-inputs"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        // B, initial_h (and for LSTM initial_c, P): zeros by default.
        let slots: &[usize] = match OpKind::of(m, op) {
            Some(OpKind::LSTM) => &[3, 5, 6, 7],
            Some(OpKind::GRU | OpKind::RNN) => &[3, 5],
            _ => return Ok(false),
        };
        let zero: Vec<usize> = slots
            .iter()
            .copied()
            .filter(|&i| !is_none(m, op, i))
            .filter(|&i| m.operand(op, i).is_some_and(|v| is_zero(m, v, 0)))
            // A stored zero bias costs no node; keep the model's weights.
            .filter(|&i| i != 3 || constant_operand(m, op, i).is_none())
            .collect();
        if zero.is_empty() {
            return Ok(false);
        }
        let nv = onnx::none_value(m, ir::InsertPoint::Before(op), m.loc(op).clone());
        for i in zero {
            m.set_operand(op, i, nv);
        }
        Ok(true)
    }
}
