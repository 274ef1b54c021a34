//! GridSample (2-D and 3-D): nearest, (bi/tri)linear and bicubic
//! sampling, zeros/border/reflection padding, align_corners. Each output
//! element is a tensor product of per-dim taps, as Resize does. AffineGrid
//! makes such grids; RoiAlign samples bilinearly per region bin.

use super::interp::{self, f64c, f_to_idx, idx_to_f, Tap};
use super::scalar;
use super::{
    alloc_result, attr_int, attr_str, elem_of, finish, load_at, shape_of, store_at, store_converted,
};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

pub fn grid_sample(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let grid = cx.input(b.m, op, 1)?;
    let rank = shape_of(b.m, x).len();
    let sp = rank.saturating_sub(2);
    if !(1..=3).contains(&sp) || shape_of(b.m, grid).len() != rank {
        return Err(op_error(b.m, op, "GridSample expects 3-D to 5-D inputs"));
    }
    let mode = match attr_str(b.m, op, "mode").unwrap_or("linear") {
        "bilinear" | "linear" => "linear",
        "bicubic" | "cubic" => "cubic",
        _ => "nearest",
    };
    let padding = attr_str(b.m, op, "padding_mode")
        .unwrap_or("zeros")
        .to_string();
    let align = attr_int(b.m, op, "align_corners", 0) != 0;
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
            let g = load_at(b, grid, &gi);
            let g = match scalar::convert(b, op, g, &Type::f64()) {
                Ok(g) => g,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            let size = dx[2 + d];
            let n = idx_to_f(b, size);
            let g1 = b.same("arith.addf", &[g, one]);
            let coord = if align {
                let nm1 = b.same("arith.subf", &[n, one]);
                let h = f64c(b, 0.5);
                let t = b.same("arith.mulf", &[g1, h]);
                b.same("arith.mulf", &[t, nm1])
            } else {
                let t = b.same("arith.mulf", &[g1, n]);
                let t = b.same("arith.subf", &[t, one]);
                let h = f64c(b, 0.5);
                b.same("arith.mulf", &[t, h])
            };
            let last_i = loops::sub(b, size, bounds.one);
            let last = idx_to_f(b, last_i);
            let coord = match padding.as_str() {
                "border" => {
                    let c = b.same("arith.maximumf", &[coord, zero]);
                    b.same("arith.minimumf", &[c, last])
                }
                "reflection" => {
                    let (lo, hi) = if align { (0.0, -1.0) } else { (-0.5, -0.5) };
                    // hi is relative to the size: computed at runtime below.
                    let hc = f64c(b, hi);
                    let hi_v = b.same("arith.addf", &[n, hc]);
                    let r = reflect_dyn(b, coord, lo, hi_v);
                    let c = b.same("arith.maximumf", &[r, zero]);
                    b.same("arith.minimumf", &[c, last])
                }
                _ => coord,
            };
            // Taps: (index, weight) before padding is applied.
            let raw = match mode {
                "nearest" => {
                    let r = b.same("math.roundeven", &[coord]);
                    vec![(f_to_idx(b, r), one)]
                }
                "linear" => interp::taps(b, None, coord),
                _ => interp::taps(b, Some(-0.75), coord),
            };
            let mut taps = Vec::with_capacity(raw.len());
            for (i, w) in raw {
                let c = b.same("arith.maxsi", &[i, bounds.zero]);
                let c = b.same("arith.minsi", &[c, last_i]);
                // Out-of-range taps: 0 with zeros padding, else the edge
                // (border) or the reflected sample (cubic reflection).
                let idx = if padding == "reflection" && mode == "cubic" {
                    let fi = idx_to_f(b, i);
                    let (lo, hi) = if align { (0.0, -1.0) } else { (-0.5, -0.5) };
                    let hc = f64c(b, hi);
                    let hi_v = b.same("arith.addf", &[n, hc]);
                    let r = reflect_dyn(b, fi, lo, hi_v);
                    let r = b.same("math.roundeven", &[r]);
                    let r = f_to_idx(b, r);
                    let r = b.same("arith.maxsi", &[r, bounds.zero]);
                    b.same("arith.minsi", &[r, last_i])
                } else {
                    c
                };
                let keep = (padding == "zeros").then(|| {
                    let ge = loops::cmp(b, "sge", i, bounds.zero);
                    let le = loops::cmp(b, "sle", i, last_i);
                    loops::and(b, ge, le)
                });
                taps.push(Tap { idx, w, keep });
            }
            per_dim.push(taps);
        }
        let r = interp::weighted_sum(b, op, x, &[ivs[0], ivs[1]], &per_dim)
            .and_then(|acc| scalar::convert(b, op, acc, &elem));
        match r {
            Ok(r) => store_at(b, r, out, ivs),
            Err(e) => err = Some(e),
        }
    });
    finish(err, vec![out])
}

/// Reflects `x` into [lo, hi] as the ONNX reference does (any number of
/// flips); a degenerate range maps to 0.
fn reflect_dyn(b: &mut Builder<'_>, x: ValueId, lo: f64, hi: ValueId) -> ValueId {
    let l = f64c(b, lo);
    let s = b.same("arith.subf", &[hi, l]);
    let zero = f64c(b, 0.0);
    let degenerate = scalar::cmpf(b, "ole", s, zero);
    let one = f64c(b, 1.0);
    let s_safe = scalar::select(b, degenerate, one, s);
    let d = b.same("arith.subf", &[x, l]);
    let d = b.same("math.absf", &[d]);
    let q = b.same("arith.divf", &[d, s_safe]);
    let flips = b.same("math.floor", &[q]);
    let fq = b.same("arith.mulf", &[flips, s_safe]);
    let extra = b.same("arith.subf", &[d, fq]);
    let two = f64c(b, 2.0);
    let half = b.same("arith.divf", &[flips, two]);
    let hf = b.same("math.floor", &[half]);
    let hf2 = b.same("arith.mulf", &[hf, two]);
    let odd = scalar::cmpf(b, "one", hf2, flips);
    let a = b.same("arith.addf", &[l, extra]);
    let c = b.same("arith.subf", &[hi, extra]);
    let r = scalar::select(b, odd, c, a);
    scalar::select(b, degenerate, zero, r)
}

/// AffineGrid: `grid[n, spatial..., :] = theta[n] · (x, y[, z], 1)` with the
/// normalized coordinates of each output position (in f64, as the
/// reference), for `size = [N, C, (D,) H, W]`.
pub fn affine_grid(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let theta = cx.input(b.m, op, 0)?;
    let size = cx.input(b.m, op, 1)?;
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
    let align = attr_int(b.m, op, "align_corners", 0) != 0;
    let n = super::build::index_at(b, size, Some(0));
    let spatial: Vec<ValueId> = (0..sp)
        .map(|d| super::build::index_at(b, size, Some(2 + d as i64)))
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
                let lm1 = b.same("arith.subf", &[len, one]);
                let step = b.same("arith.divf", &[two, lm1]);
                let t = b.same("arith.mulf", &[i, step]);
                b.same("arith.subf", &[t, one])
            } else {
                let step = b.same("arith.divf", &[two, len]);
                let h = f64c(b, 0.5);
                let hs = b.same("arith.mulf", &[step, h]);
                let start = b.same("arith.subf", &[hs, one]);
                let t = b.same("arith.mulf", &[i, step]);
                b.same("arith.addf", &[start, t])
            };
            coords.push(c);
        }
        coords.push(one);
        let row = ivs[sp + 1];
        let mut acc = f64c(b, 0.0);
        for (j, &c) in coords.iter().enumerate() {
            let jv = b.const_index(j as i64);
            let t = load_at(b, theta, &[ivs[0], row, jv]);
            let t = match scalar::convert(b, op, t, &Type::f64()) {
                Ok(t) => t,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            let p = b.same("arith.mulf", &[t, c]);
            acc = b.same("arith.addf", &[acc, p]);
        }
        store_converted(b, op, acc, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}

/// RoiAlign: each output bin of each ROI averages (or maxes) bilinear
/// samples on a `sampling_ratio`² grid (or ceil(bin size) per side), with
/// the reference's edge rules: samples beyond one pixel outside count as 0,
/// coordinates clamp to the last row/column. Coordinates in f64.
pub fn roi_align(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rois = cx.input(b.m, op, 1)?;
    let batch = cx.input(b.m, op, 2)?;
    if shape_of(b.m, x).len() != 4 || shape_of(b.m, rois).len() != 2 {
        return Err(op_error(b.m, op, "expects X [N, C, H, W] and rois [R, 4]"));
    }
    let half_pixel =
        attr_str(b.m, op, "coordinate_transformation_mode").unwrap_or("half_pixel") == "half_pixel";
    let is_max = attr_str(b.m, op, "mode") == Some("max");
    let (oh, ow) = (
        attr_int(b.m, op, "output_height", 1),
        attr_int(b.m, op, "output_width", 1),
    );
    let ratio = attr_int(b.m, op, "sampling_ratio", 0);
    let scale = super::attr_float(b.m, op, "spatial_scale", 1.0);
    let dx = dims(b, x);
    let dr = dims(b, rois);
    let (ohv, owv) = (b.const_index(oh), b.const_index(ow));
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
            let v = load_at(b, rois, &[r, kv]);
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
        let (sc, off) = (f64c(b, scale), f64c(b, if half_pixel { 0.5 } else { 0.0 }));
        let start_end: Vec<ValueId> = coords
            .iter()
            .map(|&v| {
                let s = b.same("arith.mulf", &[v, sc]);
                b.same("arith.subf", &[s, off])
            })
            .collect();
        let one = f64c(b, 1.0);
        // Per axis (h, w): start, bin size, samples per bin.
        let axis = |b: &mut Builder<'_>, lo: ValueId, hi: ValueId, n: i64| {
            let mut size = b.same("arith.subf", &[hi, lo]);
            if !half_pixel {
                size = b.same("arith.maximumf", &[size, one]);
            }
            let nf = f64c(b, n as f64);
            let bin = b.same("arith.divf", &[size, nf]);
            let grid = if ratio > 0 {
                b.const_index(ratio)
            } else {
                let q = b.same("arith.divf", &[size, nf]);
                let q = b.same("math.ceil", &[q]);
                f_to_idx(b, q)
            };
            (bin, grid)
        };
        let (bin_h, gh) = axis(b, start_end[1], start_end[3], oh);
        let (bin_w, gw) = axis(b, start_end[0], start_end[2], ow);
        let n = load_at(b, batch, &[r]);
        let n = super::build::to_index(b, n);
        let cnt = loops::mul(b, gh, gw);
        let cnt = b.same("arith.maxsi", &[cnt, bounds.one]);
        // One coordinate of a sample: (low, high, fraction, inside).
        let sample = |b: &mut Builder<'_>,
                      start: ValueId,
                      p: ValueId,
                      i: ValueId,
                      bin: ValueId,
                      grid: ValueId,
                      len: ValueId| {
            let pf = idx_to_f(b, p);
            let t = b.same("arith.mulf", &[pf, bin]);
            let base = b.same("arith.addf", &[start, t]);
            let h = f64c(b, 0.5);
            let i_f = idx_to_f(b, i);
            let ih = b.same("arith.addf", &[i_f, h]);
            let gf = idx_to_f(b, grid);
            let step = b.same("arith.divf", &[bin, gf]);
            let t = b.same("arith.mulf", &[ih, step]);
            let v = b.same("arith.addf", &[base, t]);
            let lenf = idx_to_f(b, len);
            let m1 = f64c(b, -1.0);
            let lo_ok = scalar::cmpf(b, "oge", v, m1);
            let hi_ok = scalar::cmpf(b, "ole", v, lenf);
            let inside = loops::and(b, lo_ok, hi_ok);
            let z = f64c(b, 0.0);
            let v = b.same("arith.maximumf", &[v, z]);
            let low = b.same("math.floor", &[v]);
            let low = f_to_idx(b, low);
            let last = loops::sub(b, len, bounds.one);
            let at_end = loops::cmp(b, "sge", low, last);
            let low = loops::select(b, at_end, last, low);
            let next = loops::add(b, low, bounds.one);
            let high = loops::select(b, at_end, last, next);
            let lf = idx_to_f(b, low);
            let v = scalar::select(b, at_end, lf, v);
            let frac = b.same("arith.subf", &[v, lf]);
            (low, high, frac, inside)
        };
        let init = f64c(b, if is_max { f64::NEG_INFINITY } else { 0.0 });
        let acc = reduce_nest(b, &bounds, &[gh, gw], init, &mut |b, g, acc| {
            let (yl, yh, ly, in_y) = sample(b, start_end[1], ph, g[0], bin_h, gh, h_i);
            let (xl, xh, lx, in_x) = sample(b, start_end[0], pw, g[1], bin_w, gw, w_i);
            let inside = loops::and(b, in_y, in_x);
            let z = f64c(b, 0.0);
            let (hy, hx) = (
                b.same("arith.subf", &[one, ly]),
                b.same("arith.subf", &[one, lx]),
            );
            let mut terms = Vec::with_capacity(4);
            for (yi, xi, wy, wx) in [
                (yl, xl, hy, hx),
                (yl, xh, hy, lx),
                (yh, xl, ly, hx),
                (yh, xh, ly, lx),
            ] {
                let w = b.same("arith.mulf", &[wy, wx]);
                let w = scalar::select(b, inside, w, z);
                let yi = loops::select(b, inside, yi, bounds.zero);
                let xi = loops::select(b, inside, xi, bounds.zero);
                let v = load_at(b, x, &[n, c, yi, xi]);
                let v = match scalar::convert(b, op, v, &Type::f64()) {
                    Ok(v) => v,
                    Err(e) => {
                        err = Some(e);
                        z
                    }
                };
                terms.push(b.same("arith.mulf", &[w, v]));
            }
            if is_max {
                let m = terms
                    .iter()
                    .skip(1)
                    .fold(terms[0], |m, &t| b.same("arith.maximumf", &[m, t]));
                b.same("arith.maximumf", &[acc, m])
            } else {
                terms
                    .iter()
                    .fold(acc, |s, &t| b.same("arith.addf", &[s, t]))
            }
        });
        let r = if is_max {
            acc
        } else {
            let cf = idx_to_f(b, cnt);
            b.same("arith.divf", &[acc, cf])
        };
        store_converted(b, op, r, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}
