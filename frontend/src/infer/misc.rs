//! Less common ops with simple shape rules: scatters, random `*Like`,
//! (de)quantization, Resize/Upsample, OneHot, GatherND, Compress,
//! NonMaxSuppression.

use super::dims::{self, Dims};
use super::{one, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Vec<i64>>;

/// One result of symbolic `dims` and `elem`.
fn one_dims(d: Option<Dims>, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(d, elem)]))
}

/// RandomUniformLike, RandomNormalLike, Bernoulli: operand 0's shape, in
/// `dtype` (default operand 0's element type).
fn random_like(cx: &Ctx<'_>, dtype: Option<i64>) -> Inferred {
    let elem = match dtype {
        Some(code) => cx.dtype(code, "dtype")?,
        None => cx.elem(0)?,
    };
    one_dims(cx.dims(0)?, elem)
}

pub(super) fn random_uniform_like(cx: &Ctx<'_>) -> Inferred {
    random_like(cx, ops::RandomUniformLike::of(cx.m, cx.op).dtype())
}

pub(super) fn random_normal_like(cx: &Ctx<'_>) -> Inferred {
    random_like(cx, ops::RandomNormalLike::of(cx.m, cx.op).dtype())
}

pub(super) fn bernoulli(cx: &Ctx<'_>) -> Inferred {
    random_like(cx, ops::Bernoulli::of(cx.m, cx.op).dtype())
}

/// `output_dtype` 0 means "not given".
fn output_dtype(cx: &Ctx<'_>, code: i64) -> Result<Option<Type>, Diagnostic> {
    match code {
        0 => Ok(None),
        code => cx.dtype(code, "output_dtype").map(Some),
    }
}

/// The zero point's type, else `output_dtype`, else u8.
pub(super) fn quantize_linear(cx: &Ctx<'_>) -> Inferred {
    let given = ops::QuantizeLinear::of(cx.m, cx.op).output_dtype();
    let elem = match (cx.operand(2), output_dtype(cx, given)?) {
        (Some(_), _) => cx.elem(2)?,
        (None, Some(t)) => t,
        (None, None) => Type::ui(8),
    };
    one_dims(cx.dims(0)?, elem)
}

/// `output_dtype`, else the scale's type.
pub(super) fn dequantize_linear(cx: &Ctx<'_>) -> Inferred {
    let given = ops::DequantizeLinear::of(cx.m, cx.op).output_dtype();
    let elem = match output_dtype(cx, given)? {
        Some(t) => t,
        None => cx.elem(1)?,
    };
    one_dims(cx.dims(0)?, elem)
}

/// y, y_scale, y_zero_point.
pub(super) fn dynamic_quantize_linear(cx: &Ctx<'_>) -> Inferred {
    Ok(Some(vec![
        dims::to_type(cx.dims(0)?, Type::ui(8)),
        Type::tensor(vec![], Type::f32()),
        Type::tensor(vec![], Type::ui(8)),
    ]))
}

/// Resize (opset 11 on): X, roi, scales, sizes.
pub(super) fn resize(cx: &Ctx<'_>) -> Inferred {
    let v = ops::Resize::of(cx.m, cx.op);
    let stretch = v.keep_aspect_ratio_policy() == "stretch";
    let shape = resize_shape(cx, v.axes(), 2, Some(3), stretch)?;
    one_dims(shape, cx.elem(0)?)
}

/// Upsample: X, scales over every axis.
pub(super) fn upsample(cx: &Ctx<'_>) -> Inferred {
    one_dims(resize_shape(cx, None, 1, None, true)?, cx.elem(0)?)
}

pub(super) fn one_hot(cx: &Ctx<'_>) -> Inferred {
    let axis = ops::OneHot::of(cx.m, cx.op).axis();
    one(one_hot_shape(cx, axis)?, cx.elem(2)?)
}

pub(super) fn gather_nd(cx: &Ctx<'_>) -> Inferred {
    let batch = ops::GatherND::of(cx.m, cx.op).batch_dims();
    one(gather_nd_shape(cx, batch)?, cx.elem(0)?)
}

/// Without an axis the input is flattened; the kept count is unknown.
pub(super) fn compress(cx: &Ctx<'_>) -> Inferred {
    let shape = match (cx.dims(0)?, ops::Compress::of(cx.m, cx.op).axis()) {
        (_, None) => Some(vec![None]),
        (Some(mut s), Some(axis)) => {
            let a = cx.axis(axis, s.len())?;
            s[a] = None;
            Some(s)
        }
        (None, Some(_)) => None,
    };
    one_dims(shape, cx.elem(0)?)
}

/// [batch, class, box] triples.
pub(super) fn non_max_suppression(_cx: &Ctx<'_>) -> Inferred {
    one(Some(vec![DYN, 3]), Type::i64())
}

/// Output extents from `sizes` (what is known of them), else `floor(d *
/// scale)` from constant `scales` (f32 math, as ONNX computes it; over a
/// symbolic extent when the scale is a whole number or its inverse is).
fn resize_shape(
    cx: &Ctx<'_>,
    axes: Option<Vec<i64>>,
    scales_at: usize,
    sizes_at: Option<usize>,
    stretch: bool,
) -> Result<Option<Dims>, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    let axes: Vec<usize> = match axes {
        Some(a) => cx.axes(&a, s.len())?,
        None => (0..s.len()).collect(),
    };
    let mut out = s.clone();
    if let Some(i) = sizes_at.filter(|&i| cx.operand(i).is_some()) {
        match super::shape_ops::shape_value(cx, i) {
            Some(sizes) if stretch => {
                let negative = sizes.iter().filter_map(dims::value).any(|d| d < 0);
                if sizes.len() != axes.len() || negative {
                    return Err(cx.err(format!(
                        "sizes {} do not fit {} axes",
                        super::ctx::show(&sizes),
                        axes.len()
                    )));
                }
                for (&a, d) in axes.iter().zip(sizes) {
                    out[a] = d;
                }
            }
            _ => axes.iter().for_each(|&a| out[a] = None),
        }
        return Ok(Some(out));
    }
    let Some(scales) = cx.operand(scales_at).and_then(|_| cx.const_f64s(scales_at)) else {
        axes.iter().for_each(|&a| out[a] = None);
        return Ok(Some(out));
    };
    if scales.len() != axes.len() || scales.iter().any(|&f| f.is_nan() || f <= 0.0) {
        return Err(cx.err(format!("scales {scales:?} do not fit {} axes", axes.len())));
    }
    for (&a, &f) in axes.iter().zip(&scales) {
        out[a] = scaled(cx, &s[a], f)?;
    }
    Ok(Some(out))
}

/// `floor(d * f)`.
fn scaled(cx: &Ctx<'_>, d: &dims::Dim, f: f64) -> Result<dims::Dim, Diagnostic> {
    if let Some(v) = dims::value(d) {
        let x = (v as f32 * f as f32).floor();
        if !x.is_finite() || x >= i64::MAX as f32 {
            return Err(cx.err("scaled extent is too large"));
        }
        return Ok(dims::c(x as i64));
    }
    let f = f as f32;
    let whole = f.fract() == 0.0 && f < 1e9;
    let inverse = (1.0 / f).fract() == 0.0 && f > 1e-9;
    Ok(if whole {
        dims::scale(d, f as i64)
    } else if inverse {
        dims::floordiv(d, (1.0 / f) as i64)
    } else {
        None
    })
}

fn one_hot_shape(cx: &Ctx<'_>, axis: i64) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let depth = match cx.const_f64s(1).as_deref() {
        Some(&[d]) if d >= 0.0 && d < i64::MAX as f64 => d as i64,
        Some(_) => return Err(cx.err("depth must be one non-negative value")),
        None => DYN,
    };
    let a = cx.axis(axis, s.len() + 1)?;
    s.insert(a, depth);
    Ok(Some(s))
}

fn gather_nd_shape(cx: &Ctx<'_>, batch_dims: i64) -> Result<Shape, Diagnostic> {
    let (Some(data), Some(idx)) = (cx.shape(0)?, cx.shape(1)?) else {
        return Ok(None);
    };
    let batch = usize::try_from(batch_dims).unwrap_or(usize::MAX);
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
