//! For exported models (`onnxc fold`): a constant that repeats its values
//! along some dims (Expand or ConstantOfShape folded to a broadcast view)
//! is written as `Expand(core, shape)`, its distinct values and the shape
//! (`ConstantOfShape(shape)` for one value), when that takes at most half
//! the bytes: ONNX has no broadcast
//! initializer, and Expand of a scalar to [2000, 1000] must not become an
//! 8 MB tensor in the file. Compiles keep the view (bufferize reads it
//! through zero strides).

use super::{make_const, make_op};
use ir::elements::{DType, Elements};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::rewrite::{apply_greedily, GreedyConfig, Pattern};
use ir::{Module, OpId, Result};
use onnx::{ops, OpKind};

/// The first opsets with Expand and with ConstantOfShape.
const EXPAND_OPSET: i64 = 8;
const SPLAT_OPSET: i64 = 9;

pub struct ExpandRepeats;

impl Pattern for ExpandRepeats {
    fn name(&self) -> &'static str {
        "expand-repeats"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !onnx::is(m, op, OpKind::Constant) || onnx::model_opset(m) < EXPAND_OPSET {
            return Ok(false);
        }
        let Some(e) = ops::Constant::of(m, op).value().cloned() else {
            return Ok(false);
        };
        let full = e.dtype().storage_bytes(e.len()).unwrap_or(usize::MAX);
        if full <= ir::elements::WHOLE_BYTES || e.emitted_bytes().saturating_mul(2) > full {
            return Ok(false);
        }
        let (Some((_, core)), Some(y)) = (e.repeated_core(), m.result(op, 0)) else {
            return Ok(false);
        };
        let shape = Elements::from_wide(
            DType::I64,
            vec![e.shape().len() as i64],
            &e.shape()
                .iter()
                .map(|&d| ir::elements::WideNum::from_i64(d))
                .collect::<Vec<_>>(),
        );
        let (Ok(shape), Some(first)) = (shape, e.get(0)) else {
            return Ok(false);
        };
        let ty = m.value_type(y).clone();
        let Some(s) = make_const(m, op, shape) else {
            return Ok(false);
        };
        let splat = e.strides().iter().all(|&st| st == 0);
        let x = if splat && onnx::model_opset(m) >= SPLAT_OPSET {
            // One value repeated: ConstantOfShape carries it in the node.
            let Ok(value) = Elements::splat(e.dtype(), vec![1], first) else {
                return Ok(false);
            };
            let x = make_op(m, op, ops::ConstantOfShape::build(s), ty, "");
            if let Some(d) = x.and_then(|x| m.defining_op(x)) {
                m.set_attr(d, "value", ir::Attribute::Elements(value));
            }
            x
        } else {
            let c = make_const(m, op, core.materialized());
            c.and_then(|c| make_op(m, op, ops::Expand::build(c, s), ty, ""))
        };
        let Some(x) = x else {
            return Ok(false);
        };
        // The expanded value keeps the constant's ONNX name.
        if let (Some(names), Some(d)) = (
            m.attr(op, onnx::dialect::NAMES_ATTR).cloned(),
            m.defining_op(x),
        ) {
            m.set_attr(d, onnx::dialect::NAMES_ATTR, names);
        }
        m.replace_all_uses(y, x);
        m.erase_op(op);
        Ok(true)
    }
}

/// The pass `onnxc fold` runs before writing the model.
struct ExpandRepeatsPass;

impl Pass for ExpandRepeatsPass {
    fn name(&self) -> &'static str {
        "expand-repeats"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let top = m.top();
        let report = apply_greedily(m, top, &[&ExpandRepeats], &GreedyConfig::default())?;
        cx.bump("expand-repeats.rewrites", report.rewrites as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "expand-repeats",
        summary:
            "constants that repeat their values as Expand of the distinct ones (exported models)",
        create: |_| Ok(Box::new(ExpandRepeatsPass)),
    }
}
