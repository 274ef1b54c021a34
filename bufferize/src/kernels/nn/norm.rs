//! Normalizations: BatchNormalization (inference), InstanceNormalization,
//! LayerNormalization, GroupNormalization, RMSNormalization,
//! MeanVarianceNormalization, LpNormalization, LRN.
//!
//! The statistics ones share one nest: an outer loop over the kept dims,
//! the mean and variance over the normalized dims, then a pass writing
//! each element from its normalized value.

use crate::convert::{dims, Lowering};
use crate::kernels::support::scalar;
use crate::kernels::{support::alloc_result, support::elem_of, support::shape_of};
use crate::loops::{loop_nest, loop_nest_by_work, reduce_nest, Bounds, PARALLEL_MIN_WORK};
use ir::builder::{CmpF, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// Which statistic the normalized value divides by.
#[derive(Clone, Copy, PartialEq)]
enum Scale {
    /// `(x - mean) / sqrt(var + eps)`.
    Std,
    /// `x / sqrt(mean(x²) + eps)` (RMS).
    Rms,
    /// `(x - mean) / (sqrt(var) + eps)` (MeanVarianceNormalization).
    StdPlusEps,
}

/// Receives (outer position, mean, 1/std) once per group.
type StatsFn<'a> = &'a mut dyn FnMut(&mut Builder<'_>, &[ValueId], ValueId, ValueId);

/// Per outer position: `stats(outer_ivs, mean, inv)` once, then
/// `write(idx, normalized)` for every element of the group.
/// With `lanes` (0: scalar) and `reduced` the trailing dims, the group is
/// contiguous and its two sums go a vector at a time over a flat view
/// (`vector_sum`): a scalar sum carried from element to element is not
/// vectorized by LLVM.
#[allow(clippy::too_many_arguments)]
fn normalize(
    b: &mut Builder<'_>,
    (x, lanes): (ValueId, i64),
    reduced: &[usize],
    eps: f64,
    kind: Scale,
    stats: StatsFn<'_>,
    write: &mut dyn FnMut(&mut Builder<'_>, &[ValueId], ValueId),
) {
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let outer: Vec<ValueId> = (0..dx.len())
        .map(|d| {
            if reduced.contains(&d) {
                bounds.one
            } else {
                dx[d]
            }
        })
        .collect();
    let inner: Vec<ValueId> = reduced.iter().map(|&d| dx[d]).collect();
    let elem = elem_of(b.m, x);
    let trailing = lanes > 0
        && reduced
            .iter()
            .copied()
            .eq(dx.len() - reduced.len()..dx.len());
    let flat = trailing.then(|| {
        let xc = crate::convert::contiguous(b, x);
        let total = crate::kernels::support::index::product(b, &dx);
        let strides: Vec<ValueId> = (0..dx.len())
            .map(|d| crate::kernels::support::index::product(b, &dx[d + 1..]))
            .collect();
        (crate::kernels::linalg::gemm::flat(b, xc, total), strides)
    });
    let merge = |o: &[ValueId], i: &[ValueId]| -> Vec<ValueId> {
        let mut idx = o.to_vec();
        for (&d, &v) in reduced.iter().zip(i) {
            idx[d] = v;
        }
        idx
    };
    loop_nest_by_work(b, &bounds, &outer, &dx, PARALLEL_MIN_WORK, &mut |b, ovs| {
        let mut n = bounds.one;
        for &d in &inner {
            n = b.muli(n, d);
        }
        let ni = b.index_cast(n, Type::i64());
        let nf = b.sitofp(ni, elem.clone());
        let zero = b.constant(&elem, 0.0);
        let row = flat.as_ref().map(|(xf, strides)| {
            let mut start = bounds.zero;
            for (&i, &st) in ovs.iter().zip(strides) {
                let t = b.muli(i, st);
                start = b.addi(start, t);
            }
            (*xf, start, n)
        });
        let mean = if kind == Scale::Rms {
            zero
        } else {
            let s = match row {
                Some(r) => vector_sum(b, r, lanes, &|_, v| v),
                None => reduce_nest(b, &bounds, &inner, zero, &mut |b, ivs, acc| {
                    let v = b.load(x, &merge(ovs, ivs));
                    b.add(acc, v)
                }),
            };
            b.div(s, nf)
        };
        let squared = |b: &mut Builder<'_>, v: ValueId| {
            let m = match b.m.value_type(v).as_vector() {
                Some(_) => b.broadcast(mean, lanes),
                None => mean,
            };
            let d = b.sub(v, m);
            b.mul(d, d)
        };
        let sq = match row {
            Some(r) => vector_sum(b, r, lanes, &squared),
            None => reduce_nest(b, &bounds, &inner, zero, &mut |b, ivs, acc| {
                let v = b.load(x, &merge(ovs, ivs));
                let d2 = squared(b, v);
                b.add(acc, d2)
            }),
        };
        let var = b.div(sq, nf);
        let e = b.constant(&elem, eps);
        let one = b.constant(&elem, 1.0);
        let den = match kind {
            Scale::StdPlusEps => {
                let s = b.sqrt(var);
                b.add(s, e)
            }
            _ => {
                let ve = b.add(var, e);
                b.sqrt(ve)
            }
        };
        let inv = b.div(one, den);
        stats(b, ovs, mean, inv);
        loop_nest(b, &bounds, &inner, &mut |b, ivs| {
            let idx = merge(ovs, ivs);
            let v = b.load(x, &idx);
            let d = b.sub(v, mean);
            let r = b.mul(d, inv);
            write(b, &idx, r);
        });
    });
}

/// `Σ f(x[start + i])` for `i < n`, `lanes` at a time; the idle lanes of
/// the last partial vector add 0.
fn vector_sum(
    b: &mut Builder<'_>,
    row: (ValueId, ValueId, ValueId),
    lanes: i64,
    f: &dyn Fn(&mut Builder<'_>, ValueId) -> ValueId,
) -> ValueId {
    let z = b.zero(&elem_of(b.m, row.0));
    let add = |b: &mut Builder<'_>, acc, y| b.add(acc, y);
    crate::kernels::support::vector_fold(b, row, (lanes, z), f, &add, ir::builder::Reduce::Add)
}

fn float_input(cx: &Lowering, b: &Builder<'_>, op: OpId) -> Result<ValueId> {
    let x = cx.input(b.m, op, 0)?;
    if !elem_of(b.m, x).is_float() {
        return Err(op_error(b.m, op, "expects a floating-point input"));
    }
    Ok(x)
}

/// `v * scale[i] + bias[i]` with scale/bias indexed by `sel` of `idx`.
fn affine(
    b: &mut Builder<'_>,
    v: ValueId,
    scale: Option<ValueId>,
    bias: Option<ValueId>,
    sidx: &[ValueId],
) -> ValueId {
    let mut r = v;
    if let Some(s) = scale {
        let sv = b.load(s, sidx);
        r = b.mul(r, sv);
    }
    if let Some(bb) = bias {
        let bv = b.load(bb, sidx);
        r = b.add(r, bv);
    }
    r
}

/// Index into a parameter of shape `pshape` broadcast against `idx`
/// (trailing alignment, size-1 dims pinned to 0).
fn bcast_index(b: &mut Builder<'_>, p: ValueId, idx: &[ValueId], zero: ValueId) -> Vec<ValueId> {
    let ps = shape_of(b.m, p);
    let off = idx.len().saturating_sub(ps.len());
    ps.iter()
        .enumerate()
        .map(|(k, &d)| if d == 1 { zero } else { idx[k + off] })
        .collect()
}

pub fn batch_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let extra = b.m.results(op).get(1..).unwrap_or(&[]);
    let used_extra = extra.iter().any(|&r| b.m.has_uses(r));
    if used_extra || ops::BatchNormalization::of(b.m, op).training_mode() != 0 {
        return batch_norm_training(cx, b, op, x);
    }
    let [s, bias, mean, var] = [
        ops::BatchNormalization::SCALE,
        ops::BatchNormalization::B,
        ops::BatchNormalization::INPUT_MEAN,
        ops::BatchNormalization::INPUT_VAR,
    ]
    .map(|i| cx.input(b.m, op, i));
    let (s, bias, mean, var) = (s?, bias?, mean?, var?);
    let eps = ops::BatchNormalization::of(b.m, op).epsilon();
    let dx = dims(b, x);
    if let Some(&ch) = dx.get(1) {
        let ps = [(1, s), (2, bias), (3, mean), (4, var)];
        crate::kernels::support::checks::per_channel(b, op, &ps, ch)?;
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let c = [ivs.get(1).copied().unwrap_or(bounds.zero)];
        let v = b.load(x, ivs);
        let m = b.load(mean, &c);
        let va = b.load(var, &c);
        let e = b.constant(&elem, eps);
        let ve = b.add(va, e);
        let sd = b.sqrt(ve);
        let d = b.sub(v, m);
        let n = b.div(d, sd);
        let r = affine(b, n, Some(s), Some(bias), &c);
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// Training-mode BatchNormalization: normalizes with the batch statistics
/// (mean and population variance per channel, summed in f64) and returns
/// the running statistics blended by `momentum`.
fn batch_norm_training(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
) -> Result<Vec<ValueId>> {
    let [s, bias, mean, var] = [
        ops::BatchNormalization::SCALE,
        ops::BatchNormalization::B,
        ops::BatchNormalization::INPUT_MEAN,
        ops::BatchNormalization::INPUT_VAR,
    ]
    .map(|i| cx.input(b.m, op, i));
    let (s, bias, mean, var) = (s?, bias?, mean?, var?);
    let view = ops::BatchNormalization::of(b.m, op);
    let (eps, momentum) = (view.epsilon(), view.momentum());
    let dx = dims(b, x);
    if dx.len() < 2 {
        return Err(op_error(b.m, op, "expects an input of rank >= 2"));
    }
    let elem = elem_of(b.m, x);
    let f64t = Type::f64();
    let bounds = Bounds::new(b);
    let c_dim = [dx[1]];
    // Every dim but the channel.
    let others: Vec<ValueId> = dx
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 1)
        .map(|(_, &d)| d)
        .collect();
    let at = |c: ValueId, o: &[ValueId]| -> Vec<ValueId> {
        let mut idx = vec![o[0], c];
        idx.extend_from_slice(&o[1..]);
        idx
    };
    let mut count = bounds.one;
    for &d in &others {
        count = b.muli(count, d);
    }
    let cnt = b.index_cast(count, Type::i64());
    let cnt = b.sitofp(cnt, f64t.clone());
    let stat_ty = Type::memref(vec![ir::DYN], elem.clone());
    let (bm, bv) = (
        crate::convert::alloc(b, &stat_ty, &c_dim),
        crate::convert::alloc(b, &stat_ty, &c_dim),
    );
    let mut err = None;
    loop_nest(b, &bounds, &c_dim, &mut |b, c| {
        let z = b.constant(&f64t, 0.0);
        let sum = reduce_nest(b, &bounds, &others, z, &mut |b, o, acc| {
            let v = b.load(x, &at(c[0], o));
            let v = scalar::fcast(b, v, &f64t);
            b.add(acc, v)
        });
        let m = b.div(sum, cnt);
        let sq = reduce_nest(b, &bounds, &others, z, &mut |b, o, acc| {
            let v = b.load(x, &at(c[0], o));
            let v = scalar::fcast(b, v, &f64t);
            let d = b.sub(v, m);
            let d2 = b.mul(d, d);
            b.add(acc, d2)
        });
        let va = b.div(sq, cnt);
        match (
            scalar::convert(b, op, m, &elem),
            scalar::convert(b, op, va, &elem),
        ) {
            (Ok(m), Ok(va)) => {
                b.store(m, bm, c);
                b.store(va, bv, c);
            }
            (Err(e), _) | (_, Err(e)) => err = Some(e),
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let out = alloc_result(b, op, 0, &dx)?;
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let c = [ivs[1]];
        let v = b.load(x, ivs);
        let (m, va) = (b.load(bm, &c), b.load(bv, &c));
        let e = b.constant(&elem, eps);
        let ve = b.add(va, e);
        let sd = b.sqrt(ve);
        let d = b.sub(v, m);
        let sv = b.load(s, &c);
        let n = b.mul(sv, d);
        let n = b.div(n, sd);
        let bb = b.load(bias, &c);
        let r = b.add(n, bb);
        b.store(r, out, ivs);
    });
    let mut results = vec![out];
    // Running statistics: input · momentum + batch · (1 - momentum).
    for (k, (input, batch)) in [(mean, bm), (var, bv)].into_iter().enumerate() {
        if b.m.results(op).len() <= k + 1 {
            break;
        }
        let r = alloc_result(b, op, k + 1, &c_dim)?;
        loop_nest(b, &bounds, &c_dim, &mut |b, c| {
            let (i, t) = (b.load(input, c), b.load(batch, c));
            let mo = b.constant(&elem, momentum);
            let rest = b.constant(&elem, 1.0 - momentum);
            let a = b.mul(i, mo);
            let t = b.mul(t, rest);
            let v = b.add(a, t);
            b.store(v, r, c);
        });
        results.push(r);
    }
    Ok(results)
}

pub fn instance_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let (s, bias) = (
        cx.input(b.m, op, ops::InstanceNormalization::SCALE)?,
        cx.input(b.m, op, ops::InstanceNormalization::B)?,
    );
    let eps = ops::InstanceNormalization::of(b.m, op).epsilon();
    let dx = dims(b, x);
    if let Some(&ch) = dx.get(1) {
        crate::kernels::support::checks::per_channel(b, op, &[(1, s), (2, bias)], ch)?;
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let reduced: Vec<usize> = (2..dx.len()).collect();
    let lanes = crate::kernels::support::vector_lanes(&elem_of(b.m, x), cx.vector_bits);
    normalize(
        b,
        (x, lanes),
        &reduced,
        eps,
        Scale::Std,
        &mut |_, _, _, _| {},
        &mut |b, idx, v| {
            let r = affine(b, v, Some(s), Some(bias), &idx[1..2]);
            b.store(r, out, idx);
        },
    );
    Ok(vec![out])
}

pub fn layer_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let view = ops::LayerNormalization::of(b.m, op);
    let (axis, eps) = (view.axis(), view.epsilon());
    trailing_norm(cx, b, op, (axis, eps), Scale::Std)
}

pub fn rms_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let view = ops::RMSNormalization::of(b.m, op);
    let (axis, eps) = (view.axis(), view.epsilon());
    trailing_norm(cx, b, op, (axis, eps), Scale::Rms)
}

/// LayerNormalization (`Std`, with an optional bias) and RMSNormalization
/// (`Rms`, no bias) over the dims from `axis` on, with the optional mean
/// and inverse deviation results.
fn trailing_norm(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    (axis, eps): (i64, f64),
    scale_kind: Scale,
) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let rank = shape_of(b.m, x).len();
    let axis = crate::kernels::support::axis(b.m, op, axis, rank)?;
    // scale of LayerNormalization and RMSNormalization
    let s = cx.input(b.m, op, ops::LayerNormalization::SCALE)?;
    let bias = (scale_kind == Scale::Std && cx.has_input(b.m, op, 2))
        .then(|| cx.input(b.m, op, 2))
        .transpose()?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let nres = b.m.results(op).len();
    let bounds = Bounds::new(b);
    let stat_dims: Vec<ValueId> = (0..rank)
        .map(|d| if d < axis { dx[d] } else { bounds.one })
        .collect();
    let mut extra = Vec::new();
    for i in 1..nres {
        extra.push(alloc_result(b, op, i, &stat_dims)?);
    }
    let reduced: Vec<usize> = (axis..rank).collect();
    let zero = bounds.zero;
    let lanes = crate::kernels::support::vector_lanes(&elem_of(b.m, x), cx.vector_bits);
    normalize(
        b,
        (x, lanes),
        &reduced,
        eps,
        scale_kind,
        &mut |b, ovs, mean, inv| {
            if let Some(&m) = extra.first() {
                b.store(mean, m, ovs);
            }
            if let Some(&i) = extra.get(1) {
                b.store(inv, i, ovs);
            }
        },
        &mut |b, idx, v| {
            let si = bcast_index(b, s, idx, zero);
            let sv = b.load(s, &si);
            let mut r = b.mul(v, sv);
            if let Some(bb) = bias {
                let bi = bcast_index(b, bb, idx, zero);
                let bv = b.load(bb, &bi);
                r = b.add(r, bv);
            }
            b.store(r, out, idx);
        },
    );
    let mut res = vec![out];
    res.extend(extra);
    Ok(res)
}

pub fn group_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let (s, bias) = (
        cx.input(b.m, op, ops::GroupNormalization::SCALE)?,
        cx.input(b.m, op, ops::GroupNormalization::BIAS)?,
    );
    let view = ops::GroupNormalization::of(b.m, op);
    let (eps, groups) = (view.epsilon(), view.num_groups());
    let xs = shape_of(b.m, x);
    if xs.len() < 2 || groups < 1 || (xs[1] != DYN && xs[1] % groups != 0) {
        return Err(op_error(
            b.m,
            op,
            "needs num_groups dividing the channel count",
        ));
    }
    // View x as [N, G, C/G, spatial...] and normalize over dims 2.. of it.
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let g = b.const_index(groups);
    let msg = "num_groups does not divide the channel count";
    crate::kernels::support::checks::divides(b, op, dx[1], g, msg)?;
    let pc = b.divui(dx[1], g);
    let per = if xs[1] == DYN { DYN } else { xs[1] / groups };
    let mut vshape: Vec<i64> = vec![xs[0], groups, per];
    vshape.extend_from_slice(&xs[2..]);
    let mut vsizes = vec![dx[0], g, pc];
    vsizes.extend_from_slice(&dx[2..]);
    let elem = elem_of(b.m, x);
    let vty = Type::memref(vshape.clone(), elem);
    let xv = crate::kernels::support::views::reinterpret(b, x, &vty, &vshape, &vsizes);
    let reduced: Vec<usize> = (2..vshape.len()).collect();
    let by_channel = group_params(b, op, (s, bias), dx[1], g)?;
    let lanes = crate::kernels::support::vector_lanes(&elem_of(b.m, xv), cx.vector_bits);
    normalize(
        b,
        (xv, lanes),
        &reduced,
        eps,
        Scale::Std,
        &mut |_, _, _, _| {},
        &mut |b, idx, v| {
            // Channel = group * per + k.
            let base = b.muli(idx[1], pc);
            let c = b.addi(base, idx[2]);
            let p = match by_channel {
                Ok(true) => c,
                Ok(false) => idx[1],
                Err(flag) => b.select(flag, c, idx[1]),
            };
            let r = affine(b, v, Some(s), Some(bias), &[p]);
            let mut oi = vec![idx[0], c];
            oi.extend_from_slice(&idx[3..]);
            b.store(r, out, &oi);
        },
    );
    Ok(vec![out])
}

/// Whether GroupNormalization's scale and bias hold one entry per channel
/// (opset 21) rather than per group (opset 18): known now, or a flag
/// computed at run time. Their lengths are checked to be one or the other.
fn group_params(
    b: &mut Builder<'_>,
    op: OpId,
    (s, bias): (ValueId, ValueId),
    c: ValueId,
    g: ValueId,
) -> Result<std::result::Result<bool, ValueId>> {
    let (ds, db) = (dims(b, s), dims(b, bias));
    let ([n], [nb]) = (ds.as_slice(), db.as_slice()) else {
        return Err(op_error(b.m, op, "scale and bias must be 1-D"));
    };
    let msg = "bias length differs from the scale's";
    crate::kernels::support::checks::equal(b, op, *nb, *n, msg)?;
    let msg = "scale length is neither the channel count nor num_groups";
    let value = |v| crate::kernels::support::checks::static_value(b.m, v);
    if let (Some(n), Some(c), Some(g)) = (value(*n), value(c), value(g)) {
        return match (n == c, n == g) {
            (false, false) => Err(op_error(b.m, op, msg)),
            (by_channel, _) => Ok(Ok(by_channel)),
        };
    }
    let by_channel = b.cmpi(CmpI::Eq, *n, c);
    let by_group = b.cmpi(CmpI::Eq, *n, g);
    let ok = b.ori(by_channel, by_group);
    crate::kernels::support::checks::assert(b, op, ok, msg);
    Ok(Err(by_channel))
}

pub fn mvn(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let rank = shape_of(b.m, x).len();
    let axes = ops::MeanVarianceNormalization::of(b.m, op).axes();
    let reduced: Vec<usize> = axes
        .iter()
        .map(|&a| crate::kernels::support::axis(b.m, op, a, rank))
        .collect::<Result<_>>()?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let lanes = crate::kernels::support::vector_lanes(&elem_of(b.m, x), cx.vector_bits);
    normalize(
        b,
        (x, lanes),
        &reduced,
        1e-9,
        Scale::StdPlusEps,
        &mut |_, _, _, _| {},
        &mut |b, idx, v| {
            b.store(v, out, idx);
        },
    );
    Ok(vec![out])
}

pub fn lp_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let rank = shape_of(b.m, x).len();
    let view = ops::LpNormalization::of(b.m, op);
    let axis = crate::kernels::support::axis(b.m, op, view.axis(), rank)?;
    let p = view.p();
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let mut outer = dx.clone();
    outer[axis] = bounds.one;
    let elem = elem_of(b.m, x);
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        let zero = b.constant(&elem, 0.0);
        let at = |i: ValueId| {
            let mut idx = ovs.to_vec();
            idx[axis] = i;
            idx
        };
        let s = reduce_nest(b, &bounds, &[dx[axis]], zero, &mut |b, iv, acc| {
            let v = b.load(x, &at(iv[0]));
            let t = if p == 1 { b.absf(v) } else { b.mul(v, v) };
            b.add(acc, t)
        });
        let norm = if p == 1 { s } else { b.sqrt(s) };
        let is0 = b.cmpf(CmpF::Oeq, norm, zero);
        loop_nest(b, &bounds, &[dx[axis]], &mut |b, iv| {
            let idx = at(iv[0]);
            let v = b.load(x, &idx);
            let q = b.div(v, norm);
            let r = b.select(is0, zero, q);
            b.store(r, out, &idx);
        });
    });
    Ok(vec![out])
}

pub fn lrn(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let view = ops::LRN::of(b.m, op);
    let (size, alpha, beta, bias) = (view.size(), view.alpha(), view.beta(), view.bias());
    let dx = dims(b, x);
    if dx.len() < 2 || size < 1 {
        return Err(op_error(b.m, op, "expects rank >= 2 and size >= 1"));
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let lo = (size - 1) / 2;
    let win = b.const_index(size);
    let lo_v = b.const_index(lo);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let zero = b.constant(&elem, 0.0);
        let start = b.subi(ivs[1], lo_v);
        let sum = reduce_nest(b, &bounds, &[win], zero, &mut |b, k, acc| {
            let c = b.addi(start, k[0]);
            let ge = b.cmpi(CmpI::Sge, c, bounds.zero);
            let lt = b.cmpi(CmpI::Slt, c, dx[1]);
            let inside = b.andi(ge, lt);
            let safe = b.select(inside, c, bounds.zero);
            let mut idx = ivs.to_vec();
            idx[1] = safe;
            let v = b.load(x, &idx);
            let sq = b.mul(v, v);
            let s = b.add(acc, sq);
            b.select(inside, s, acc)
        });
        let k = b.constant(&elem, alpha / size as f64);
        let bi = b.constant(&elem, bias);
        let be = b.constant(&elem, beta);
        let t = b.mul(k, sum);
        let base = b.add(bi, t);
        let den = b.powf(base, be);
        let v = b.load(x, ivs);
        let r = b.div(v, den);
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}
