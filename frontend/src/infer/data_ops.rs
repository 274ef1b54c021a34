//! Ops that tile, pad, split or rearrange data: Tile, Pad, Split, TopK,
//! DepthToSpace/SpaceToDepth, NonZero.

use super::{one, tensor, Ctx, Inferred};
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Vec<i64>>;

pub(super) fn tile(cx: &Ctx<'_>) -> Inferred {
    one(tile_shape(cx)?, cx.elem(0)?)
}

pub(super) fn pad(cx: &Ctx<'_>) -> Inferred {
    one(pad_shape(cx)?, cx.elem(0)?)
}

/// One row of coordinates per non-zero element.
pub(super) fn non_zero(cx: &Ctx<'_>) -> Inferred {
    let rank = cx.shape(0)?.map_or(DYN, |s| s.len() as i64);
    one(Some(vec![rank, DYN]), Type::i64())
}

pub(super) fn split(cx: &Ctx<'_>) -> Inferred {
    let axis = ops::Split::of(cx.m, cx.op).axis();
    Ok(Some(split_types(cx, axis)?))
}

/// Values and indices.
pub(super) fn top_k(cx: &Ctx<'_>) -> Inferred {
    let shape = topk_shape(cx, ops::TopK::of(cx.m, cx.op).axis())?;
    Ok(Some(vec![
        tensor(shape.clone(), cx.elem(0)?),
        tensor(shape, Type::i64()),
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
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let Some(reps) = cx.const_ints(1) else {
        return Ok(Some(vec![DYN; s.len()]));
    };
    if reps.len() != s.len() || reps.iter().any(|&r| r < 0) {
        return Err(cx.err(format!("repeats {reps:?} do not fit rank {}", s.len())));
    }
    Ok(Some(
        s.iter()
            .zip(&reps)
            .map(|(&d, &r)| if d == DYN { DYN } else { d.saturating_mul(r) })
            .collect(),
    ))
}

fn pad_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let axes: Vec<usize> = match cx.operand(3) {
        Some(_) => match cx.const_ints(3) {
            Some(a) => cx.axes(&a, s.len())?,
            None => return Ok(Some(vec![DYN; s.len()])),
        },
        None => (0..s.len()).collect(),
    };
    let Some(pads) = cx.const_ints(1) else {
        let mut out = s.clone();
        for &a in &axes {
            out[a] = DYN;
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
        if s[a] != DYN {
            let d = s[a]
                .saturating_add(pads[k])
                .saturating_add(pads[axes.len() + k]);
            if d < 0 {
                return Err(cx.err(format!("pads make axis {a} negative")));
            }
            out[a] = d;
        }
    }
    Ok(Some(out))
}

fn split_types(cx: &Ctx<'_>, axis: i64) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let n = cx.num_results();
    let Some(s) = cx.shape(0)? else {
        return Ok(vec![Type::unranked_tensor(elem); n]);
    };
    let a = cx.axis(axis, s.len())?;
    let sizes: Vec<i64> = match cx.operand(1) {
        Some(_) => match cx.const_ints(1) {
            Some(v) => v,
            None => vec![DYN; n],
        },
        None if s[a] == DYN => vec![DYN; n],
        None => {
            let k = i64::try_from(n.max(1)).unwrap_or(1);
            let chunk = s[a] / k + i64::from(s[a] % k != 0);
            (0..k).map(|i| (s[a] - i * chunk).clamp(0, chunk)).collect()
        }
    };
    if sizes.iter().any(|&d| d < 0 && d != DYN) {
        return Err(cx.err(format!("split sizes {sizes:?} hold a negative extent")));
    }
    if sizes.len() != n {
        return Err(cx.err(format!("split has {} sizes for {n} results", sizes.len())));
    }
    let known: Option<i64> =
        sizes.iter().try_fold(
            0i64,
            |acc, &d| if d == DYN { None } else { acc.checked_add(d) },
        );
    if let (Some(total), true) = (known, s[a] != DYN) {
        if total != s[a] {
            return Err(cx.err(format!("split sizes {sizes:?} do not add up to {}", s[a])));
        }
    }
    Ok(sizes
        .into_iter()
        .map(|d| {
            let mut out = s.clone();
            out[a] = d;
            Type::tensor(out, elem.clone())
        })
        .collect())
}

fn topk_shape(cx: &Ctx<'_>, axis: i64) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let a = cx.axis(axis, s.len())?;
    s[a] = match cx.const_ints(1).as_deref() {
        Some(&[k]) if k >= 0 => k,
        Some(_) => return Err(cx.err("K must be one non-negative value")),
        None => DYN,
    };
    Ok(Some(s))
}

fn depth_space(cx: &Ctx<'_>, b: i64, to_space: bool) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let [n, c, h, w] = s[..] else {
        return Err(cx.err("input must be 4-D"));
    };
    if b < 1 {
        return Err(cx.err("blocksize must be positive"));
    }
    let bb = b.saturating_mul(b);
    let mul = |d: i64, f: i64| if d == DYN { DYN } else { d.saturating_mul(f) };
    let div = |d: i64, f: i64| {
        if d == DYN {
            Ok(DYN)
        } else if d % f == 0 {
            Ok(d / f)
        } else {
            Err(cx.err(format!("extent {d} is not a multiple of {f}")))
        }
    };
    Ok(Some(if to_space {
        vec![n, div(c, bb)?, mul(h, b), mul(w, b)]
    } else {
        vec![n, mul(c, bb), div(h, b)?, div(w, b)?]
    }))
}
