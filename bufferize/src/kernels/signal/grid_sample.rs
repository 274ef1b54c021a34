//! GridSample (2-D and 3-D): nearest, (bi/tri)linear and bicubic
//! sampling, zeros/border/reflection padding, align_corners. Each output
//! element is a tensor product of per-dim taps, as Resize does. AffineGrid
//! makes such grids; RoiAlign samples bilinearly per region bin.

use crate::convert::{dims, Lowering};
use crate::kernels::signal::interp::{self, f64c, f_to_idx, idx_to_f, Tap};
use crate::kernels::support::scalar;
use crate::kernels::{
    support::alloc_result, support::elem_of, support::finish, support::shape_of,
    support::store_converted,
};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpF};
use ir::dialects::op_error;
use ir::{Builder, Diagnostic, OpId, Result, Type, ValueId};
use onnx::ops;

/// How GridSample samples: the interpolation, the padding and whether
/// -1 and 1 are the centers of the corner pixels.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Interp {
    Nearest,
    Linear,
    Cubic,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

struct Sampling {
    mode: Interp,
    padding: Padding,
    align: bool,
}

impl Sampling {
    fn of(b: &Builder<'_>, op: OpId) -> Sampling {
        let attrs = ops::GridSample::of(b.m, op);
        let mode = match attrs.mode() {
            "bilinear" | "linear" => Interp::Linear,
            "bicubic" | "cubic" => Interp::Cubic,
            _ => Interp::Nearest,
        };
        let padding = match attrs.padding_mode() {
            "border" => Padding::Border,
            "reflection" => Padding::Reflection,
            _ => Padding::Zeros,
        };
        Sampling {
            mode,
            padding,
            align: attrs.align_corners() != 0,
        }
    }

    /// The reflection range [lo, n + hi] of a dim of size `n` (f64).
    fn reflect(&self, b: &mut Builder<'_>, x: ValueId, n: ValueId) -> ValueId {
        let (lo, hi) = if self.align {
            (0.0, -1.0)
        } else {
            (-0.5, -0.5)
        };
        // hi is relative to the size: computed at runtime.
        let hc = f64c(b, hi);
        let hi_v = b.addf(n, hc);
        reflect_dyn(b, x, lo, hi_v)
    }

    /// The taps of normalized grid coordinate `g` (f64) in a dim of
    /// `size`, padding applied; `one` and `zero` are f64 constants.
    fn taps(
        &self,
        b: &mut Builder<'_>,
        bounds: &Bounds,
        g: ValueId,
        size: ValueId,
        [one, zero]: [ValueId; 2],
    ) -> Vec<Tap> {
        let n = idx_to_f(b, size);
        let g1 = b.addf(g, one);
        let coord = if self.align {
            let nm1 = b.subf(n, one);
            let h = f64c(b, 0.5);
            let t = b.mulf(g1, h);
            b.mulf(t, nm1)
        } else {
            let t = b.mulf(g1, n);
            let t = b.subf(t, one);
            let h = f64c(b, 0.5);
            b.mulf(t, h)
        };
        let last_i = b.sub(size, bounds.one);
        let last = idx_to_f(b, last_i);
        let coord = match self.padding {
            Padding::Border => {
                let c = b.maximumf(coord, zero);
                b.minimumf(c, last)
            }
            Padding::Reflection => {
                let r = self.reflect(b, coord, n);
                let c = b.maximumf(r, zero);
                b.minimumf(c, last)
            }
            Padding::Zeros => coord,
        };
        // Taps: (index, weight) before padding is applied.
        let raw = match self.mode {
            Interp::Nearest => {
                let r = b.roundeven(coord);
                vec![(f_to_idx(b, r), one)]
            }
            Interp::Linear => interp::taps(b, None, coord),
            Interp::Cubic => interp::taps(b, Some(-0.75), coord),
        };
        let mut taps = Vec::with_capacity(raw.len());
        for (i, w) in raw {
            let c = b.maxsi(i, bounds.zero);
            let c = b.minsi(c, last_i);
            // Out-of-range taps: 0 with zeros padding, else the edge
            // (border) or the reflected sample (cubic reflection).
            let idx = if self.padding == Padding::Reflection && self.mode == Interp::Cubic {
                let fi = idx_to_f(b, i);
                let r = self.reflect(b, fi, n);
                let r = b.roundeven(r);
                let r = f_to_idx(b, r);
                let r = b.maxsi(r, bounds.zero);
                b.minsi(r, last_i)
            } else {
                c
            };
            let keep = (self.padding == Padding::Zeros).then(|| {
                let ge = b.cmp(Cmp::Ge, i, bounds.zero);
                let le = b.cmp(Cmp::Le, i, last_i);
                b.andi(ge, le)
            });
            taps.push(Tap { idx, w, keep });
        }
        taps
    }
}

pub fn grid_sample(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::GridSample::X)?;
    let grid = cx.input(b.m, op, ops::GridSample::GRID)?;
    let rank = shape_of(b.m, x).len();
    let sp = rank.saturating_sub(2);
    if !(1..=3).contains(&sp) || shape_of(b.m, grid).len() != rank {
        return Err(op_error(b.m, op, "GridSample expects 3-D to 5-D inputs"));
    }
    let sampling = Sampling::of(b, op);
    let dx = dims(b, x);
    let dg = dims(b, grid);
    let mut od = vec![dx[0], dx[1]];
    od.extend_from_slice(&dg[1..1 + sp]);
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let one = f64c(b, 1.0);
        let zero = f64c(b, 0.0);
        let mut per_dim = Vec::with_capacity(sp);
        for d in 0..sp {
            // The grid's last dim lists (x, y, z): x is the last spatial dim.
            let comp = b.const_index((sp - 1 - d) as i64);
            let mut gi = vec![ivs[0]];
            gi.extend_from_slice(&ivs[2..]);
            gi.push(comp);
            let g = b.load(grid, &gi);
            let g = match scalar::convert(b, op, g, &Type::f64()) {
                Ok(g) => g,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            per_dim.push(sampling.taps(b, &bounds, g, dx[2 + d], [one, zero]));
        }
        let r = interp::weighted_sum(b, op, x, &[ivs[0], ivs[1]], &per_dim)
            .and_then(|acc| scalar::convert(b, op, acc, &elem));
        match r {
            Ok(r) => b.store(r, out, ivs),
            Err(e) => err = Some(e),
        }
    });
    finish(err, vec![out])
}

/// Reflects `x` into [lo, hi] as the ONNX reference does (any number of
/// flips); a degenerate range maps to 0.
fn reflect_dyn(b: &mut Builder<'_>, x: ValueId, lo: f64, hi: ValueId) -> ValueId {
    let l = f64c(b, lo);
    let s = b.subf(hi, l);
    let zero = f64c(b, 0.0);
    let degenerate = b.cmpf(CmpF::Ole, s, zero);
    let one = f64c(b, 1.0);
    let s_safe = b.select(degenerate, one, s);
    let d = b.subf(x, l);
    let d = b.absf(d);
    let q = b.divf(d, s_safe);
    let flips = b.floor(q);
    let fq = b.mulf(flips, s_safe);
    let extra = b.subf(d, fq);
    let two = f64c(b, 2.0);
    let half = b.divf(flips, two);
    let hf = b.floor(half);
    let hf2 = b.mulf(hf, two);
    let odd = b.cmpf(CmpF::One, hf2, flips);
    let a = b.addf(l, extra);
    let c = b.subf(hi, extra);
    let r = b.select(odd, c, a);
    b.select(degenerate, zero, r)
}

/// AffineGrid: `grid[n, spatial..., :] = theta[n] · (x, y[, z], 1)` with the
/// normalized coordinates of each output position (in f64, as the
/// reference), for `size = [N, C, (D,) H, W]`.
pub fn affine_grid(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let theta = cx.input(b.m, op, ops::AffineGrid::THETA)?;
    let size = cx.input(b.m, op, ops::AffineGrid::SIZE)?;
    let sp = match (
        shape_of(b.m, theta).as_slice(),
        shape_of(b.m, size).as_slice(),
    ) {
        ([_, r, c], [len]) if *len >= 4 && *r == len - 2 && *c == len - 1 => {
            r.unsigned_abs() as usize
        }
        _ => {
            return Err(op_error(
                b.m,
                op,
                "expects theta [N, k, k+1] and size of length k+2",
            ))
        }
    };
    let align = ops::AffineGrid::of(b.m, op).align_corners() != 0;
    let n = crate::kernels::support::index::index_at(b, size, Some(0));
    let spatial: Vec<ValueId> = (0..sp)
        .map(|d| crate::kernels::support::index::index_at(b, size, Some(2 + d as i64)))
        .collect();
    let mut od = vec![n];
    od.extend_from_slice(&spatial);
    od.push(b.const_index(sp as i64));
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, theta);
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let (one, two) = (f64c(b, 1.0), f64c(b, 2.0));
        // Homogeneous coordinates: the last spatial dim first (x, y, z).
        let mut coords = Vec::with_capacity(sp + 1);
        for d in (0..sp).rev() {
            let len = idx_to_f(b, spatial[d]);
            let i = idx_to_f(b, ivs[1 + d]);
            let c = if align {
                let lm1 = b.subf(len, one);
                let step = b.divf(two, lm1);
                let t = b.mulf(i, step);
                b.subf(t, one)
            } else {
                let step = b.divf(two, len);
                let h = f64c(b, 0.5);
                let hs = b.mulf(step, h);
                let start = b.subf(hs, one);
                let t = b.mulf(i, step);
                b.addf(start, t)
            };
            coords.push(c);
        }
        coords.push(one);
        let row = ivs[sp + 1];
        let mut acc = f64c(b, 0.0);
        for (j, &c) in coords.iter().enumerate() {
            let jv = b.const_index(j as i64);
            let t = b.load(theta, &[ivs[0], row, jv]);
            let t = match scalar::convert(b, op, t, &Type::f64()) {
                Ok(t) => t,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            let p = b.mulf(t, c);
            acc = b.addf(acc, p);
        }
        store_converted(b, op, acc, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}

/// RoiAlign's settings: the pooled size, samples per bin, the scale of
/// the ROI coordinates and the half-pixel offset.
struct RoiCfg {
    half_pixel: bool,
    is_max: bool,
    oh: i64,
    ow: i64,
    ratio: i64,
    scale: f64,
}

/// Bilinear sampling of one ROI: its start (y, x), bin sizes, samples per
/// bin and the input's height and width.
struct Roi {
    start: [ValueId; 2],
    bin: [ValueId; 2],
    grid: [ValueId; 2],
    len: [ValueId; 2],
}

/// One coordinate of a sample along an axis: the low and high
/// neighbours, the fraction and whether the sample counts.
struct Axis {
    low: ValueId,
    high: ValueId,
    frac: ValueId,
    inside: ValueId,
}

impl Roi {
    /// Sample `i` of bin `p` along axis `a` (0: y, 1: x).
    fn axis(&self, b: &mut Builder<'_>, bounds: &Bounds, a: usize, p: ValueId, i: ValueId) -> Axis {
        let (start, bin, grid, len) = (self.start[a], self.bin[a], self.grid[a], self.len[a]);
        let pf = idx_to_f(b, p);
        let t = b.mulf(pf, bin);
        let base = b.addf(start, t);
        let h = f64c(b, 0.5);
        let i_f = idx_to_f(b, i);
        let ih = b.addf(i_f, h);
        let gf = idx_to_f(b, grid);
        let step = b.divf(bin, gf);
        let t = b.mulf(ih, step);
        let v = b.addf(base, t);
        let lenf = idx_to_f(b, len);
        let m1 = f64c(b, -1.0);
        let lo_ok = b.cmpf(CmpF::Oge, v, m1);
        let hi_ok = b.cmpf(CmpF::Ole, v, lenf);
        let inside = b.andi(lo_ok, hi_ok);
        let z = f64c(b, 0.0);
        let v = b.maximumf(v, z);
        let low = b.floor(v);
        let low = f_to_idx(b, low);
        let last = b.sub(len, bounds.one);
        let at_end = b.cmp(Cmp::Ge, low, last);
        let low = b.select(at_end, last, low);
        let next = b.add(low, bounds.one);
        let high = b.select(at_end, last, next);
        let lf = idx_to_f(b, low);
        let v = b.select(at_end, lf, v);
        let frac = b.subf(v, lf);
        Axis {
            low,
            high,
            frac,
            inside,
        }
    }
}

/// Per axis: the bin size and the samples per bin (`ratio`, or the ceil
/// of the bin size) of a ROI side from `lo` to `hi` split into `n` bins.
fn bin_grid(
    b: &mut Builder<'_>,
    cfg: &RoiCfg,
    (lo, hi): (ValueId, ValueId),
    n: i64,
    one: ValueId,
) -> (ValueId, ValueId) {
    let mut size = b.subf(hi, lo);
    if !cfg.half_pixel {
        size = b.maximumf(size, one);
    }
    let nf = f64c(b, n as f64);
    let bin = b.divf(size, nf);
    let grid = if cfg.ratio > 0 {
        b.const_index(cfg.ratio)
    } else {
        let q = b.divf(size, nf);
        let q = b.ceil(q);
        f_to_idx(b, q)
    };
    (bin, grid)
}

/// The four bilinear taps of sample `g` of bin (ph, pw) of channel `c` of
/// image `n`, weighted (0 outside), combined by max or sum into `acc`.
#[allow(clippy::too_many_arguments)]
fn sample(
    b: &mut Builder<'_>,
    op: OpId,
    cfg: &RoiCfg,
    roi: &Roi,
    bounds: &Bounds,
    (x, n, c): (ValueId, ValueId, ValueId),
    ([ph, pw], g, acc, one): ([ValueId; 2], &[ValueId], ValueId, ValueId),
    err: &mut Option<Diagnostic>,
) -> ValueId {
    let y = roi.axis(b, bounds, 0, ph, g[0]);
    let xa = roi.axis(b, bounds, 1, pw, g[1]);
    let inside = b.andi(y.inside, xa.inside);
    let z = f64c(b, 0.0);
    let (hy, hx) = (b.subf(one, y.frac), b.subf(one, xa.frac));
    let mut terms = Vec::with_capacity(4);
    for (yi, xi, wy, wx) in [
        (y.low, xa.low, hy, hx),
        (y.low, xa.high, hy, xa.frac),
        (y.high, xa.low, y.frac, hx),
        (y.high, xa.high, y.frac, xa.frac),
    ] {
        let w = b.mulf(wy, wx);
        let w = b.select(inside, w, z);
        let yi = b.select(inside, yi, bounds.zero);
        let xi = b.select(inside, xi, bounds.zero);
        let v = b.load(x, &[n, c, yi, xi]);
        let v = match scalar::convert(b, op, v, &Type::f64()) {
            Ok(v) => v,
            Err(e) => {
                *err = Some(e);
                z
            }
        };
        terms.push(b.mulf(w, v));
    }
    if cfg.is_max {
        let m = terms
            .iter()
            .skip(1)
            .fold(terms[0], |m, &t| b.maximumf(m, t));
        b.maximumf(acc, m)
    } else {
        terms.iter().fold(acc, |s, &t| b.addf(s, t))
    }
}

/// RoiAlign: each output bin of each ROI averages (or maxes) bilinear
/// samples on a `sampling_ratio`² grid (or ceil(bin size) per side), with
/// the reference's edge rules: samples beyond one pixel outside count as 0,
/// coordinates clamp to the last row/column. Coordinates in f64.
pub fn roi_align(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::RoiAlign::X)?;
    let rois = cx.input(b.m, op, ops::RoiAlign::ROIS)?;
    let batch = cx.input(b.m, op, ops::RoiAlign::BATCH_INDICES)?;
    if shape_of(b.m, x).len() != 4 || shape_of(b.m, rois).len() != 2 {
        return Err(op_error(b.m, op, "expects X [N, C, H, W] and rois [R, 4]"));
    }
    let attrs = ops::RoiAlign::of(b.m, op);
    let cfg = RoiCfg {
        half_pixel: attrs.coordinate_transformation_mode() == "half_pixel",
        is_max: attrs.mode() == "max",
        oh: attrs.output_height(),
        ow: attrs.output_width(),
        ratio: attrs.sampling_ratio(),
        scale: attrs.spatial_scale(),
    };
    let dx = dims(b, x);
    let dr = dims(b, rois);
    let (ohv, owv) = (b.const_index(cfg.oh), b.const_index(cfg.ow));
    let od = vec![dr[0], dx[1], ohv, owv];
    let out = alloc_result(b, op, 0, &od)?;
    let elem = elem_of(b.m, out);
    let bounds = Bounds::new(b);
    let (h_i, w_i) = (dx[2], dx[3]);
    let mut err = None;
    loop_nest(b, &bounds, &od, &mut |b, ivs| {
        let (r, c, ph, pw) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let f = |b: &mut Builder<'_>, k: i64| {
            let kv = b.const_index(k);
            let v = b.load(rois, &[r, kv]);
            scalar::convert(b, op, v, &Type::f64())
        };
        let coords: Result<Vec<ValueId>> = (0..4).map(|k| f(b, k)).collect();
        let coords = match coords {
            Ok(c) => c,
            Err(e) => {
                err = Some(e);
                return;
            }
        };
        let (sc, off) = (
            f64c(b, cfg.scale),
            f64c(b, if cfg.half_pixel { 0.5 } else { 0.0 }),
        );
        let start_end: Vec<ValueId> = coords
            .iter()
            .map(|&v| {
                let s = b.mulf(v, sc);
                b.subf(s, off)
            })
            .collect();
        let one = f64c(b, 1.0);
        // Per axis (h, w): start, bin size, samples per bin.
        let (bin_h, gh) = bin_grid(b, &cfg, (start_end[1], start_end[3]), cfg.oh, one);
        let (bin_w, gw) = bin_grid(b, &cfg, (start_end[0], start_end[2]), cfg.ow, one);
        let n = b.load(batch, &[r]);
        let n = crate::kernels::support::index::to_index(b, n);
        let cnt = b.mul(gh, gw);
        let cnt = b.maxsi(cnt, bounds.one);
        let roi = Roi {
            start: [start_end[1], start_end[0]],
            bin: [bin_h, bin_w],
            grid: [gh, gw],
            len: [h_i, w_i],
        };
        let init = f64c(b, if cfg.is_max { f64::NEG_INFINITY } else { 0.0 });
        let acc = reduce_nest(b, &bounds, &[gh, gw], init, &mut |b, g, acc| {
            let at = (x, n, c);
            sample(
                b,
                op,
                &cfg,
                &roi,
                &bounds,
                at,
                ([ph, pw], g, acc, one),
                &mut err,
            )
        });
        let r = if cfg.is_max {
            acc
        } else {
            let cf = idx_to_f(b, cnt);
            b.divf(acc, cf)
        };
        store_converted(b, op, r, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}
