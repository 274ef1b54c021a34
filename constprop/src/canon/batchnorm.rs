//! Inference-mode BatchNormalization: fused into the weights of the Conv,
//! Gemm or MatMul producing its input when it is that op's only use, else a
//! per-channel `x * k + shift`. Dense weights stay lazy views over their
//! buffer (scaled when read); splats stay splats.

use super::{make_const, make_op};
use crate::fold::constant_operand;
use crate::fold::elementwise::{apply_arith, Arith};
use ir::attr::Attribute;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::rewrite::Pattern;
use ir::types::FloatKind;
use ir::{Module, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

/// Per-channel values as `Elements` of `shape`; a splat when all are equal.
pub(super) fn channel_elements(dtype: DType, vals: &[f64], shape: Vec<i64>) -> Option<Elements> {
    let first = *vals.first()?;
    if vals
        .iter()
        .all(|&v| v == first || (v.is_nan() && first.is_nan()))
    {
        return Elements::splat(dtype, shape, WideNum::from_f64(first)).ok();
    }
    let w: Vec<WideNum> = vals.iter().map(|&v| WideNum::from_f64(v)).collect();
    Elements::from_wide(dtype, shape, &w).ok()
}

/// Values of a per-channel constant, broadcast to `c` entries.
pub(super) fn per_channel(e: &Elements, c: usize) -> Option<Vec<f64>> {
    let class = e.dtype().class();
    let v: Vec<f64> = e.iter().map(|x| x.to_f64(class)).collect();
    match v.len() {
        n if n == c => Some(v),
        1 => Some(vec![v[0]; c]),
        _ => None,
    }
}

/// `(value, constant)` of a binary op with one constant operand.
pub(super) fn split(m: &Module, op: OpId) -> Option<(ValueId, Elements)> {
    match (constant_operand(m, op, 0), constant_operand(m, op, 1)) {
        (None, Some(c)) => Some((m.operand(op, 0)?, c)),
        (Some(c), None) => Some((m.operand(op, 1)?, c)),
        _ => None,
    }
}

/// The per-channel values of `c` broadcast against a rank-`rank` value
/// with `ch` channels on dim 1; `None` when `c` varies along another dim.
pub(super) fn channels_of(c: &Elements, rank: usize, ch: usize) -> Option<Vec<f64>> {
    let shape = c.shape();
    let lead = rank.checked_sub(shape.len())?;
    let varies_elsewhere = shape
        .iter()
        .enumerate()
        .any(|(i, &d)| d != 1 && i + lead != 1);
    if varies_elsewhere || c.dtype().class() != NumClass::Float {
        return None;
    }
    per_channel(c, ch)
}

/// `w` scaled by `k[i]` along dim `axis` (of size `k.len()`).
pub(super) fn scale_along(w: &Elements, axis: usize, k: &[f64]) -> Option<Elements> {
    let shape = w.shape();
    let c = k.len();
    if shape.get(axis) != Some(&(c as i64)) || w.dtype().class() != NumClass::Float {
        return None;
    }
    let wd = w.dtype();
    // A broadcast (a splat among them) is scaled on its core and stays one.
    if w.repeated_core().is_some() {
        let mut kshape = vec![1i64; shape.len()];
        kshape[axis] = c as i64;
        let kc = channel_elements(wd, k, kshape)?;
        return apply_arith(Arith::Mul, w, &kc, wd);
    }
    let block = shape.get(axis + 1..)?.iter().product::<i64>();
    w.affine_blocks(wd, usize::try_from(block).ok()?, k.to_vec(), vec![0.0; c])
}

/// The folded BatchNormalization: `y = x * k + shift` per channel.
pub(super) struct Affine {
    pub k: Vec<f64>,
    pub shift: Vec<f64>,
}

/// Optional bias operand `i` as per-channel values (zeros when omitted);
/// it must vary along its last dim only (Conv's `[C]`, Gemm's `[N]`).
fn optional_channels(m: &Module, op: OpId, i: usize, c: usize) -> Option<Vec<f64>> {
    match m.operand(op, i) {
        Some(b) if *m.value_type(b) != Type::None => {
            let e = constant_operand(m, op, i)?;
            let last = e.shape().last().copied().unwrap_or(1);
            (e.len() == 1 || (e.len() == c && last == c as i64))
                .then(|| per_channel(&e, c))
                .flatten()
        }
        _ => Some(vec![0.0; c]),
    }
}

/// Conv(x, w, b) → Conv(x, w * k, b * k + shift).
pub(super) fn into_conv(m: &mut Module, conv: OpId, bn: &Affine) -> Option<()> {
    let c = bn.k.len();
    let w = constant_operand(m, conv, 1)?;
    let b = optional_channels(m, conv, 2, c)?;
    let nw = scale_along(&w, 0, &bn.k)?;
    let nb: Vec<f64> = (0..c).map(|i| b[i] * bn.k[i] + bn.shift[i]).collect();
    let nb = channel_elements(w.dtype(), &nb, vec![c as i64])?;
    let x = m.operand(conv, 0)?;
    let wv = make_const(m, conv, nw)?;
    let bv = make_const(m, conv, nb)?;
    m.set_operands(conv, &[x, wv, bv]);
    Some(())
}

/// Gemm(a, b, c) over columns j: b's column j scaled by k[j] and
/// c' = beta * c * k + shift with beta set to 1.
fn into_gemm(m: &mut Module, gemm: OpId, bn: &Affine) -> Option<()> {
    let c = bn.k.len();
    let w = constant_operand(m, gemm, 1)?;
    let v = ops::Gemm::of(m, gemm);
    let (trans_b, beta) = (v.trans_b() == 1, v.beta());
    let bias = optional_channels(m, gemm, 2, c)?;
    let nw = scale_along(&w, usize::from(!trans_b), &bn.k)?;
    let nb: Vec<f64> = (0..c)
        .map(|i| beta * bias[i] * bn.k[i] + bn.shift[i])
        .collect();
    let nb = channel_elements(w.dtype(), &nb, vec![c as i64])?;
    let a = m.operand(gemm, 0)?;
    let wv = make_const(m, gemm, nw)?;
    let bv = make_const(m, gemm, nb)?;
    m.set_operands(gemm, &[a, wv, bv]);
    m.set_attr(
        gemm,
        "beta",
        Attribute::Float(1.0, Type::Float(FloatKind::F32)),
    );
    Some(())
}

/// MatMul(a, w) with a 2-D result: w's columns scaled, then `+ shift`.
fn into_matmul(m: &mut Module, mm: OpId, bn_op: OpId, bn: &Affine) -> Option<ValueId> {
    let c = bn.k.len();
    let w = constant_operand(m, mm, 1)?;
    if w.shape().len() != 2 {
        return None;
    }
    let nw = scale_along(&w, 1, &bn.k)?;
    let shift = channel_elements(w.dtype(), &bn.shift, vec![c as i64])?;
    let a = m.operand(mm, 0)?;
    let y = m.result(mm, 0)?;
    let ty = m.value_type(y).clone();
    let wv = make_const(m, mm, nw)?;
    let sv = make_const(m, bn_op, shift)?;
    let add = make_op(m, bn_op, ops::Add::build(y, sv), ty, "shift")?;
    m.set_operands(mm, &[a, wv]);
    Some(add)
}

pub struct FoldBatchNorm;

impl Pattern for FoldBatchNorm {
    fn name(&self) -> &'static str {
        "fold-batchnorm"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !onnx::is(m, op, OpKind::BatchNormalization)
            || ops::BatchNormalization::of(m, op).training_mode() != 0
            || m.results(op).iter().skip(1).any(|&r| m.has_uses(r))
        {
            return Ok(false);
        }
        let params: Option<Vec<Elements>> = (1..5).map(|i| constant_operand(m, op, i)).collect();
        let (Some(params), Some(x), Some(y)) = (params, m.operand(op, 0), m.result(op, 0)) else {
            return Ok(false);
        };
        let Some(dtype) = DType::from_type(m.value_type(y).element_type()) else {
            return Ok(false);
        };
        let Some(rank) = m.value_type(x).shape().map(<[i64]>::len) else {
            return Ok(false);
        };
        if dtype.class() != NumClass::Float || rank < 2 {
            return Ok(false);
        }
        let c = match m.value_type(x).shape().and_then(|s| s.get(1)) {
            Some(&d) if d > 0 => d as usize,
            _ => params[0].len().max(params[2].len()),
        };
        let eps = ops::BatchNormalization::of(m, op).epsilon();
        let p: Option<Vec<Vec<f64>>> = params.iter().map(|e| per_channel(e, c)).collect();
        let Some(p) = p else { return Ok(false) };
        let k: Vec<f64> = (0..c).map(|i| p[0][i] / (p[3][i] + eps).sqrt()).collect();
        let shift: Vec<f64> = (0..c).map(|i| p[1][i] - p[2][i] * k[i]).collect();
        let bn = Affine { k, shift };
        // Fuse into the producer when this is its only use.
        if let Some(d) = m.defining_op(x).filter(|_| m.uses(x).len() == 1) {
            let fused = match OpKind::of(m, d) {
                Some(OpKind::Conv) => into_conv(m, d, &bn).map(|()| x),
                Some(OpKind::Gemm) => into_gemm(m, d, &bn).map(|()| x),
                Some(OpKind::MatMul) if rank == 2 => into_matmul(m, d, op, &bn),
                _ => None,
            };
            if let Some(v) = fused {
                m.replace_all_uses(y, v);
                m.erase_op(op);
                return Ok(true);
            }
        }
        // Otherwise a per-channel scale and shift.
        let mut cshape = vec![1i64; rank - 1];
        cshape[0] = c as i64;
        let (Some(kc), Some(sc)) = (
            channel_elements(dtype, &bn.k, cshape.clone()),
            channel_elements(dtype, &bn.shift, cshape),
        ) else {
            return Ok(false);
        };
        let ty = m.value_type(y).clone();
        let (Some(kv), Some(sv)) = (make_const(m, op, kc), make_const(m, op, sc)) else {
            return Ok(false);
        };
        let Some(mul) = make_op(m, op, ops::Mul::build(x, kv), ty.clone(), "scale") else {
            return Ok(false);
        };
        let Some(add) = make_op(m, op, ops::Add::build(mul, sv), ty, "shift") else {
            return Ok(false);
        };
        m.replace_all_uses(y, add);
        m.erase_op(op);
        Ok(true)
    }
}
