//! Scalar bodies of the activation functions and the remaining unary math
//! ops, plugged into the element-wise broadcasting nest.

use super::attr_float;
use super::elementwise::{float_type, Body};
use super::scalar::{self, constant};
use ir::{Builder, OpId, Result, ValueId};

fn c(b: &mut Builder<'_>, x: ValueId, v: f64) -> ValueId {
    let t = b.m.value_type(x).clone();
    constant(b, &t, v)
}

fn f(b: &mut Builder<'_>, name: &str, xs: &[ValueId]) -> ValueId {
    b.same(&format!("arith.{name}"), xs)
}

fn exp(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    b.same("math.exp", &[x])
}

fn clamp01(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let zero = c(b, x, 0.0);
    let one = c(b, x, 1.0);
    let lo = scalar::max(b, x, zero);
    scalar::min(b, lo, one)
}

fn softplus(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let e = exp(b, x);
    let one = c(b, x, 1.0);
    let s = f(b, "addf", &[e, one]);
    b.same("math.log", &[s])
}

fn sigmoid(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let neg = b.same("arith.negf", &[x]);
    let e = exp(b, neg);
    let one = c(b, x, 1.0);
    let den = f(b, "addf", &[one, e]);
    f(b, "divf", &[one, den])
}

/// `x · sigmoid(alpha · x)`.
fn swish(b: &mut Builder<'_>, o: OpId, x: ValueId) -> Result<ValueId> {
    float_type(b, o, x)?;
    let alpha = attr_float(b.m, o, "alpha", 1.0);
    let a = c(b, x, alpha);
    let ax = f(b, "mulf", &[a, x]);
    let s = sigmoid(b, ax);
    Ok(f(b, "mulf", &[x, s]))
}

fn math1(b: &mut Builder<'_>, op: OpId, name: &str, x: &[ValueId]) -> Result<ValueId> {
    float_type(b, op, x[0])?;
    Ok(b.same(name, &[x[0]]))
}

pub(super) fn body_for(kind: &str) -> Option<Body> {
    Some(match kind {
        "Tan" => |b, o, x, _| math1(b, o, "math.tan", x),
        "Asin" => |b, o, x, _| math1(b, o, "math.asin", x),
        "Acos" => |b, o, x, _| math1(b, o, "math.acos", x),
        "Atan" => |b, o, x, _| math1(b, o, "math.atan", x),
        "Sinh" => |b, o, x, _| math1(b, o, "math.sinh", x),
        "Cosh" => |b, o, x, _| math1(b, o, "math.cosh", x),
        "Asinh" => |b, o, x, _| math1(b, o, "math.asinh", x),
        "Acosh" => |b, o, x, _| math1(b, o, "math.acosh", x),
        "Atanh" => |b, o, x, _| math1(b, o, "math.atanh", x),
        "Round" => |b, o, x, _| math1(b, o, "math.roundeven", x),
        "Elu" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let alpha = attr_float(b.m, o, "alpha", 1.0);
            let a = c(b, x[0], alpha);
            let e = exp(b, x[0]);
            let one = c(b, x[0], 1.0);
            let em1 = f(b, "subf", &[e, one]);
            let neg = f(b, "mulf", &[a, em1]);
            let zero = c(b, x[0], 0.0);
            let lt = scalar::cmpf(b, "olt", x[0], zero);
            Ok(scalar::select(b, lt, neg, x[0]))
        },
        "Selu" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let alpha = attr_float(b.m, o, "alpha", 1.673_263_192_176_818_8);
            let gamma = attr_float(b.m, o, "gamma", 1.050_701_022_148_132_3);
            let a = c(b, x[0], alpha);
            let g = c(b, x[0], gamma);
            let e = exp(b, x[0]);
            let ae = f(b, "mulf", &[a, e]);
            let neg = f(b, "subf", &[ae, a]);
            let zero = c(b, x[0], 0.0);
            let le = scalar::cmpf(b, "ole", x[0], zero);
            let v = scalar::select(b, le, neg, x[0]);
            Ok(f(b, "mulf", &[g, v]))
        },
        "Celu" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let alpha = attr_float(b.m, o, "alpha", 1.0);
            let a = c(b, x[0], alpha);
            let xa = f(b, "divf", &[x[0], a]);
            let e = exp(b, xa);
            let one = c(b, x[0], 1.0);
            let em1 = f(b, "subf", &[e, one]);
            let neg = f(b, "mulf", &[a, em1]);
            let zero = c(b, x[0], 0.0);
            let p = scalar::max(b, x[0], zero);
            let n = scalar::min(b, neg, zero);
            Ok(f(b, "addf", &[p, n]))
        },
        "HardSigmoid" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let alpha = attr_float(b.m, o, "alpha", 0.2);
            let beta = attr_float(b.m, o, "beta", 0.5);
            let a = c(b, x[0], alpha);
            let be = c(b, x[0], beta);
            let ax = f(b, "mulf", &[a, x[0]]);
            let v = f(b, "addf", &[ax, be]);
            Ok(clamp01(b, v))
        },
        "HardSwish" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let a = c(b, x[0], 1.0 / 6.0);
            let be = c(b, x[0], 0.5);
            let ax = f(b, "mulf", &[a, x[0]]);
            let v = f(b, "addf", &[ax, be]);
            let h = clamp01(b, v);
            Ok(f(b, "mulf", &[x[0], h]))
        },
        "Softplus" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            Ok(softplus(b, x[0]))
        },
        "Softsign" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let a = b.same("math.absf", &[x[0]]);
            let one = c(b, x[0], 1.0);
            let d = f(b, "addf", &[one, a]);
            Ok(f(b, "divf", &[x[0], d]))
        },
        "Mish" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let s = softplus(b, x[0]);
            let t = b.same("math.tanh", &[s]);
            Ok(f(b, "mulf", &[x[0], t]))
        },
        "Swish" => |b, o, x, _| swish(b, o, x[0]),
        // 1 above the threshold, else 0.
        "onnx_ml.Binarizer" => |b, o, x, _| {
            let t = b.m.value_type(x[0]).clone();
            let thr = c(b, x[0], attr_float(b.m, o, "threshold", 0.0));
            let gt = scalar::compare(b, "gt", x[0], thr);
            let (one, zero) = (constant(b, &t, 1.0), constant(b, &t, 0.0));
            Ok(scalar::select(b, gt, one, zero))
        },
        // Swish(A) · B.
        "SwiGLU" => |b, o, x, _| {
            let Some(&gate) = x.get(1) else {
                return Err(ir::dialects::op_error(
                    b.m,
                    o,
                    "SwiGLU needs inputs A and B",
                ));
            };
            let s = swish(b, o, x[0])?;
            Ok(f(b, "mulf", &[s, gate]))
        },
        "Gelu" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let half = c(b, x[0], 0.5);
            let one = c(b, x[0], 1.0);
            let hx = f(b, "mulf", &[half, x[0]]);
            let inner = if super::attr_str(b.m, o, "approximate") == Some("tanh") {
                let k = c(b, x[0], (2.0 / std::f64::consts::PI).sqrt());
                let cube_k = c(b, x[0], 0.044715);
                let x2 = f(b, "mulf", &[x[0], x[0]]);
                let x3 = f(b, "mulf", &[x2, x[0]]);
                let t = f(b, "mulf", &[cube_k, x3]);
                let s = f(b, "addf", &[x[0], t]);
                let ks = f(b, "mulf", &[k, s]);
                b.same("math.tanh", &[ks])
            } else {
                let r = c(b, x[0], std::f64::consts::FRAC_1_SQRT_2);
                let xs = f(b, "mulf", &[x[0], r]);
                b.same("math.erf", &[xs])
            };
            let p = f(b, "addf", &[one, inner]);
            Ok(f(b, "mulf", &[hx, p]))
        },
        "ThresholdedRelu" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let alpha = attr_float(b.m, o, "alpha", 1.0);
            let a = c(b, x[0], alpha);
            let zero = c(b, x[0], 0.0);
            let gt = scalar::cmpf(b, "ogt", x[0], a);
            Ok(scalar::select(b, gt, x[0], zero))
        },
        "Shrink" => |b, o, x, _| {
            let bias = attr_float(b.m, o, "bias", 0.0);
            let lambd = attr_float(b.m, o, "lambd", 0.5);
            let t = b.m.value_type(x[0]).clone();
            let (bi, l, nl, zero) = (
                constant(b, &t, bias),
                constant(b, &t, lambd),
                constant(b, &t, -lambd),
                constant(b, &t, 0.0),
            );
            let lt = scalar::compare(b, "lt", x[0], nl);
            let gt = scalar::compare(b, "gt", x[0], l);
            let plus = scalar::add(b, x[0], bi);
            let minus = scalar::sub(b, x[0], bi);
            let hi = scalar::select(b, gt, minus, zero);
            Ok(scalar::select(b, lt, plus, hi))
        },
        "PRelu" => |b, _, x, _| {
            let zero = c(b, x[0], 0.0);
            let lt = scalar::compare(b, "lt", x[0], zero);
            let s = scalar::mul(b, x[0], x[1]);
            Ok(scalar::select(b, lt, s, x[0]))
        },
        "Sign" => |b, _, x, _| {
            let zero = c(b, x[0], 0.0);
            let one = c(b, x[0], 1.0);
            let m1 = c(b, x[0], -1.0);
            let gt = scalar::compare(b, "gt", x[0], zero);
            let lt = scalar::compare(b, "lt", x[0], zero);
            let n = scalar::select(b, lt, m1, zero);
            Ok(scalar::select(b, gt, one, n))
        },
        "IsNaN" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            Ok(scalar::cmpf(b, "uno", x[0], x[0]))
        },
        "IsInf" => |b, o, x, _| {
            float_type(b, o, x[0])?;
            let pos = super::attr_int(b.m, o, "detect_positive", 1) != 0;
            let neg = super::attr_int(b.m, o, "detect_negative", 1) != 0;
            let pinf = c(b, x[0], f64::INFINITY);
            let ninf = c(b, x[0], f64::NEG_INFINITY);
            let p = scalar::cmpf(b, "oeq", x[0], pinf);
            let n = scalar::cmpf(b, "oeq", x[0], ninf);
            let fals = b.const_bool(false);
            let p = if pos { p } else { fals };
            let n = if neg { n } else { fals };
            Ok(b.same("arith.ori", &[p, n]))
        },
        _ => return None,
    })
}
