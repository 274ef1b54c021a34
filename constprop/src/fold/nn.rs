//! Neural-network kernels: Resize, QuantizeLinear/DequantizeLinear,
//! NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{attr_axes, attr_f64, attr_i64, attr_str, norm_axis, result_dtype};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, NumClass};
use ir::{Module, OpId, Result};

/// Input positions and weights feeding one output index of a dimension.
type Taps = Vec<(usize, f64)>;

struct ResizeCfg {
    mode: String,
    coord: String,
    nearest: String,
    cubic_a: f64,
    exclude_outside: bool,
    extrapolation: f64,
}

fn cubic_coeffs(r: f64, a: f64) -> [f64; 4] {
    let c0 = ((a * (r + 1.0) - 5.0 * a) * (r + 1.0) + 8.0 * a) * (r + 1.0) - 4.0 * a;
    let c1 = ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0;
    let s = 1.0 - r;
    let c2 = ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
    let t = 2.0 - r;
    let c3 = ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    [c0, c1, c2, c3]
}

/// Taps of one dimension; `None` entries fall outside (tf_crop_and_resize).
fn dim_taps(
    cfg: &ResizeCfg,
    inp: usize,
    out: usize,
    scale: f64,
    roi: (f64, f64),
) -> Vec<Option<Taps>> {
    let n = inp as f64;
    // The reference uses the unrounded resized length in the transforms.
    let len = n * scale;
    (0..out)
        .map(|o| {
            let x = o as f64;
            let xo = match cfg.coord.as_str() {
                "asymmetric" => x / scale,
                "align_corners" => {
                    if len == 1.0 {
                        0.0
                    } else {
                        x * (n - 1.0) / (len - 1.0)
                    }
                }
                "pytorch_half_pixel" => {
                    if len > 1.0 {
                        (x + 0.5) / scale - 0.5
                    } else {
                        0.0
                    }
                }
                "tf_crop_and_resize" => {
                    let v = if len > 1.0 {
                        roi.0 * (n - 1.0) + x * (roi.1 - roi.0) * (n - 1.0) / (len - 1.0)
                    } else {
                        0.5 * (roi.0 + roi.1) * (n - 1.0)
                    };
                    if v < 0.0 || v > n - 1.0 {
                        return None;
                    }
                    v
                }
                "half_pixel_symmetric" => {
                    let adj = out as f64 / (scale * n);
                    let off = n / 2.0 * (1.0 - adj);
                    off + (x + 0.5) / scale - 0.5
                }
                _ => (x + 0.5) / scale - 0.5,
            };
            let clampi = |i: i64| i.clamp(0, inp as i64 - 1) as usize;
            Some(match cfg.mode.as_str() {
                "nearest" => {
                    let i = match cfg.nearest.as_str() {
                        "floor" => xo.floor(),
                        "ceil" => xo.ceil(),
                        "round_prefer_ceil" => {
                            if xo.fract() == 0.5 {
                                xo.ceil()
                            } else {
                                xo.round()
                            }
                        }
                        _ => {
                            if xo.fract() == 0.5 {
                                xo.floor()
                            } else {
                                xo.round()
                            }
                        }
                    };
                    vec![(clampi(i as i64), 1.0)]
                }
                "linear" => {
                    let xc = xo.clamp(0.0, n - 1.0);
                    let x0 = xc.floor();
                    let w = xc - x0;
                    vec![(clampi(x0 as i64), 1.0 - w), (clampi(x0 as i64 + 1), w)]
                }
                _ => {
                    let x0 = xo.floor();
                    let c = cubic_coeffs(xo - x0, cfg.cubic_a);
                    let mut t: Vec<(i64, f64)> = (0..4)
                        .map(|k| (x0 as i64 - 1 + k as i64, c[k as usize]))
                        .collect();
                    if cfg.exclude_outside {
                        t.retain(|&(i, _)| (0..inp as i64).contains(&i));
                        let s: f64 = t.iter().map(|p| p.1).sum();
                        t.iter_mut().for_each(|p| p.1 /= s);
                    }
                    t.into_iter().map(|(i, w)| (clampi(i), w)).collect()
                }
            })
        })
        .collect()
}

fn resize(m: &Module, op: OpId, x: &T, ts: &[Option<T>]) -> Option<(Vec<usize>, Vec<f64>)> {
    if attr_i64(m, op, "antialias", 0) != 0 {
        return None;
    }
    let rank = x.rank();
    let input = |i: usize| ts.get(i).and_then(Option::as_ref).filter(|t| t.len() > 0);
    let axes = attr_axes(m, op, rank)?;
    let mut scales = vec![1.0; rank];
    let mut out = x.shape.clone();
    let roi_t = input(1).map(T::floats);
    let mut roi = vec![(0.0, 1.0); rank];
    if let Some(r) = &roi_t {
        for (k, &a) in axes.iter().enumerate() {
            roi[a] = (*r.get(k)?, *r.get(k + axes.len())?);
        }
    }
    if let Some(s) = input(2) {
        for (k, &a) in axes.iter().enumerate() {
            scales[a] = s.f(k);
            out[a] = (x.shape[a] as f64 * scales[a]).floor() as usize;
        }
    } else {
        let sz = input(3)?.ints();
        let policy =
            attr_str(m, op, "keep_aspect_ratio_policy").unwrap_or_else(|| "stretch".into());
        let ratios: Vec<f64> = axes
            .iter()
            .enumerate()
            .map(|(k, &a)| sz[k] as f64 / x.shape[a] as f64)
            .collect();
        for (k, &a) in axes.iter().enumerate() {
            let s = match policy.as_str() {
                "not_larger" => ratios.iter().copied().fold(f64::INFINITY, f64::min),
                "not_smaller" => ratios.iter().copied().fold(0.0, f64::max),
                _ => ratios[k],
            };
            scales[a] = s;
            out[a] = if policy == "stretch" {
                sz[k] as usize
            } else {
                (s * x.shape[a] as f64).round() as usize
            };
        }
    }
    let cfg = ResizeCfg {
        mode: attr_str(m, op, "mode").unwrap_or_else(|| "nearest".into()),
        coord: attr_str(m, op, "coordinate_transformation_mode")
            .unwrap_or_else(|| "half_pixel".into()),
        nearest: attr_str(m, op, "nearest_mode").unwrap_or_else(|| "round_prefer_floor".into()),
        cubic_a: attr_f64(m, op, "cubic_coeff_a", -0.75),
        exclude_outside: attr_i64(m, op, "exclude_outside", 0) != 0,
        extrapolation: attr_f64(m, op, "extrapolation_value", 0.0),
    };
    let taps: Vec<Vec<Option<Taps>>> = (0..rank)
        .map(|d| {
            if x.shape[d] == out[d] && scales[d] == 1.0 && cfg.coord != "tf_crop_and_resize" {
                (0..out[d]).map(|i| Some(vec![(i, 1.0)])).collect()
            } else {
                dim_taps(&cfg, x.shape[d], out[d], scales[d], roi[d])
            }
        })
        .collect();
    let xs = row_strides(&x.shape);
    let xv = x.floats();
    let n: usize = out.iter().product();
    let mut idx = vec![0; rank];
    let mut res = Vec::with_capacity(n);
    for f in 0..n {
        unravel(f, &out, &mut idx);
        let per: Option<Vec<&Taps>> = (0..rank).map(|d| taps[d][idx[d]].as_ref()).collect();
        let Some(per) = per else {
            res.push(cfg.extrapolation);
            continue;
        };
        // Sum over the product of the per-dimension taps.
        let mut acc = 0.0;
        let counts: Vec<usize> = per.iter().map(|t| t.len()).collect();
        let total: usize = counts.iter().product();
        let mut k = vec![0; rank];
        for c in 0..total {
            unravel(c, &counts, &mut k);
            let (mut off, mut w) = (0, 1.0);
            for d in 0..rank {
                let (i, wt) = per[d][k[d]];
                off += i * xs[d];
                w *= wt;
            }
            acc += w * xv[off];
        }
        res.push(acc);
    }
    Some((out, res))
}

fn int_range(d: DType) -> Option<(f64, f64)> {
    let bits = d.bits() as i32;
    match d.class() {
        NumClass::Signed => Some((-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)),
        NumClass::Unsigned => Some((0.0, 2f64.powi(bits) - 1.0)),
        NumClass::Float => None,
    }
}

/// Index into a scale/zero-point tensor for element `idx` of the input.
fn param_index(p: &T, idx: &[usize], axis: usize, block: usize) -> usize {
    match p.rank() {
        _ if p.len() == 1 => 0,
        1 if block == 0 => idx[axis],
        _ => {
            let mut j = idx.to_vec();
            j[axis] /= block.max(1);
            let s = row_strides(&p.shape);
            j.iter().zip(&s).map(|(a, b)| a * b).sum()
        }
    }
}

fn quant(m: &Module, op: OpId, kind: &str, x: &T, ts: &[Option<T>]) -> Result<Option<T>> {
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let scale = input(1).ok_or_else(|| e("scale"))?;
    let zp = input(2);
    let rank = x.rank();
    // Per-tensor parameters (the scalar case) ignore the axis.
    let axis = norm_axis(attr_i64(m, op, "axis", 1), rank).unwrap_or(0);
    let block = attr_i64(m, op, "block_size", 0).max(0) as usize;
    let dtype = result_dtype(m, op, 0)?;
    let (sv, xv) = (scale.floats(), x.floats());
    let zp = zp.map(|p| (p, p.floats()));
    // The parameter of element `idx`: per tensor, axis or block.
    let param = |p: &T, vals: &[f64], idx: &[usize], what: &str| -> Result<f64> {
        let i = param_index(p, idx, axis, block);
        vals.get(i).copied().ok_or_else(|| e(what))
    };
    let mut idx = vec![0; rank];
    let mut out = Vec::with_capacity(x.len());
    for (f, &v) in xv.iter().enumerate() {
        unravel(f, &x.shape, &mut idx);
        let s = param(scale, &sv, &idx, "scale shape")?;
        let z = match &zp {
            Some((p, zv)) => param(p, zv, &idx, "zero point shape")?,
            None => 0.0,
        };
        out.push(if kind == "DequantizeLinear" {
            (v - z) * s
        } else {
            let q = round_to(x.dtype, v / s).round_ties_even() + z;
            match int_range(dtype) {
                Some((lo, hi)) => q.clamp(lo, hi),
                None => v / s + z,
            }
        });
    }
    Ok(Some(T::new(dtype, x.shape.clone(), from_f64s(dtype, out))))
}

/// NegativeLogLikelihoodLoss on log-probabilities `lp` [N, C, d...].
fn nll(m: &Module, op: OpId, lp: &T, target: &T, weight: Option<&T>, dtype: DType) -> Option<T> {
    let red = attr_str(m, op, "reduction").unwrap_or_else(|| "mean".into());
    let ignore = m.attr(op, "ignore_index").and_then(|a| a.as_int());
    let (n, c) = (lp.shape[0], *lp.shape.get(1)?);
    let inner: usize = lp.shape[2..].iter().product();
    let t = target.ints();
    let w = weight.map(T::floats);
    let lv = lp.floats();
    let mut loss = vec![0.0; n * inner];
    let mut wsum = 0.0;
    for b in 0..n {
        for i in 0..inner {
            let k = t[b * inner + i];
            if Some(k) == ignore {
                continue;
            }
            let ku = usize::try_from(k).ok().filter(|&k| k < c)?;
            let wt = w.as_ref().map_or(1.0, |w| w[ku]);
            loss[b * inner + i] = -lv[(b * c + ku) * inner + i] * wt;
            wsum += wt;
        }
    }
    Some(match red.as_str() {
        "none" => T::new(dtype, target.shape.clone(), from_f64s(dtype, loss)),
        "sum" => T::new(dtype, vec![], from_f64s(dtype, vec![loss.iter().sum()])),
        _ => T::new(
            dtype,
            vec![],
            from_f64s(dtype, vec![loss.iter().sum::<f64>() / wsum]),
        ),
    })
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    if !matches!(
        kind,
        "Resize"
            | "GridSample"
            | "QuantizeLinear"
            | "DequantizeLinear"
            | "NegativeLogLikelihoodLoss"
            | "SoftmaxCrossEntropyLoss"
    ) {
        return Ok(None);
    }
    let ts: Vec<Option<T>> = inputs.iter().map(|i| i.as_ref().map(T::of)).collect();
    let Some(Some(x)) = ts.first() else {
        return Ok(None);
    };
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let dtype = result_dtype(m, op, 0)?;
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let outs: Vec<T> = match kind {
        "Resize" => {
            let Some((s, v)) = resize(m, op, x, &ts) else {
                return Ok(None);
            };
            vec![T::new(dtype, s, from_f64s(dtype, v))]
        }
        "GridSample" => {
            let grid = input(1).ok_or_else(|| e("grid"))?;
            let Some((s, v)) = grid_sample(m, op, x, grid) else {
                return Ok(None);
            };
            vec![T::new(dtype, s, from_f64s(dtype, v))]
        }
        "QuantizeLinear" | "DequantizeLinear" => match quant(m, op, kind, x, &ts)? {
            Some(t) => vec![t],
            None => return Ok(None),
        },
        "NegativeLogLikelihoodLoss" => {
            let t = input(1).ok_or_else(|| e("target"))?;
            vec![nll(m, op, x, t, input(2), dtype).ok_or_else(|| e("target out of range"))?]
        }
        _ => {
            // Log-softmax over the class axis, then NLL.
            let t = input(1).ok_or_else(|| e("labels"))?;
            let (n, c) = (x.shape[0], *x.shape.get(1).ok_or_else(|| e("rank"))?);
            let inner: usize = x.shape[2..].iter().product();
            let xv = x.floats();
            let mut lp = vec![0.0; xv.len()];
            for b in 0..n {
                for i in 0..inner {
                    let at = |k: usize| (b * c + k) * inner + i;
                    let mx = (0..c).map(|k| xv[at(k)]).fold(f64::NEG_INFINITY, f64::max);
                    let s: f64 = (0..c).map(|k| (xv[at(k)] - mx).exp()).sum();
                    for k in 0..c {
                        lp[at(k)] = xv[at(k)] - mx - s.ln();
                    }
                }
            }
            let lpt = x.with_floats(x.dtype, lp);
            let mut outs =
                vec![nll(m, op, &lpt, t, input(2), dtype).ok_or_else(|| e("label out of range"))?];
            if m.results(op).len() > 1 {
                outs.push(lpt);
            }
            outs
        }
    };
    super::dense::packed(m, op, outs)
}

/// `v` rounded to the precision of float dtype `d` (the reference divides
/// in the input's precision before rounding to an integer).
fn round_to(d: DType, v: f64) -> f64 {
    match ir::elements::encode(d, ir::elements::WideNum::from_f64(v)) {
        Some(raw) if d.class() == NumClass::Float => ir::elements::decode(d, raw).f64(),
        _ => v,
    }
}

fn gs_reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let rng = hi - lo;
    if x < lo {
        let dx = lo - x;
        let n = (dx / rng) as i64;
        let r = dx - n as f64 * rng;
        if n % 2 == 0 {
            lo + r
        } else {
            hi - r
        }
    } else if x > hi {
        let dx = x - hi;
        let n = (dx / rng) as i64;
        let r = dx - n as f64 * rng;
        if n % 2 == 0 {
            hi - r
        } else {
            lo + r
        }
    } else {
        x
    }
}

/// GridSample: per-dimension taps like the reference's nested 1-D
/// interpolation, with zeros/border/reflection padding.
fn grid_sample(m: &Module, op: OpId, x: &T, grid: &T) -> Option<(Vec<usize>, Vec<f64>)> {
    let mode = match attr_str(m, op, "mode").as_deref() {
        Some("nearest") => "nearest",
        Some("cubic" | "bicubic") => "cubic",
        _ => "linear",
    };
    let pad = attr_str(m, op, "padding_mode").unwrap_or_else(|| "zeros".into());
    let align = attr_i64(m, op, "align_corners", 0) != 0;
    let (n, c) = (x.shape[0], *x.shape.get(1)?);
    let dims = &x.shape[2..];
    let r = dims.len();
    let out_sp = grid.shape.get(1..grid.rank().checked_sub(1)?)?.to_vec();
    let nsp: usize = out_sp.iter().product();
    let (xv, gv) = (x.floats(), grid.floats());
    let xs = row_strides(&x.shape);
    let border: Vec<(f64, f64)> = dims
        .iter()
        .map(|&d| {
            if align {
                (0.0, d as f64 - 1.0)
            } else {
                (-0.5, d as f64 - 0.5)
            }
        })
        .collect();
    let mut out = Vec::with_capacity(n * c * nsp);
    let mut taps: Vec<Vec<(i64, f64)>> = vec![Vec::new(); r];
    for b in 0..n {
        for ch in 0..c {
            for p in 0..nsp {
                for (i, t) in taps.iter_mut().enumerate() {
                    let g = gv[(b * nsp + p) * r + (r - 1 - i)];
                    let len = dims[i] as f64;
                    let mut v = if align {
                        (g + 1.0) / 2.0 * (len - 1.0)
                    } else {
                        ((g + 1.0) * len - 1.0) / 2.0
                    };
                    if mode == "nearest" {
                        v = v.round_ties_even();
                    }
                    let (lo, hi) = border[i];
                    if v < lo || v > hi {
                        if pad == "border" {
                            v = v.clamp(0.0, len - 1.0);
                        } else if pad == "reflection" {
                            v = gs_reflect(v, lo, hi);
                        }
                    }
                    let x0 = v.floor();
                    let f = v - x0;
                    *t = match mode {
                        "nearest" => vec![(v as i64, 1.0)],
                        "linear" => vec![(x0 as i64, 1.0 - f), (x0 as i64 + 1, f)],
                        _ => {
                            let k = cubic_coeffs(f, -0.75);
                            (0..4).map(|j| (x0 as i64 - 1 + j as i64, k[j])).collect()
                        }
                    };
                }
                let counts: Vec<usize> = taps.iter().map(Vec::len).collect();
                let total: usize = counts.iter().product();
                let mut k = vec![0; r];
                let mut acc = 0.0;
                'tap: for t in 0..total {
                    unravel(t, &counts, &mut k);
                    let (mut off, mut w) = (b * xs[0] + ch * xs[1], 1.0);
                    for i in 0..r {
                        let (mut idx, wt) = taps[i][k[i]];
                        let d = dims[i] as i64;
                        if !(0..d).contains(&idx) {
                            match pad.as_str() {
                                "border" => idx = idx.clamp(0, d - 1),
                                "reflection" => {
                                    idx = (gs_reflect(idx as f64, border[i].0, border[i].1) as i64)
                                        .clamp(0, d - 1)
                                }
                                _ => continue 'tap,
                            }
                        }
                        off += idx as usize * xs[2 + i];
                        w *= wt;
                    }
                    acc += w * xv[off];
                }
                out.push(acc);
            }
        }
    }
    let mut shape = vec![n, c];
    shape.extend_from_slice(&out_sp);
    Some((shape, out))
}
