//! DFT as a direct O(n²) sum in f64 along one (possibly runtime) axis:
//! forward (optionally one-sided), inverse, and the one-sided inverse
//! (irfft, real output from a Hermitian half spectrum). The last dim holds
//! (real) or (real, imaginary). STFT: the same sums over windowed frames.

use crate::convert::{dims, Lowering};
use crate::kernels::signal::interp::{f64c, idx_to_f};
use crate::kernels::support::index::index_at;
use crate::kernels::support::index::wrap;
use crate::kernels::{
    support::alloc_result, support::elem_of, support::finish, support::shape_of,
    support::store_converted,
};
use crate::kernels::{support::checks, support::scalar};
use crate::loops::{loop_nest, Bounds};
use ir::builder::{Cmp, CmpI};
use ir::dialects::op_error;
use ir::{Builder, Diagnostic, OpId, Result, Type, ValueId};
use onnx::ops;

/// `e^{±2πi·k·n/L}` factors: `step` = 2π/L (f64), `sign` ±1.
struct Twiddle {
    length: ValueId,
    step: ValueId,
    sign: ValueId,
}

impl Twiddle {
    /// The factors of a transform of `length` (forward: `sign` = -1).
    fn new(b: &mut Builder<'_>, length: ValueId, sign: f64) -> (Twiddle, ValueId) {
        let lf = idx_to_f(b, length);
        let two_pi = f64c(b, 2.0 * std::f64::consts::PI);
        let step = b.divf(two_pi, lf);
        let sign = f64c(b, sign);
        (Twiddle { length, step, sign }, lf)
    }

    /// `acc + (re + i·im)·e^{±2πi·(k·n mod L)/L}` in f64.
    fn mac(
        &self,
        b: &mut Builder<'_>,
        acc: [ValueId; 2],
        [re, im]: [ValueId; 2],
        k: ValueId,
        n: ValueId,
    ) -> [ValueId; 2] {
        let kn = b.mul(k, n);
        let kn = b.remui(kn, self.length);
        let t = idx_to_f(b, kn);
        let t = b.mulf(t, self.step);
        let t = b.mulf(t, self.sign);
        let (c, s) = (b.cos(t), b.sin(t));
        let rc = b.mulf(re, c);
        let is = b.mulf(im, s);
        let rs = b.mulf(re, s);
        let ic = b.mulf(im, c);
        let pr = b.subf(rc, is);
        let pi = b.addf(rs, ic);
        [b.addf(acc[0], pr), b.addf(acc[1], pi)]
    }
}

/// `v` converted to f64, or the error kept in `err`.
fn to_f64(
    b: &mut Builder<'_>,
    op: OpId,
    v: ValueId,
    err: &mut Option<Diagnostic>,
) -> Option<ValueId> {
    match scalar::convert(b, op, v, &Type::f64()) {
        Ok(f) => Some(f),
        Err(e) => {
            *err = Some(e);
            None
        }
    }
}

/// A DFT along the axis: the input, whether each signal dim is the axis,
/// the input and transform lengths, and the twiddle factors.
struct Dft {
    op: OpId,
    x: ValueId,
    rank: usize,
    complex_in: bool,
    inverse: bool,
    /// One-sided inverse (irfft): bins past L/2 mirror the half spectrum.
    irfft: bool,
    is_axis: Vec<ValueId>,
    in_len: ValueId,
    length: ValueId,
    half: ValueId,
    terms: ValueId,
    elem: Type,
    tw: Twiddle,
}

impl Dft {
    /// `vals[axis]` (the axis is a runtime value).
    fn pick(&self, b: &mut Builder<'_>, vals: &[ValueId], zero: ValueId) -> ValueId {
        let mut r = zero;
        for (d, &c) in self.is_axis.iter().enumerate() {
            r = b.select(c, vals[d], r);
        }
        r
    }

    /// The (re, im) in f64 of input bin `n` at signal position `ivs`
    /// (0 past the input's length; conjugated where irfft mirrors).
    fn term(
        &self,
        b: &mut Builder<'_>,
        bounds: &Bounds,
        ivs: &[ValueId],
        n: ValueId,
        err: &mut Option<Diagnostic>,
    ) -> Option<[ValueId; 2]> {
        let (zero, one) = (bounds.zero, bounds.one);
        // Source bin and the sign of its imaginary part.
        let (src, conj) = if self.irfft {
            let hi = b.cmp(Cmp::Gt, n, self.half);
            let mirror = b.sub(self.length, n);
            (b.select(hi, mirror, n), Some(hi))
        } else {
            (n, None)
        };
        let present = b.cmp(Cmp::Lt, src, self.in_len);
        let src = b.select(present, src, zero);
        let mut idx: Vec<ValueId> = (0..self.rank - 1)
            .map(|d| b.select(self.is_axis[d], src, ivs[d]))
            .collect();
        idx.push(zero);
        let re = b.load(self.x, &idx);
        let im = if self.complex_in {
            idx[self.rank - 1] = one;
            b.load(self.x, &idx)
        } else {
            b.zero(&self.elem)
        };
        let re = to_f64(b, self.op, re, err)?;
        let im = to_f64(b, self.op, im, err)?;
        let zf = f64c(b, 0.0);
        let re = b.select(present, re, zf);
        let im = b.select(present, im, zf);
        let im = match conj {
            Some(c) => {
                let neg = b.negf(im);
                b.select(c, neg, im)
            }
            None => im,
        };
        Some([re, im])
    }

    /// The (re, im) sum of output bin `ivs` over every term.
    fn bin(
        &self,
        b: &mut Builder<'_>,
        bounds: &Bounds,
        ivs: &[ValueId],
        err: &mut Option<Diagnostic>,
    ) -> [ValueId; 2] {
        let k = self.pick(b, ivs, bounds.zero);
        let z = f64c(b, 0.0);
        let f = b.scf_for(
            bounds.zero,
            self.terms,
            bounds.one,
            &[z, z],
            |b, n, a| match self.term(b, bounds, ivs, n, err) {
                Some(t) => self.tw.mac(b, [a[0], a[1]], t, k, n).to_vec(),
                None => a.to_vec(),
            },
        );
        let r = b.m.results(f);
        [r[0], r[1]]
    }
}

/// The transform axis: operand 2 (wrapped when negative), or -2.
fn dft_axis(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    rank: usize,
    zero: ValueId,
) -> Result<ValueId> {
    if !cx.has_input(b.m, op, ops::DFT::AXIS) {
        return Ok(b.const_index(rank as i64 - 2));
    }
    let a = cx.input(b.m, op, ops::DFT::AXIS)?;
    let v = index_at(b, a, (shape_of(b.m, a).len() == 1).then_some(0));
    let r = b.const_index(rank as i64);
    Ok(wrap(b, v, r, zero))
}

pub fn dft(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::DFT::INPUT)?;
    let rank = shape_of(b.m, x).len();
    let complex_in = match shape_of(b.m, x).last() {
        Some(1) => false,
        Some(2) => true,
        _ => return Err(op_error(b.m, op, "the last dim must be 1 or 2")),
    };
    if rank < 2 {
        return Err(op_error(b.m, op, "DFT needs a signal and a component dim"));
    }
    let attrs = ops::DFT::of(b.m, op);
    let inverse = attrs.inverse() != 0;
    let onesided = attrs.onesided() != 0;
    let irfft = inverse && onesided;
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let axis = dft_axis(cx, b, op, rank, zero)?;
    let is_axis: Vec<ValueId> = (0..rank - 1)
        .map(|d| {
            let dv = b.const_index(d as i64);
            b.cmp(Cmp::Eq, axis, dv)
        })
        .collect();
    let mut in_len = zero;
    for (d, &c) in is_axis.iter().enumerate() {
        in_len = b.select(c, dx[d], in_len);
    }
    let length = if cx.has_input(b.m, op, ops::DFT::DFT_LENGTH) {
        let l = cx.input(b.m, op, ops::DFT::DFT_LENGTH)?;
        index_at(b, l, (shape_of(b.m, l).len() == 1).then_some(0))
    } else if irfft {
        let m1 = b.sub(in_len, one);
        b.add(m1, m1)
    } else {
        in_len
    };
    let two = b.const_index(2);
    let half = b.divui(length, two);
    // Bins along the axis: the full length, or L/2 + 1 one-sided forward.
    let bins = if onesided && !inverse {
        b.addi(half, one)
    } else {
        length
    };
    let mut sizes: Vec<ValueId> = (0..rank - 1)
        .map(|d| b.select(is_axis[d], bins, dx[d]))
        .collect();
    sizes.push(b.const_index(if irfft { 1 } else { 2 }));
    let out_dims = static_or(b, op, &sizes)?;
    let out = alloc_result(b, op, 0, &out_dims)?;
    let (tw, lf) = Twiddle::new(b, length, if inverse { 1.0 } else { -1.0 });
    // Terms summed: the input bins (truncated/zero-padded to the length), or
    // every bin of the mirrored full spectrum for irfft.
    let terms = if irfft {
        length
    } else {
        b.minsi(length, in_len)
    };
    let p = Dft {
        op,
        x,
        rank,
        complex_in,
        inverse,
        irfft,
        is_axis,
        in_len,
        length,
        half,
        terms,
        elem: elem_of(b.m, x),
        tw,
    };
    let components = if irfft { 1 } else { 2 };
    let mut err = None;
    loop_nest(b, &bounds, &out_dims[..rank - 1], &mut |b, ivs| {
        let mut acc = p.bin(b, &bounds, ivs, &mut err);
        if p.inverse {
            for a in &mut acc {
                *a = b.divf(*a, lf);
            }
        }
        for (c, &v) in acc.iter().enumerate().take(components) {
            let r = match scalar::convert(b, op, v, &p.elem) {
                Ok(r) => r,
                Err(e) => {
                    err = Some(e);
                    return;
                }
            };
            let mut oi = ivs.to_vec();
            oi.push(b.const_index(c as i64));
            b.store(r, out, &oi);
        }
    });
    finish(err, vec![out])
}

/// The result's sizes: `sizes` where they are runtime values, the result
/// type's where it fixes them (which shape inference already checked).
fn static_or(b: &mut Builder<'_>, op: OpId, sizes: &[ValueId]) -> Result<Vec<ValueId>> {
    let ty = crate::kernels::support::result_memref_type(b.m, op, 0)?;
    let shape = ty.shape().unwrap_or_default();
    if shape.len() != sizes.len() {
        return Err(op_error(
            b.m,
            op,
            "result rank differs from the computed shape",
        ));
    }
    Ok(shape
        .iter()
        .zip(sizes)
        .map(|(&d, &v)| if d == ir::DYN { v } else { b.const_index(d) })
        .collect())
}

/// STFT frames: the signal `[B, L, 1 or 2]`, the hop, the window and the
/// frame length, and the bins summed per frame.
struct Frames {
    op: OpId,
    x: ValueId,
    complex_in: bool,
    window: Option<ValueId>,
    step: ValueId,
    sig_len: ValueId,
    terms: ValueId,
    tw: Twiddle,
}

impl Frames {
    /// The windowed (re, im) in f64 of sample `n` of the frame at `start`
    /// (`z`, 0, as the imaginary part of a real signal).
    #[allow(clippy::too_many_arguments)]
    fn term(
        &self,
        b: &mut Builder<'_>,
        bounds: &Bounds,
        (n0, start): (ValueId, ValueId),
        n: ValueId,
        z: ValueId,
        err: &mut Option<Diagnostic>,
    ) -> Option<[ValueId; 2]> {
        let zero = bounds.zero;
        let pos = b.add(start, n);
        let inside = b.cmp(Cmp::Lt, pos, self.sig_len);
        let pos = b.select(inside, pos, zero);
        let part = |b: &mut Builder<'_>, c: i64, err: &mut Option<Diagnostic>| {
            let cv = b.const_index(c);
            let v = b.load(self.x, &[n0, pos, cv]);
            to_f64(b, self.op, v, err)
        };
        let re = part(b, 0, err)?;
        let im = if self.complex_in {
            Some(part(b, 1, err)?)
        } else {
            None
        };
        let w = match self.window {
            Some(wv) => {
                let v = b.load(wv, &[n]);
                to_f64(b, self.op, v, err)?
            }
            None => f64c(b, 1.0),
        };
        let zf = f64c(b, 0.0);
        let w = b.select(inside, w, zf);
        Some([re, im.unwrap_or(z)].map(|v| b.mulf(v, w)))
    }
}

/// STFT: frames `frame_step` apart, each weighted by `window` (or 1) and
/// transformed over `frame_length` (default: the window length), one-sided
/// unless `onesided = 0`; result `[B, frames, bins, 2]`.
pub fn stft(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::STFT::SIGNAL)?;
    let complex_in = match shape_of(b.m, x).as_slice() {
        [_, _, 1] => false,
        [_, _, 2] => true,
        _ => return Err(op_error(b.m, op, "expects a signal [B, L, 1 or 2]")),
    };
    let hop = cx.input(b.m, op, ops::STFT::FRAME_STEP)?;
    let window = cx.optional_input(b.m, op, ops::STFT::WINDOW)?;
    let flen_in = cx.optional_input(b.m, op, ops::STFT::FRAME_LENGTH)?;
    let onesided = ops::STFT::of(b.m, op).onesided() != 0;
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let scalar_of = |b: &mut Builder<'_>, v: ValueId| {
        let r = shape_of(b.m, v).len();
        index_at(b, v, (r == 1).then_some(0))
    };
    let step = scalar_of(b, hop);
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
        Some(w) => b.minsi(w, length),
        None => length,
    };
    let dx = dims(b, x);
    let sig_len = dx[1];
    checks::compare(b, op, CmpI::Sgt, step, zero, "frame_step must be positive")?;
    // frames = (L - frame_length) / step + 1 (none when the frame is longer).
    let rest = b.subi(sig_len, length);
    let q = b.floordivsi(rest, step);
    let frames = b.addi(q, one);
    let frames = b.maxsi(frames, zero);
    let bins = if onesided {
        let two = b.const_index(2);
        let half = b.divui(length, two);
        b.addi(half, one)
    } else {
        length
    };
    let two = b.const_index(2);
    let out_dims = static_or(b, op, &[dx[0], frames, bins, two])?;
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, x);
    let (tw, _) = Twiddle::new(b, length, -1.0);
    let fr = Frames {
        op,
        x,
        complex_in,
        window,
        step,
        sig_len,
        terms,
        tw,
    };
    let mut err = None;
    loop_nest(b, &bounds, &out_dims[..3], &mut |b, ivs| {
        let (n0, frame, k) = (ivs[0], ivs[1], ivs[2]);
        let start = b.mul(frame, fr.step);
        let z = f64c(b, 0.0);
        let f = b.scf_for(zero, fr.terms, one, &[z, z], |b, n, a| {
            match fr.term(b, &bounds, (n0, start), n, z, &mut err) {
                Some(t) => fr.tw.mac(b, [a[0], a[1]], t, k, n).to_vec(),
                None => a.to_vec(),
            }
        });
        let acc = b.m.results(f).to_vec();
        for (c, &v) in acc.iter().enumerate().take(2) {
            let mut oi = ivs.to_vec();
            oi.push(b.const_index(c as i64));
            store_converted(b, op, v, &elem, out, &oi, &mut err);
        }
    });
    finish(err, vec![out])
}
