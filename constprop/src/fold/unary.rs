//! One-operand element-wise kernels: math functions and activations.

use ir::elements::{MapFn, NumClass, WideNum};
use ir::{Module, OpId};
use onnx::ops;
use std::sync::Arc;

/// A one-operand kernel (shared by eager and lazy folds).
pub type Kernel = MapFn;

/// The one-operand element-wise ops.
#[derive(Clone, Copy)]
pub enum Unary {
    Relu,
    Neg,
    Abs,
    Sign,
    Sqrt,
    Exp,
    Log,
    Tanh,
    Sigmoid,
    Reciprocal,
    Floor,
    Ceil,
    Round,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Erf,
    Softsign,
    Softplus,
    Mish,
    Elu,
    Celu,
    Selu,
    LeakyRelu,
    ThresholdedRelu,
    HardSigmoid,
    HardSwish,
    Swish,
    Gelu,
    Shrink,
    Not,
    BitwiseNot,
    IsNaN,
    IsInf,
}

/// erf by its Taylor series near 0 and the asymptotic erfc expansion beyond
/// (absolute error well below 1e-12 over the f32 range).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 4.0 {
        let (mut term, mut sum, x2) = (a, a, a * a);
        for n in 1..200 {
            term *= -x2 / n as f64;
            let t = term / (2 * n + 1) as f64;
            sum += t;
            if t.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        let x2 = a * a;
        let series = 1.0 - 1.0 / (2.0 * x2) + 3.0 / (4.0 * x2 * x2) - 15.0 / (8.0 * x2 * x2 * x2);
        1.0 - (-x2).exp() / (a * std::f64::consts::PI.sqrt()) * series
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

fn float(f: impl Fn(f64) -> f64 + Send + Sync + 'static) -> Kernel {
    Arc::new(move |v| WideNum::from_f64(f(v.f64())))
}

fn boolean(b: bool) -> WideNum {
    WideNum::from_u64(u64::from(b))
}

/// The kernel of `u` on values of class `c` (attributes read from `op`),
/// if it has one.
pub fn kernel(m: &Module, op: OpId, u: Unary, c: NumClass) -> Option<Kernel> {
    match c {
        NumClass::Float => float_kernel(m, op, u),
        NumClass::Signed => int_kernel(u, true),
        NumClass::Unsigned => int_kernel(u, false),
    }
}

/// Integer kernels: the ops defined on integers.
fn int_kernel(u: Unary, signed: bool) -> Option<Kernel> {
    use Unary::*;
    let k: Kernel = match (u, signed) {
        (Neg, true) => Arc::new(|v| WideNum::from_i64(v.i64().wrapping_neg())),
        (Abs, true) => Arc::new(|v| WideNum::from_i64(v.i64().wrapping_abs())),
        (Abs, false) => Arc::new(|v| v),
        (Sign, true) => Arc::new(|v| WideNum::from_i64(v.i64().signum())),
        (Sign, false) => Arc::new(|v| boolean(v.u64() != 0)),
        (Relu, true) => Arc::new(|v| WideNum::from_i64(v.i64().max(0))),
        (Not, _) => Arc::new(|v| boolean(v.u64() == 0)),
        (BitwiseNot, true) => Arc::new(|v| WideNum::from_i64(!v.i64())),
        (BitwiseNot, false) => Arc::new(|v| WideNum::from_u64(!v.u64())),
        // The math functions and activations have float kernels only.
        _ => return None,
    };
    Some(k)
}

fn float_kernel(m: &Module, op: OpId, u: Unary) -> Option<Kernel> {
    use Unary::*;
    Some(match u {
        Relu => float(|x| if x < 0.0 { 0.0 } else { x }),
        Neg => float(|x| -x),
        Abs => float(f64::abs),
        Sign => float(|x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }),
        Sqrt => float(f64::sqrt),
        Exp => float(f64::exp),
        Log => float(f64::ln),
        Tanh => float(f64::tanh),
        Sigmoid => float(|x| 1.0 / (1.0 + (-x).exp())),
        Reciprocal => float(|x| 1.0 / x),
        Floor => float(f64::floor),
        Ceil => float(f64::ceil),
        Round => float(f64::round_ties_even),
        Sin => float(f64::sin),
        Cos => float(f64::cos),
        Tan => float(f64::tan),
        Asin => float(f64::asin),
        Acos => float(f64::acos),
        Atan => float(f64::atan),
        Sinh => float(f64::sinh),
        Cosh => float(f64::cosh),
        Asinh => float(f64::asinh),
        Acosh => float(f64::acosh),
        Atanh => float(f64::atanh),
        Erf => float(erf),
        Softsign => float(|x| x / (1.0 + x.abs())),
        Softplus => float(|x| if x > 30.0 { x } else { x.exp().ln_1p() }),
        Mish => float(|x| x * (if x > 30.0 { x } else { x.exp().ln_1p() }).tanh()),
        HardSwish => float(|x| x * (x / 6.0 + 0.5).clamp(0.0, 1.0)),
        Elu => elu(m, op),
        Celu => celu(m, op),
        Selu => selu(m, op),
        LeakyRelu => leaky_relu(m, op),
        ThresholdedRelu => thresholded_relu(m, op),
        HardSigmoid => hard_sigmoid(m, op),
        Swish => swish(m, op),
        Gelu => gelu(m, op),
        Shrink => shrink(m, op),
        Not => Arc::new(|v| boolean(v.u64() == 0)),
        IsNaN => Arc::new(|v| boolean(v.f64().is_nan())),
        IsInf => {
            let v = ops::IsInf::of(m, op);
            let (neg, pos) = (v.detect_negative() != 0, v.detect_positive() != 0);
            Arc::new(move |v| {
                let x = v.f64();
                boolean(x.is_infinite() && ((x > 0.0 && pos) || (x < 0.0 && neg)))
            })
        }
        BitwiseNot => return None,
    })
}

fn elu(m: &Module, op: OpId) -> Kernel {
    let a = ops::Elu::of(m, op).alpha();
    float(move |x| if x < 0.0 { a * (x.exp() - 1.0) } else { x })
}

fn celu(m: &Module, op: OpId) -> Kernel {
    let a = ops::Celu::of(m, op).alpha();
    float(move |x| x.max(0.0) + (a * ((x / a).exp() - 1.0)).min(0.0))
}

fn selu(m: &Module, op: OpId) -> Kernel {
    let v = ops::Selu::of(m, op);
    let (a, g) = (v.alpha(), v.gamma());
    float(move |x| {
        if x <= 0.0 {
            g * (a * x.exp() - a)
        } else {
            g * x
        }
    })
}

fn leaky_relu(m: &Module, op: OpId) -> Kernel {
    let a = ops::LeakyRelu::of(m, op).alpha();
    float(move |x| if x < 0.0 { a * x } else { x })
}

fn thresholded_relu(m: &Module, op: OpId) -> Kernel {
    let a = ops::ThresholdedRelu::of(m, op).alpha();
    float(move |x| if x > a { x } else { 0.0 })
}

fn hard_sigmoid(m: &Module, op: OpId) -> Kernel {
    let v = ops::HardSigmoid::of(m, op);
    let (a, b) = (v.alpha(), v.beta());
    float(move |x| (a * x + b).clamp(0.0, 1.0))
}

fn swish(m: &Module, op: OpId) -> Kernel {
    let a = ops::Swish::of(m, op).alpha();
    float(move |x| x / (1.0 + (-a * x).exp()))
}

fn gelu(m: &Module, op: OpId) -> Kernel {
    if ops::Gelu::of(m, op).approximate() == "tanh" {
        float(|x| {
            let k = (2.0 / std::f64::consts::PI).sqrt();
            0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
        })
    } else {
        float(|x| 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)))
    }
}

fn shrink(m: &Module, op: OpId) -> Kernel {
    let v = ops::Shrink::of(m, op);
    let (bias, l) = (v.bias(), v.lambd());
    float(move |x| {
        if x < -l {
            x + bias
        } else if x > l {
            x - bias
        } else {
            0.0
        }
    })
}
