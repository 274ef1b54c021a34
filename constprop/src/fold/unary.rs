//! One-operand element-wise kernels: math functions and activations.

use super::{attr_f64, attr_i64, attr_str};
use ir::elements::{NumClass, WideNum};
use ir::{Module, OpId};

pub type Kernel = Box<dyn Fn(WideNum) -> WideNum + Send + Sync>;

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
    Box::new(move |v| WideNum::from_f64(f(v.f64())))
}

/// A kernel for `kind` on values of class `c`, if known.
pub fn kernel(m: &Module, op: OpId, kind: &str, c: NumClass) -> Option<Kernel> {
    let alpha = |d| attr_f64(m, op, "alpha", d);
    // Integer-capable ops first.
    match (kind, c) {
        ("Neg", NumClass::Signed) => {
            return Some(Box::new(|v| WideNum::from_i64(v.i64().wrapping_neg())))
        }
        ("Abs", NumClass::Signed) => {
            return Some(Box::new(|v| WideNum::from_i64(v.i64().wrapping_abs())))
        }
        ("Abs", NumClass::Unsigned) | ("Identity", _) => return Some(Box::new(|v| v)),
        ("Sign", NumClass::Signed) => {
            return Some(Box::new(|v| WideNum::from_i64(v.i64().signum())))
        }
        ("Sign", NumClass::Unsigned) => {
            return Some(Box::new(|v| WideNum::from_u64(u64::from(v.u64() != 0))))
        }
        ("Relu", NumClass::Signed) => return Some(Box::new(|v| WideNum::from_i64(v.i64().max(0)))),
        ("Not", _) => return Some(Box::new(|v| WideNum::from_u64(u64::from(v.u64() == 0)))),
        ("BitwiseNot", NumClass::Signed) => return Some(Box::new(|v| WideNum::from_i64(!v.i64()))),
        ("BitwiseNot", NumClass::Unsigned) => {
            return Some(Box::new(|v| WideNum::from_u64(!v.u64())))
        }
        ("IsNaN", NumClass::Float) => {
            return Some(Box::new(|v| WideNum::from_u64(u64::from(v.f64().is_nan()))))
        }
        ("IsInf", NumClass::Float) => {
            let neg = attr_i64(m, op, "detect_negative", 1) != 0;
            let pos = attr_i64(m, op, "detect_positive", 1) != 0;
            return Some(Box::new(move |v| {
                let x = v.f64();
                WideNum::from_u64(u64::from(
                    x.is_infinite() && ((x > 0.0 && pos) || (x < 0.0 && neg)),
                ))
            }));
        }
        (_, NumClass::Float) => {}
        _ => return None,
    }
    Some(match kind {
        "Relu" => float(|x| if x < 0.0 { 0.0 } else { x }),
        "Neg" => float(|x| -x),
        "Abs" => float(f64::abs),
        "Sign" => float(|x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }),
        "Sqrt" => float(f64::sqrt),
        "Exp" => float(f64::exp),
        "Log" => float(f64::ln),
        "Tanh" => float(f64::tanh),
        "Sigmoid" => float(|x| 1.0 / (1.0 + (-x).exp())),
        "Reciprocal" => float(|x| 1.0 / x),
        "Floor" => float(f64::floor),
        "Ceil" => float(f64::ceil),
        "Round" => float(f64::round_ties_even),
        "Sin" => float(f64::sin),
        "Cos" => float(f64::cos),
        "Tan" => float(f64::tan),
        "Asin" => float(f64::asin),
        "Acos" => float(f64::acos),
        "Atan" => float(f64::atan),
        "Sinh" => float(f64::sinh),
        "Cosh" => float(f64::cosh),
        "Asinh" => float(f64::asinh),
        "Acosh" => float(f64::acosh),
        "Atanh" => float(f64::atanh),
        "Erf" => float(erf),
        "Softsign" => float(|x| x / (1.0 + x.abs())),
        "Softplus" => float(|x| if x > 30.0 { x } else { x.exp().ln_1p() }),
        "Mish" => float(|x| x * (if x > 30.0 { x } else { x.exp().ln_1p() }).tanh()),
        "Elu" => {
            let a = alpha(1.0);
            float(move |x| if x < 0.0 { a * (x.exp() - 1.0) } else { x })
        }
        "Celu" => {
            let a = alpha(1.0);
            float(move |x| x.max(0.0) + (a * ((x / a).exp() - 1.0)).min(0.0))
        }
        "Selu" => {
            let a = alpha(1.673_263_192_176_818_8);
            let g = attr_f64(m, op, "gamma", 1.050_701_022_148_132_3);
            float(move |x| {
                if x <= 0.0 {
                    g * (a * x.exp() - a)
                } else {
                    g * x
                }
            })
        }
        "LeakyRelu" => {
            let a = alpha(0.01);
            float(move |x| if x < 0.0 { a * x } else { x })
        }
        "ThresholdedRelu" => {
            let a = alpha(1.0);
            float(move |x| if x > a { x } else { 0.0 })
        }
        "HardSigmoid" => {
            let a = alpha(0.2);
            let b = attr_f64(m, op, "beta", 0.5);
            float(move |x| (a * x + b).clamp(0.0, 1.0))
        }
        "HardSwish" => float(|x| x * (x / 6.0 + 0.5).clamp(0.0, 1.0)),
        "Swish" => {
            let a = alpha(1.0);
            float(move |x| x / (1.0 + (-a * x).exp()))
        }
        "Gelu" => {
            if attr_str(m, op, "approximate").as_deref() == Some("tanh") {
                float(|x| {
                    let k = (2.0 / std::f64::consts::PI).sqrt();
                    0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
                })
            } else {
                float(|x| 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)))
            }
        }
        "Shrink" => {
            let bias = attr_f64(m, op, "bias", 0.0);
            let l = attr_f64(m, op, "lambd", 0.5);
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
        _ => return None,
    })
}
