//! Element-wise ops: unary (same type), casts, and broadcasting n-ary ops.

use super::{tensor, Ctx};
use crate::import::tensor::{elem_type_from_onnx, onnx_type_name};
use ir::{Diagnostic, Type};

/// Unary ops (and ops acting per row, like Softmax) whose result has the
/// type of operand 0.
#[rustfmt::skip]
const SAME_TYPE: &[&str] = &[
    "Identity", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs",
    "Erf", "Softplus", "Softsign", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Gelu",
    "Mish", "Swish", "ThresholdedRelu", "Shrink", "Clip", "Not", "Floor", "Ceil", "Round",
    "Sign", "Reciprocal", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
    "Acosh", "Atanh", "BitwiseNot", "Softmax", "LogSoftmax", "Hardmax", "LRN",
    "LpNormalization", "MeanVarianceNormalization", "InstanceNormalization",
    "GroupNormalization", "RMSNormalization", "CumSum", "CumProd", "Trilu",
    "ReverseSequence",
];

/// Binary/variadic broadcasting ops keeping operand 0's element type.
#[rustfmt::skip]
const ARITH: &[&str] = &[
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "BitShift",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor",
];

/// Broadcasting comparisons and logic ops producing `i1`.
#[rustfmt::skip]
const PREDICATES: &[&str] = &[
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
];

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    if SAME_TYPE.contains(&kind) {
        return Ok(Some(vec![cx.same_as(0)?]));
    }
    if ARITH.contains(&kind) {
        let shape = cx.broadcast(0..cx.num_operands())?;
        return Ok(Some(vec![tensor(shape, cx.elem(0)?)]));
    }
    if PREDICATES.contains(&kind) {
        let shape = cx.broadcast(0..cx.num_operands())?;
        return Ok(Some(vec![tensor(shape, Type::i1())]));
    }
    Ok(Some(match kind {
        "IsNaN" | "IsInf" => vec![tensor(cx.shape(0)?, Type::i1())],
        "Cast" => {
            let to = cx.attr_int("to", 0);
            let to = i32::try_from(to)
                .ok()
                .and_then(elem_type_from_onnx)
                .ok_or_else(|| {
                    cx.err(format!(
                        "unsupported 'to' type {}",
                        onnx_type_name(to as i32)
                    ))
                })?;
            vec![tensor(cx.shape(0)?, to)]
        }
        "CastLike" => vec![tensor(cx.shape(0)?, cx.elem(1)?)],
        "EyeLike" => {
            let elem = match cx.attr("dtype").and_then(ir::Attribute::as_int) {
                Some(code) => i32::try_from(code)
                    .ok()
                    .and_then(elem_type_from_onnx)
                    .ok_or_else(|| cx.err(format!("unsupported dtype {code}")))?,
                None => cx.elem(0)?,
            };
            vec![tensor(cx.shape(0)?, elem)]
        }
        // Slope broadcasts to X one way (opset < 7: along the channels).
        "PRelu" => vec![cx.same_as(0)?],
        "Dropout" => {
            let shape = cx.shape(0)?;
            vec![
                tensor(shape.clone(), cx.elem(0)?),
                tensor(shape, Type::i1()),
            ]
        }
        "Where" => {
            let shape = cx.broadcast(0..3)?;
            vec![tensor(shape, cx.elem(1)?)]
        }
        "LayerNormalization" => layer_norm(cx)?,
        _ => return Ok(None),
    }))
}

/// Y like X; Mean and InvStdDev keep the leading `axis` dims, 1 after.
fn layer_norm(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
    let y = cx.same_as(0)?;
    let stash = i32::try_from(cx.attr_int("stash_type", 1))
        .ok()
        .and_then(elem_type_from_onnx)
        .unwrap_or(Type::f32());
    let stats = match cx.shape(0)? {
        Some(s) => {
            let axis = cx.axis(cx.attr_int("axis", -1), s.len())?;
            let dims = s
                .iter()
                .enumerate()
                .map(|(i, &d)| if i < axis { d } else { 1 })
                .collect();
            Type::tensor(dims, stash)
        }
        None => Type::unranked_tensor(stash),
    };
    Ok(vec![y, stats.clone(), stats])
}
