//! Constants, identities, reshapes as views, and Transpose as a copy nest.

use crate::convert::{dims, Lowering};
use crate::kernels::support::checks;
use crate::kernels::support::views::{merged_dims, merged_view, reinterpret, transpose_perm};
use crate::kernels::{support::alloc_result, support::constant_ints, support::shape_of};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, ValueId, DYN};
use onnx::ops;

pub fn constant(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let Some(e) = ops::Constant::of(b.m, op).value().cloned() else {
        return Err(op_error(b.m, op, "requires a dense 'value' attribute"));
    };
    Ok(vec![cx.global(b, &e)])
}

/// Identity and Dropout that drops nothing (inference, or a ratio of 0):
/// the result is the input buffer. Training with a runtime mode or ratio
/// is checked at run time.
pub fn identity(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let known = |b: &Builder<'_>, i| constant_ints(b.m, op, i).map(|v| v.iter().any(|&t| t != 0));
    // Some(true): certainly drops; None: known at run time.
    let training = match cx.has_input(b.m, op, 2) {
        false => Some(false),
        true => known(b, 2),
    };
    let nonzero_ratio = match cx.has_input(b.m, op, 1) {
        false => Some(true), // the default, 0.5
        true => known(b, 1),
    };
    match (training, nonzero_ratio) {
        (Some(false), _) | (_, Some(false)) => {}
        (Some(true), Some(true)) => {
            return Err(op_error(b.m, op, "training-mode Dropout is not supported"));
        }
        _ => dropout_check(cx, b, op, training, nonzero_ratio)?,
    }
    let x = cx.input(b.m, op, 0)?;
    let mut out = vec![x];
    if b.m.results(op).len() > 1 {
        // The mask keeps everything.
        let dx = dims(b, x);
        let mask = alloc_result(b, op, 1, &dx)?;
        let t = b.const_bool(true);
        let bounds = Bounds::new(b);
        loop_nest(b, &bounds, &dx, &mut |b, ivs| b.store(t, mask, ivs));
        out.push(mask);
    }
    Ok(out)
}

/// Asserts at run time that a Dropout drops nothing: not training, or a
/// ratio of 0 (random drops are not supported).
fn dropout_check(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    training: Option<bool>,
    nonzero_ratio: Option<bool>,
) -> Result<()> {
    let t = match training {
        Some(t) => b.const_bool(t),
        None => {
            let m = cx.input(b.m, op, 2)?;
            b.load(m, &[])
        }
    };
    let r = match nonzero_ratio {
        Some(r) => b.const_bool(r),
        None => {
            let m = cx.input(b.m, op, 1)?;
            let v = b.load(m, &[]);
            let zero = b.constant_like(v, 0.0);
            b.cmpf(ir::builder::CmpF::Une, v, zero)
        }
    };
    let drops = b.andi(t, r);
    let yes = b.const_bool(true);
    let ok = b.xori(drops, yes);
    checks::assert(
        b,
        op,
        ok,
        "training-mode Dropout with a ratio other than 0 is not supported",
    );
    Ok(())
}

fn product(b: &mut Builder<'_>, vals: &[ValueId]) -> ValueId {
    let mut acc = b.const_index(1);
    for &v in vals {
        acc = b.muli(acc, v);
    }
    acc
}

/// The static shape of result 0.
fn result_shape(b: &Builder<'_>, op: OpId) -> Result<Vec<i64>> {
    Ok(crate::kernels::support::result_memref_type(b.m, op, 0)?
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default())
}

/// Flatten, Reshape, Squeeze and Unsqueeze are views: a
/// `memref.reinterpret_cast` of the contiguous input to the new sizes with
/// row-major strides (no copy).
pub fn flatten(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Flatten::INPUT)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    // Accepted range [-r, r]: axis r leaves an inner dim of 1.
    let a = ops::Flatten::of(b.m, op).axis();
    let axis = match usize::try_from(a) {
        Ok(v) if v == rank => rank,
        _ => crate::kernels::support::axis(b.m, op, a, rank)?,
    };
    let outer = product(b, &dx[..axis]);
    let inner = product(b, &dx[axis..]);
    finish_reshape(b, op, x, vec![outer, inner])
}

pub fn reshape(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Reshape::DATA)?;
    let sx = shape_of(b.m, x);
    let dx = dims(b, x);
    let allow_zero = ops::Reshape::of(b.m, op).allowzero() != 0;
    let Some(shape) = constant_ints(b.m, op, ops::Reshape::SHAPE) else {
        let s = cx.input(b.m, op, ops::Reshape::SHAPE)?;
        let rank = result_shape(b, op)?.len();
        let out = runtime_shape(b, s, &dx, allow_zero, rank)?;
        for (j, &d) in out.iter().enumerate() {
            let msg = format!("shape entry {j} is negative");
            checks::non_negative(b, op, d, &msg)?;
        }
        same_count(b, op, &sx, &dx, &out)?;
        return finish_reshape(b, op, x, out);
    };
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &s) in shape.iter().enumerate() {
        match s {
            0 if !allow_zero => match dx.get(i) {
                Some(&d) => out.push(d),
                None => {
                    return Err(op_error(
                        b.m,
                        op,
                        "a 0 in the shape has no input dim to copy",
                    ))
                }
            },
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(dx.first().copied().unwrap_or(b.const_index(1)));
            }
            s if s >= 0 => out.push(b.const_index(s)),
            _ => return Err(op_error(b.m, op, "invalid Reshape shape entry")),
        }
    }
    if let Some(i) = infer {
        let total = product(b, &dx);
        let known: Vec<ValueId> = out
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != i)
            .map(|(_, &v)| v)
            .collect();
        let rest = product(b, &known);
        out[i] = div_or_zero(b, total, rest);
    }
    same_count(b, op, &sx, &dx, &out)?;
    finish_reshape(b, op, x, out)
}

pub fn squeeze(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Squeeze::DATA)?;
    let sx = shape_of(b.m, x);
    let dx = dims(b, x);
    let axes = constant_ints(b.m, op, ops::Squeeze::AXES);
    let out = if axes.is_none() && cx.has_input(b.m, op, ops::Squeeze::AXES) {
        let a = cx.input(b.m, op, ops::Squeeze::AXES)?;
        let out_shape =
            crate::kernels::support::ranked_result(b.m, op, 0, "the length of the axes input")?;
        runtime_squeeze(b, op, a, &dx, &out_shape)?
    } else {
        let drop: Vec<usize> = match axes {
            Some(a) => a
                .iter()
                .map(|&v| crate::kernels::support::axis(b.m, op, v, sx.len()))
                .collect::<Result<_>>()?,
            None => (0..sx.len()).filter(|&i| sx[i] == 1).collect(),
        };
        dx.iter()
            .enumerate()
            .filter(|(i, _)| !drop.contains(i))
            .map(|(_, &d)| d)
            .collect()
    };
    finish_reshape(b, op, x, out)
}

pub fn unsqueeze(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Unsqueeze::DATA)?;
    let dx = dims(b, x);
    let out_rank = result_shape(b, op)?.len();
    let Some(axes) = constant_ints(b.m, op, ops::Unsqueeze::AXES) else {
        let a = cx.input(b.m, op, ops::Unsqueeze::AXES)?;
        let out = runtime_unsqueeze(b, a, &dx, out_rank);
        return finish_reshape(b, op, x, out);
    };
    // Axes count in the result's rank.
    let axes: Vec<usize> = axes
        .iter()
        .map(|&a| crate::kernels::support::axis(b.m, op, a, out_rank))
        .collect::<Result<_>>()?;
    let mut src = dx.iter();
    let mut out = Vec::with_capacity(out_rank);
    for i in 0..out_rank {
        if axes.contains(&i) {
            out.push(b.const_index(1));
        } else {
            match src.next() {
                Some(&d) => out.push(d),
                None => {
                    return Err(op_error(
                        b.m,
                        op,
                        "Unsqueeze axes do not fit the result rank",
                    ))
                }
            }
        }
    }
    finish_reshape(b, op, x, out)
}

/// Squeeze sizes with axes known only at runtime: their count is the
/// rank difference; output dim j is the j-th input dim no axis names.
/// Checks that the named dims are 1 and that no axis repeats.
fn runtime_squeeze(
    b: &mut Builder<'_>,
    op: OpId,
    a: ValueId,
    dx: &[ValueId],
    out_shape: &[i64],
) -> Result<Vec<ValueId>> {
    let (r, q) = (dx.len(), out_shape.len());
    let n = r
        .checked_sub(q)
        .ok_or_else(|| op_error(b.m, op, "the result rank exceeds the input rank"))?;
    let Some(&len) = dims(b, a).first() else {
        return Err(op_error(b.m, op, "axes must be 1-D"));
    };
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let nv = b.const_index(n as i64);
    checks::equal(
        b,
        op,
        len,
        nv,
        "axes has another length than the rank difference",
    )?;
    let rv = b.const_index(r as i64);
    let listed: Vec<ValueId> = (0..n)
        .map(|j| {
            let v = crate::kernels::support::index::index_at(b, a, Some(j as i64));
            crate::kernels::support::index::wrap(b, v, rv, zero)
        })
        .collect();
    let mut out: Vec<ValueId> = out_shape.iter().map(|&d| b.const_index(d.max(1))).collect();
    let mut src = zero;
    let mut ones = b.const_bool(true);
    for (i, &d) in dx.iter().enumerate() {
        let iv = b.const_index(i as i64);
        let mut named = b.const_bool(false);
        for &l in &listed {
            let e = b.cmpi(CmpI::Eq, l, iv);
            named = b.ori(named, e);
        }
        let fals = b.const_bool(false);
        let kept = b.cmpi(CmpI::Eq, named, fals);
        let is1 = b.cmpi(CmpI::Eq, d, one);
        let ok = b.ori(is1, kept);
        ones = b.andi(ones, ok);
        for (j, o) in out.iter_mut().enumerate() {
            if out_shape[j] != DYN {
                continue;
            }
            let jv = b.const_index(j as i64);
            let at = b.cmpi(CmpI::Eq, src, jv);
            let here = b.andi(at, kept);
            *o = b.select(here, d, *o);
        }
        let inc = b.addi(src, one);
        src = b.select(named, src, inc);
    }
    checks::assert(b, op, ones, "an axis names a dim that is not 1");
    let qv = b.const_index(q as i64);
    checks::equal(b, op, src, qv, "axes repeat an axis")?;
    Ok(out)
}

/// Unsqueeze sizes with axes known only at runtime: position `i` is 1 when
/// listed, else the next input dim.
fn runtime_unsqueeze(
    b: &mut Builder<'_>,
    a: ValueId,
    dx: &[ValueId],
    out_rank: usize,
) -> Vec<ValueId> {
    let n = dx.len().abs_diff(out_rank);
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let r = b.const_index(out_rank as i64);
    let listed: Vec<ValueId> = (0..n)
        .map(|j| {
            let v = crate::kernels::support::index::index_at(b, a, Some(j as i64));
            let neg = b.cmpi(CmpI::Slt, v, zero);
            let w = b.addi(v, r);
            b.select(neg, w, v)
        })
        .collect();
    let mut src = zero;
    let mut out = Vec::with_capacity(out_rank);
    for i in 0..out_rank {
        let iv = b.const_index(i as i64);
        let mut is_axis = b.const_bool(false);
        for &l in &listed {
            let e = b.cmpi(CmpI::Eq, l, iv);
            is_axis = b.ori(is_axis, e);
        }
        let mut d = one;
        for (k, &dk) in dx.iter().enumerate() {
            let kv = b.const_index(k as i64);
            let e = b.cmpi(CmpI::Eq, src, kv);
            d = b.select(e, dk, d);
        }
        out.push(b.select(is_axis, one, d));
        let inc = b.addi(src, one);
        src = b.select(is_axis, src, inc);
    }
    out
}

/// Reshape's target shape read at runtime: 0 copies the input dim (unless
/// `allowzero`), -1 is inferred from the element count.
fn runtime_shape(
    b: &mut Builder<'_>,
    s: ValueId,
    dx: &[ValueId],
    allow_zero: bool,
    rank: usize,
) -> Result<Vec<ValueId>> {
    // The length of the shape tensor is the result rank.
    let n = rank as i64;
    if shape_of(b.m, s).len() != 1 {
        return Err(ir::Diagnostic::error("Reshape needs a 1-D shape"));
    }
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let m1 = b.const_index(-1);
    let mut raw = Vec::new();
    let mut vals = Vec::new();
    let mut known = one;
    for i in 0..n {
        let r = crate::kernels::support::index::index_at(b, s, Some(i));
        let v = match dx.get(i as usize) {
            Some(&d) if !allow_zero => {
                let z = b.cmpi(CmpI::Eq, r, zero);
                b.select(z, d, r)
            }
            _ => r,
        };
        let is_m1 = b.cmpi(CmpI::Eq, r, m1);
        let k = b.select(is_m1, one, v);
        known = b.muli(known, k);
        raw.push(is_m1);
        vals.push(v);
    }
    let total = product(b, dx);
    let inferred = div_or_zero(b, total, known);
    Ok(raw
        .iter()
        .zip(vals)
        .map(|(&m, v)| b.select(m, inferred, v))
        .collect())
}

/// `total / known`, 0 when `known` is 0 (a shape with a 0 entry holds no
/// elements, whatever its -1 would be).
fn div_or_zero(b: &mut Builder<'_>, total: ValueId, known: ValueId) -> ValueId {
    let zero = b.const_index(0);
    let one = b.const_index(1);
    let is0 = b.cmpi(CmpI::Eq, known, zero);
    let d = b.select(is0, one, known);
    let q = b.divui(total, d);
    b.select(is0, zero, q)
}

/// Asserts that a Reshape keeps the element count (unless the input and
/// result shapes are static: shape inference checked them).
fn same_count(
    b: &mut Builder<'_>,
    op: OpId,
    sx: &[i64],
    dx: &[ValueId],
    out: &[ValueId],
) -> Result<()> {
    let ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let out_static = ty.shape().is_some_and(|s| !s.contains(&DYN));
    if out_static && !sx.contains(&DYN) {
        return Ok(());
    }
    let (n, m) = (checks::count(b, dx), checks::count(b, out));
    checks::equal(
        b,
        op,
        m,
        n,
        "the new shape's element count differs from the input's",
    )
}

fn finish_reshape(
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
    out_dims: Vec<ValueId>,
) -> Result<Vec<ValueId>> {
    let ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.len() != out_dims.len() {
        return Err(op_error(
            b.m,
            op,
            "computed rank differs from the inferred result type",
        ));
    }
    Ok(vec![reinterpret(b, x, &ty, &shape, &out_dims)])
}

pub fn transpose(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Transpose::DATA)?;
    let rank = shape_of(b.m, x).len();
    let perm = transpose_perm(b.m, op, rank)?;
    let dx = dims(b, x);
    let out_dims: Vec<ValueId> = perm.iter().map(|&p| dx[p]).collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    // Dims that stay neighbours move as one: NHWC -> NCHW is a batch of
    // [HW, C] -> [C, HW] transposes, its inner loop HW long whether or
    // not H and W are known. A strided input is read where it lies.
    let (xv, ov, perm, out_dims) = match crate::convert::is_strided_view(b.m, x) {
        true => (x, out, perm, out_dims),
        false => merge_transpose_dims(b, (x, out), &dx, &perm),
    };
    let bounds = Bounds::new(b);
    let rank = perm.len();
    // A short static input row moved outward (the 3 channels of an NHWC
    // image) is copied whole in each iteration: the loop over the
    // output's rows then reads the input as one interleaved stream that
    // LLVM vectorizes with shuffles, not a gather per element.
    let short_row = perm.iter().position(|&p| p + 1 == rank).and_then(|k| {
        let c = *shape_of(b.m, xv).last()?;
        (k + 1 < rank && (2..=MAX_UNROLLED_ROW).contains(&c)).then_some((k, c))
    });
    let ubs: Vec<ValueId> = match short_row {
        Some((k, _)) => [&out_dims[..k], &out_dims[k + 1..]].concat(),
        None => out_dims,
    };
    loop_nest(b, &bounds, &ubs, &mut |b, ivs| {
        let copy = |b: &mut Builder<'_>, ivs: &[ValueId]| {
            let mut idx = vec![bounds.zero; rank];
            for (k, &p) in perm.iter().enumerate() {
                idx[p] = ivs[k];
            }
            let v = b.load(xv, &idx);
            b.store(v, ov, ivs);
        };
        match short_row {
            Some((k, c)) => {
                for ci in 0..c {
                    let mut at = ivs.to_vec();
                    at.insert(k, b.const_index(ci));
                    copy(b, &at);
                }
            }
            None => copy(b, ivs),
        }
    });
    Ok(vec![out])
}

/// The longest input row a transpose copies whole per iteration.
const MAX_UNROLLED_ROW: i64 = 16;

/// Row-major views of contiguous `x` (dims `dx`) and `out` with the runs
/// of output dims that are consecutive input dims merged, and the
/// permutation and output dims of the views.
fn merge_transpose_dims(
    b: &mut Builder<'_>,
    (x, out): (ValueId, ValueId),
    dx: &[ValueId],
    perm: &[usize],
) -> (ValueId, ValueId, Vec<usize>, Vec<ValueId>) {
    // Runs of input dims, `start..end`, in output order.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &p in perm {
        match runs.last_mut() {
            Some(run) if run.1 == p => run.1 = p + 1,
            _ => runs.push((p, p + 1)),
        }
    }
    if runs.len() == perm.len() {
        let out_dims = perm.iter().map(|&p| dx[p]).collect();
        return (x, out, perm.to_vec(), out_dims);
    }
    let mut by_input: Vec<usize> = (0..runs.len()).collect();
    by_input.sort_by_key(|&r| runs[r].0);
    // Run r is dim `rank_in[r]` of the merged input.
    let mut rank_in = vec![0; runs.len()];
    for (i, &r) in by_input.iter().enumerate() {
        rank_in[r] = i;
    }
    let in_runs: Vec<(usize, usize)> = by_input.iter().map(|&r| runs[r]).collect();
    let sx = shape_of(b.m, x);
    let in_merged = merged_dims(b, (&sx, dx), &in_runs);
    let xv = merged_view(b, x, &in_merged);
    let out_merged = merged_dims(b, (&sx, dx), &runs);
    let ov = merged_view(b, out, &out_merged);
    let out_sizes = out_merged.1;
    (xv, ov, rank_in, out_sizes)
}

/// A fresh copy of operand 0 as result 0 (no-op reductions, Identity-like ops
/// whose result must not alias).
pub fn copy_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    b.copy(x, out);
    Ok(vec![out])
}
