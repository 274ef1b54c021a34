//! Normalizations: BatchNormalization (inference), InstanceNormalization,
//! LayerNormalization, GroupNormalization, RMSNormalization,
//! MeanVarianceNormalization, LpNormalization, LRN.
//!
//! The statistics ones share one nest: an outer loop over the kept dims,
//! the mean and variance over the normalized dims, then a pass writing
//! each element from its normalized value.

use super::reduce::normalize_axis;
use super::scalar::{self, constant};
use super::{alloc_result, attr_float, attr_int, attr_ints, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

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
#[allow(clippy::too_many_arguments)]
fn normalize(
    b: &mut Builder<'_>,
    x: ValueId,
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
    let merge = |o: &[ValueId], i: &[ValueId]| -> Vec<ValueId> {
        let mut idx = o.to_vec();
        for (&d, &v) in reduced.iter().zip(i) {
            idx[d] = v;
        }
        idx
    };
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        let mut n = bounds.one;
        for &d in &inner {
            n = loops::mul(b, n, d);
        }
        let ni = b.op1("arith.index_cast", &[n], Type::i64(), &[]);
        let nf = b.op1("arith.sitofp", &[ni], elem.clone(), &[]);
        let zero = constant(b, &elem, 0.0);
        let mean = if kind == Scale::Rms {
            zero
        } else {
            let s = reduce_nest(b, &bounds, &inner, zero, &mut |b, ivs, acc| {
                let v = load_at(b, x, &merge(ovs, ivs));
                scalar::add(b, acc, v)
            });
            scalar::div(b, s, nf)
        };
        let sq = reduce_nest(b, &bounds, &inner, zero, &mut |b, ivs, acc| {
            let v = load_at(b, x, &merge(ovs, ivs));
            let d = scalar::sub(b, v, mean);
            let d2 = scalar::mul(b, d, d);
            scalar::add(b, acc, d2)
        });
        let var = scalar::div(b, sq, nf);
        let e = constant(b, &elem, eps);
        let one = constant(b, &elem, 1.0);
        let den = match kind {
            Scale::StdPlusEps => {
                let s = b.same("math.sqrt", &[var]);
                scalar::add(b, s, e)
            }
            _ => {
                let ve = scalar::add(b, var, e);
                b.same("math.sqrt", &[ve])
            }
        };
        let inv = scalar::div(b, one, den);
        stats(b, ovs, mean, inv);
        loop_nest(b, &bounds, &inner, &mut |b, ivs| {
            let idx = merge(ovs, ivs);
            let v = load_at(b, x, &idx);
            let d = scalar::sub(b, v, mean);
            let r = scalar::mul(b, d, inv);
            write(b, &idx, r);
        });
    });
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
        let sv = load_at(b, s, sidx);
        r = scalar::mul(b, r, sv);
    }
    if let Some(bb) = bias {
        let bv = load_at(b, bb, sidx);
        r = scalar::add(b, r, bv);
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
    if used_extra || attr_int(b.m, op, "training_mode", 0) != 0 {
        return batch_norm_training(cx, b, op, x);
    }
    let [s, bias, mean, var] = [1, 2, 3, 4].map(|i| cx.input(b.m, op, i));
    let (s, bias, mean, var) = (s?, bias?, mean?, var?);
    let eps = attr_float(b.m, op, "epsilon", 1e-5);
    let dx = dims(b, x);
    if let Some(&ch) = dx.get(1) {
        let ps = [(1, s), (2, bias), (3, mean), (4, var)];
        super::checks::per_channel(b, op, &ps, ch)?;
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        let c = [ivs.get(1).copied().unwrap_or(bounds.zero)];
        let v = load_at(b, x, ivs);
        let m = load_at(b, mean, &c);
        let va = load_at(b, var, &c);
        let e = constant(b, &elem, eps);
        let ve = scalar::add(b, va, e);
        let sd = b.same("math.sqrt", &[ve]);
        let d = scalar::sub(b, v, m);
        let n = scalar::div(b, d, sd);
        let r = affine(b, n, Some(s), Some(bias), &c);
        store_at(b, r, out, ivs);
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
    let [s, bias, mean, var] = [1, 2, 3, 4].map(|i| cx.input(b.m, op, i));
    let (s, bias, mean, var) = (s?, bias?, mean?, var?);
    let eps = attr_float(b.m, op, "epsilon", 1e-5);
    let momentum = attr_float(b.m, op, "momentum", 0.9);
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
        count = loops::mul(b, count, d);
    }
    let cnt = b.op1("arith.index_cast", &[count], Type::i64(), &[]);
    let cnt = b.op1("arith.sitofp", &[cnt], f64t.clone(), &[]);
    let stat_ty = Type::memref(vec![ir::DYN], elem.clone());
    let (bm, bv) = (
        crate::convert::alloc(b, &stat_ty, &c_dim),
        crate::convert::alloc(b, &stat_ty, &c_dim),
    );
    let mut err = None;
    loop_nest(b, &bounds, &c_dim, &mut |b, c| {
        let z = constant(b, &f64t, 0.0);
        let sum = reduce_nest(b, &bounds, &others, z, &mut |b, o, acc| {
            let v = load_at(b, x, &at(c[0], o));
            let v = scalar::fcast(b, v, &f64t);
            scalar::add(b, acc, v)
        });
        let m = scalar::div(b, sum, cnt);
        let sq = reduce_nest(b, &bounds, &others, z, &mut |b, o, acc| {
            let v = load_at(b, x, &at(c[0], o));
            let v = scalar::fcast(b, v, &f64t);
            let d = scalar::sub(b, v, m);
            let d2 = scalar::mul(b, d, d);
            scalar::add(b, acc, d2)
        });
        let va = scalar::div(b, sq, cnt);
        match (
            scalar::convert(b, op, m, &elem),
            scalar::convert(b, op, va, &elem),
        ) {
            (Ok(m), Ok(va)) => {
                store_at(b, m, bm, c);
                store_at(b, va, bv, c);
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
        let v = load_at(b, x, ivs);
        let (m, va) = (load_at(b, bm, &c), load_at(b, bv, &c));
        let e = constant(b, &elem, eps);
        let ve = scalar::add(b, va, e);
        let sd = b.same("math.sqrt", &[ve]);
        let d = scalar::sub(b, v, m);
        let sv = load_at(b, s, &c);
        let n = scalar::mul(b, sv, d);
        let n = scalar::div(b, n, sd);
        let bb = load_at(b, bias, &c);
        let r = scalar::add(b, n, bb);
        store_at(b, r, out, ivs);
    });
    let mut results = vec![out];
    // Running statistics: input · momentum + batch · (1 - momentum).
    for (k, (input, batch)) in [(mean, bm), (var, bv)].into_iter().enumerate() {
        if b.m.results(op).len() <= k + 1 {
            break;
        }
        let r = alloc_result(b, op, k + 1, &c_dim)?;
        loop_nest(b, &bounds, &c_dim, &mut |b, c| {
            let (i, t) = (load_at(b, input, c), load_at(b, batch, c));
            let mo = constant(b, &elem, momentum);
            let rest = constant(b, &elem, 1.0 - momentum);
            let a = scalar::mul(b, i, mo);
            let t = scalar::mul(b, t, rest);
            let v = scalar::add(b, a, t);
            store_at(b, v, r, c);
        });
        results.push(r);
    }
    Ok(results)
}

pub fn instance_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let (s, bias) = (cx.input(b.m, op, 1)?, cx.input(b.m, op, 2)?);
    let eps = attr_float(b.m, op, "epsilon", 1e-5);
    let dx = dims(b, x);
    if let Some(&ch) = dx.get(1) {
        super::checks::per_channel(b, op, &[(1, s), (2, bias)], ch)?;
    }
    let out = alloc_result(b, op, 0, &dx)?;
    let reduced: Vec<usize> = (2..dx.len()).collect();
    normalize(
        b,
        x,
        &reduced,
        eps,
        Scale::Std,
        &mut |_, _, _, _| {},
        &mut |b, idx, v| {
            let r = affine(b, v, Some(s), Some(bias), &idx[1..2]);
            store_at(b, r, out, idx);
        },
    );
    Ok(vec![out])
}

pub fn layer_norm(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    kind: &str,
) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", -1), rank)?;
    let eps = attr_float(b.m, op, "epsilon", 1e-5);
    let s = cx.input(b.m, op, 1)?;
    let bias = (kind == "LayerNormalization" && cx.has_input(b.m, op, 2))
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
    let scale_kind = if kind == "RMSNormalization" {
        Scale::Rms
    } else {
        Scale::Std
    };
    let zero = bounds.zero;
    normalize(
        b,
        x,
        &reduced,
        eps,
        scale_kind,
        &mut |b, ovs, mean, inv| {
            if let Some(&m) = extra.first() {
                store_at(b, mean, m, ovs);
            }
            if let Some(&i) = extra.get(1) {
                store_at(b, inv, i, ovs);
            }
        },
        &mut |b, idx, v| {
            let si = bcast_index(b, s, idx, zero);
            let sv = load_at(b, s, &si);
            let mut r = scalar::mul(b, v, sv);
            if let Some(bb) = bias {
                let bi = bcast_index(b, bb, idx, zero);
                let bv = load_at(b, bb, &bi);
                r = scalar::add(b, r, bv);
            }
            store_at(b, r, out, idx);
        },
    );
    let mut res = vec![out];
    res.extend(extra);
    Ok(res)
}

pub fn group_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let (s, bias) = (cx.input(b.m, op, 1)?, cx.input(b.m, op, 2)?);
    let eps = attr_float(b.m, op, "epsilon", 1e-5);
    let groups = attr_int(b.m, op, "num_groups", 1);
    let xs = shape_of(b.m, x);
    if xs.len() < 2 || xs[1] < 1 || groups < 1 || xs[1] % groups != 0 {
        return Err(op_error(
            b.m,
            op,
            "needs a static channel count divisible by num_groups",
        ));
    }
    let per = xs[1] / groups;
    // View x as [N, G, C/G, spatial...] and normalize over dims 2.. of it.
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let g = b.const_index(groups);
    let pc = b.const_index(per);
    let mut vshape: Vec<i64> = vec![xs[0], groups, per];
    vshape.extend_from_slice(&xs[2..]);
    let mut vsizes = vec![dx[0], g, pc];
    vsizes.extend_from_slice(&dx[2..]);
    let elem = elem_of(b.m, x);
    let vty = Type::memref(vshape.clone(), elem);
    let xv = super::shape::reinterpret(b, x, &vty, &vshape, &vsizes);
    let reduced: Vec<usize> = (2..vshape.len()).collect();
    normalize(
        b,
        xv,
        &reduced,
        eps,
        Scale::Std,
        &mut |_, _, _, _| {},
        &mut |b, idx, v| {
            // Channel = group * per + k.
            let base = loops::mul(b, idx[1], pc);
            let c = loops::add(b, base, idx[2]);
            let r = affine(b, v, Some(s), Some(bias), &[c]);
            let mut oi = vec![idx[0], c];
            oi.extend_from_slice(&idx[3..]);
            store_at(b, r, out, &oi);
        },
    );
    Ok(vec![out])
}

pub fn mvn(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let rank = shape_of(b.m, x).len();
    let axes = attr_ints(b.m, op, "axes").unwrap_or_else(|| vec![0, 2, 3]);
    let reduced: Vec<usize> = axes
        .iter()
        .map(|&a| normalize_axis(b, op, a, rank))
        .collect::<Result<_>>()?;
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    normalize(
        b,
        x,
        &reduced,
        1e-9,
        Scale::StdPlusEps,
        &mut |_, _, _, _| {},
        &mut |b, idx, v| {
            store_at(b, v, out, idx);
        },
    );
    Ok(vec![out])
}

pub fn lp_norm(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let rank = shape_of(b.m, x).len();
    let axis = normalize_axis(b, op, attr_int(b.m, op, "axis", -1), rank)?;
    let p = attr_int(b.m, op, "p", 2);
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let mut outer = dx.clone();
    outer[axis] = bounds.one;
    let elem = elem_of(b.m, x);
    loop_nest(b, &bounds, &outer, &mut |b, ovs| {
        let zero = constant(b, &elem, 0.0);
        let at = |i: ValueId| {
            let mut idx = ovs.to_vec();
            idx[axis] = i;
            idx
        };
        let s = reduce_nest(b, &bounds, &[dx[axis]], zero, &mut |b, iv, acc| {
            let v = load_at(b, x, &at(iv[0]));
            let t = if p == 1 {
                b.same("math.absf", &[v])
            } else {
                scalar::mul(b, v, v)
            };
            scalar::add(b, acc, t)
        });
        let norm = if p == 1 { s } else { b.same("math.sqrt", &[s]) };
        let is0 = scalar::cmpf(b, "oeq", norm, zero);
        loop_nest(b, &bounds, &[dx[axis]], &mut |b, iv| {
            let idx = at(iv[0]);
            let v = load_at(b, x, &idx);
            let q = scalar::div(b, v, norm);
            let r = scalar::select(b, is0, zero, q);
            store_at(b, r, out, &idx);
        });
    });
    Ok(vec![out])
}

pub fn lrn(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = float_input(cx, b, op)?;
    let size = attr_int(b.m, op, "size", 1);
    let alpha = attr_float(b.m, op, "alpha", 1e-4);
    let beta = attr_float(b.m, op, "beta", 0.75);
    let bias = attr_float(b.m, op, "bias", 1.0);
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
        let zero = constant(b, &elem, 0.0);
        let start = loops::sub(b, ivs[1], lo_v);
        let sum = reduce_nest(b, &bounds, &[win], zero, &mut |b, k, acc| {
            let c = loops::add(b, start, k[0]);
            let ge = loops::cmp(b, "sge", c, bounds.zero);
            let lt = loops::cmp(b, "slt", c, dx[1]);
            let inside = loops::and(b, ge, lt);
            let safe = loops::select(b, inside, c, bounds.zero);
            let mut idx = ivs.to_vec();
            idx[1] = safe;
            let v = load_at(b, x, &idx);
            let sq = scalar::mul(b, v, v);
            let s = scalar::add(b, acc, sq);
            scalar::select(b, inside, s, acc)
        });
        let k = constant(b, &elem, alpha / size as f64);
        let bi = constant(b, &elem, bias);
        let be = constant(b, &elem, beta);
        let t = scalar::mul(b, k, sum);
        let base = scalar::add(b, bi, t);
        let den = b.same("math.powf", &[base, be]);
        let v = load_at(b, x, ivs);
        let r = scalar::div(b, v, den);
        store_at(b, r, out, ivs);
    });
    Ok(vec![out])
}
