//! DFT as a direct O(n²) sum in f64 along one (possibly runtime) axis:
//! forward (optionally one-sided), inverse, and the one-sided inverse
//! (irfft, real output from a Hermitian half spectrum). The last dim holds
//! (real) or (real, imaginary). STFT: the same sums over windowed frames.

use super::build::index_at;
use super::gather::wrap;
use super::interp::{f64c, idx_to_f};
use super::scalar;
use super::{alloc_result, attr_int, elem_of, finish, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, Type, ValueId};

fn opset(m: &Module) -> i64 {
    m.attr(m.top(), "onnx.opset")
        .and_then(ir::Attribute::as_int)
        .unwrap_or(20)
}

/// `e^{±2πi·k·n/L}` factors: `step` = 2π/L (f64), `sign` ±1.
struct Twiddle {
    length: ValueId,
    step: ValueId,
    sign: ValueId,
}

impl Twiddle {
    /// `acc + (re + i·im)·e^{±2πi·(k·n mod L)/L}` in f64.
    fn mac(
        &self,
        b: &mut Builder<'_>,
        acc: [ValueId; 2],
        [re, im]: [ValueId; 2],
        k: ValueId,
        n: ValueId,
    ) -> [ValueId; 2] {
        let kn = loops::mul(b, k, n);
        let kn = b.same("arith.remui", &[kn, self.length]);
        let t = idx_to_f(b, kn);
        let t = b.same("arith.mulf", &[t, self.step]);
        let t = b.same("arith.mulf", &[t, self.sign]);
        let (c, s) = (b.same("math.cos", &[t]), b.same("math.sin", &[t]));
        let rc = b.same("arith.mulf", &[re, c]);
        let is = b.same("arith.mulf", &[im, s]);
        let rs = b.same("arith.mulf", &[re, s]);
        let ic = b.same("arith.mulf", &[im, c]);
        let pr = b.same("arith.subf", &[rc, is]);
        let pi = b.same("arith.addf", &[rs, ic]);
        [
            b.same("arith.addf", &[acc[0], pr]),
            b.same("arith.addf", &[acc[1], pi]),
        ]
    }
}

pub fn dft(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let complex_in = match shape_of(b.m, x).last() {
        Some(1) => false,
        Some(2) => true,
        _ => return Err(op_error(b.m, op, "the last dim must be 1 or 2")),
    };
    if rank < 2 {
        return Err(op_error(b.m, op, "DFT needs a signal and a component dim"));
    }
    let inverse = attr_int(b.m, op, "inverse", 0) != 0;
    let onesided = attr_int(b.m, op, "onesided", 0) != 0;
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    // The axis: an input from opset 20 on, else an attribute.
    let axis = if cx.has_input(b.m, op, 2) {
        let a = cx.input(b.m, op, 2)?;
        let v = index_at(b, a, (shape_of(b.m, a).len() == 1).then_some(0));
        let r = b.const_index(rank as i64);
        wrap(b, v, r, zero)
    } else {
        let default = if opset(b.m) >= 20 { -2 } else { 1 };
        let a = attr_int(b.m, op, "axis", default);
        let a = if a < 0 { a + rank as i64 } else { a };
        b.const_index(a)
    };
    let is_axis: Vec<ValueId> = (0..rank - 1)
        .map(|d| {
            let dv = b.const_index(d as i64);
            loops::cmp(b, "eq", axis, dv)
        })
        .collect();
    let pick = |b: &mut Builder<'_>, vals: &[ValueId]| {
        let mut r = zero;
        for (d, &c) in is_axis.iter().enumerate() {
            r = loops::select(b, c, vals[d], r);
        }
        r
    };
    let in_len = pick(b, &dx);
    let length = if cx.has_input(b.m, op, 1) {
        let l = cx.input(b.m, op, 1)?;
        index_at(b, l, (shape_of(b.m, l).len() == 1).then_some(0))
    } else if inverse && onesided {
        let m1 = loops::sub(b, in_len, one);
        loops::add(b, m1, m1)
    } else {
        in_len
    };
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if out_shape.len() != rank || out_shape.contains(&ir::DYN) {
        return Err(op_error(b.m, op, "DFT needs a static result shape"));
    }
    let out_dims: Vec<ValueId> = out_shape.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let f64t = Type::f64();
    let lf = idx_to_f(b, length);
    let two_pi = f64c(b, 2.0 * std::f64::consts::PI);
    let step = b.same("arith.divf", &[two_pi, lf]);
    let sign = f64c(b, if inverse { 1.0 } else { -1.0 });
    let two = b.const_index(2);
    let half = b.same("arith.divui", &[length, two]);
    // Terms summed: the input bins (truncated/zero-padded to the length), or
    // every bin of the mirrored full spectrum for irfft.
    let terms = if inverse && onesided {
        length
    } else {
        b.same("arith.minsi", &[length, in_len])
    };
    let tw = Twiddle { length, step, sign };
    let mut err = None;
    let sig_dims = out_dims[..rank - 1].to_vec();
    loop_nest(b, &bounds, &sig_dims, &mut |b, ivs| {
        let k = pick(b, ivs);
        let z = f64c(b, 0.0);
        let init = [z, z];
        let mut acc = init.to_vec();
        let f = b.scf_for(zero, terms, one, &init, |b, n, a| {
            // Source bin and the sign of its imaginary part.
            let (src, conj) = if inverse && onesided {
                let hi = loops::cmp(b, "sgt", n, half);
                let mirror = loops::sub(b, length, n);
                (loops::select(b, hi, mirror, n), Some(hi))
            } else {
                (n, None)
            };
            let present = loops::cmp(b, "slt", src, in_len);
            let src = loops::select(b, present, src, zero);
            let mut idx: Vec<ValueId> = (0..rank - 1)
                .map(|d| loops::select(b, is_axis[d], src, ivs[d]))
                .collect();
            idx.push(zero);
            let re = load_at(b, x, &idx);
            let im = if complex_in {
                idx[rank - 1] = one;
                load_at(b, x, &idx)
            } else {
                scalar::constant(b, &elem, 0.0)
            };
            let (re, im) = match (
                scalar::convert(b, op, re, &f64t),
                scalar::convert(b, op, im, &f64t),
            ) {
                (Ok(r), Ok(i)) => (r, i),
                (Err(e), _) | (_, Err(e)) => {
                    err = Some(e);
                    return a.to_vec();
                }
            };
            let zf = f64c(b, 0.0);
            let re = scalar::select(b, present, re, zf);
            let im = scalar::select(b, present, im, zf);
            let im = match conj {
                Some(c) => {
                    let neg = b.same("arith.negf", &[im]);
                    scalar::select(b, c, neg, im)
                }
                None => im,
            };
            tw.mac(b, [a[0], a[1]], [re, im], k, n).to_vec()
        });
        acc.copy_from_slice(&b.m.results(f)[..2]);
        if inverse {
            for a in &mut acc {
                *a = b.same("arith.divf", &[*a, lf]);
            }
        }
        for (c, &v) in acc.iter().enumerate().take(out_shape[rank - 1] as usize) {
            let r = match scalar::convert(b, op, v, &elem) {
                Ok(r) => r,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            let mut oi = ivs.to_vec();
            oi.push(b.const_index(c as i64));
            store_at(b, r, out, &oi);
        }
    });
    finish(err, vec![out])
}

/// STFT: frames `frame_step` apart, each weighted by `window` (or 1) and
/// transformed over `frame_length` (default: the window length), one-sided
/// unless `onesided = 0`; result `[B, frames, bins, 2]`.
pub fn stft(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let complex_in = match shape_of(b.m, x).as_slice() {
        [_, _, 1] => false,
        [_, _, 2] => true,
        _ => return Err(op_error(b.m, op, "expects a signal [B, L, 1 or 2]")),
    };
    let hop = cx.input(b.m, op, 1)?;
    let window = cx.optional_input(b.m, op, 2)?;
    let flen_in = cx.optional_input(b.m, op, 3)?;
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if out_shape.len() != 4 || out_shape.contains(&ir::DYN) {
        return Err(op_error(
            b.m,
            op,
            "STFT needs a static [B, frames, bins, 2] result",
        ));
    }
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let scalar_of = |b: &mut Builder<'_>, v: ValueId| {
        let r = shape_of(b.m, v).len();
        index_at(b, v, (r == 1).then_some(0))
    };
    let step_v = scalar_of(b, hop);
    if window.is_some_and(|w| shape_of(b.m, w).len() != 1) {
        return Err(op_error(b.m, op, "the window must be 1-D"));
    }
    let wlen = window.and_then(|w| dims(b, w).first().copied());
    let length = match (flen_in, wlen) {
        (Some(f), _) => scalar_of(b, f),
        (None, Some(w)) => w,
        (None, None) => return Err(op_error(b.m, op, "needs a window or frame_length")),
    };
    let terms = match wlen {
        Some(w) => b.same("arith.minsi", &[w, length]),
        None => length,
    };
    let sig_len = dims(b, x)[1];
    let out_dims: Vec<ValueId> = out_shape.iter().map(|&d| b.const_index(d)).collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let f64t = Type::f64();
    let lf = idx_to_f(b, length);
    let two_pi = f64c(b, 2.0 * std::f64::consts::PI);
    let tw = Twiddle {
        length,
        step: b.same("arith.divf", &[two_pi, lf]),
        sign: f64c(b, -1.0),
    };
    let mut err = None;
    loop_nest(b, &bounds, &out_dims[..3], &mut |b, ivs| {
        let (n0, fr, k) = (ivs[0], ivs[1], ivs[2]);
        let start = loops::mul(b, fr, step_v);
        let z = f64c(b, 0.0);
        let f = b.scf_for(zero, terms, one, &[z, z], |b, n, a| {
            let pos = loops::add(b, start, n);
            let inside = loops::cmp(b, "slt", pos, sig_len);
            let pos = loops::select(b, inside, pos, zero);
            let part = |b: &mut Builder<'_>, c: i64| {
                let cv = b.const_index(c);
                let v = load_at(b, x, &[n0, pos, cv]);
                scalar::convert(b, op, v, &f64t)
            };
            let (re, im) = match (part(b, 0), complex_in.then(|| part(b, 1)).transpose()) {
                (Ok(re), Ok(im)) => (re, im.unwrap_or(z)),
                (Err(e), _) | (_, Err(e)) => {
                    err = Some(e);
                    return a.to_vec();
                }
            };
            let w = match window {
                Some(wv) => {
                    let v = load_at(b, wv, &[n]);
                    scalar::convert(b, op, v, &f64t)
                }
                None => Ok(f64c(b, 1.0)),
            };
            let w = match w {
                Ok(w) => w,
                Err(e) => {
                    err = Some(e);
                    return a.to_vec();
                }
            };
            let zf = f64c(b, 0.0);
            let w = scalar::select(b, inside, w, zf);
            let (re, im) = (
                b.same("arith.mulf", &[re, w]),
                b.same("arith.mulf", &[im, w]),
            );
            tw.mac(b, [a[0], a[1]], [re, im], k, n).to_vec()
        });
        let acc = b.m.results(f).to_vec();
        for (c, &v) in acc.iter().enumerate().take(2) {
            let mut oi = ivs.to_vec();
            oi.push(b.const_index(c as i64));
            super::store_converted(b, op, v, &elem, out, &oi, &mut err);
        }
    });
    super::finish(err, vec![out])
}
