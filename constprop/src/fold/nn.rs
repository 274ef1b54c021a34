//! Neural-network kernels: Resize, GridSample, NegativeLogLikelihoodLoss
//! and SoftmaxCrossEntropyLoss.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{Fold, Op};
use ir::elements::DType;
use onnx::ops;

/// Input positions and weights feeding one output index of a dimension.
type Taps = Vec<(usize, f64)>;

struct ResizeCfg<'a> {
    mode: &'a str,
    coord: &'a str,
    nearest: &'a str,
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
            let xo = match cfg.coord {
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
            Some(match cfg.mode {
                "nearest" => {
                    let i = match cfg.nearest {
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

/// Resize's output shape, scales and region of interest per dim.
struct Geometry {
    out: Vec<usize>,
    scales: Vec<f64>,
    roi: Vec<(f64, f64)>,
}

/// Resize's geometry; `None` leaves the op.
fn resize_geometry(
    v: &ops::Resize<'_>,
    x: &T,
    axes: &[usize],
    ts: &super::Dense,
) -> Option<Geometry> {
    let rank = x.rank();
    let input = |i: usize| ts.get(i).filter(|t| t.len() > 0);
    let mut scales = vec![1.0; rank];
    let mut out = x.shape.clone();
    let mut roi = vec![(0.0, 1.0); rank];
    if let Some(r) = input(1).map(T::floats) {
        for (k, &a) in axes.iter().enumerate() {
            roi[a] = (*r.get(k)?, *r.get(k + axes.len())?);
        }
    }
    if let Some(s) = input(2) {
        for (k, &a) in axes.iter().enumerate() {
            scales[a] = s.f(k);
            out[a] = (x.shape[a] as f64 * scales[a]).floor() as usize;
        }
        return Some(Geometry { out, scales, roi });
    }
    let sz = input(3)?.ints();
    let policy = v.keep_aspect_ratio_policy();
    let ratios: Vec<f64> = axes
        .iter()
        .enumerate()
        .map(|(k, &a)| sz[k] as f64 / x.shape[a] as f64)
        .collect();
    for (k, &a) in axes.iter().enumerate() {
        let s = match policy {
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
    Some(Geometry { out, scales, roi })
}

/// Each output value: the taps' weighted sum over the product of the
/// per-dimension taps (`extrapolation` where one falls outside).
fn interpolate(x: &T, out: &[usize], taps: &[Vec<Option<Taps>>], extrapolation: f64) -> Vec<f64> {
    let rank = x.rank();
    let xs = row_strides(&x.shape);
    let xv = x.floats();
    let n: usize = out.iter().product();
    let mut idx = vec![0; rank];
    let mut res = Vec::with_capacity(n);
    for f in 0..n {
        unravel(f, out, &mut idx);
        let per: Option<Vec<&Taps>> = (0..rank).map(|d| taps[d][idx[d]].as_ref()).collect();
        let Some(per) = per else {
            res.push(extrapolation);
            continue;
        };
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
    res
}

pub fn resize(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::Resize::of(o.m, o.op);
    if v.antialias() != 0 {
        return Ok(None);
    }
    let Some(axes) = onnx::axis::or_all(v.axes().as_deref(), x.rank()) else {
        return Ok(None);
    };
    let Some(Geometry { out, scales, roi }) = resize_geometry(&v, x, &axes, &ts) else {
        return Ok(None);
    };
    let cfg = ResizeCfg {
        mode: v.mode(),
        coord: v.coordinate_transformation_mode(),
        nearest: v.nearest_mode(),
        cubic_a: v.cubic_coeff_a(),
        exclude_outside: v.exclude_outside() != 0,
        extrapolation: v.extrapolation_value(),
    };
    let taps: Vec<Vec<Option<Taps>>> = (0..x.rank())
        .map(|d| {
            if x.shape[d] == out[d] && scales[d] == 1.0 && cfg.coord != "tf_crop_and_resize" {
                (0..out[d]).map(|i| Some(vec![(i, 1.0)])).collect()
            } else {
                dim_taps(&cfg, x.shape[d], out[d], scales[d], roi[d])
            }
        })
        .collect();
    let vals = interpolate(x, &out, &taps, cfg.extrapolation);
    o.packed(vec![T::new(dtype, out, from_f64s(dtype, vals))])
}

/// NegativeLogLikelihoodLoss on log-probabilities `lp` [N, C, d...].
fn nll(
    (reduction, ignore): (&str, Option<i64>),
    lp: &T,
    target: &T,
    weight: Option<&T>,
    dtype: DType,
) -> Option<T> {
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
    Some(match reduction {
        "none" => T::new(dtype, target.shape.clone(), from_f64s(dtype, loss)),
        "sum" => T::new(dtype, vec![], from_f64s(dtype, vec![loss.iter().sum()])),
        _ => T::new(
            dtype,
            vec![],
            from_f64s(dtype, vec![loss.iter().sum::<f64>() / wsum]),
        ),
    })
}

pub fn nll_loss(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::NegativeLogLikelihoodLoss::of(o.m, o.op);
    let t = ts.get(1).ok_or_else(|| o.err("target"))?;
    let attrs = (v.reduction(), v.ignore_index());
    let loss = nll(attrs, x, t, ts.get(2), dtype).ok_or_else(|| o.err("target out of range"))?;
    o.packed(vec![loss])
}

/// Log-softmax over the class axis, then NLL.
pub fn softmax_cross_entropy_loss(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let v = ops::SoftmaxCrossEntropyLoss::of(o.m, o.op);
    let t = ts.get(1).ok_or_else(|| o.err("labels"))?;
    let (n, c) = (x.shape[0], *x.shape.get(1).ok_or_else(|| o.err("rank"))?);
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
    let attrs = (v.reduction(), v.ignore_index());
    let loss = nll(attrs, &lpt, t, ts.get(2), dtype).ok_or_else(|| o.err("label out of range"))?;
    let mut outs = vec![loss];
    if o.nres() > 1 {
        outs.push(lpt);
    }
    o.packed(outs)
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

/// GridSample's interpolation `mode`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sampling {
    Nearest,
    Linear,
    Cubic,
}

/// GridSample's `padding_mode`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

struct GridCfg {
    mode: Sampling,
    pad: Padding,
    align: bool,
}

/// The taps along one input dim of size `len` for grid coordinate `g`.
fn grid_taps(cfg: &GridCfg, g: f64, len: f64, (lo, hi): (f64, f64)) -> Vec<(i64, f64)> {
    let mut v = if cfg.align {
        (g + 1.0) / 2.0 * (len - 1.0)
    } else {
        ((g + 1.0) * len - 1.0) / 2.0
    };
    if cfg.mode == Sampling::Nearest {
        v = v.round_ties_even();
    }
    if v < lo || v > hi {
        match cfg.pad {
            Padding::Border => v = v.clamp(0.0, len - 1.0),
            Padding::Reflection => v = gs_reflect(v, lo, hi),
            Padding::Zeros => {}
        }
    }
    let x0 = v.floor();
    let f = v - x0;
    match cfg.mode {
        Sampling::Nearest => vec![(v as i64, 1.0)],
        Sampling::Linear => vec![(x0 as i64, 1.0 - f), (x0 as i64 + 1, f)],
        Sampling::Cubic => {
            let k = cubic_coeffs(f, -0.75);
            (0..4).map(|j| (x0 as i64 - 1 + j as i64, k[j])).collect()
        }
    }
}

/// The weighted sum of the taps of one output position; `base` is the
/// offset of its (batch, channel) plane, `xs` the input's strides.
fn grid_value(
    cfg: &GridCfg,
    taps: &[Vec<(i64, f64)>],
    (dims, border): (&[usize], &[(f64, f64)]),
    xv: &[f64],
    (base, xs): (usize, &[usize]),
) -> f64 {
    let r = taps.len();
    let counts: Vec<usize> = taps.iter().map(Vec::len).collect();
    let total: usize = counts.iter().product();
    let mut k = vec![0; r];
    let mut acc = 0.0;
    'tap: for t in 0..total {
        unravel(t, &counts, &mut k);
        let (mut off, mut w) = (base, 1.0);
        for i in 0..r {
            let (mut idx, wt) = taps[i][k[i]];
            let d = dims[i] as i64;
            if !(0..d).contains(&idx) {
                match cfg.pad {
                    Padding::Border => idx = idx.clamp(0, d - 1),
                    Padding::Reflection => {
                        idx = (gs_reflect(idx as f64, border[i].0, border[i].1) as i64)
                            .clamp(0, d - 1)
                    }
                    Padding::Zeros => continue 'tap,
                }
            }
            off += idx as usize * xs[2 + i];
            w *= wt;
        }
        acc += w * xv[off];
    }
    acc
}

/// GridSample: per-dimension taps like the reference's nested 1-D
/// interpolation, with zeros/border/reflection padding.
pub fn grid_sample(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let grid = ts.get(1).ok_or_else(|| o.err("grid"))?;
    let v = ops::GridSample::of(o.m, o.op);
    let cfg = GridCfg {
        mode: match v.mode() {
            "nearest" => Sampling::Nearest,
            "cubic" | "bicubic" => Sampling::Cubic,
            _ => Sampling::Linear,
        },
        pad: match v.padding_mode() {
            "border" => Padding::Border,
            "reflection" => Padding::Reflection,
            _ => Padding::Zeros,
        },
        align: v.align_corners() != 0,
    };
    let (Some(&n), Some(&c)) = (x.shape.first(), x.shape.get(1)) else {
        return Ok(None);
    };
    let dims = &x.shape[2..];
    let r = dims.len();
    let Some(out_sp) = grid
        .rank()
        .checked_sub(1)
        .and_then(|e| grid.shape.get(1..e))
    else {
        return Ok(None);
    };
    let nsp: usize = out_sp.iter().product();
    let (xv, gv) = (x.floats(), grid.floats());
    let xs = row_strides(&x.shape);
    let border: Vec<(f64, f64)> = dims
        .iter()
        .map(|&d| {
            if cfg.align {
                (0.0, d as f64 - 1.0)
            } else {
                (-0.5, d as f64 - 0.5)
            }
        })
        .collect();
    let mut out = Vec::with_capacity(n * c * nsp);
    for b in 0..n {
        for ch in 0..c {
            for p in 0..nsp {
                let taps: Vec<Vec<(i64, f64)>> = (0..r)
                    .map(|i| {
                        let g = gv[(b * nsp + p) * r + (r - 1 - i)];
                        grid_taps(&cfg, g, dims[i] as f64, border[i])
                    })
                    .collect();
                let base = b * xs[0] + ch * xs[1];
                out.push(grid_value(&cfg, &taps, (dims, &border), &xv, (base, &xs)));
            }
        }
    }
    let mut shape = vec![n, c];
    shape.extend_from_slice(out_sp);
    o.packed(vec![T::new(dtype, shape, from_f64s(dtype, out))])
}
