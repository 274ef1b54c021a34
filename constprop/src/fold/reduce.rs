//! Reductions and axis-wise kernels: Reduce*, ArgMax/ArgMin, Softmax,
//! LogSoftmax, Hardmax, CumSum/CumProd, TopK and the normalizations.

use super::dense::{unravel, wide_of, T};
use super::{attr_f64, attr_i64, attr_ints, opset, result_dtype};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Module, OpId, Result};

/// Reductions of a scalar accept axis 0.
fn norm_axis(a: i64, rank: usize) -> Option<usize> {
    if rank == 0 {
        return (a == 0).then_some(0);
    }
    super::norm_axis(a, rank)
}

/// Groups of flat indices that reduce together, in output order.
fn groups(shape: &[usize], reduced: &[bool]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(reduced)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let n_out: usize = out_shape.iter().product();
    let mut gs = vec![Vec::new(); n_out];
    let n: usize = shape.iter().product();
    let mut idx = vec![0; shape.len()];
    for f in 0..n {
        unravel(f, shape, &mut idx);
        let mut o = 0;
        for (i, &d) in out_shape.iter().enumerate() {
            o = o * d + if reduced[i] { 0 } else { idx[i] };
        }
        gs[o].push(f);
    }
    (out_shape, gs)
}

/// Lines along one axis: each the flat indices of one 1-D slice.
fn lines(shape: &[usize], axis: usize) -> Vec<Vec<usize>> {
    let mut red = vec![false; shape.len()];
    red[axis] = true;
    groups(shape, &red).1
}

fn reduce_axes(
    m: &Module,
    op: OpId,
    inputs: &[Option<T>],
    rank: usize,
) -> Result<Option<Vec<bool>>> {
    let axes = match inputs.get(1).and_then(Option::as_ref) {
        Some(a) => Some(a.ints()),
        None => attr_ints(m, op, "axes"),
    };
    let axes = axes.filter(|a| !a.is_empty());
    let Some(axes) = axes else {
        if attr_i64(m, op, "noop_with_empty_axes", 0) != 0 {
            return Ok(None);
        }
        return Ok(Some(vec![true; rank]));
    };
    let mut red = vec![false; rank];
    for a in axes {
        let a = norm_axis(a, rank).ok_or_else(|| op_error(m, op, "axis out of range"))?;
        red[a] = true;
    }
    Ok(Some(red))
}

fn softmax_lines(m: &Module, op: OpId, x: &T) -> Result<Vec<Vec<usize>>> {
    let rank = x.rank();
    let legacy = opset(m) < 13;
    let a = attr_i64(m, op, "axis", if legacy { 1 } else { -1 });
    let a = norm_axis(a, rank).ok_or_else(|| op_error(m, op, "axis out of range"))?;
    if !legacy {
        return Ok(lines(&x.shape, a));
    }
    let inner: usize = x.shape[a..].iter().product();
    Ok((0..x.len() / inner.max(1))
        .map(|o| (o * inner..(o + 1) * inner).collect())
        .collect())
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    let known = kind.starts_with("Reduce")
        || matches!(
            kind,
            "ArgMax"
                | "ArgMin"
                | "Softmax"
                | "LogSoftmax"
                | "Hardmax"
                | "CumSum"
                | "CumProd"
                | "TopK"
                | "LayerNormalization"
                | "RMSNormalization"
                | "BatchNormalization"
                | "InstanceNormalization"
                | "LpNormalization"
                | "MeanVarianceNormalization"
                | "GlobalAveragePool"
                | "GlobalMaxPool"
        );
    if !known {
        return Ok(None);
    }
    let ts: Vec<Option<T>> = inputs.iter().map(|i| i.as_ref().map(T::of)).collect();
    let Some(Some(x)) = ts.first() else {
        return Ok(None);
    };
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let rank = x.rank();
    let c = x.class();
    let xf = x.floats();
    let dtype = result_dtype(m, op, 0)?;
    let keep = attr_i64(m, op, "keepdims", 1) != 0;
    let eps = attr_f64(m, op, "epsilon", 1e-5);
    let results: Vec<T> = if let Some(r) = kind.strip_prefix("Reduce") {
        let Some(red) = reduce_axes(m, op, &ts, rank)? else {
            return Ok(Some(vec![x.clone().into_elements(m, op)?]));
        };
        let (out_shape, gs) = groups(&x.shape, &red);
        let int = c != NumClass::Float;
        let data: Vec<WideNum> = gs
            .iter()
            .map(|g| {
                let vals = g.iter().map(|&i| xf[i]);
                let ints = g.iter().map(|&i| x.data[i].i64());
                match r {
                    "Sum" if int => WideNum::from_i64(ints.fold(0, i64::wrapping_add)),
                    "Prod" if int => WideNum::from_i64(ints.fold(1, i64::wrapping_mul)),
                    "Max" if int && c == NumClass::Signed => {
                        WideNum::from_i64(ints.max().unwrap_or(i64::MIN))
                    }
                    "Min" if int && c == NumClass::Signed => {
                        WideNum::from_i64(ints.min().unwrap_or(i64::MAX))
                    }
                    "Max" if int => {
                        WideNum::from_u64(g.iter().map(|&i| x.data[i].u64()).max().unwrap_or(0))
                    }
                    "Min" if int => WideNum::from_u64(
                        g.iter().map(|&i| x.data[i].u64()).min().unwrap_or(u64::MAX),
                    ),
                    "SumSquare" if int => WideNum::from_i64(
                        ints.map(|v| v.wrapping_mul(v)).fold(0, i64::wrapping_add),
                    ),
                    "L1" if int => {
                        WideNum::from_i64(ints.map(i64::wrapping_abs).fold(0, i64::wrapping_add))
                    }
                    _ => {
                        let v = match r {
                            "Sum" => vals.sum(),
                            "Prod" => vals.product(),
                            "Mean" => vals.sum::<f64>() / g.len() as f64,
                            "Max" => vals.fold(f64::NEG_INFINITY, |a, b| {
                                if a.is_nan() || b.is_nan() {
                                    f64::NAN
                                } else {
                                    a.max(b)
                                }
                            }),
                            "Min" => vals.fold(f64::INFINITY, |a, b| {
                                if a.is_nan() || b.is_nan() {
                                    f64::NAN
                                } else {
                                    a.min(b)
                                }
                            }),
                            "SumSquare" => vals.map(|v| v * v).sum(),
                            "L1" => vals.map(f64::abs).sum(),
                            "L2" => vals.map(|v| v * v).sum::<f64>().sqrt(),
                            "LogSum" => vals.sum::<f64>().ln(),
                            "LogSumExp" => {
                                let v: Vec<f64> = vals.collect();
                                let mx = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                                let mx = if mx.is_finite() { mx } else { 0.0 };
                                mx + v.iter().map(|x| (x - mx).exp()).sum::<f64>().ln()
                            }
                            _ => f64::NAN,
                        };
                        wide_of(dtype.class(), v)
                    }
                }
            })
            .collect();
        if !matches!(
            r,
            "Sum"
                | "Prod"
                | "Mean"
                | "Max"
                | "Min"
                | "SumSquare"
                | "L1"
                | "L2"
                | "LogSum"
                | "LogSumExp"
        ) {
            return Ok(None);
        }
        let shape = if keep {
            out_shape
        } else {
            x.shape
                .iter()
                .zip(&red)
                .filter(|(_, &r)| !r)
                .map(|(&d, _)| d)
                .collect()
        };
        vec![T::new(dtype, shape, data)]
    } else {
        match kind {
            "ArgMax" | "ArgMin" => {
                let a = norm_axis(attr_i64(m, op, "axis", 0), rank).ok_or_else(|| e("axis"))?;
                let last = attr_i64(m, op, "select_last_index", 0) != 0;
                let max = kind == "ArgMax";
                let mut red = vec![false; rank];
                red[a] = true;
                let (out_shape, gs) = groups(&x.shape, &red);
                let data = gs
                    .iter()
                    .map(|g| {
                        let mut best = 0usize;
                        for (k, &i) in g.iter().enumerate() {
                            let (v, b) = (xf[i], xf[g[best]]);
                            let better = if max { v > b } else { v < b };
                            if better || (last && v == b) {
                                best = k;
                            }
                        }
                        WideNum::from_i64(best as i64)
                    })
                    .collect();
                let mut shape = out_shape;
                if !keep {
                    shape.remove(a);
                }
                vec![T::new(DType::I64, shape, data)]
            }
            "Softmax" | "LogSoftmax" | "Hardmax" => {
                let mut out = vec![0.0; x.len()];
                for l in softmax_lines(m, op, x)? {
                    let mx = l.iter().map(|&i| xf[i]).fold(f64::NEG_INFINITY, f64::max);
                    if kind == "Hardmax" {
                        if let Some(&first) = l.iter().find(|&&i| xf[i] == mx) {
                            out[first] = 1.0;
                        }
                        continue;
                    }
                    let s: f64 = l.iter().map(|&i| (xf[i] - mx).exp()).sum();
                    for &i in &l {
                        out[i] = if kind == "Softmax" {
                            (xf[i] - mx).exp() / s
                        } else {
                            xf[i] - mx - s.ln()
                        };
                    }
                }
                vec![x.with_floats(dtype, out)]
            }
            "CumSum" | "CumProd" => {
                let ax = input(1).ok_or_else(|| e("axis"))?.ints();
                let a = norm_axis(*ax.first().ok_or_else(|| e("axis"))?, rank)
                    .ok_or_else(|| e("axis"))?;
                let excl = attr_i64(m, op, "exclusive", 0) != 0;
                let rev = attr_i64(m, op, "reverse", 0) != 0;
                let prod = kind == "CumProd";
                let mut out = x.clone();
                for mut l in lines(&x.shape, a) {
                    if rev {
                        l.reverse();
                    }
                    let mut acc = wide_of(c, if prod { 1.0 } else { 0.0 });
                    for &i in &l {
                        let v = x.data[i];
                        let next =
                            super::data::reduce_pair(if prod { "mul" } else { "add" }, c, acc, v);
                        out.data[i] = if excl { acc } else { next };
                        acc = next;
                    }
                }
                vec![out]
            }
            "TopK" => {
                let k = match input(1) {
                    Some(k) => k.ints().first().copied().unwrap_or(0),
                    None => attr_i64(m, op, "k", 0),
                }
                .max(0) as usize;
                let a = norm_axis(attr_i64(m, op, "axis", -1), rank).ok_or_else(|| e("axis"))?;
                let largest = attr_i64(m, op, "largest", 1) != 0;
                let mut shape = x.shape.clone();
                if k > shape[a] {
                    return Err(e("k exceeds the axis size"));
                }
                shape[a] = k;
                let out_lines = lines(&shape, a);
                let mut vals = vec![WideNum::default(); out_lines.len() * k];
                let mut idxs = vec![WideNum::default(); out_lines.len() * k];
                for (l, ol) in lines(&x.shape, a).iter().zip(&out_lines) {
                    let mut order: Vec<usize> = (0..l.len()).collect();
                    order.sort_by(|&p, &q| {
                        let (u, v) = (xf[l[p]], xf[l[q]]);
                        let o = if largest {
                            v.partial_cmp(&u)
                        } else {
                            u.partial_cmp(&v)
                        };
                        o.unwrap_or(std::cmp::Ordering::Equal).then(p.cmp(&q))
                    });
                    for (j, &o) in ol.iter().enumerate() {
                        vals[o] = x.data[l[order[j]]];
                        idxs[o] = WideNum::from_i64(order[j] as i64);
                    }
                }
                vec![
                    T::new(x.dtype, shape.clone(), vals),
                    T::new(DType::I64, shape, idxs),
                ]
            }
            "LayerNormalization" | "RMSNormalization" => {
                let a = norm_axis(attr_i64(m, op, "axis", -1), rank).ok_or_else(|| e("axis"))?;
                let red: Vec<bool> = (0..rank).map(|i| i >= a).collect();
                let (stat_shape, gs) = groups(&x.shape, &red);
                let scale = input(1).ok_or_else(|| e("scale"))?;
                let bias = input(2);
                let inner: usize = x.shape[a..].iter().product();
                let bcast = |t: &T, j: usize| -> f64 {
                    let n = t.len().max(1);
                    t.f(j % n)
                };
                let mut y = vec![0.0; x.len()];
                let mut means = Vec::new();
                let mut invs = Vec::new();
                for g in &gs {
                    let n = g.len().max(1) as f64;
                    let mean = if kind == "RMSNormalization" {
                        0.0
                    } else {
                        g.iter().map(|&i| xf[i]).sum::<f64>() / n
                    };
                    let var = g.iter().map(|&i| (xf[i] - mean).powi(2)).sum::<f64>() / n;
                    let inv = 1.0 / (var + eps).sqrt();
                    for &i in g {
                        let j = i % inner.max(1);
                        y[i] = (xf[i] - mean) * inv * bcast(scale, j)
                            + bias.map_or(0.0, |b| bcast(b, j));
                    }
                    means.push(mean);
                    invs.push(inv);
                }
                let sd = |i: usize| result_dtype(m, op, i).unwrap_or(DType::F32);
                let mut out = vec![x.with_floats(dtype, y)];
                for (i, v) in [means, invs]
                    .into_iter()
                    .enumerate()
                    .take(m.results(op).len().saturating_sub(1))
                {
                    out.push(T::new(
                        sd(i + 1),
                        stat_shape.clone(),
                        super::dense::from_f64s(sd(i + 1), v),
                    ));
                }
                out
            }
            "BatchNormalization" => {
                if attr_i64(m, op, "training_mode", 0) != 0 || m.results(op).len() > 1 {
                    return Ok(None);
                }
                let p: Vec<Vec<f64>> = (1..5)
                    .map(|i| input(i).map(T::floats).ok_or_else(|| e("missing operand")))
                    .collect::<Result<_>>()?;
                let ch = x.shape.get(1).copied().unwrap_or(1);
                let inner: usize = x.shape.get(2..).map_or(1, |s| s.iter().product());
                let y = (0..x.len())
                    .map(|i| {
                        let k = (i / inner.max(1)) % ch.max(1);
                        let g = |v: &Vec<f64>| v.get(k).or(v.first()).copied().unwrap_or(0.0);
                        (xf[i] - g(&p[2])) / (g(&p[3]) + eps).sqrt() * g(&p[0]) + g(&p[1])
                    })
                    .collect();
                vec![x.with_floats(dtype, y)]
            }
            "InstanceNormalization"
            | "MeanVarianceNormalization"
            | "GlobalAveragePool"
            | "GlobalMaxPool" => {
                let axes: Vec<usize> = if kind == "MeanVarianceNormalization" {
                    attr_ints(m, op, "axes")
                        .unwrap_or_else(|| vec![0, 2, 3])
                        .iter()
                        .map(|&a| norm_axis(a, rank))
                        .collect::<Option<_>>()
                        .ok_or_else(|| e("axes"))?
                } else {
                    (2..rank).collect()
                };
                let red: Vec<bool> = (0..rank).map(|i| axes.contains(&i)).collect();
                let (out_shape, gs) = groups(&x.shape, &red);
                if kind.starts_with("Global") {
                    let data = gs
                        .iter()
                        .map(|g| {
                            let v = g.iter().map(|&i| xf[i]);
                            if kind == "GlobalMaxPool" {
                                v.fold(f64::NEG_INFINITY, f64::max)
                            } else {
                                v.sum::<f64>() / g.len().max(1) as f64
                            }
                        })
                        .collect();
                    vec![T::new(
                        dtype,
                        out_shape,
                        super::dense::from_f64s(dtype, data),
                    )]
                } else {
                    let (sc, bi) = (input(1).map(T::floats), input(2).map(T::floats));
                    let ch = x.shape.get(1).copied().unwrap_or(1);
                    let inner: usize = x.shape.get(2..).map_or(1, |s| s.iter().product());
                    let mut y = vec![0.0; x.len()];
                    for g in &gs {
                        let n = g.len().max(1) as f64;
                        let mean = g.iter().map(|&i| xf[i]).sum::<f64>() / n;
                        let var = g.iter().map(|&i| (xf[i] - mean).powi(2)).sum::<f64>() / n;
                        for &i in g {
                            y[i] = match (&sc, &bi) {
                                (Some(s), Some(b)) => {
                                    let k = (i / inner.max(1)) % ch.max(1);
                                    (xf[i] - mean) / (var + eps).sqrt() * s[k] + b[k]
                                }
                                _ => (xf[i] - mean) / (var.sqrt() + 1e-9),
                            };
                        }
                    }
                    vec![x.with_floats(dtype, y)]
                }
            }
            "LpNormalization" => {
                let a = norm_axis(attr_i64(m, op, "axis", -1), rank).ok_or_else(|| e("axis"))?;
                let p = attr_i64(m, op, "p", 2);
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
                vec![x.with_floats(dtype, y)]
            }
            _ => return Ok(None),
        }
    };
    super::dense::packed(m, op, results)
}
