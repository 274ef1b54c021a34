//! Resize (opset ≥ 11): nearest (all rounding modes), linear and cubic
//! (with `exclude_outside`), every coordinate transformation mode, scales
//! or sizes (runtime values allowed), `axes`, `keep_aspect_ratio_policy`.
//!
//! Each output element is a tensor product over the dims of per-dim taps
//! (1 nearest, 2 linear, 4 cubic), neighbours clamped to the edges as in
//! the ONNX reference. Coordinates and sums are computed in f64.

mod rows;

use crate::convert::{dims, Lowering};
use crate::kernels::signal::interp::{self, f64c, f_to_idx, idx_to_f, Tap};
use crate::kernels::support::scalar;
use crate::kernels::{
    support::alloc_result, support::elem_of, support::finish, support::shape_of,
    support::store_converted,
};
use crate::loops::{loop_nest, Bounds};
use ir::builder::{Cmp, CmpF};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// A present, non-empty optional operand.
fn non_empty(cx: &Lowering, b: &Builder<'_>, op: OpId, i: usize) -> Result<Option<ValueId>> {
    if !cx.has_input(b.m, op, i) {
        return Ok(None);
    }
    let v = cx.input(b.m, op, i)?;
    Ok((shape_of(b.m, v).first() != Some(&0)).then_some(v))
}

struct Cfg {
    mode: String,
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
        let xh = b.addf(xf, half);
        let d = b.divf(xh, scale);
        b.subf(d, half)
    };
    let out_gt1 = b.cmpf(CmpF::Ogt, outf, one);
    match cfg.coord.as_str() {
        "asymmetric" => b.divf(xf, scale),
        "align_corners" => {
            let im1 = b.subf(inf, one);
            let om1 = b.subf(outf, one);
            let num = b.mulf(xf, im1);
            let q = b.divf(num, om1);
            b.select(out_gt1, q, zero)
        }
        "pytorch_half_pixel" => {
            let h = half_pixel(b);
            b.select(out_gt1, h, zero)
        }
        "half_pixel_symmetric" => {
            // The integer output length over the exact one.
            let oi = idx_to_f(b, out_int);
            let adj = b.divf(oi, outf);
            let center = b.mulf(inf, half);
            let oma = b.subf(one, adj);
            let offset = b.mulf(center, oma);
            let h = half_pixel(b);
            b.addf(offset, h)
        }
        "tf_crop_and_resize" => {
            let Some((start, end)) = roi else {
                return half_pixel(b);
            };
            let im1 = b.subf(inf, one);
            let om1 = b.subf(outf, one);
            let s0 = b.mulf(start, im1);
            let span = b.subf(end, start);
            let span = b.mulf(span, im1);
            let step = b.divf(span, om1);
            let k = b.mulf(xf, step);
            let many = b.addf(s0, k);
            let se = b.addf(start, end);
            let mid = b.mulf(se, half);
            let single = b.mulf(mid, im1);
            b.select(out_gt1, many, single)
        }
        _ => half_pixel(b),
    }
}

/// Taps of one dim: clamped indices and weights.
fn taps(b: &mut Builder<'_>, cfg: &Cfg, xo: ValueId, in_len: ValueId) -> Vec<Tap> {
    let zero_i = b.const_index(0);
    let one_i = b.const_index(1);
    let last = b.sub(in_len, one_i);
    let clamp = |b: &mut Builder<'_>, i: ValueId| {
        let c = b.maxsi(i, zero_i);
        b.minsi(c, last)
    };
    let tap = |(idx, w)| Tap { idx, w, keep: None };
    match cfg.mode.as_str() {
        "nearest" => {
            let half = f64c(b, 0.5);
            let fl = b.floor(xo);
            let frac = b.subf(xo, fl);
            let is_half = b.cmpf(CmpF::Oeq, frac, half);
            let r = match cfg.nearest.as_str() {
                "floor" => fl,
                "ceil" => b.ceil(xo),
                "round_prefer_ceil" => {
                    let c = b.ceil(xo);
                    let r = b.round(xo);
                    b.select(is_half, c, r)
                }
                _ => {
                    let r = b.round(xo);
                    b.select(is_half, fl, r)
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
                    let ge = b.cmp(Cmp::Ge, t.0, zero_i);
                    let le = b.cmp(Cmp::Le, t.0, last);
                    let ok = b.andi(ge, le);
                    let z = f64c(b, 0.0);
                    t.1 = b.select(ok, t.1, z);
                }
                // Renormalize the surviving weights.
                let mut s = f64c(b, 0.0);
                for &(_, w) in &out {
                    s = b.addf(s, w);
                }
                for t in &mut out {
                    t.1 = b.divf(t.1, s);
                }
            }
            out.into_iter()
                .map(|(i, w)| tap((clamp(b, i), w)))
                .collect()
        }
    }
}

/// Per dim: the scale, the output size, and the output length the
/// coordinate transforms see (`in * scale` unrounded when scales are
/// given, as the ONNX reference does).
struct Sizes {
    scale: Vec<ValueId>,
    out_dims: Vec<ValueId>,
    out_len: Vec<ValueId>,
}

/// The output sizes from `sizes` (with the aspect-ratio `policy`) or from
/// `scales` along `axes`; `one` is 1.0 in f64.
#[allow(clippy::too_many_arguments)]
fn output_sizes(
    b: &mut Builder<'_>,
    op: OpId,
    one: ValueId,
    dx: &[ValueId],
    axes: &[usize],
    policy: &str,
    scales: Option<ValueId>,
    sizes: Option<ValueId>,
) -> Result<Sizes> {
    let mut scale: Vec<ValueId> = vec![one; dx.len()];
    let mut out_dims = dx.to_vec();
    let in_f: Vec<ValueId> = dx.iter().map(|&d| idx_to_f(b, d)).collect();
    let mut out_len: Vec<ValueId> = in_f.clone();
    if let Some(s) = sizes {
        let mut ratio = Vec::new();
        for (j, &d) in axes.iter().enumerate() {
            let jv = b.const_index(j as i64);
            let v = b.load(s, &[jv]);
            let v = crate::kernels::support::index::to_index(b, v);
            let vf = idx_to_f(b, v);
            ratio.push(b.divf(vf, in_f[d]));
            out_dims[d] = v;
            out_len[d] = vf;
        }
        let keep_aspect = policy == "not_larger" || policy == "not_smaller";
        if let Some((&first, rest)) = ratio.split_first().filter(|_| keep_aspect) {
            let mut r = first;
            for &q in rest {
                r = if policy == "not_larger" {
                    b.minimumf(r, q)
                } else {
                    b.maximumf(r, q)
                };
            }
            for &d in axes {
                scale[d] = r;
                let p = b.mulf(r, in_f[d]);
                let p = b.roundeven(p);
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
            let v = b.load(s, &[jv]);
            let v = scalar::convert(b, op, v, &Type::f64())?;
            scale[d] = v;
            let p = b.mulf(v, in_f[d]);
            out_len[d] = p;
            let p = b.floor(p);
            out_dims[d] = f_to_idx(b, p);
        }
    } else {
        return Err(op_error(b.m, op, "Resize needs scales or sizes"));
    }
    Ok(Sizes {
        scale,
        out_dims,
        out_len,
    })
}

/// The resize attributes other than `axes` and the aspect-ratio policy.
fn config(b: &Builder<'_>, op: OpId) -> Result<Cfg> {
    let attrs = ops::Resize::of(b.m, op);
    if attrs.antialias() != 0 {
        return Err(op_error(b.m, op, "antialiased Resize is not supported"));
    }
    Ok(Cfg {
        mode: attrs.mode().to_string(),
        coord: attrs.coordinate_transformation_mode().to_string(),
        nearest: attrs.nearest_mode().to_string(),
        a: attrs.cubic_coeff_a(),
        exclude: attrs.exclude_outside() != 0,
        extrapolation: attrs.extrapolation_value(),
    })
}

pub fn resize(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let cfg = config(b, op)?;
    let x = cx.input(b.m, op, ops::Resize::X)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let attrs = ops::Resize::of(b.m, op);
    let policy = attrs.keep_aspect_ratio_policy().to_string();
    let axes: Vec<usize> = match attrs.axes() {
        Some(a) => a
            .iter()
            .map(|&v| {
                onnx::axis::normalize(v, rank).ok_or_else(|| {
                    op_error(b.m, op, format!("axis {v} out of range for rank {rank}"))
                })
            })
            .collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    let roi = non_empty(cx, b, op, ops::Resize::ROI)?;
    let scales = non_empty(cx, b, op, ops::Resize::SCALES)?;
    let sizes = non_empty(cx, b, op, ops::Resize::SIZES)?;
    let one = f64c(b, 1.0);
    let Sizes {
        scale,
        out_dims,
        out_len,
    } = output_sizes(b, op, one, &dx, &axes, &policy, scales, sizes)?;
    let roi_at = |b: &mut Builder<'_>, d: usize| -> Option<(ValueId, ValueId)> {
        let r = roi?;
        let j = axes.iter().position(|&a| a == d)?;
        let n = axes.len() as i64;
        let (si, ei) = (b.const_index(j as i64), b.const_index(j as i64 + n));
        let (s, e) = (b.load(r, &[si]), b.load(r, &[ei]));
        let f = Type::f64();
        let s = scalar::convert(b, op, s, &f).ok()?;
        let e = scalar::convert(b, op, e, &f).ok()?;
        Some((s, e))
    };
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let mut err = None;
    let mut generic = |b: &mut Builder<'_>| {
        elementwise(
            b,
            (op, &cfg),
            x,
            out,
            &out_dims,
            &dx,
            (&scale, &out_len),
            &roi_at,
            &mut err,
        );
        Vec::new()
    };
    if rows::eligible(&cfg, rank, &elem) {
        let kept = rows::lead_kept(b, &scale, &dx, &out_dims);
        let mut fast = |b: &mut Builder<'_>| {
            let len =
                |b: &mut Builder<'_>, d: &[ValueId]| crate::kernels::support::index::product(b, d);
            let (xl, ol) = (len(b, &dx), len(b, &out_dims));
            // `flat` makes a strided input contiguous, on this path only.
            let operands = rows::Operands {
                x: crate::kernels::linalg::gemm::flat(b, x, xl),
                out: crate::kernels::linalg::gemm::flat(b, out, ol),
                dims: [dx[0], dx[1], dx[2], dx[3], out_dims[2], out_dims[3]],
                scales: [scale[2], scale[3]],
                lens: [out_len[2], out_len[3]],
            };
            rows::resize(cx, b, &cfg, &operands);
            Vec::new()
        };
        b.scf_if(kept, &[], &mut fast, Some(&mut generic));
    } else {
        generic(b);
    }
    finish(err, vec![out])
}

/// The roi's start and end along a dim, when given.
type RoiAt<'a> = dyn Fn(&mut Builder<'_>, usize) -> Option<(ValueId, ValueId)> + 'a;

/// Every output element as a tensor product of its dims' taps, in f64.
#[allow(clippy::too_many_arguments)]
fn elementwise(
    b: &mut Builder<'_>,
    (op, cfg): (OpId, &Cfg),
    x: ValueId,
    out: ValueId,
    out_dims: &[ValueId],
    dx: &[ValueId],
    (scale, out_len): (&[ValueId], &[ValueId]),
    roi_at: &RoiAt<'_>,
    err: &mut Option<ir::Diagnostic>,
) {
    let rank = dx.len();
    let elem = elem_of(b.m, x);
    let one = f64c(b, 1.0);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, out_dims, &mut |b, ivs| {
        let mut per_dim = Vec::with_capacity(rank);
        let mut outside = b.const_bool(false);
        for d in 0..rank {
            let r = roi_at(b, d);
            let xo = source_coord(
                b,
                cfg,
                ivs[d],
                scale[d],
                dx[d],
                (out_len[d], out_dims[d]),
                r,
            );
            if cfg.coord == "tf_crop_and_resize" {
                let zero = f64c(b, 0.0);
                let last = idx_to_f(b, dx[d]);
                let last = b.subf(last, one);
                let lo = b.cmpf(CmpF::Olt, xo, zero);
                let hi = b.cmpf(CmpF::Ogt, xo, last);
                let o = b.ori(lo, hi);
                outside = b.ori(outside, o);
            }
            per_dim.push(taps(b, cfg, xo, dx[d]));
        }
        let acc = match interp::weighted_sum(b, op, x, &[], &per_dim) {
            Ok(acc) => acc,
            Err(e) => {
                *err = Some(e);
                return;
            }
        };
        let ex = f64c(b, cfg.extrapolation);
        let acc = b.select(outside, ex, acc);
        let acc = if elem.is_float() {
            acc
        } else {
            b.roundeven(acc)
        };
        store_converted(b, op, acc, &elem, out, ivs, err);
    });
}
