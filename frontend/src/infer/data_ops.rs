//! Ops that tile, pad, split or rearrange data: Tile, Pad, Split, TopK,
//! DepthToSpace/SpaceToDepth, NonZero.

use super::{tensor, Ctx};
use ir::{Diagnostic, Type, DYN};

type Shape = Option<Vec<i64>>;

pub(super) fn infer(cx: &Ctx<'_>, kind: &str) -> Result<Option<Vec<Type>>, Diagnostic> {
    let one = |shape: Shape, elem: Type| Ok(Some(vec![tensor(shape, elem)]));
    match kind {
        "Tile" => one(tile(cx)?, cx.elem(0)?),
        "Pad" => one(pad(cx)?, cx.elem(0)?),
        "NonZero" => {
            let rank = cx.shape(0)?.map_or(DYN, |s| s.len() as i64);
            one(Some(vec![rank, DYN]), Type::i64())
        }
        "Split" => Ok(Some(split(cx)?)),
        "TopK" => {
            let shape = topk(cx)?;
            Ok(Some(vec![
                tensor(shape.clone(), cx.elem(0)?),
                tensor(shape, Type::i64()),
            ]))
        }
        "DepthToSpace" | "SpaceToDepth" => {
            one(depth_space(cx, kind == "DepthToSpace")?, cx.elem(0)?)
        }
        _ => Ok(None),
    }
}

fn tile(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
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

fn pad(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let axes: Vec<usize> = match cx.operand(3) {
        Some(_) => match cx.const_ints(3) {
            Some(a) => a
                .iter()
                .map(|&a| cx.axis(a, s.len()))
                .collect::<Result<_, _>>()?,
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

fn split(cx: &Ctx<'_>) -> Result<Vec<Type>, Diagnostic> {
    let elem = cx.elem(0)?;
    let n = cx.num_results();
    let Some(s) = cx.shape(0)? else {
        return Ok(vec![Type::unranked_tensor(elem); n]);
    };
    let a = cx.axis(cx.attr_int("axis", 0), s.len())?;
    let sizes: Vec<i64> = match (cx.operand(1), cx.attr_ints("split")) {
        (Some(_), _) => match cx.const_ints(1) {
            Some(v) => v,
            None => vec![DYN; n],
        },
        (None, Some(v)) => v,
        (None, None) if s[a] == DYN => vec![DYN; n],
        (None, None) => {
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

fn topk(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(mut s) = cx.shape(0)? else {
        return Ok(None);
    };
    let a = cx.axis(cx.attr_int("axis", -1), s.len())?;
    s[a] = match cx.const_ints(1).as_deref() {
        Some(&[k]) if k >= 0 => k,
        Some(_) => return Err(cx.err("K must be one non-negative value")),
        None => DYN,
    };
    Ok(Some(s))
}

fn depth_space(cx: &Ctx<'_>, to_space: bool) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let b = cx.attr_int("blocksize", 0);
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
