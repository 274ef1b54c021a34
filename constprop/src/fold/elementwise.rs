//! Element-wise folding with NumPy broadcasting, computed in `WideNum`.

use super::result_dtype;
use ir::dialects::op_error;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Module, OpId, Result};

type Binary = fn(NumClass, WideNum, WideNum) -> WideNum;
type Unary = fn(f64) -> f64;

fn binary(kind: &str) -> Option<Binary> {
    Some(match kind {
        "Add" | "Sum" => {
            |c, a, b| arith(c, a, b, |x, y| x + y, i64::wrapping_add, u64::wrapping_add)
        }
        "Sub" => |c, a, b| arith(c, a, b, |x, y| x - y, i64::wrapping_sub, u64::wrapping_sub),
        "Mul" => |c, a, b| arith(c, a, b, |x, y| x * y, i64::wrapping_mul, u64::wrapping_mul),
        "Div" => |c, a, b| {
            arith(
                c,
                a,
                b,
                |x, y| x / y,
                |x, y| x.checked_div(y).unwrap_or(0),
                |x, y| x.checked_div(y).unwrap_or(0),
            )
        },
        "Max" => |c, a, b| arith(c, a, b, nan_max, i64::max, u64::max),
        "Min" => |c, a, b| arith(c, a, b, nan_min, i64::min, u64::min),
        "Pow" => |c, a, b| {
            let (x, y) = (a.to_f64(c), b.to_f64(c));
            match c {
                NumClass::Float => WideNum::from_f64(x.powf(y)),
                NumClass::Signed => WideNum::from_i64(x.powf(y) as i64),
                NumClass::Unsigned => WideNum::from_u64(x.powf(y) as u64),
            }
        },
        _ => return None,
    })
}

fn nan_max(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

fn nan_min(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}

fn arith(
    c: NumClass,
    a: WideNum,
    b: WideNum,
    f: fn(f64, f64) -> f64,
    s: fn(i64, i64) -> i64,
    u: fn(u64, u64) -> u64,
) -> WideNum {
    match c {
        NumClass::Float => WideNum::from_f64(f(a.f64(), b.f64())),
        NumClass::Signed => WideNum::from_i64(s(a.i64(), b.i64())),
        NumClass::Unsigned => WideNum::from_u64(u(a.u64(), b.u64())),
    }
}

fn unary(kind: &str) -> Option<Unary> {
    Some(match kind {
        "Relu" => |x| if x.is_nan() { x } else { x.max(0.0) },
        "Neg" => |x| -x,
        "Abs" => f64::abs,
        "Sqrt" => f64::sqrt,
        "Exp" => f64::exp,
        "Log" => f64::ln,
        "Tanh" => f64::tanh,
        "Sigmoid" => |x| 1.0 / (1.0 + (-x).exp()),
        "Reciprocal" => |x| 1.0 / x,
        "Floor" => f64::floor,
        "Ceil" => f64::ceil,
        _ => return None,
    })
}

/// Broadcast shape of two shapes, or `None` if incompatible.
pub fn broadcast_shape(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let x = (i + a.len()).checked_sub(r).map_or(1, |k| a[k]);
            let y = (i + b.len()).checked_sub(r).map_or(1, |k| b[k]);
            match (x, y) {
                (1, y) => Some(y),
                (x, 1) => Some(x),
                (x, y) if x == y => Some(x),
                _ => None,
            }
        })
        .collect()
}

fn to_class(v: WideNum, from: NumClass, to: NumClass) -> WideNum {
    match (from, to) {
        (a, b) if a == b => v,
        (_, NumClass::Float) => WideNum::from_f64(v.to_f64(from)),
        (NumClass::Float, NumClass::Signed) => WideNum::from_i64(v.f64() as i64),
        (NumClass::Float, NumClass::Unsigned) => WideNum::from_u64(v.f64() as u64),
        _ => v,
    }
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    let err = |e: ir::elements::ElementsError| op_error(m, op, e.to_string());
    if let Some(f) = binary(kind) {
        let xs: Vec<&Elements> = inputs.iter().flatten().collect();
        let Some((first, rest)) = xs.split_first() else {
            return Ok(None);
        };
        let class = first.dtype().class();
        let dtype = result_dtype(m, op, 0)?;
        let mut acc: Elements = (*first).clone();
        for y in rest {
            let shape = broadcast_shape(acc.shape(), y.shape())
                .ok_or_else(|| op_error(m, op, "operand shapes are not broadcast-compatible"))?;
            let (a, b) = match (acc.broadcast_to(&shape), y.broadcast_to(&shape)) {
                (Some(a), Some(b)) => (a, b),
                _ => {
                    return Err(op_error(
                        m,
                        op,
                        "operand shapes are not broadcast-compatible",
                    ))
                }
            };
            let vals: Vec<WideNum> = a
                .iter()
                .zip(b.iter())
                .map(|(p, q)| f(class, p, q))
                .collect();
            acc = Elements::from_wide(dtype, shape, &vals).map_err(err)?;
        }
        return Ok(Some(vec![acc]));
    }
    let Some(Some(x)) = inputs.first() else {
        return Ok(None);
    };
    if kind == "Cast" {
        let to = result_dtype(m, op, 0)?;
        if matches!(
            to,
            DType::F8E4M3FN
                | DType::F8E4M3FNUZ
                | DType::F8E5M2
                | DType::F8E5M2FNUZ
                | DType::F8E8M0FNU
                | DType::F4E2M1FN
        ) {
            return Ok(None);
        }
        let from = x.dtype().class();
        let vals: Vec<WideNum> = x.iter().map(|v| to_class(v, from, to.class())).collect();
        return Ok(Some(vec![Elements::from_wide(
            to,
            x.shape().to_vec(),
            &vals,
        )
        .map_err(err)?]));
    }
    if let Some(f) = unary(kind) {
        let dtype = result_dtype(m, op, 0)?;
        if x.dtype().class() != NumClass::Float {
            return Ok(None);
        }
        let vals: Vec<WideNum> = x.iter().map(|v| WideNum::from_f64(f(v.f64()))).collect();
        return Ok(Some(vec![Elements::from_wide(
            dtype,
            x.shape().to_vec(),
            &vals,
        )
        .map_err(err)?]));
    }
    Ok(None)
}
