//! Scalar bodies of the activation functions, plugged into the
//! element-wise broadcasting nest.

use crate::kernels::elementwise::{first, float_arg, float_type, two};
use crate::kernels::support::epilogue::Act;
use ir::builder::{Cmp, CmpF};
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// `log(exp(x) + 1)`.
fn softplus_of(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let e = b.exp(x);
    let one = b.constant_like(x, 1.0);
    let s = b.addf(e, one);
    b.log(s)
}

/// `x · sigmoid(alpha · x)`.
fn swish_of(b: &mut Builder<'_>, x: ValueId, alpha: f64) -> ValueId {
    let a = b.constant_like(x, alpha);
    let ax = b.mulf(a, x);
    let s = Act::Sigmoid.apply(b, ax);
    b.mulf(x, s)
}

pub fn relu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = first(b, op, x)?;
    Ok(Act::Relu.apply(b, x))
}

pub fn sigmoid(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    Ok(Act::Sigmoid.apply(b, x))
}

pub fn leaky_relu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    Ok(Act::LeakyRelu(ops::LeakyRelu::of(b.m, op).alpha()).apply(b, x))
}

pub fn elu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let a = b.constant_like(x, ops::Elu::of(b.m, op).alpha());
    let e = b.exp(x);
    let one = b.constant_like(x, 1.0);
    let em1 = b.subf(e, one);
    let neg = b.mulf(a, em1);
    let zero = b.constant_like(x, 0.0);
    let lt = b.cmpf(CmpF::Olt, x, zero);
    Ok(b.select(lt, neg, x))
}

pub fn selu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let v = ops::Selu::of(b.m, op);
    let (alpha, gamma) = (v.alpha(), v.gamma());
    let a = b.constant_like(x, alpha);
    let g = b.constant_like(x, gamma);
    let e = b.exp(x);
    let ae = b.mulf(a, e);
    let neg = b.subf(ae, a);
    let zero = b.constant_like(x, 0.0);
    let le = b.cmpf(CmpF::Ole, x, zero);
    let r = b.select(le, neg, x);
    Ok(b.mulf(g, r))
}

pub fn celu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let a = b.constant_like(x, ops::Celu::of(b.m, op).alpha());
    let xa = b.divf(x, a);
    let e = b.exp(xa);
    let one = b.constant_like(x, 1.0);
    let em1 = b.subf(e, one);
    let neg = b.mulf(a, em1);
    let zero = b.constant_like(x, 0.0);
    let p = b.max(x, zero);
    let n = b.min(neg, zero);
    Ok(b.addf(p, n))
}

pub fn hard_sigmoid(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let v = ops::HardSigmoid::of(b.m, op);
    Ok(Act::HardSigmoid(v.alpha(), v.beta()).apply(b, x))
}

pub fn hard_swish(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    Ok(Act::HardSwish.apply(b, x))
}

pub fn softplus(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    Ok(softplus_of(b, x))
}

pub fn softsign(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let a = b.absf(x);
    let one = b.constant_like(x, 1.0);
    let d = b.addf(one, a);
    Ok(b.divf(x, d))
}

pub fn mish(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let s = softplus_of(b, x);
    let t = b.tanh(s);
    Ok(b.mulf(x, t))
}

pub fn swish(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let alpha = ops::Swish::of(b.m, op).alpha();
    Ok(swish_of(b, x, alpha))
}

/// Swish(A) · B.
pub fn swiglu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let (a, gate) = two(b, op, x)?;
    float_type(b, op, a)?;
    let alpha = ops::SwiGLU::of(b.m, op).alpha();
    let s = swish_of(b, a, alpha);
    Ok(b.mulf(s, gate))
}

pub fn gelu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let half = b.constant_like(x, 0.5);
    let one = b.constant_like(x, 1.0);
    let hx = b.mulf(half, x);
    let inner = if ops::Gelu::of(b.m, op).approximate() == "tanh" {
        let k = b.constant_like(x, (2.0 / std::f64::consts::PI).sqrt());
        let cube_k = b.constant_like(x, 0.044715);
        let x2 = b.mulf(x, x);
        let x3 = b.mulf(x2, x);
        let t = b.mulf(cube_k, x3);
        let s = b.addf(x, t);
        let ks = b.mulf(k, s);
        b.tanh(ks)
    } else {
        let r = b.constant_like(x, std::f64::consts::FRAC_1_SQRT_2);
        let xs = b.mulf(x, r);
        b.erf(xs)
    };
    let p = b.addf(one, inner);
    Ok(b.mulf(hx, p))
}

pub fn thresholded_relu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let a = b.constant_like(x, ops::ThresholdedRelu::of(b.m, op).alpha());
    let zero = b.constant_like(x, 0.0);
    let gt = b.cmpf(CmpF::Ogt, x, a);
    Ok(b.select(gt, x, zero))
}

pub fn shrink(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = first(b, op, x)?;
    let v = ops::Shrink::of(b.m, op);
    let (bias, lambd) = (v.bias(), v.lambd());
    let bi = b.constant_like(x, bias);
    let l = b.constant_like(x, lambd);
    let nl = b.constant_like(x, -lambd);
    let zero = b.constant_like(x, 0.0);
    let lt = b.cmp(Cmp::Lt, x, nl);
    let gt = b.cmp(Cmp::Gt, x, l);
    let plus = b.add(x, bi);
    let minus = b.sub(x, bi);
    let hi = b.select(gt, minus, zero);
    Ok(b.select(lt, plus, hi))
}

pub fn prelu(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let (x, slope) = two(b, op, x)?;
    let zero = b.constant_like(x, 0.0);
    let lt = b.cmp(Cmp::Lt, x, zero);
    let s = b.mul(x, slope);
    Ok(b.select(lt, s, x))
}

pub fn sign(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = first(b, op, x)?;
    let zero = b.constant_like(x, 0.0);
    let one = b.constant_like(x, 1.0);
    let m1 = b.constant_like(x, -1.0);
    let gt = b.cmp(Cmp::Gt, x, zero);
    let lt = b.cmp(Cmp::Lt, x, zero);
    let n = b.select(lt, m1, zero);
    Ok(b.select(gt, one, n))
}

pub fn is_nan(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    Ok(b.cmpf(CmpF::Uno, x, x))
}

pub fn is_inf(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = float_arg(b, op, x)?;
    let v = ops::IsInf::of(b.m, op);
    let (pos, neg) = (v.detect_positive() != 0, v.detect_negative() != 0);
    let pinf = b.constant_like(x, f64::INFINITY);
    let ninf = b.constant_like(x, f64::NEG_INFINITY);
    let p = b.cmpf(CmpF::Oeq, x, pinf);
    let n = b.cmpf(CmpF::Oeq, x, ninf);
    let fals = b.const_bool(false);
    let p = if pos { p } else { fals };
    let n = if neg { n } else { fals };
    Ok(b.ori(p, n))
}

/// 1 above the threshold, else 0 (ai.onnx.ml Binarizer).
pub fn binarizer(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = first(b, op, x)?;
    let thr = b.constant_like(x, ops::Binarizer::of(b.m, op).threshold());
    let gt = b.cmp(Cmp::Gt, x, thr);
    let one = b.constant_like(x, 1.0);
    let zero = b.constant_like(x, 0.0);
    Ok(b.select(gt, one, zero))
}
