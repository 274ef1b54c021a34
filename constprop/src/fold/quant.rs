//! Quantization: QuantizeLinear, DequantizeLinear, QLinearMatMul and
//! DynamicQuantizeLinear.

use super::dense::{from_f64s, row_strides, unravel, T};
use super::{Fold, Op};
use ir::elements::{decode, encode, DType, NumClass, WideNum};
use ir::Result;
use onnx::ops;

fn f32r(v: f64) -> f64 {
    f64::from(v as f32)
}

fn int_range(d: DType) -> Option<(f64, f64)> {
    let bits = d.bits() as i32;
    match d.class() {
        NumClass::Signed => Some((-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)),
        NumClass::Unsigned => Some((0.0, 2f64.powi(bits) - 1.0)),
        NumClass::Float => None,
    }
}

/// `v` rounded to the precision of float dtype `d` (the reference divides
/// in the input's precision before rounding to an integer).
fn round_to(d: DType, v: f64) -> f64 {
    match encode(d, WideNum::from_f64(v)) {
        Some(raw) if d.class() == NumClass::Float => decode(d, raw).f64(),
        _ => v,
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

/// Quantization (`dequantize` false) or dequantization of operand 0 by the
/// scale and zero point of operands 1 and 2, per tensor, axis or block.
fn linear(o: Op, axis: i64, block: i64, dequantize: bool) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let scale = ts.get(1).ok_or_else(|| o.err("scale"))?;
    let zp = ts.get(2).map(|p| (p, p.floats()));
    let rank = x.rank();
    // Per-tensor parameters (the scalar case) ignore the axis.
    let axis = onnx::axis::normalize(axis, rank).unwrap_or(0);
    let block = block.max(0) as usize;
    let (sv, xv) = (scale.floats(), x.floats());
    // The parameter of element `idx`: per tensor, axis or block.
    let param = |p: &T, vals: &[f64], idx: &[usize], what: &str| -> Result<f64> {
        let i = param_index(p, idx, axis, block);
        vals.get(i).copied().ok_or_else(|| o.err(what))
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
        out.push(if dequantize {
            (v - z) * s
        } else {
            let q = round_to(x.dtype, v / s).round_ties_even() + z;
            match int_range(dtype) {
                Some((lo, hi)) => q.clamp(lo, hi),
                None => v / s + z,
            }
        });
    }
    o.packed(vec![T::new(dtype, x.shape.clone(), from_f64s(dtype, out))])
}

pub fn quantize(o: Op) -> Fold {
    let v = ops::QuantizeLinear::of(o.m, o.op);
    linear(o, v.axis(), v.block_size(), false)
}

pub fn dequantize(o: Op) -> Fold {
    let v = ops::DequantizeLinear::of(o.m, o.op);
    linear(o, v.axis(), v.block_size(), true)
}

pub fn qlinear_matmul(o: Op) -> Fold {
    let ts = o.dense();
    if ts.get(0).is_none() {
        return Ok(None);
    }
    let dtype = o.dtype(0)?;
    let p = |i: usize| ts.get(i).ok_or_else(|| o.err("missing operand"));
    let (a, asc, azp, b, bsc, bzp, ysc, yzp) =
        (p(0)?, p(1)?, p(2)?, p(3)?, p(4)?, p(5)?, p(6)?, p(7)?);
    let (&[mm, k], &[_, n]) = (a.shape.as_slice(), b.shape.as_slice()) else {
        return Ok(None);
    };
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
    o.packed(vec![T::new(dtype, vec![mm, n], from_f64s(dtype, out))])
}

pub fn dynamic_quantize(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let xf = x.floats();
    let mn = xf.iter().copied().fold(0.0, f64::min);
    let mx = xf.iter().copied().fold(0.0, f64::max);
    // All zeros: scale 1, as onnxruntime (the spec's formula gives 0).
    let scale = match f32r(mx - mn) {
        0.0 => 1.0,
        range => f32r(range / 255.0),
    };
    let zp = f32r(-mn / scale).round_ties_even().clamp(0.0, 255.0);
    let y = xf
        .iter()
        .map(|&v| (f32r(v / scale).round_ties_even() + zp).clamp(0.0, 255.0))
        .collect();
    o.packed(vec![
        T::new(DType::U8, x.shape.clone(), from_f64s(DType::U8, y)),
        T::new(DType::F32, vec![], vec![WideNum::from_f64(scale)]),
        T::new(DType::U8, vec![], vec![WideNum::from_u64(zp as u64)]),
    ])
}
