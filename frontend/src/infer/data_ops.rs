//! Ops that tile, pad, split or rearrange data: Tile, Pad, Split, TopK,
//! DepthToSpace/SpaceToDepth, NonZero.

use super::dims::{self, Dim, Dims};
use super::{Ctx, Inferred};
use ir::{Diagnostic, Type};
use onnx::ops;

type Shape = Option<Dims>;

/// One result of `dims` and `elem`.
fn one(d: Shape, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(d, elem)]))
}

pub(super) fn tile(cx: &Ctx<'_>) -> Inferred {
    one(tile_shape(cx)?, cx.elem(0)?)
}

pub(super) fn pad(cx: &Ctx<'_>) -> Inferred {
    one(pad_shape(cx)?, cx.elem(0)?)
}

/// One row of coordinates per non-zero element.
pub(super) fn non_zero(cx: &Ctx<'_>) -> Inferred {
    let rank = cx.shape(0)?.and_then(|s| dims::c(s.len() as i64));
    one(Some(vec![rank, None]), Type::i64())
}

pub(super) fn split(cx: &Ctx<'_>) -> Inferred {
    let axis = ops::Split::of(cx.m, cx.op).axis();
    Ok(Some(split_types(cx, axis)?))
}

/// Values and indices.
pub(super) fn top_k(cx: &Ctx<'_>) -> Inferred {
    let shape = topk_shape(cx, ops::TopK::of(cx.m, cx.op).axis())?;
    Ok(Some(vec![
        dims::to_type(shape.clone(), cx.elem(0)?),
        dims::to_type(shape, Type::i64()),
    ]))
}

pub(super) fn depth_to_space(cx: &Ctx<'_>) -> Inferred {
    let b = ops::DepthToSpace::of(cx.m, cx.op).blocksize();
    one(depth_space(cx, b, true)?, cx.elem(0)?)
}

pub(super) fn space_to_depth(cx: &Ctx<'_>) -> Inferred {
    let b = ops::SpaceToDepth::of(cx.m, cx.op).blocksize();
    one(depth_space(cx, b, false)?, cx.elem(0)?)
}

fn tile_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    let Some(reps) = super::shape_ops::shape_value(cx, 1) else {
        return Ok(Some(vec![None; s.len()]));
    };
    if reps.len() != s.len() || reps.iter().any(|r| dims::value(r).is_some_and(|r| r < 0)) {
        return Err(cx.err(format!(
            "repeats {} do not fit rank {}",
            super::ctx::show(&reps),
            s.len()
        )));
    }
    Ok(Some(
        s.iter().zip(&reps).map(|(d, r)| dims::mul(d, r)).collect(),
    ))
}

fn pad_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    let axes: Vec<usize> = match cx.operand(3) {
        Some(_) => match cx.const_ints(3) {
            Some(a) => cx.axes(&a, s.len())?,
            None => return Ok(Some(vec![None; s.len()])),
        },
        None => (0..s.len()).collect(),
    };
    let Some(pads) = cx.const_ints(1) else {
        let mut out = s.clone();
        for &a in &axes {
            out[a] = None;
        }
        return Ok(Some(out));
    };
    if pads.len() != 2 * axes.len() {
        return Err(cx.err(format!(
            "pads has {} entries for {} axes",
            pads.len(),
            axes.len()
        )));
    }
    let mut out = s.clone();
    for (k, &a) in axes.iter().enumerate() {
        let d = dims::add_const(&s[a], pads[k].saturating_add(pads[axes.len() + k]));
        if dims::value(&d).is_some_and(|d| d < 0) {
            return Err(cx.err(format!("pads make axis {a} negative")));
        }
        out[a] = d;
    }
    Ok(Some(out))
}

/// The sizes of a Split's results along the axis of extent `d`: given,
/// or `n` equal chunks (the last smaller when they do not divide).
fn split_sizes(cx: &Ctx<'_>, d: &Dim, n: usize) -> Result<Dims, Diagnostic> {
    if cx.operand(1).is_some() {
        return Ok(match cx.const_ints(1) {
            Some(v) => v.into_iter().map(dims::c).collect(),
            None => vec![None; n],
        });
    }
    let k = i64::try_from(n.max(1)).unwrap_or(1);
    if let Some(v) = dims::value(d) {
        let chunk = v / k + i64::from(v % k != 0);
        return Ok((0..k)
            .map(|i| dims::c((v - i * chunk).clamp(0, chunk)))
            .collect());
    }
    // Equal chunks of a symbolic extent: exact when it divides.
    let chunk = dims::exact_div(d, &dims::c(k));
    Ok(vec![chunk; n])
}

fn split_types(cx: &Ctx<'_>, axis: i64) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let n = cx.num_results();
    let Some(s) = cx.dims(0)? else {
        return Ok(vec![Type::unranked_tensor(elem); n]);
    };
    let a = cx.axis(axis, s.len())?;
    let sizes = split_sizes(cx, &s[a], n)?;
    if sizes.iter().filter_map(dims::value).any(|d| d < 0) {
        return Err(cx.err(format!(
            "split sizes {} hold a negative extent",
            super::ctx::show(&sizes)
        )));
    }
    if sizes.len() != n {
        return Err(cx.err(format!("split has {} sizes for {n} results", sizes.len())));
    }
    let total = sizes
        .iter()
        .try_fold(dims::c(0), |acc, d| d.as_ref().map(|_| dims::add(&acc, d)))
        .flatten();
    if let (Some(t), Some(v)) = (dims::value(&total), dims::value(&s[a])) {
        if t != v {
            return Err(cx.err(format!(
                "split sizes {} do not add up to {v}",
                super::ctx::show(&sizes)
            )));
        }
    }
    Ok(sizes
        .into_iter()
        .map(|d| {
            let mut out = s.clone();
            out[a] = d;
            Type::tensor_dims(out, elem.clone())
        })
        .collect())
}

fn topk_shape(cx: &Ctx<'_>, axis: i64) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.dims(0)? else {
        return Ok(None);
    };
    let a = cx.axis(axis, s.len())?;
    s[a] = match super::shape_ops::shape_value(cx, 1).as_deref() {
        Some([k]) if dims::value(k).is_none_or(|k| k >= 0) => k.clone(),
        Some(_) => return Err(cx.err("K must be one non-negative value")),
        None => None,
    };
    Ok(Some(s))
}

fn depth_space(cx: &Ctx<'_>, b: i64, to_space: bool) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    let [n, c, h, w] = &s[..] else {
        return Err(cx.err("input must be 4-D"));
    };
    if b < 1 {
        return Err(cx.err("blocksize must be positive"));
    }
    let bb = b.saturating_mul(b);
    let div = |d: &Dim, f: i64| match dims::value(d) {
        Some(v) if v % f != 0 => Err(cx.err(format!("extent {v} is not a multiple of {f}"))),
        _ => Ok(dims::exact_div(d, &dims::c(f))),
    };
    Ok(Some(if to_space {
        vec![n.clone(), div(c, bb)?, dims::scale(h, b), dims::scale(w, b)]
    } else {
        vec![n.clone(), dims::scale(c, bb), div(h, b)?, div(w, b)?]
    }))
}
