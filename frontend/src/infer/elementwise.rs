//! Element-wise ops: unary (same type), casts, and broadcasting n-ary ops.

use super::dims::{self, Dims};
use super::{Ctx, Inferred};
use crate::import::tensor::{elem_type_from_onnx, onnx_type_name};
use ir::Type;
use onnx::ops;

/// Ops whose result has operand 0's type (unary, per-row, scatters).
pub(super) fn same_type(cx: &Ctx<'_>) -> Inferred {
    Ok(Some(vec![cx.same_as(0)?]))
}

/// Arithmetic and bitwise ops: all operands broadcast (multidirectional),
/// operand 0's element type.
pub(super) fn arith(cx: &Ctx<'_>) -> Inferred {
    let d = cx.broadcast_dims(0..cx.num_operands())?;
    one(d, cx.elem(0)?)
}

/// One result of `dims` and `elem`.
fn one(d: Option<Dims>, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(d, elem)]))
}

/// Comparisons and logic ops: the operands broadcast to an `i1` result.
pub(super) fn predicate(cx: &Ctx<'_>) -> Inferred {
    let d = cx.broadcast_dims(0..cx.num_operands())?;
    one(d, Type::i1())
}

/// IsNaN, IsInf: a flag per element.
pub(super) fn test(cx: &Ctx<'_>) -> Inferred {
    one(cx.dims(0)?, Type::i1())
}

pub(super) fn cast(cx: &Ctx<'_>) -> Inferred {
    let to = ops::Cast::of(cx.m, cx.op).to();
    let elem = i32::try_from(to)
        .ok()
        .and_then(elem_type_from_onnx)
        .ok_or_else(|| {
            cx.err(format!(
                "unsupported 'to' type {}",
                onnx_type_name(to as i32)
            ))
        })?;
    one(cx.dims(0)?, elem)
}

pub(super) fn cast_like(cx: &Ctx<'_>) -> Inferred {
    one(cx.dims(0)?, cx.elem(1)?)
}

pub(super) fn eye_like(cx: &Ctx<'_>) -> Inferred {
    let elem = match ops::EyeLike::of(cx.m, cx.op).dtype() {
        Some(code) => cx.dtype(code, "dtype")?,
        None => cx.elem(0)?,
    };
    one(cx.dims(0)?, elem)
}

/// Output and mask.
pub(super) fn dropout(cx: &Ctx<'_>) -> Inferred {
    let d = cx.dims(0)?;
    Ok(Some(vec![
        dims::to_type(d.clone(), cx.elem(0)?),
        dims::to_type(d, Type::i1()),
    ]))
}

pub(super) fn where_(cx: &Ctx<'_>) -> Inferred {
    let d = cx.broadcast_dims(0..3)?;
    one(d, cx.elem(1)?)
}

/// Y like X; Mean and InvStdDev keep the leading `axis` dims, 1 after.
pub(super) fn layer_norm(cx: &Ctx<'_>) -> Inferred {
    let v = ops::LayerNormalization::of(cx.m, cx.op);
    let y = cx.same_as(0)?;
    let stash = i32::try_from(v.stash_type())
        .ok()
        .and_then(elem_type_from_onnx)
        .unwrap_or(Type::f32());
    let stats = match cx.dims(0)? {
        Some(s) => {
            let axis = cx.axis(v.axis(), s.len())?;
            let kept = s
                .into_iter()
                .enumerate()
                .map(|(i, d)| if i < axis { d } else { dims::c(1) })
                .collect();
            Type::tensor_dims(kept, stash)
        }
        None => Type::unranked_tensor(stash),
    };
    Ok(Some(vec![y, stats.clone(), stats]))
}
