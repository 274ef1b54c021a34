//! Shape ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat,
//! Gather, Shape, Size, Slice, Expand, ConstantOfShape, Range.

use super::dims::{self, Dim, Dims};
use super::{Ctx, Inferred};
use ir::elements::NumClass;
use ir::{Diagnostic, Type, DYN};
use onnx::ops;

type Shape = Option<Dims>;

/// One result of `dims` and `elem`.
fn one(d: Shape, elem: Type) -> Inferred {
    Ok(Some(vec![dims::to_type(d, elem)]))
}

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
    one(cx.dims(1)?, cx.elem(0)?)
}

pub(super) fn shape(cx: &Ctx<'_>) -> Inferred {
    let n = shape_len(cx)?;
    one(
        Some(vec![(n != DYN).then(|| ir::dim::DimExpr::constant(n))]),
        Type::i64(),
    )
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
    let n = range_len(cx)?;
    let len = match n {
        DYN => symbolic_range_len(cx),
        n => Some(ir::dim::DimExpr::constant(n)),
    };
    one(Some(vec![len]), cx.elem(0)?)
}

/// `Range(0, limit, 1)` over a size read from a shape (`Shape(x)[1]`,
/// the positions of a sequence): `limit` elements, that symbol. Exporters
/// build position ids so; with the length unnamed, adding them to the
/// sequence broadcast to an unknown dim.
fn symbolic_range_len(cx: &Ctx<'_>) -> Dim {
    if cx.const_int(0) != Some(0) || cx.const_int(2) != Some(1) {
        return None;
    }
    match shape_value(cx, 1)?.as_slice() {
        // A plain symbol is a size, so not negative.
        [Some(limit)] if limit.as_sym().is_some() => Some(limit.clone()),
        _ => None,
    }
}

/// The sizes a shape-like operand holds (what is known of them), checked
/// to hold no negative constant.
fn shape_from_operand(cx: &Ctx<'_>, i: usize) -> Result<Shape, Diagnostic> {
    if let Some(v) = shape_value(cx, i) {
        if let Some(d) = v.iter().filter_map(dims::value).find(|&d| d < 0) {
            return Err(cx.err(format!("shape operand holds a negative extent {d}")));
        }
        return Ok(Some(v));
    }
    Ok(static_len(cx, i)?.map(|n| vec![None; n]))
}

/// What operand `i` holds as sizes, where the shape arithmetic that
/// computes it is known (`onnx::shape_value`).
pub(super) fn shape_value(cx: &Ctx<'_>, i: usize) -> Option<Dims> {
    let v = cx.operand(i)?;
    onnx::shape_value::ShapeValues::new().get(cx.m, v)
}

/// Static length of a 1-D operand.
fn static_len(cx: &Ctx<'_>, i: usize) -> Result<Option<usize>, Diagnostic> {
    Ok(match cx.shape(i)?.as_deref() {
        Some(&[n]) if n != DYN => usize::try_from(n).ok(),
        _ => None,
    })
}

fn reshape_shape(cx: &Ctx<'_>, allowzero: bool) -> Result<Shape, Diagnostic> {
    let data = cx.dims(0)?;
    let Some(target) = shape_value(cx, 1) else {
        return Ok(static_len(cx, 1)?.map(|n| vec![None; n]));
    };
    let mut out: Dims = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, t) in target.iter().enumerate() {
        out.push(match dims::value(t) {
            Some(-1) if infer_at.is_some() => return Err(cx.err("shape has more than one -1")),
            Some(-1) => {
                infer_at = Some(i);
                None
            }
            Some(0) if !allowzero => match &data {
                Some(d) => d.get(i).cloned().ok_or_else(|| {
                    cx.err(format!(
                        "shape entry {i} copies a dim the input does not have"
                    ))
                })?,
                None => None,
            },
            Some(v) if v < 0 => return Err(cx.err(format!("invalid shape entry {v}"))),
            // A known size, or nothing known (then fresh).
            _ => t.clone(),
        });
    }
    let zero = target.iter().any(|t| dims::value(t) == Some(0));
    if allowzero && infer_at.is_some() && zero {
        return Err(cx.err("shape with allowzero may not hold both 0 and -1"));
    }
    let total = data.as_deref().and_then(dims::product);
    let total = total.filter(|_| data.as_ref().is_some_and(|d| d.iter().all(Option::is_some)));
    match infer_at {
        Some(i) => {
            let rest: Dims = out
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i)
                .map(|(_, d)| d.clone())
                .collect();
            let known = dims::product(&rest);
            if let (Some(t), Some(k)) = (dims::value(&total), dims::value(&known)) {
                if k == 0 || t % k != 0 {
                    return Err(cx.err(format!(
                        "cannot reshape {t} elements into {}",
                        super::ctx::show(&target)
                    )));
                }
            }
            out[i] = dims::exact_div(&total, &known);
        }
        None => {
            let n = dims::product(&out);
            if let (Some(t), Some(n)) = (dims::value(&total), dims::value(&n)) {
                if n != t {
                    return Err(cx.err(format!(
                        "cannot reshape {t} elements into {}",
                        super::ctx::show(&out)
                    )));
                }
            }
        }
    }
    Ok(Some(out))
}

/// Flatten's axis may also be the rank (everything outer).
fn flatten_shape(cx: &Ctx<'_>, axis: i64) -> Result<Dims, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(vec![None, None]);
    };
    let r = s.len();
    let a = match onnx::axis::normalize(axis, r) {
        Some(a) => a,
        None if i64::try_from(r).is_ok_and(|r| r == axis) => r,
        None => return Err(cx.err(format!("axis {axis} is out of range for rank {r}"))),
    };
    let (outer, inner) = s.split_at(a);
    Ok(vec![dims::product(outer), dims::product(inner)])
}

fn transpose_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
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
                out.push(s[p].clone());
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
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    if cx.operand(1).is_some() && cx.const_ints(1).is_none() {
        // Runtime axes: only their count is known.
        return Ok(cx
            .static_len(1)
            .and_then(|k| s.len().checked_sub(k))
            .map(|r| vec![None; r]));
    }
    let Ok(axes) = axes_of(cx, 1) else {
        return Ok(None);
    };
    let Some(axes) = axes else {
        // Without axes every 1 goes, so an unknown dim leaves the rank unknown.
        if s.iter().any(|d| dims::value(d).is_none()) {
            return Ok(None);
        }
        return Ok(Some(
            s.into_iter()
                .filter(|d| dims::value(d) != Some(1))
                .collect(),
        ));
    };
    let axes = norm_axes(cx, &axes, s.len())?;
    for &a in &axes {
        match dims::value(&s[a]) {
            Some(1) => {}
            Some(v) => return Err(cx.err(format!("cannot squeeze axis {a} of extent {v}"))),
            // A dynamic dim squeezed must be 1; that is checked where it
            // runs, not assumed here (in an If branch never taken it need
            // not hold).
            None => {}
        }
    }
    Ok(Some(
        s.into_iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, d)| d)
            .collect(),
    ))
}

fn unsqueeze_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
        return Ok(None);
    };
    let axes = match axes_of(cx, 1) {
        Ok(Some(a)) => a,
        Ok(None) => return Err(cx.err("requires axes")),
        Err(()) => return Ok(static_len(cx, 1)?.map(|n| vec![None; s.len() + n])),
    };
    let rank = s.len() + axes.len();
    let axes = norm_axes(cx, &axes, rank)?;
    let mut src = s.into_iter();
    Ok(Some(
        (0..rank)
            .map(|i| {
                if axes.contains(&i) {
                    dims::c(1)
                } else {
                    src.next().flatten()
                }
            })
            .collect(),
    ))
}

fn concat_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let axis = ops::Concat::of(cx.m, cx.op).axis();
    let shapes = (0..cx.num_operands())
        .map(|i| cx.dims(i))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(rank) = shapes.iter().flatten().map(Vec::len).next() else {
        return Ok(None);
    };
    let a = cx.axis(axis, rank)?;
    let mut out: Dims = vec![None; rank];
    let mut sum = dims::c(0);
    for (k, s) in shapes.into_iter().enumerate() {
        let s = s.unwrap_or_else(|| vec![None; rank]);
        if s.len() != rank {
            return Err(cx.err(format!("operands have ranks {rank} and {}", s.len())));
        }
        for (i, d) in s.into_iter().enumerate() {
            if i == a {
                sum = dims::add(&sum, &d);
            } else if k == 0 {
                out[i] = d;
            } else {
                out[i] = cx
                    .equal(&out[i], &d, "concatenated dim")
                    .map_err(|e| cx.err(format!("operands differ on axis {i}: {}", e.message)))?;
            }
        }
    }
    out[a] = sum;
    Ok(Some(out))
}

fn gather_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let (Some(data), Some(indices)) = (cx.dims(0)?, cx.dims(1)?) else {
        return Ok(None);
    };
    let a = cx.axis(ops::Gather::of(cx.m, cx.op).axis(), data.len())?;
    let mut out = data[..a].to_vec();
    out.extend(indices);
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

/// The extent of a symbolic dim sliced with constant parameters: exact
/// when the dim is static; for a symbolic one, the common forms whose
/// extent does not depend on clamping (`[s:]` with `0 <= s`, `[-k:]`, `[:]`,
/// step 1), else unknown.
fn slice_dim(d: &Dim, start: i64, end: i64, step: i64) -> Dim {
    if let Some(v) = dims::value(d) {
        return dims::c(slice_extent(v, start, end, step));
    }
    // "To the end": an end past any real size.
    let to_end = end >= i64::from(i32::MAX);
    match (step, to_end) {
        (1, true) if start >= 0 => dims::add_const(d, -start),
        (1, true) if start < 0 => None,
        _ => None,
    }
}

fn slice_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(s) = cx.dims(0)? else {
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
        return Ok(Some(vec![None; s.len()]));
    };
    let axes_n: Vec<usize> = axes
        .iter()
        .map(|&a| cx.axis(a, s.len()))
        .collect::<Result<_, _>>()?;
    let (Some(starts), Some(ends), Some(steps)) = (starts, ends, steps) else {
        for &a in &axes_n {
            out[a] = None;
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
        out[a] = slice_dim(&s[a], starts[k], ends[k], steps[k]);
    }
    Ok(Some(out))
}

fn expand_shape(cx: &Ctx<'_>) -> Result<Shape, Diagnostic> {
    let Some(input) = cx.dims(0)? else {
        return Ok(None);
    };
    if let Some(target) = shape_value(cx, 1) {
        if let Some(d) = target.iter().filter_map(dims::value).find(|&d| d < 0) {
            return Err(cx.err(format!("shape operand holds a negative extent {d}")));
        }
        return cx.broadcast_pair(&input, &target).map(Some);
    }
    let Some(n) = static_len(cx, 1)? else {
        return Ok(None);
    };
    // A target of unknown extents: a static input extent other than 1
    // survives; a symbolic one may be 1 at run time, so it broadcasts.
    cx.broadcast_pair(&input, &vec![None; n]).map(Some)
}

fn range_len(cx: &Ctx<'_>) -> Result<i64, Diagnostic> {
    let is_float = cx
        .const_elements(0)
        .is_some_and(|e| e.dtype().class() == NumClass::Float);
    if !is_float {
        let (Some(start), Some(limit), Some(delta)) =
            (cx.const_int(0), cx.const_int(1), cx.const_int(2))
        else {
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
