//! Shape ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat,
//! Gather, Shape, Size, Slice, Expand, ConstantOfShape, Range.

use super::{broadcast_shapes, one, product, Ctx, Inferred};
use ir::elements::NumClass;
use ir::{Diagnostic, Type, DYN};
use onnx::{ops, OpKind};

type Shape = Option<Vec<i64>>;

pub(super) fn reshape(cx: &Ctx<'_>) -> Inferred {
    let allowzero = ops::Reshape::of(cx.m, cx.op).allowzero() != 0;
    one(reshape_shape(cx, allowzero)?, cx.elem(0)?)
}

pub(super) fn flatten(cx: &Ctx<'_>) -> Inferred {
    let axis = ops::Flatten::of(cx.m, cx.op).axis();
    one(Some(flatten_shape(cx, axis)?), cx.elem(0)?)
}

pub(super) fn transpose(cx: &Ctx<'_>) -> Inferred {
    one(transpose_shape(cx)?, cx.elem(0)?)
}

pub(super) fn squeeze(cx: &Ctx<'_>) -> Inferred {
    one(squeeze_shape(cx)?, cx.elem(0)?)
}

pub(super) fn unsqueeze(cx: &Ctx<'_>) -> Inferred {
    one(unsqueeze_shape(cx)?, cx.elem(0)?)
}

pub(super) fn concat(cx: &Ctx<'_>) -> Inferred {
    one(concat_shape(cx)?, cx.elem(0)?)
}

pub(super) fn gather(cx: &Ctx<'_>) -> Inferred {
    one(gather_shape(cx)?, cx.elem(0)?)
}

pub(super) fn gather_elements(cx: &Ctx<'_>) -> Inferred {
    one(cx.shape(1)?, cx.elem(0)?)
}

pub(super) fn shape(cx: &Ctx<'_>) -> Inferred {
    one(Some(vec![shape_len(cx)?]), Type::i64())
}

pub(super) fn size(_cx: &Ctx<'_>) -> Inferred {
    one(Some(vec![]), Type::i64())
}

pub(super) fn slice(cx: &Ctx<'_>) -> Inferred {
    one(slice_shape(cx)?, cx.elem(0)?)
}

pub(super) fn expand(cx: &Ctx<'_>) -> Inferred {
    one(expand_shape(cx)?, cx.elem(0)?)
}

pub(super) fn constant_of_shape(cx: &Ctx<'_>) -> Inferred {
    let elem = ops::ConstantOfShape::of(cx.m, cx.op)
        .value()
        .map_or(Type::f32(), |e| e.dtype().to_type());
    one(shape_from_operand(cx, 0)?, elem)
}

pub(super) fn range(cx: &Ctx<'_>) -> Inferred {
    one(Some(vec![range_len(cx)?]), cx.elem(0)?)
}

/// The integer list a shape-like operand holds when constant, checked to
/// hold no negative extent.
fn shape_from_operand(cx: &Ctx<'_>, i: usize) -> Result<Shape, Diagnostic> {
    if let Some(dims) = cx.const_ints(i) {
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(cx.err(format!("shape operand holds a negative extent {d}")));
        }
        return Ok(Some(dims));
    }
    Ok(static_len(cx, i)?.map(|n| vec![DYN; n]))
}

/// Static length of a 1-D operand.
fn static_len(cx: &Ctx<'_>, i: usize) -> Result<Option<usize>, Diagnostic> {
    Ok(match cx.shape(i)?.as_deref() {
        Some(&[n]) if n != DYN => usize::try_from(n).ok(),
        _ => None,
    })
}

fn reshape_shape(cx: &Ctx<'_>, allowzero: bool) -> Result<Shape, Diagnostic> {
    let data = cx.shape(0)?;
    let Some(target) = cx.const_ints(1) else {
        // `Reshape(y, Shape(x))` (how import writes Softmax-like ops of
        // old opsets) takes x's dims; a 0 copies y's, so not with zeros.
        if let Some(dims) = dims_of_shape_op(cx, 1).filter(|d| allowzero || !d.contains(&0)) {
            return Ok(Some(dims));
        }
        return Ok(static_len(cx, 1)?.map(|n| vec![DYN; n]));
    };
    let mut out = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, &t) in target.iter().enumerate() {
        out.push(match t {
            -1 if infer_at.is_some() => return Err(cx.err("shape has more than one -1")),
            -1 => {
                infer_at = Some(i);
                DYN
            }
            0 if !allowzero => match &data {
                Some(d) => *d.get(i).ok_or_else(|| {
                    cx.err(format!(
                        "shape entry {i} copies a dim the input does not have"
                    ))
                })?,
                None => DYN,
            },
            t if t < 0 => return Err(cx.err(format!("invalid shape entry {t}"))),
            t => t,
        });
    }
    if allowzero && infer_at.is_some() && target.contains(&0) {
        return Err(cx.err("shape with allowzero may not hold both 0 and -1"));
    }
    let total = data.as_deref().map_or(DYN, product);
    match infer_at {
        Some(i) => {
            let rest: Vec<i64> = out
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i)
                .map(|(_, &d)| d)
                .collect();
            let known = product(&rest);
            if total != DYN && known != DYN {
                if known == 0 || total % known != 0 {
                    return Err(cx.err(format!("cannot reshape {total} elements into {target:?}")));
                }
                out[i] = total / known;
            }
        }
        None => {
            let n = product(&out);
            if total != DYN && n != DYN && n != total {
                return Err(cx.err(format!("cannot reshape {total} elements into {out:?}")));
            }
        }
    }
    Ok(Some(out))
}

/// The dims an `onnx.Shape` defining operand `i` will hold (unknown ones
/// `?`), when its input is ranked.
fn dims_of_shape_op(cx: &Ctx<'_>, i: usize) -> Option<Vec<i64>> {
    let def = onnx::defined_by(cx.m, cx.operand(i)?, OpKind::Shape)?;
    let x = cx.m.operand(def, 0)?;
    let dims = cx.m.value_type(x).shape()?;
    let v = ops::Shape::of(cx.m, def);
    let r = i64::try_from(dims.len()).ok()?;
    let start = onnx::axis::clamp_index(v.start(), r);
    let end = v.end().map_or(r, |e| onnx::axis::clamp_index(e, r));
    let range = usize::try_from(start).ok()?..usize::try_from(end.max(start)).ok()?;
    dims.get(range).map(<[i64]>::to_vec)
}

/// Flatten's axis may also be the rank (everything outer).
fn flatten_shape(cx: &Ctx<'_>, axis: i64) -> Result<Vec<i64>, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(vec![DYN, DYN]);
    };
    let r = s.len();
    let a = match onnx::axis::normalize(axis, r) {
        Some(a) => a,
        None if i64::try_from(r).is_ok_and(|r| r == axis) => r,
        None => return Err(cx.err(format!("axis {axis} is out of range for rank {r}"))),
    };
    let (outer, inner) = s.split_at(a);
    Ok(vec![product(outer), product(inner)])
}

fn transpose_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let perm = ops::Transpose::of(cx.m, cx.op)
        .perm()
        .unwrap_or_else(|| (0..s.len() as i64).rev().collect());
    let mut seen = vec![false; s.len()];
    let mut out = Vec::with_capacity(s.len());
    for &p in &perm {
        let slot = usize::try_from(p).ok().filter(|&p| p < s.len());
        match slot {
            Some(p) if !seen[p] => {
                seen[p] = true;
                out.push(s[p]);
            }
            _ => {
                return Err(cx.err(format!(
                    "perm {perm:?} is not a permutation of rank {}",
                    s.len()
                )))
            }
        }
    }
    if out.len() != s.len() {
        return Err(cx.err(format!(
            "perm {perm:?} is not a permutation of rank {}",
            s.len()
        )));
    }
    Ok(Some(out))
}

/// Axes from operand `i`: `None` when absent, `Err(())` when given but not
/// constant.
fn axes_of(cx: &Ctx<'_>, i: usize) -> Result<Option<Vec<i64>>, ()> {
    if cx.operand(i).is_some() {
        return cx.const_ints(i).map(Some).ok_or(());
    }
    Ok(None)
}

/// Sorted, deduplicated, normalized axes for `rank`.
fn norm_axes(cx: &Ctx<'_>, axes: &[i64], rank: usize) -> Result<Vec<usize>, Diagnostic> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = cx.axis(a, rank)?;
        if out.contains(&n) {
            return Err(cx.err(format!("axis {a} is repeated")));
        }
        out.push(n);
    }
    out.sort_unstable();
    Ok(out)
}

fn squeeze_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    if cx.operand(1).is_some() && cx.const_ints(1).is_none() {
        // Runtime axes: only their count is known.
        return Ok(cx
            .static_len(1)
            .and_then(|k| s.len().checked_sub(k))
            .map(|r| vec![DYN; r]));
    }
    let Ok(axes) = axes_of(cx, 1) else {
        return Ok(None);
    };
    let Some(axes) = axes else {
        // Without axes every 1 goes, so an unknown dim leaves the rank unknown.
        if s.contains(&DYN) {
            return Ok(None);
        }
        return Ok(Some(s.into_iter().filter(|&d| d != 1).collect()));
    };
    let axes = norm_axes(cx, &axes, s.len())?;
    for &a in &axes {
        if s[a] != 1 && s[a] != DYN {
            return Err(cx.err(format!("cannot squeeze axis {a} of extent {}", s[a])));
        }
    }
    Ok(Some(
        s.iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &d)| d)
            .collect(),
    ))
}

fn unsqueeze_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let axes = match axes_of(cx, 1) {
        Ok(Some(a)) => a,
        Ok(None) => return Err(cx.err("requires axes")),
        Err(()) => return Ok(static_len(cx, 1)?.map(|n| vec![DYN; s.len() + n])),
    };
    let rank = s.len() + axes.len();
    let axes = norm_axes(cx, &axes, rank)?;
    let mut src = s.iter();
    Ok(Some(
        (0..rank)
            .map(|i| {
                if axes.contains(&i) {
                    1
                } else {
                    src.next().copied().unwrap_or(DYN)
                }
            })
            .collect(),
    ))
}

fn concat_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let axis = ops::Concat::of(cx.m, cx.op).axis();
    let shapes = (0..cx.num_operands())
        .map(|i| cx.shape(i))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(rank) = shapes.iter().flatten().map(Vec::len).next() else {
        return Ok(None);
    };
    let a = cx.axis(axis, rank)?;
    let mut out: Vec<i64> = vec![DYN; rank];
    let mut sum = 0i64;
    for s in &shapes {
        let s = s.clone().unwrap_or_else(|| vec![DYN; rank]);
        if s.len() != rank {
            return Err(cx.err(format!("operands have ranks {rank} and {}", s.len())));
        }
        for (i, &d) in s.iter().enumerate() {
            if i == a {
                sum = if sum == DYN || d == DYN {
                    DYN
                } else {
                    sum.saturating_add(d)
                };
            } else if out[i] == DYN {
                out[i] = d;
            } else if d != DYN && d != out[i] {
                return Err(cx.err(format!("operands differ on axis {i}: {} vs {d}", out[i])));
            }
        }
    }
    out[a] = sum;
    Ok(Some(out))
}

fn gather_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let (Some(data), Some(indices)) = (cx.shape(0)?, cx.shape(1)?) else {
        return Ok(None);
    };
    let a = cx.axis(ops::Gather::of(cx.m, cx.op).axis(), data.len())?;
    let mut out = data[..a].to_vec();
    out.extend_from_slice(&indices);
    out.extend_from_slice(&data[a + 1..]);
    Ok(Some(out))
}

fn shape_len(cx: &Ctx<'_>) -> Result<i64, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(DYN);
    };
    let v = ops::Shape::of(cx.m, cx.op);
    let r = i64::try_from(s.len()).map_err(|_| cx.err("rank too large"))?;
    let clamp = |i: i64| onnx::axis::clamp_index(i, r);
    let start = clamp(v.start());
    let end = v.end().map_or(r, clamp);
    Ok((end - start).max(0))
}

/// Extent of one sliced axis (ONNX Slice clamping rules).
pub fn slice_extent(dim: i64, start: i64, end: i64, step: i64) -> i64 {
    if dim <= 0 || step == 0 {
        return 0;
    }
    let adjust = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
    let (s, e) = (adjust(start), adjust(end));
    if step > 0 {
        let (s, e) = (s.clamp(0, dim), e.clamp(0, dim));
        if e <= s {
            0
        } else {
            (e - s - 1) / step + 1
        }
    } else {
        let (s, e) = (s.clamp(0, dim - 1), e.clamp(-1, dim - 1));
        if s <= e {
            0
        } else {
            (s - e - 1) / step.saturating_neg() + 1
        }
    }
}

fn slice_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.shape(0)? else {
        return Ok(None);
    };
    let (starts, ends) = (cx.const_ints(1), cx.const_ints(2));
    let axes = if cx.operand(3).is_some() {
        cx.const_ints(3)
    } else {
        starts.as_ref().map(|v| (0..v.len() as i64).collect())
    };
    let steps = if cx.operand(4).is_some() {
        cx.const_ints(4)
    } else {
        starts.as_ref().map(|v| vec![1; v.len()])
    };
    let mut out = s.clone();
    let Some(axes) = axes else {
        return Ok(Some(vec![DYN; s.len()]));
    };
    let axes_n: Vec<usize> = axes
        .iter()
        .map(|&a| cx.axis(a, s.len()))
        .collect::<Result<_, _>>()?;
    let (Some(starts), Some(ends), Some(steps)) = (starts, ends, steps) else {
        for &a in &axes_n {
            out[a] = DYN;
        }
        return Ok(Some(out));
    };
    if starts.len() != axes.len() || ends.len() != axes.len() || steps.len() != axes.len() {
        return Err(cx.err("starts, ends, axes and steps differ in length"));
    }
    for (k, &a) in axes_n.iter().enumerate() {
        if steps[k] == 0 {
            return Err(cx.err("slice step may not be 0"));
        }
        out[a] = if s[a] == DYN {
            DYN
        } else {
            slice_extent(s[a], starts[k], ends[k], steps[k])
        };
    }
    Ok(Some(out))
}

fn expand_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(input) = cx.shape(0)? else {
        return Ok(None);
    };
    if let Some(target) = cx.const_ints(1) {
        if let Some(d) = target.iter().find(|&&d| d < 0) {
            return Err(cx.err(format!("shape operand holds a negative extent {d}")));
        }
        return broadcast_shapes(&input, &target)
            .map(Some)
            .map_err(|e| cx.err(e));
    }
    let Some(n) = static_len(cx, 1)? else {
        return Ok(None);
    };
    // An input extent other than 1 survives any valid target.
    let rank = n.max(input.len());
    let pad = rank - input.len();
    Ok(Some(
        (0..rank)
            .map(|i| match i.checked_sub(pad).and_then(|k| input.get(k)) {
                Some(&d) if d != 1 => d,
                _ => DYN,
            })
            .collect(),
    ))
}

fn range_len(cx: &Ctx<'_>) -> Result<i64, Diagnostic> {
    let is_float = cx
        .const_elements(0)
        .is_some_and(|e| e.dtype().class() == NumClass::Float);
    if !is_float {
        let one = |i: usize| {
            cx.const_ints(i)
                .and_then(|v| v.first().copied().filter(|_| v.len() == 1))
        };
        let (Some(start), Some(limit), Some(delta)) = (one(0), one(1), one(2)) else {
            return Ok(DYN);
        };
        if delta == 0 {
            return Err(cx.err("Range delta may not be 0"));
        }
        let span = i128::from(limit) - i128::from(start);
        let d = i128::from(delta);
        let n = span / d + i128::from(span % d != 0);
        return i64::try_from(n.max(0)).map_err(|_| cx.err("Range has too many elements"));
    }
    let one = |i: usize| {
        cx.const_f64s(i)
            .and_then(|v| v.first().copied().filter(|_| v.len() == 1))
    };
    let (Some(start), Some(limit), Some(delta)) = (one(0), one(1), one(2)) else {
        return Ok(DYN);
    };
    if delta == 0.0 {
        return Err(cx.err("Range delta may not be 0"));
    }
    let n = ((limit - start) / delta).ceil();
    if n.is_nan() || n >= i64::MAX as f64 {
        return Err(cx.err("Range has too many elements"));
    }
    Ok((n as i64).max(0))
}
