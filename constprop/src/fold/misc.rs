//! Less common deterministic ops: Dropout (inference), BitCast,
//! QLinearMatMul, DynamicQuantizeLinear, window functions, CenterCropPad,
//! LRN, GroupNormalization, Det, SwiGLU, CausalConvWithState,
//! TensorScatter and Unique.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{attr_axes, attr_f64, attr_i64, attr_str, norm_axis, result_dtype};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, WideNum};
use ir::{Module, OpId, Result};

fn f32r(v: f64) -> f64 {
    f64::from(v as f32)
}

fn det(mut a: Vec<f64>, n: usize) -> f64 {
    let mut d = 1.0;
    for c in 0..n {
        let Some(p) = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))
        else {
            return 0.0;
        };
        if a[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for k in 0..n {
                a.swap(p * n + k, c * n + k);
            }
            d = -d;
        }
        let piv = a[c * n + c];
        d *= piv;
        for r in c + 1..n {
            let f = a[r * n + c] / piv;
            for k in c..n {
                a[r * n + k] -= f * a[c * n + k];
            }
        }
    }
    d
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    if !matches!(
        kind,
        "Dropout"
            | "BitCast"
            | "QLinearMatMul"
            | "DynamicQuantizeLinear"
            | "HannWindow"
            | "HammingWindow"
            | "BlackmanWindow"
            | "CenterCropPad"
            | "LRN"
            | "GroupNormalization"
            | "Det"
            | "SwiGLU"
            | "CausalConvWithState"
            | "TensorScatter"
            | "Unique"
            | "RotaryEmbedding"
    ) {
        return Ok(None);
    }
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let Some(Some(x0)) = inputs.first() else {
        return Ok(None);
    };
    let nres = m.results(op).len();
    if kind == "BitCast" {
        let to = result_dtype(m, op, 0)?;
        if to.bits() != x0.dtype().bits() {
            return Ok(None);
        }
        let r = Elements::from_bytes(to, x0.shape().to_vec(), x0.to_contiguous_bytes())
            .map_err(|er| e(&er.to_string()))?;
        return Ok(Some(vec![r]));
    }
    let ts: Vec<Option<T>> = inputs.iter().map(|i| i.as_ref().map(T::of)).collect();
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let x = T::of(x0);
    let dtype = result_dtype(m, op, 0)?;
    let xf = x.floats();
    let outs: Vec<T> = match kind {
        "Dropout" => {
            let training = input(2).is_some_and(|t| t.f(0) != 0.0);
            let ratio = input(1).map_or(0.5, |t| t.f(0));
            if training && ratio != 0.0 {
                return Ok(None);
            }
            let mut o = vec![x.clone()];
            if nres > 1 {
                o.push(T::new(
                    DType::Bool,
                    x.shape.clone(),
                    vec![WideNum::from_u64(1); x.len()],
                ));
            }
            o
        }
        "QLinearMatMul" => {
            let p = |i: usize| input(i).ok_or_else(|| e("missing operand"));
            let (a, asc, azp, b, bsc, bzp, ysc, yzp) =
                (p(0)?, p(1)?, p(2)?, p(3)?, p(4)?, p(5)?, p(6)?, p(7)?);
            if a.rank() != 2 || b.rank() != 2 {
                return Ok(None);
            }
            let (mm, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
            let pick = |t: &T, i: usize| t.f(if t.len() > 1 { i } else { 0 });
            let (lo, hi) = if yzp.dtype == DType::I8 {
                (-128.0, 127.0)
            } else {
                (0.0, 255.0)
            };
            let mut out = Vec::with_capacity(mm * n);
            for i in 0..mm {
                for j in 0..n {
                    let acc: f64 = (0..k)
                        .map(|p| (a.f(i * k + p) - pick(azp, i)) * (b.f(p * n + j) - pick(bzp, j)))
                        .sum();
                    let s = f32r(f32r(pick(asc, i) * pick(bsc, j)) / pick(ysc, 0));
                    out.push((f32r(acc * s).round_ties_even() + pick(yzp, 0)).clamp(lo, hi));
                }
            }
            vec![T::new(dtype, vec![mm, n], from_f64s(dtype, out))]
        }
        "DynamicQuantizeLinear" => {
            let mn = xf.iter().copied().fold(0.0, f64::min);
            let mx = xf.iter().copied().fold(0.0, f64::max);
            let scale = f32r(f32r(mx - mn) / 255.0);
            let zp = if scale == 0.0 {
                0.0
            } else {
                f32r(-mn / scale).round_ties_even().clamp(0.0, 255.0)
            };
            let y = xf
                .iter()
                .map(|&v| {
                    let q = if scale == 0.0 {
                        0.0
                    } else {
                        f32r(v / scale).round_ties_even()
                    };
                    (q + zp).clamp(0.0, 255.0)
                })
                .collect();
            vec![
                T::new(DType::U8, x.shape.clone(), from_f64s(DType::U8, y)),
                T::new(DType::F32, vec![], vec![WideNum::from_f64(scale)]),
                T::new(DType::U8, vec![], vec![WideNum::from_u64(zp as u64)]),
            ]
        }
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => {
            let n = x.f(0).max(0.0) as usize;
            let periodic = attr_i64(m, op, "periodic", 1) != 0;
            let d = if periodic {
                n as f64
            } else {
                (n as f64 - 1.0).max(1.0)
            };
            let tau = 2.0 * std::f64::consts::PI;
            let w = (0..n)
                .map(|i| {
                    let t = i as f64 / d;
                    match kind {
                        "HannWindow" => 0.5 - 0.5 * (tau * t).cos(),
                        "HammingWindow" => 25.0 / 46.0 - 21.0 / 46.0 * (tau * t).cos(),
                        _ => 0.42 - 0.5 * (tau * t).cos() + 0.08 * (2.0 * tau * t).cos(),
                    }
                })
                .collect();
            vec![T::new(dtype, vec![n], from_f64s(dtype, w))]
        }
        "CenterCropPad" => {
            let shape = input(1).ok_or_else(|| e("shape"))?.ints();
            let rank = x.rank();
            let axes = attr_axes(m, op, rank).ok_or_else(|| e("axes"))?;
            let mut out_shape = x.shape.clone();
            // Output index i on an axis reads input index i + shift.
            let mut shift = vec![0i64; rank];
            for (&a, &sh) in axes.iter().zip(&shape) {
                let dim = *x.shape.get(a).ok_or_else(|| e("axis"))? as i64;
                out_shape[a] = sh.max(0) as usize;
                shift[a] = if sh <= dim {
                    (dim - sh) / 2
                } else {
                    -((sh - dim) / 2)
                };
            }
            let n: usize = out_shape.iter().product();
            let xs = row_strides(&x.shape);
            let mut idx = vec![0; rank];
            let data = (0..n)
                .map(|f| {
                    unravel(f, &out_shape, &mut idx);
                    let mut off = 0usize;
                    for i in 0..rank {
                        let j = idx[i] as i64 + shift[i];
                        if j < 0 || j >= x.shape[i] as i64 {
                            return WideNum::default();
                        }
                        off += j as usize * xs[i];
                    }
                    x.data[off]
                })
                .collect();
            vec![T::new(x.dtype, out_shape, data)]
        }
        "LRN" => {
            let size = attr_i64(m, op, "size", 1).max(1) as usize;
            let (alpha, beta, bias) = (
                attr_f64(m, op, "alpha", 1e-4),
                attr_f64(m, op, "beta", 0.75),
                attr_f64(m, op, "bias", 1.0),
            );
            let c = *x.shape.get(1).ok_or_else(|| e("rank"))?;
            let inner: usize = x.shape[2..].iter().product();
            let (lo, hi) = ((size - 1) / 2, (size - 1).div_ceil(2));
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
            vec![x.with_floats(dtype, y)]
        }
        "GroupNormalization" => {
            let g = attr_i64(m, op, "num_groups", 1).max(1) as usize;
            let eps = attr_f64(m, op, "epsilon", 1e-5);
            let (sc, bi) = (
                input(1).ok_or_else(|| e("scale"))?.floats(),
                input(2).ok_or_else(|| e("bias"))?.floats(),
            );
            let (n, c) = (x.shape[0], *x.shape.get(1).ok_or_else(|| e("rank"))?);
            let inner: usize = x.shape[2..].iter().product();
            let per = c / g * inner;
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
            vec![x.with_floats(dtype, y)]
        }
        "Det" => {
            let r = x.rank();
            let n = *x.shape.last().ok_or_else(|| e("rank"))?;
            let batch = x.len() / (n * n).max(1);
            let d = (0..batch)
                .map(|b| det(xf[b * n * n..(b + 1) * n * n].to_vec(), n))
                .collect();
            vec![T::new(
                dtype,
                x.shape[..r.saturating_sub(2)].to_vec(),
                from_f64s(dtype, d),
            )]
        }
        "SwiGLU" => {
            let b = input(1).ok_or_else(|| e("B"))?.floats();
            let alpha = attr_f64(m, op, "alpha", 1.0);
            let y = xf
                .iter()
                .zip(&b)
                .map(|(&a, &b)| a / (1.0 + (-alpha * a).exp()) * b)
                .collect();
            vec![x.with_floats(dtype, y)]
        }
        "CausalConvWithState" => {
            let w = input(1).ok_or_else(|| e("weight"))?.floats();
            let bias = input(2).map(T::floats);
            let (b, c, l) = match x.shape.as_slice() {
                &[b, c, l] => (b, c, l),
                _ => return Ok(None),
            };
            let k = input(1).and_then(|t| t.shape.get(2).copied()).unwrap_or(1);
            let past = input(3).map(T::floats);
            let act = attr_str(m, op, "activation").unwrap_or_else(|| "none".into());
            let total = l + k - 1;
            let mut padded = vec![0.0; b * c * total];
            for bi in 0..b {
                for ch in 0..c {
                    for t in 0..total {
                        padded[(bi * c + ch) * total + t] = if t < k - 1 {
                            past.as_ref()
                                .map_or(0.0, |p| p[(bi * c + ch) * (k - 1) + t])
                        } else {
                            xf[(bi * c + ch) * l + t - (k - 1)]
                        };
                    }
                }
            }
            let mut y = vec![0.0; b * c * l];
            let mut state = Vec::with_capacity(b * c * (k - 1));
            for bi in 0..b {
                for ch in 0..c {
                    let row = &padded[(bi * c + ch) * total..(bi * c + ch + 1) * total];
                    for t in 0..l {
                        let mut acc = bias.as_ref().map_or(0.0, |bv| bv[ch]);
                        for j in 0..k {
                            acc += row[t + j] * w[ch * k + j];
                        }
                        let acc = f32r(acc);
                        y[(bi * c + ch) * l + t] = if act == "none" {
                            acc
                        } else {
                            acc / (1.0 + (-acc).exp())
                        };
                    }
                    state.extend_from_slice(&row[total - (k - 1)..]);
                }
            }
            let mut o = vec![T::new(dtype, x.shape.clone(), from_f64s(dtype, y))];
            if nres > 1 {
                o.push(T::new(
                    x.dtype,
                    vec![b, c, k - 1],
                    from_f64s(x.dtype, state),
                ));
            }
            o
        }
        "TensorScatter" => {
            let upd = input(1).ok_or_else(|| e("update"))?;
            let rank = x.rank();
            let axis = norm_axis(attr_i64(m, op, "axis", -2), rank).ok_or_else(|| e("axis"))?;
            let circular = attr_str(m, op, "mode").as_deref() == Some("circular");
            let wi = input(2).map(T::ints).unwrap_or_else(|| vec![0; x.shape[0]]);
            let mut out = x.clone();
            let xs = row_strides(&x.shape);
            let mut idx = vec![0; rank];
            for f in 0..upd.len() {
                unravel(f, &upd.shape, &mut idx);
                let mut p = wi[idx[0]] + idx[axis] as i64;
                if circular {
                    p = p.rem_euclid(x.shape[axis] as i64);
                }
                idx[axis] = usize::try_from(p).map_err(|_| e("write index"))?;
                let off: usize = idx.iter().zip(&xs).map(|(i, s)| i * s).sum();
                *out.data
                    .get_mut(off)
                    .ok_or_else(|| e("write index out of range"))? = upd.data[f];
            }
            vec![out]
        }
        "Unique" => {
            let sorted = attr_i64(m, op, "sorted", 1) != 0;
            let axis = m.attr(op, "axis").and_then(|a| a.as_int());
            let (src, a) = match axis {
                Some(ax) => {
                    let r = x.rank() as i64;
                    (x.clone(), (if ax < 0 { ax + r } else { ax }) as usize)
                }
                None => (T::new(x.dtype, vec![x.len()], x.data.clone()), 0),
            };
            let d = src.shape[a];
            let outer: usize = src.shape[..a].iter().product();
            let inner: usize = src.shape[a + 1..].iter().product();
            let sf = src.floats();
            let slice = |i: usize| -> Vec<f64> {
                (0..outer)
                    .flat_map(|o| (0..inner).map(move |k| (o, k)))
                    .map(|(o, k)| sf[(o * d + i) * inner + k])
                    .collect()
            };
            let mut keys: Vec<(Vec<f64>, usize)> = Vec::new();
            let mut inverse_of = vec![0usize; d];
            for (i, inv) in inverse_of.iter_mut().enumerate() {
                let s = slice(i);
                match keys.iter().position(|k| k.0 == s) {
                    Some(p) => *inv = p,
                    None => {
                        *inv = keys.len();
                        keys.push((s, i));
                    }
                }
            }
            let mut order: Vec<usize> = (0..keys.len()).collect();
            if sorted {
                order.sort_by(|&p, &q| {
                    keys[p]
                        .0
                        .partial_cmp(&keys[q].0)
                        .unwrap_or(std::cmp::Ordering::Equal)
                });
            }
            let mut rank_of = vec![0; keys.len()];
            for (r, &k) in order.iter().enumerate() {
                rank_of[k] = r;
            }
            let u = order.len();
            let mut shape = src.shape.clone();
            shape[a] = u;
            let mut ydata = vec![WideNum::default(); outer * u * inner];
            for (r, &k) in order.iter().enumerate() {
                let first = keys[k].1;
                for o in 0..outer {
                    for j in 0..inner {
                        ydata[(o * u + r) * inner + j] = src.data[(o * d + first) * inner + j];
                    }
                }
            }
            let i64v = |v: Vec<usize>| {
                v.into_iter()
                    .map(|x| WideNum::from_i64(x as i64))
                    .collect::<Vec<_>>()
            };
            let counts: Vec<usize> = order
                .iter()
                .map(|&k| inverse_of.iter().filter(|&&i| i == k).count())
                .collect();
            let mut o = vec![T::new(x.dtype, shape, ydata)];
            let firsts: Vec<usize> = order.iter().map(|&k| keys[k].1).collect();
            let inv: Vec<usize> = inverse_of.iter().map(|&k| rank_of[k]).collect();
            for v in [firsts, inv, counts]
                .into_iter()
                .take(nres.saturating_sub(1))
            {
                let n = v.len();
                o.push(T::new(DType::I64, vec![n], i64v(v)));
            }
            o
        }
        "RotaryEmbedding" => {
            let (cos, sin) = (
                input(1).ok_or_else(|| e("cos"))?,
                input(2).ok_or_else(|| e("sin"))?,
            );
            let pos = input(3).map(T::ints);
            let four = x.rank() == 4;
            // Logical layout [b, s, h, d] over the stored one.
            let (b, sq, h, d) = match *x.shape.as_slice() {
                [b, h, s, d] if four => (b, s, h, d),
                [b, s, hid] => {
                    let h = attr_i64(m, op, "num_heads", 0).max(1) as usize;
                    (b, s, h, hid / h)
                }
                _ => return Ok(None),
            };
            let rdim = match attr_i64(m, op, "rotary_embedding_dim", 0) {
                0 => d,
                r => r as usize,
            };
            let half = rdim / 2;
            let inter = attr_i64(m, op, "interleaved", 0) != 0;
            let at = |bi: usize, si: usize, hi: usize, di: usize| -> usize {
                if four {
                    ((bi * h + hi) * sq + si) * d + di
                } else {
                    ((bi * sq + si) * h + hi) * d + di
                }
            };
            let (cf, sf) = (cos.floats(), sin.floats());
            let mut y = xf.clone();
            for bi in 0..b {
                for si in 0..sq {
                    let row = match &pos {
                        Some(p) => {
                            usize::try_from(*p.get(bi * sq + si).ok_or_else(|| e("position_ids"))?)
                                .map_err(|_| e("position"))?
                        }
                        None => bi * sq + si,
                    };
                    for hi in 0..h {
                        for di in 0..rdim {
                            let (j, x1i, x2i, real) = if inter {
                                (di / 2, di / 2 * 2, di / 2 * 2 + 1, di % 2 == 0)
                            } else if di < half {
                                (di, di, di + half, true)
                            } else {
                                (di - half, di - half, di, false)
                            };
                            let (c, sn) = (
                                *cf.get(row * half + j).ok_or_else(|| e("cos cache"))?,
                                *sf.get(row * half + j).ok_or_else(|| e("sin cache"))?,
                            );
                            let (x1, x2) = (xf[at(bi, si, hi, x1i)], xf[at(bi, si, hi, x2i)]);
                            y[at(bi, si, hi, di)] = if real {
                                f32r(c * x1) - f32r(sn * x2)
                            } else {
                                f32r(sn * x1) + f32r(c * x2)
                            };
                        }
                    }
                }
            }
            vec![x.with_floats(dtype, y)]
        }
        _ => return Ok(None),
    };
    super::dense::packed(m, op, outs)
}
