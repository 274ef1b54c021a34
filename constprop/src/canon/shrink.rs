//! A constant operand of a broadcasting element-wise op that repeats its
//! values along dims another operand already gives the result (Expand or
//! ConstantOfShape folded to a broadcast view) is replaced by its distinct
//! values there: `Add(x[2000, 1000], splat[2000, 1000])` becomes
//! `Add(x, c[1, 1])`. The op broadcasts it as before, and neither the
//! library nor an exported model holds the repeated copy.

use super::make_const;
use crate::fold::constant_operand;
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, DYN};
use onnx::OpKind;

/// Constants up to this many bytes are left as they are.
const SMALL_BYTES: usize = 64;

pub struct ShrinkBroadcastOperands;

/// Ops whose operands all broadcast (multidirectionally) to the result.
fn broadcasts(kind: OpKind) -> bool {
    use OpKind::*;
    matches!(
        kind,
        Add | BitShift
            | BitwiseAnd
            | BitwiseOr
            | BitwiseXor
            | Div
            | Max
            | Mean
            | Min
            | Mod
            | Mul
            | Pow
            | Sub
            | Sum
            | And
            | Equal
            | Greater
            | GreaterOrEqual
            | Less
            | LessOrEqual
            | Or
            | Xor
            | Where
    )
}

/// The static dims of value `v` (`None` when unranked).
fn static_shape(m: &Module, v: ir::ValueId) -> Option<Vec<i64>> {
    m.value_type(v).shape().map(<[i64]>::to_vec)
}

impl Pattern for ShrinkBroadcastOperands {
    fn name(&self) -> &'static str {
        "shrink-broadcast-operands"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !OpKind::of(m, op).is_some_and(broadcasts) {
            return Ok(false);
        }
        let Some(out) = m.result(op, 0).and_then(|r| static_shape(m, r)) else {
            return Ok(false);
        };
        let shapes: Vec<Option<Vec<i64>>> =
            m.operands(op).iter().map(|&v| static_shape(m, v)).collect();
        for i in 0..shapes.len() {
            let Some(e) = constant_operand(m, op, i) else {
                continue;
            };
            let full = e.dtype().storage_bytes(e.len()).unwrap_or(usize::MAX);
            let Some((repeated, _)) = e.repeated_core() else {
                continue;
            };
            if full <= SMALL_BYTES || e.shape().len() > out.len() {
                continue;
            }
            let off = out.len() - e.shape().len();
            // A dim collapses where another operand has the result's size
            // statically: the result keeps its shape whatever the inputs.
            let given = |p: usize| {
                let o = out[p];
                o != DYN
                    && shapes.iter().enumerate().any(|(k, s)| {
                        let Some(s) = s.as_ref().filter(|_| k != i) else {
                            return false;
                        };
                        (p + s.len())
                            .checked_sub(out.len())
                            .and_then(|at| s.get(at))
                            .is_some_and(|&d| d == o)
                    })
            };
            let core: Vec<i64> = e
                .shape()
                .iter()
                .enumerate()
                .map(|(j, &d)| if repeated[j] && given(j + off) { 1 } else { d })
                .collect();
            if core == e.shape() {
                continue;
            }
            let Some(small) = e.broadcast_core(&core) else {
                continue;
            };
            let Some(c) = make_const(m, op, small.materialized()) else {
                continue;
            };
            m.set_operand(op, i, c);
            return Ok(true);
        }
        Ok(false)
    }
}
