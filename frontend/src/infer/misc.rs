//! Less common ops with simple shape rules: scatters, random `*Like`,
//! (de)quantization, Resize/Upsample, OneHot, GatherND, Compress,
//! NonMaxSuppression.

use super::{tensor, Ctx};
use crate::import::tensor::elem_type_from_onnx;
use ir::{Diagnostic, Type, DYN};

type Shape = Option<Vec<i64>>;

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    let one = |shape: Shape, elem: Type| Ok(Some(vec![tensor(shape, elem)]));
    match kind {
        "Scatter" | "ScatterElements" | "ScatterND" | "TensorScatter" => {
            Ok(Some(vec![cx.same_as(0)?]))
        }
        "RandomUniformLike" | "RandomNormalLike" | "Bernoulli" => {
            let elem = match dtype_attr(cx, "dtype")? {
                Some(t) => t,
                None => cx.elem(0)?,
            };
            one(cx.shape(0)?, elem)
        }
        "QuantizeLinear" => {
            let elem = match (cx.operand(2), dtype_attr(cx, "output_dtype")?) {
                (Some(_), _) => cx.elem(2)?,
                (None, Some(t)) => t,
                (None, None) => Type::ui(8),
            };
            one(cx.shape(0)?, elem)
        }
        "DequantizeLinear" => {
            let elem = match dtype_attr(cx, "output_dtype")? {
                Some(t) => t,
                None => cx.elem(1)?,
            };
            one(cx.shape(0)?, elem)
        }
        "DynamicQuantizeLinear" => Ok(Some(vec![
            tensor(cx.shape(0)?, Type::ui(8)),
            Type::tensor(vec![], Type::f32()),
            Type::tensor(vec![], Type::ui(8)),
        ])),
        "Resize" | "Upsample" => one(resize(cx)?, cx.elem(0)?),
        "OneHot" => one(one_hot(cx)?, cx.elem(2)?),
        "GatherND" => one(gather_nd(cx)?, cx.elem(0)?),
        "Compress" => {
            let shape = match (
                cx.shape(0)?,
                cx.attr("axis").and_then(ir::Attribute::as_int),
            ) {
                (_, None) => Some(vec![DYN]),
                (Some(mut s), Some(axis)) => {
                    let a = cx.axis(axis, s.len())?;
                    s[a] = DYN;
                    Some(s)
                }
                (None, Some(_)) => None,
            };
            one(shape, cx.elem(0)?)
        }
        "NonMaxSuppression" => one(Some(vec![DYN, 3]), Type::i64()),
        _ => Ok(None),
    }
}

/// An element type given as an ONNX data type number attribute.
fn dtype_attr(cx: &Ctx<'_>, name: &str) -> Result<Option<Type>, Diagnostic> {
    let Some(code) = cx.attr(name).and_then(ir::Attribute::as_int) else {
        return Ok(None);
    };
    i32::try_from(code)
        .ok()
        .and_then(elem_type_from_onnx)
        .map(Some)
        .ok_or_else(|| cx.err(format!("unsupported {name} {code}")))
}

/// Output extents from constant `sizes`, else `floor(d * scale)` from
/// constant `scales` (f32 math, as ONNX computes it).
fn resize(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    // Upsample and Resize-10 take (X, scales); Resize-11+ (X, roi, scales, sizes).
    let (scales_at, sizes_at) = if cx.num_operands() == 2 {
        (1, None)
    } else {
        (2, Some(3))
    };
    let axes: Vec<usize> = match cx.attr_ints("axes") {
        Some(a) => a
            .iter()
            .map(|&a| cx.axis(a, s.len()))
            .collect::<Result<_, _>>()?,
        None => (0..s.len()).collect(),
    };
    let mut out = s.clone();
    if let Some(i) = sizes_at.filter(|&i| cx.operand(i).is_some()) {
        let stretch = cx.attr_str("keep_aspect_ratio_policy").unwrap_or("stretch") == "stretch";
        match cx.const_ints(i) {
            Some(sizes) if stretch => {
                if sizes.len() != axes.len() || sizes.iter().any(|&d| d < 0) {
                    return Err(cx.err(format!("sizes {sizes:?} do not fit {} axes", axes.len())));
                }
                for (&a, &d) in axes.iter().zip(&sizes) {
                    out[a] = d;
                }
            }
            _ => axes.iter().for_each(|&a| out[a] = DYN),
        }
        return Ok(Some(out));
    }
    let Some(scales) = cx.operand(scales_at).and_then(|_| cx.const_f64s(scales_at)) else {
        axes.iter().for_each(|&a| out[a] = DYN);
        return Ok(Some(out));
    };
    if scales.len() != axes.len() || scales.iter().any(|&f| f.is_nan() || f <= 0.0) {
        return Err(cx.err(format!("scales {scales:?} do not fit {} axes", axes.len())));
    }
    for (&a, &f) in axes.iter().zip(&scales) {
        if s[a] != DYN {
            let d = (s[a] as f32 * f as f32).floor();
            if !d.is_finite() || d >= i64::MAX as f32 {
                return Err(cx.err("scaled extent is too large"));
            }
            out[a] = d as i64;
        }
    }
    Ok(Some(out))
}

fn one_hot(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let depth = match cx.const_f64s(1).as_deref() {
        Some(&[d]) if d >= 0.0 && d < i64::MAX as f64 => d as i64,
        Some(_) => return Err(cx.err("depth must be one non-negative value")),
        None => DYN,
    };
    let a = cx.axis(cx.attr_int("axis", -1), s.len() + 1)?;
    s.insert(a, depth);
    Ok(Some(s))
}

fn gather_nd(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let (Some(data), Some(idx)) = (cx.shape(0)?, cx.shape(1)?) else {
        return Ok(None);
    };
    let batch = usize::try_from(cx.attr_int("batch_dims", 0)).unwrap_or(usize::MAX);
    let Some((&last, lead)) = idx.split_last() else {
        return Err(cx.err("indices must have rank >= 1"));
    };
    if last == DYN {
        return Ok(None);
    }
    let tail = usize::try_from(last)
        .ok()
        .and_then(|l| batch.checked_add(l))
        .and_then(|start| data.get(start..))
        .ok_or_else(|| cx.err("indices address more dims than data has"))?;
    let mut out = lead.to_vec();
    out.extend_from_slice(tail);
    Ok(Some(out))
}
