//! Normalizations: LayerNormalization, RMSNormalization,
//! BatchNormalization (inference), InstanceNormalization,
//! MeanVarianceNormalization, LpNormalization, GroupNormalization, LRN.

use super::dense::{from_f64s, T};
use super::reduce::{groups, lines};
use super::{Fold, Op};
use ir::elements::DType;
use ir::Result;
use onnx::axis::normalize;
use onnx::ops;

/// The normalization axis of `x`; `None` leaves the op (a scalar has no
/// axis).
fn axis_of(o: Op, x: &T, axis: i64) -> Result<Option<usize>> {
    if x.rank() == 0 {
        return Ok(None);
    }
    normalize(axis, x.rank())
        .map(Some)
        .ok_or_else(|| o.err("axis"))
}

/// Layer (`centered`) or RMS normalization over the dims from `axis` on,
/// with the mean and inverse deviation as optional results.
fn over_trailing(o: Op, axis: i64, eps: f64, centered: bool) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let Some(a) = axis_of(o, x, axis)? else {
        return Ok(None);
    };
    let xf = x.floats();
    let red: Vec<bool> = (0..x.rank()).map(|i| i >= a).collect();
    let (stat_shape, gs) = groups(&x.shape, &red);
    let scale = ts.get(1).ok_or_else(|| o.err("scale"))?;
    let bias = ts.get(2);
    let inner: usize = x.shape[a..].iter().product();
    let bcast = |t: &T, j: usize| -> f64 { t.f(j % t.len().max(1)) };
    let mut y = vec![0.0; x.len()];
    let mut means = Vec::new();
    let mut invs = Vec::new();
    for g in &gs {
        let n = g.len().max(1) as f64;
        let mean = if centered {
            g.iter().map(|&i| xf[i]).sum::<f64>() / n
        } else {
            0.0
        };
        let var = g.iter().map(|&i| (xf[i] - mean).powi(2)).sum::<f64>() / n;
        let inv = 1.0 / (var + eps).sqrt();
        for &i in g {
            let j = i % inner.max(1);
            y[i] = (xf[i] - mean) * inv * bcast(scale, j) + bias.map_or(0.0, |b| bcast(b, j));
        }
        means.push(mean);
        invs.push(inv);
    }
    let sd = |i: usize| o.dtype(i).unwrap_or(DType::F32);
    let mut out = vec![x.with_floats(dtype, y)];
    for (i, v) in [means, invs]
        .into_iter()
        .enumerate()
        .take(o.nres().saturating_sub(1))
    {
        out.push(T::new(
            sd(i + 1),
            stat_shape.clone(),
            from_f64s(sd(i + 1), v),
        ));
    }
    o.packed(out)
}

pub fn layer(o: Op) -> Fold {
    let v = ops::LayerNormalization::of(o.m, o.op);
    over_trailing(o, v.axis(), v.epsilon(), true)
}

pub fn rms(o: Op) -> Fold {
    let v = ops::RMSNormalization::of(o.m, o.op);
    over_trailing(o, v.axis(), v.epsilon(), false)
}

/// Inference-mode BatchNormalization.
pub fn batch(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::BatchNormalization::of(o.m, o.op);
    if v.training_mode() != 0 || o.nres() > 1 {
        return Ok(None);
    }
    let eps = v.epsilon();
    let p: Vec<Vec<f64>> = (1..5)
        .map(|i| {
            ts.get(i)
                .map(T::floats)
                .ok_or_else(|| o.err("missing operand"))
        })
        .collect::<Result<_>>()?;
    let ch = x.shape.get(1).copied().unwrap_or(1);
    let inner: usize = x.shape.get(2..).map_or(1, |s| s.iter().product());
    let xf = x.floats();
    let y = (0..x.len())
        .map(|i| {
            let k = (i / inner.max(1)) % ch.max(1);
            let g = |v: &Vec<f64>| v.get(k).or(v.first()).copied().unwrap_or(0.0);
            (xf[i] - g(&p[2])) / (g(&p[3]) + eps).sqrt() * g(&p[0]) + g(&p[1])
        })
        .collect();
    o.packed(vec![x.with_floats(dtype, y)])
}

/// `x` standardized over the `axes` groups: with per-channel scale, bias
/// and `eps` (InstanceNormalization), else MeanVarianceNormalization's
/// `(x - mean) / (std + 1e-9)`.
fn standardize(o: Op, axes: &[usize], affine: Option<f64>) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let xf = x.floats();
    let red: Vec<bool> = (0..x.rank()).map(|i| axes.contains(&i)).collect();
    let (_, gs) = groups(&x.shape, &red);
    let params = match (affine, ts.get(1), ts.get(2)) {
        (Some(eps), Some(s), Some(b)) => Some((s.floats(), b.floats(), eps)),
        _ => None,
    };
    let ch = x.shape.get(1).copied().unwrap_or(1);
    let inner: usize = x.shape.get(2..).map_or(1, |s| s.iter().product());
    let mut y = vec![0.0; x.len()];
    for g in &gs {
        let n = g.len().max(1) as f64;
        let mean = g.iter().map(|&i| xf[i]).sum::<f64>() / n;
        let var = g.iter().map(|&i| (xf[i] - mean).powi(2)).sum::<f64>() / n;
        for &i in g {
            y[i] = match &params {
                Some((s, b, eps)) => {
                    let k = (i / inner.max(1)) % ch.max(1);
                    (xf[i] - mean) / (var + eps).sqrt() * s[k] + b[k]
                }
                None => (xf[i] - mean) / (var.sqrt() + 1e-9),
            };
        }
    }
    o.packed(vec![x.with_floats(dtype, y)])
}

pub fn instance(o: Op) -> Fold {
    let rank = o.input(0).map_or(0, |x| x.shape().len());
    let eps = ops::InstanceNormalization::of(o.m, o.op).epsilon();
    let axes: Vec<usize> = (2..rank).collect();
    standardize(o, &axes, Some(eps))
}

pub fn mvn(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let rank = x.shape().len();
    let axes = ops::MeanVarianceNormalization::of(o.m, o.op).axes();
    if rank == 0 {
        return Ok(None);
    }
    let axes = onnx::axis::normalize_all(&axes, rank).ok_or_else(|| o.err("axes"))?;
    standardize(o, &axes, None)
}

pub fn lp(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::LpNormalization::of(o.m, o.op);
    let Some(a) = axis_of(o, x, v.axis())? else {
        return Ok(None);
    };
    let p = v.p();
    let xf = x.floats();
    let mut y = xf.clone();
    for l in lines(&x.shape, a) {
        let nrm = if p == 1 {
            l.iter().map(|&i| xf[i].abs()).sum::<f64>()
        } else {
            l.iter().map(|&i| xf[i] * xf[i]).sum::<f64>().sqrt()
        };
        for &i in &l {
            y[i] = if nrm == 0.0 { 0.0 } else { xf[i] / nrm };
        }
    }
    o.packed(vec![x.with_floats(dtype, y)])
}

pub fn group(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::GroupNormalization::of(o.m, o.op);
    let g = v.num_groups().max(1) as usize;
    let eps = v.epsilon();
    let (sc, bi) = (
        ts.get(1).ok_or_else(|| o.err("scale"))?.floats(),
        ts.get(2).ok_or_else(|| o.err("bias"))?.floats(),
    );
    let (n, c) = (x.shape[0], *x.shape.get(1).ok_or_else(|| o.err("rank"))?);
    let inner: usize = x.shape[2..].iter().product();
    let per = c / g * inner;
    let xf = x.floats();
    let mut y = vec![0.0; x.len()];
    for grp in 0..n * g {
        let r = grp * per..(grp + 1) * per;
        let mean = xf[r.clone()].iter().sum::<f64>() / per as f64;
        let var = xf[r.clone()]
            .iter()
            .map(|v| (v - mean).powi(2))
            .sum::<f64>()
            / per as f64;
        for f in r {
            let ch = (f / inner) % c;
            let k = if sc.len() == c { ch } else { ch / (c / g) };
            y[f] = (xf[f] - mean) / (var + eps).sqrt() * sc[k] + bi[k];
        }
    }
    o.packed(vec![x.with_floats(dtype, y)])
}

pub fn lrn(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::LRN::of(o.m, o.op);
    let size = v.size().max(1) as usize;
    let (alpha, beta, bias) = (v.alpha(), v.beta(), v.bias());
    let c = *x.shape.get(1).ok_or_else(|| o.err("rank"))?;
    let inner: usize = x.shape[2..].iter().product();
    let (lo, hi) = ((size - 1) / 2, (size - 1).div_ceil(2));
    let xf = x.floats();
    let y = (0..x.len())
        .map(|f| {
            let ch = (f / inner) % c;
            let base = f - ch * inner;
            let s: f64 = (ch.saturating_sub(lo)..(ch + hi + 1).min(c))
                .map(|k| xf[base + k * inner].powi(2))
                .sum();
            xf[f] / (bias + alpha / size as f64 * s).powf(beta)
        })
        .collect();
    o.packed(vec![x.with_floats(dtype, y)])
}
