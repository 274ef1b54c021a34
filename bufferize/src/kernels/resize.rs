//! Resize (opset ≥ 11): nearest (all rounding modes), linear and cubic
//! (with `exclude_outside`), every coordinate transformation mode, scales
//! or sizes (runtime values allowed), `axes`, `keep_aspect_ratio_policy`.
//!
//! Each output element is a tensor product over the dims of per-dim taps
//! (1 nearest, 2 linear, 4 cubic), neighbours clamped to the edges as in
//! the ONNX reference. Coordinates and sums are computed in f64.

use super::interp::{self, f64c, f_to_idx, idx_to_f, Tap};
use super::reduce::normalize_axis;
use super::scalar;
use super::{
    alloc_result, attr_float, attr_int, attr_ints, attr_str, elem_of, finish, load_at, shape_of,
    store_converted,
};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, Type, ValueId};

fn opset(m: &Module) -> i64 {
    m.attr(m.top(), "onnx.opset")
        .and_then(ir::Attribute::as_int)
        .unwrap_or(13)
}

/// A present, non-empty optional operand.
fn non_empty(cx: &Lowering, b: &Builder<'_>, op: OpId, i: usize) -> Result<Option<ValueId>> {
    if !cx.has_input(b.m, op, i) {
        return Ok(None);
    }
    let v = cx.input(b.m, op, i)?;
    Ok((shape_of(b.m, v).first() != Some(&0)).then_some(v))
}

struct Cfg {
    coord: String,
    nearest: String,
    a: f64,
    exclude: bool,
    extrapolation: f64,
}

/// The source coordinate of output index `x` along a dim.
#[allow(clippy::too_many_arguments)]
fn source_coord(
    b: &mut Builder<'_>,
    cfg: &Cfg,
    x: ValueId,
    scale: ValueId,
    in_len: ValueId,
    out_len: (ValueId, ValueId),
    roi: Option<(ValueId, ValueId)>,
) -> ValueId {
    let (out_len, out_int) = out_len;
    let xf = idx_to_f(b, x);
    let half = f64c(b, 0.5);
    let one = f64c(b, 1.0);
    let zero = f64c(b, 0.0);
    let inf = idx_to_f(b, in_len);
    let outf = out_len;
    let half_pixel = |b: &mut Builder<'_>| {
        let xh = b.same("arith.addf", &[xf, half]);
        let d = b.same("arith.divf", &[xh, scale]);
        b.same("arith.subf", &[d, half])
    };
    let out_gt1 = scalar::cmpf(b, "ogt", outf, one);
    match cfg.coord.as_str() {
        "asymmetric" => b.same("arith.divf", &[xf, scale]),
        "align_corners" => {
            let im1 = b.same("arith.subf", &[inf, one]);
            let om1 = b.same("arith.subf", &[outf, one]);
            let num = b.same("arith.mulf", &[xf, im1]);
            let q = b.same("arith.divf", &[num, om1]);
            scalar::select(b, out_gt1, q, zero)
        }
        "pytorch_half_pixel" => {
            let h = half_pixel(b);
            scalar::select(b, out_gt1, h, zero)
        }
        "half_pixel_symmetric" => {
            // The integer output length over the exact one.
            let oi = idx_to_f(b, out_int);
            let adj = b.same("arith.divf", &[oi, outf]);
            let center = b.same("arith.mulf", &[inf, half]);
            let oma = b.same("arith.subf", &[one, adj]);
            let offset = b.same("arith.mulf", &[center, oma]);
            let h = half_pixel(b);
            b.same("arith.addf", &[offset, h])
        }
        "tf_crop_and_resize" => {
            let Some((start, end)) = roi else {
                return half_pixel(b);
            };
            let im1 = b.same("arith.subf", &[inf, one]);
            let om1 = b.same("arith.subf", &[outf, one]);
            let s0 = b.same("arith.mulf", &[start, im1]);
            let span = b.same("arith.subf", &[end, start]);
            let span = b.same("arith.mulf", &[span, im1]);
            let step = b.same("arith.divf", &[span, om1]);
            let k = b.same("arith.mulf", &[xf, step]);
            let many = b.same("arith.addf", &[s0, k]);
            let se = b.same("arith.addf", &[start, end]);
            let mid = b.same("arith.mulf", &[se, half]);
            let single = b.same("arith.mulf", &[mid, im1]);
            scalar::select(b, out_gt1, many, single)
        }
        _ => half_pixel(b),
    }
}

/// Taps of one dim: clamped indices and weights.
fn taps(b: &mut Builder<'_>, mode: &str, cfg: &Cfg, xo: ValueId, in_len: ValueId) -> Vec<Tap> {
    let zero_i = b.const_index(0);
    let one_i = b.const_index(1);
    let last = loops::sub(b, in_len, one_i);
    let clamp = |b: &mut Builder<'_>, i: ValueId| {
        let c = b.same("arith.maxsi", &[i, zero_i]);
        b.same("arith.minsi", &[c, last])
    };
    let tap = |(idx, w)| Tap { idx, w, keep: None };
    match mode {
        "nearest" => {
            let half = f64c(b, 0.5);
            let fl = b.same("math.floor", &[xo]);
            let frac = b.same("arith.subf", &[xo, fl]);
            let is_half = scalar::cmpf(b, "oeq", frac, half);
            let r = match cfg.nearest.as_str() {
                "floor" => fl,
                "ceil" => b.same("math.ceil", &[xo]),
                "round_prefer_ceil" => {
                    let c = b.same("math.ceil", &[xo]);
                    let r = b.same("math.round", &[xo]);
                    scalar::select(b, is_half, c, r)
                }
                _ => {
                    let r = b.same("math.round", &[xo]);
                    scalar::select(b, is_half, fl, r)
                }
            };
            let i = f_to_idx(b, r);
            let one = f64c(b, 1.0);
            vec![tap((clamp(b, i), one))]
        }
        "linear" => interp::taps(b, None, xo)
            .into_iter()
            .map(|(i, w)| tap((clamp(b, i), w)))
            .collect(),
        _ => {
            let mut out = interp::taps(b, Some(cfg.a), xo);
            if cfg.exclude {
                for t in &mut out {
                    let ge = loops::cmp(b, "sge", t.0, zero_i);
                    let le = loops::cmp(b, "sle", t.0, last);
                    let ok = loops::and(b, ge, le);
                    let z = f64c(b, 0.0);
                    t.1 = scalar::select(b, ok, t.1, z);
                }
                // Renormalize the surviving weights.
                let mut s = f64c(b, 0.0);
                for &(_, w) in &out {
                    s = b.same("arith.addf", &[s, w]);
                }
                for t in &mut out {
                    t.1 = b.same("arith.divf", &[t.1, s]);
                }
            }
            out.into_iter()
                .map(|(i, w)| tap((clamp(b, i), w)))
                .collect()
        }
    }
}

pub fn resize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if opset(b.m) < 11 {
        return Err(op_error(b.m, op, "Resize before opset 11 is not supported"));
    }
    if attr_int(b.m, op, "antialias", 0) != 0 {
        return Err(op_error(b.m, op, "antialiased Resize is not supported"));
    }
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let mode = attr_str(b.m, op, "mode").unwrap_or("nearest").to_string();
    let cfg = Cfg {
        coord: attr_str(b.m, op, "coordinate_transformation_mode")
            .unwrap_or("half_pixel")
            .to_string(),
        nearest: attr_str(b.m, op, "nearest_mode")
            .unwrap_or("round_prefer_floor")
            .to_string(),
        a: attr_float(b.m, op, "cubic_coeff_a", -0.75),
        exclude: attr_int(b.m, op, "exclude_outside", 0) != 0,
        extrapolation: attr_float(b.m, op, "extrapolation_value", 0.0),
    };
    let policy = attr_str(b.m, op, "keep_aspect_ratio_policy")
        .unwrap_or("stretch")
        .to_string();
    let axes: Vec<usize> = match attr_ints(b.m, op, "axes") {
        Some(a) => a
            .iter()
            .map(|&v| normalize_axis(b, op, v, rank))
            .collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    let roi = non_empty(cx, b, op, 1)?;
    let scales = non_empty(cx, b, op, 2)?;
    let sizes = non_empty(cx, b, op, 3)?;
    let one = f64c(b, 1.0);
    let mut scale: Vec<ValueId> = vec![one; rank];
    let mut out_dims = dx.clone();
    let in_f: Vec<ValueId> = dx.iter().map(|&d| idx_to_f(b, d)).collect();
    // The output length the coordinate transforms see: `in * scale`
    // unrounded when scales are given (as the ONNX reference does).
    let mut out_len: Vec<ValueId> = in_f.clone();
    if let Some(s) = sizes {
        let mut ratio = Vec::new();
        for (j, &d) in axes.iter().enumerate() {
            let jv = b.const_index(j as i64);
            let v = load_at(b, s, &[jv]);
            let v = super::build::to_index(b, v);
            let vf = idx_to_f(b, v);
            ratio.push(b.same("arith.divf", &[vf, in_f[d]]));
            out_dims[d] = v;
            out_len[d] = vf;
        }
        if policy == "not_larger" || policy == "not_smaller" {
            let mut r = ratio[0];
            for &q in &ratio[1..] {
                r = if policy == "not_larger" {
                    b.same("arith.minimumf", &[r, q])
                } else {
                    b.same("arith.maximumf", &[r, q])
                };
            }
            for &d in &axes {
                scale[d] = r;
                let p = b.same("arith.mulf", &[r, in_f[d]]);
                let p = b.same("math.roundeven", &[p]);
                out_dims[d] = f_to_idx(b, p);
                out_len[d] = p;
            }
        } else {
            for (&d, &q) in axes.iter().zip(&ratio) {
                scale[d] = q;
            }
        }
    } else if let Some(s) = scales {
        for (j, &d) in axes.iter().enumerate() {
            let jv = b.const_index(j as i64);
            let v = load_at(b, s, &[jv]);
            let v = scalar::convert(b, op, v, &Type::f64())?;
            scale[d] = v;
            let p = b.same("arith.mulf", &[v, in_f[d]]);
            out_len[d] = p;
            let p = b.same("math.floor", &[p]);
            out_dims[d] = f_to_idx(b, p);
        }
    } else {
        return Err(op_error(b.m, op, "Resize needs scales or sizes"));
    }
    let roi_at = |b: &mut Builder<'_>, d: usize| -> Option<(ValueId, ValueId)> {
        let r = roi?;
        let j = axes.iter().position(|&a| a == d)?;
        let n = axes.len() as i64;
        let (si, ei) = (b.const_index(j as i64), b.const_index(j as i64 + n));
        let (s, e) = (load_at(b, r, &[si]), load_at(b, r, &[ei]));
        let f = Type::f64();
        let s = scalar::convert(b, op, s, &f).ok()?;
        let e = scalar::convert(b, op, e, &f).ok()?;
        Some((s, e))
    };
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    let mut err = None;
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let mut per_dim = Vec::with_capacity(rank);
        let mut outside = b.const_bool(false);
        for d in 0..rank {
            let r = roi_at(b, d);
            let xo = source_coord(
                b,
                &cfg,
                ivs[d],
                scale[d],
                dx[d],
                (out_len[d], out_dims[d]),
                r,
            );
            if cfg.coord == "tf_crop_and_resize" {
                let zero = f64c(b, 0.0);
                let last = idx_to_f(b, dx[d]);
                let last = b.same("arith.subf", &[last, one]);
                let lo = scalar::cmpf(b, "olt", xo, zero);
                let hi = scalar::cmpf(b, "ogt", xo, last);
                let o = b.same("arith.ori", &[lo, hi]);
                outside = b.same("arith.ori", &[outside, o]);
            }
            per_dim.push(taps(b, &mode, &cfg, xo, dx[d]));
        }
        let acc = match interp::weighted_sum(b, op, x, &[], &per_dim) {
            Ok(acc) => acc,
            Err(e) => {
                err = Some(e);
                return;
            }
        };
        let ex = f64c(b, cfg.extrapolation);
        let acc = scalar::select(b, outside, ex, acc);
        let acc = if elem.is_float() {
            acc
        } else {
            b.same("math.roundeven", &[acc])
        };
        store_converted(b, op, acc, &elem, out, ivs, &mut err);
    });
    finish(err, vec![out])
}
