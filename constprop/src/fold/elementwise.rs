//! Element-wise folding with NumPy broadcasting, computed in `WideNum`:
//! arithmetic, comparisons, logic, bitwise, Where, Clip and casts.

use super::dense::{convert, pack, wide_of};
use super::{attr_i64, attr_str, result_dtype, unary};
use ir::dialects::op_error;
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Module, OpId, Result};

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

/// Broadcast full shape, core shape and values.
type Broadcast = (Vec<i64>, Vec<i64>, Vec<Vec<WideNum>>);

/// All inputs broadcast to their common shape, as value vectors over the
/// broadcast core: dims where every input repeats (stride 0) are computed
/// once, so splats and broadcasts stay compact.
fn broadcast_values(xs: &[&Elements]) -> Option<Broadcast> {
    let mut shape: Vec<i64> = Vec::new();
    for x in xs {
        shape = broadcast_shape(&shape, x.shape())?;
    }
    let views: Vec<Elements> = xs
        .iter()
        .map(|x| x.broadcast_to(&shape))
        .collect::<Option<_>>()?;
    let core: Vec<i64> = (0..shape.len())
        .map(|i| {
            if views.iter().all(|v| v.strides()[i] == 0) {
                1
            } else {
                shape[i]
            }
        })
        .collect();
    let vals = views
        .iter()
        .map(|v| v.broadcast_core(&core).map(|c| c.to_wide_vec()))
        .collect::<Option<_>>()?;
    Some((shape, core, vals))
}

fn broadcast_all(m: &Module, op: OpId, xs: &[&Elements]) -> Result<Broadcast> {
    broadcast_values(xs)
        .ok_or_else(|| op_error(m, op, "operand shapes are not broadcast-compatible"))
}

/// Packs values computed on `core` and broadcasts them to `full`.
fn expand_values(
    dtype: DType,
    full: &[i64],
    core: &[i64],
    vals: &[WideNum],
    saturate: bool,
) -> std::result::Result<Elements, String> {
    let cs: Vec<usize> = core.iter().map(|&d| d.max(0) as usize).collect();
    let e = pack(dtype, &cs, vals, saturate)?;
    if core.iter().all(|&d| d == 1) && !full.is_empty() {
        // One value: store it as a splat of the full shape.
        let v = e.get(0).unwrap_or_default();
        if let Ok(s) = Elements::splat(dtype, full.to_vec(), v) {
            return Ok(s);
        }
    }
    e.broadcast_to(full)
        .ok_or_else(|| "broadcast of the folded result failed".to_string())
}

fn expand(
    m: &Module,
    op: OpId,
    dtype: DType,
    full: &[i64],
    core: &[i64],
    vals: &[WideNum],
    saturate: bool,
) -> Result<Elements> {
    expand_values(dtype, full, core, vals, saturate).map_err(|e| op_error(m, op, e))
}

/// Add/Sub/Mul/Div of two constants outside any op (canonicalizations),
/// keeping broadcasts compact.
pub fn apply_arith(kind: &str, a: &Elements, b: &Elements, dtype: DType) -> Option<Elements> {
    let c = a.dtype().class();
    if b.dtype().class() != c || dtype.class() != c {
        return None;
    }
    let (full, core, vals) = broadcast_values(&[a, b])?;
    let out: Vec<WideNum> = vals[0]
        .iter()
        .zip(&vals[1])
        .map(|(&x, &y)| match kind {
            "Add" => arith(c, x, y, |p, q| p + q, i64::wrapping_add, u64::wrapping_add),
            "Sub" => arith(c, x, y, |p, q| p - q, i64::wrapping_sub, u64::wrapping_sub),
            "Mul" => arith(c, x, y, |p, q| p * q, i64::wrapping_mul, u64::wrapping_mul),
            _ => arith(
                c,
                x,
                y,
                |p, q| p / q,
                |p, q| p.checked_div(q).unwrap_or(0),
                |p, q| p.checked_div(q).unwrap_or(0),
            ),
        })
        .collect();
    expand_values(dtype, &full, &core, &out, true).ok()
}

pub(super) fn cmp(c: NumClass, a: WideNum, b: WideNum) -> Option<std::cmp::Ordering> {
    match c {
        NumClass::Float => a.f64().partial_cmp(&b.f64()),
        NumClass::Signed => Some(a.i64().cmp(&b.i64())),
        NumClass::Unsigned => Some(a.u64().cmp(&b.u64())),
    }
}

fn arith(
    c: NumClass,
    a: WideNum,
    b: WideNum,
    f: fn(f64, f64) -> f64,
    i: fn(i64, i64) -> i64,
    u: fn(u64, u64) -> u64,
) -> WideNum {
    match c {
        NumClass::Float => WideNum::from_f64(f(a.f64(), b.f64())),
        NumClass::Signed => WideNum::from_i64(i(a.i64(), b.i64())),
        NumClass::Unsigned => WideNum::from_u64(u(a.u64(), b.u64())),
    }
}

fn nan_or(x: f64, y: f64, f: fn(f64, f64) -> f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        f(x, y)
    }
}

fn bool_of(b: bool) -> WideNum {
    WideNum::from_u64(u64::from(b))
}

/// A two-operand kernel.
pub type Binary = Box<dyn Fn(WideNum, WideNum) -> WideNum + Send + Sync>;

/// The kernel of a two-operand op on classes `ca`, `cb`, if known.
pub(super) fn binary(
    m: &Module,
    op: OpId,
    kind: &str,
    ca: NumClass,
    cb: NumClass,
) -> Option<Binary> {
    use std::cmp::Ordering::*;
    let c = ca;
    Some(match kind {
        "Add" | "Sum" | "Mean" => {
            Box::new(move |a, b| arith(c, a, b, |x, y| x + y, i64::wrapping_add, u64::wrapping_add))
        }
        "Sub" => {
            Box::new(move |a, b| arith(c, a, b, |x, y| x - y, i64::wrapping_sub, u64::wrapping_sub))
        }
        "Mul" => {
            Box::new(move |a, b| arith(c, a, b, |x, y| x * y, i64::wrapping_mul, u64::wrapping_mul))
        }
        "Div" => Box::new(move |a, b| {
            arith(
                c,
                a,
                b,
                |x, y| x / y,
                |x, y| x.checked_div(y).unwrap_or(0),
                |x, y| x.checked_div(y).unwrap_or(0),
            )
        }),
        "Max" => {
            Box::new(move |a, b| arith(c, a, b, |x, y| nan_or(x, y, f64::max), i64::max, u64::max))
        }
        "Min" => {
            Box::new(move |a, b| arith(c, a, b, |x, y| nan_or(x, y, f64::min), i64::min, u64::min))
        }
        "Mod" => {
            let fmod = attr_i64(m, op, "fmod", 0) != 0;
            Box::new(move |a, b| match c {
                NumClass::Float => {
                    let (x, y) = (a.f64(), b.f64());
                    let r = x % y;
                    WideNum::from_f64(if fmod || r == 0.0 || (r < 0.0) == (y < 0.0) {
                        r
                    } else {
                        r + y
                    })
                }
                NumClass::Signed => {
                    let (x, y) = (a.i64(), b.i64());
                    if y == 0 {
                        return WideNum::from_i64(0);
                    }
                    let r = x.wrapping_rem(y);
                    WideNum::from_i64(if fmod || r == 0 || (r < 0) == (y < 0) {
                        r
                    } else {
                        r + y
                    })
                }
                NumClass::Unsigned => WideNum::from_u64(a.u64().checked_rem(b.u64()).unwrap_or(0)),
            })
        }
        "Pow" => Box::new(move |a, b| {
            if c != NumClass::Float && cb != NumClass::Float {
                let (x, y) = (a.i64(), b.i64());
                let r = if y < 0 {
                    0
                } else {
                    x.wrapping_pow(y.min(u32::MAX as i64) as u32)
                };
                return WideNum::from_i64(r);
            }
            wide_of(c, a.to_f64(c).powf(b.to_f64(cb)))
        }),
        "BitShift" if c == NumClass::Signed => {
            let left = attr_str(m, op, "direction").as_deref() == Some("LEFT");
            Box::new(move |a, b| {
                let (x, s) = (a.i64(), b.i64());
                let wide = !(0..64).contains(&s);
                WideNum::from_i64(match (left, wide) {
                    (true, true) => 0,
                    (true, false) => x.wrapping_shl(s as u32),
                    (false, true) => x >> 63,
                    (false, false) => x >> s,
                })
            })
        }
        "BitShift" => {
            let left = attr_str(m, op, "direction").as_deref() == Some("LEFT");
            Box::new(move |a, b| {
                let s = b.u64();
                WideNum::from_u64(if s >= 64 {
                    0
                } else if left {
                    a.u64() << s
                } else {
                    a.u64() >> s
                })
            })
        }
        "BitwiseAnd" | "And" => Box::new(|a, b| WideNum::from_u64(a.u64() & b.u64())),
        "BitwiseOr" | "Or" => Box::new(|a, b| WideNum::from_u64(a.u64() | b.u64())),
        "BitwiseXor" | "Xor" => Box::new(|a, b| WideNum::from_u64(a.u64() ^ b.u64())),
        "Equal" => Box::new(move |a, b| bool_of(cmp(c, a, b) == Some(Equal))),
        "Less" => Box::new(move |a, b| bool_of(cmp(c, a, b) == Some(Less))),
        "LessOrEqual" => Box::new(move |a, b| bool_of(matches!(cmp(c, a, b), Some(Less | Equal)))),
        "Greater" => Box::new(move |a, b| bool_of(cmp(c, a, b) == Some(Greater))),
        "GreaterOrEqual" => {
            Box::new(move |a, b| bool_of(matches!(cmp(c, a, b), Some(Greater | Equal))))
        }
        "PRelu" => Box::new(move |a, b| {
            if cmp(c, a, wide_of(c, 0.0)) == Some(Less) {
                arith(c, a, b, |x, y| x * y, i64::wrapping_mul, u64::wrapping_mul)
            } else {
                a
            }
        }),
        _ => return None,
    })
}

pub(super) fn is_variadic(kind: &str) -> bool {
    matches!(kind, "Sum" | "Mean" | "Max" | "Min")
}

/// Cast of one value to `to` (ONNX rules: float → int truncates and wraps,
/// bool is `!= 0`).
pub fn cast_value(v: WideNum, from: NumClass, to: DType) -> WideNum {
    let tc = to.class();
    if to == DType::Bool {
        return bool_of(match from {
            NumClass::Float => v.f64() != 0.0,
            _ => v.u64() != 0,
        });
    }
    convert(v, from, tc)
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    if let Some(r) = super::lazy_map::fold(m, op, kind, inputs)? {
        return Ok(Some(vec![r]));
    }
    let xs: Vec<&Elements> = inputs.iter().flatten().collect();
    let Some(first) = xs.first() else {
        return Ok(None);
    };
    let ca = first.dtype().class();
    let out = |dtype: DType,
               full: Vec<i64>,
               core: Vec<i64>,
               vals: Vec<WideNum>|
     -> Result<Option<Vec<Elements>>> {
        Ok(Some(vec![expand(m, op, dtype, &full, &core, &vals, true)?]))
    };
    // A one-operand op on a broadcast view computes on its core only.
    let unary_core = |x: &Elements| -> Result<(Vec<i64>, Vec<i64>, Vec<WideNum>)> {
        let (full, core, mut v) = broadcast_all(m, op, &[x])?;
        Ok((full, core, v.pop().unwrap_or_default()))
    };
    if (xs.len() == 2 || is_variadic(kind)) && inputs.len() == xs.len() {
        let cb = xs.get(1).map_or(ca, |x| x.dtype().class());
        if let Some(f) = binary(m, op, kind, ca, cb) {
            let dtype = result_dtype(m, op, 0)?;
            let (shape, core, vals) = broadcast_all(m, op, &xs)?;
            let n = vals.first().map_or(0, Vec::len);
            let mut acc = vals[0].clone();
            for v in &vals[1..] {
                for (a, &b) in acc.iter_mut().zip(v) {
                    *a = f(*a, b);
                }
            }
            if kind == "Mean" {
                let k = xs.len() as f64;
                for a in &mut acc {
                    *a = wide_of(ca, a.to_f64(ca) / k);
                }
            }
            debug_assert_eq!(acc.len(), n);
            return out(dtype, shape, core, acc);
        }
    }
    match kind {
        "Cast" | "CastLike" => {
            let to = result_dtype(m, op, 0)?;
            let saturate = attr_i64(m, op, "saturate", 1) != 0;
            let (full, core, xv) = unary_core(first)?;
            let mut vals: Vec<WideNum> = xv.into_iter().map(|v| cast_value(v, ca, to)).collect();
            if to == DType::F8E8M0FNU {
                let mode = attr_str(m, op, "round_mode").unwrap_or_else(|| "up".into());
                for v in &mut vals {
                    *v = WideNum::from_f64(e8m0_value(v.f64(), &mode, saturate));
                }
            }
            return Ok(Some(vec![expand(
                m, op, to, &full, &core, &vals, saturate,
            )?]));
        }
        "Where" => {
            if xs.len() != 3 {
                return Ok(None);
            }
            let dtype = result_dtype(m, op, 0)?;
            let (shape, core, v) = broadcast_all(m, op, &xs)?;
            let vals = (0..v[0].len())
                .map(|i| if v[0][i].u64() != 0 { v[1][i] } else { v[2][i] })
                .collect();
            return out(dtype, shape, core, vals);
        }
        "Clip" => {
            let dtype = result_dtype(m, op, 0)?;
            let (lo, hi) = clip_bounds(m, op, inputs, ca);
            let (full, core, xv) = unary_core(first)?;
            let vals = xv.into_iter().map(|v| clip(ca, v, lo, hi)).collect();
            return out(dtype, full, core, vals);
        }
        _ => {}
    }
    if xs.len() != 1 {
        return Ok(None);
    }
    let Some(f) = unary::kernel(m, op, kind, ca) else {
        return Ok(None);
    };
    let dtype = result_dtype(m, op, 0)?;
    let (full, core, xv) = unary_core(first)?;
    let vals = xv.into_iter().map(f).collect();
    out(dtype, full, core, vals)
}

/// Clip's bounds: operands 1 and 2, or the `min`/`max` attributes of
/// opset 6.
pub(super) fn clip_bounds(
    m: &Module,
    op: OpId,
    inputs: &[Option<Elements>],
    ca: NumClass,
) -> (Option<WideNum>, Option<WideNum>) {
    let bound = |i: usize, name: &str| match inputs.get(i) {
        Some(Some(e)) => e.get(0),
        _ => m
            .attr(op, name)
            .and_then(|a| a.as_float())
            .map(|v| wide_of(ca, v)),
    };
    (bound(1, "min"), bound(2, "max"))
}

pub(super) fn clip(ca: NumClass, v: WideNum, lo: Option<WideNum>, hi: Option<WideNum>) -> WideNum {
    use std::cmp::Ordering::{Greater, Less};
    // Sequential like NumPy: with min > max every value becomes max.
    let v = match lo {
        Some(l) if cmp(ca, v, l) == Some(Less) => l,
        _ => v,
    };
    match hi {
        Some(h) if cmp(ca, v, h) == Some(Greater) => h,
        _ => v,
    }
}

/// The value an f32 rounds to in float8e8m0 (a power of two), computed on
/// the f32 exponent field like the ONNX reference.
fn e8m0_value(v: f64, mode: &str, saturate: bool) -> f64 {
    let bits = (v as f32).to_bits();
    let mut exp = (bits >> 23) & 0xff;
    if exp == 0xff {
        return f64::NAN;
    }
    let frac = bits & 0x7f_ffff;
    let up = match mode {
        "up" => frac > 0,
        "nearest" => {
            let g = bits & 0x40_0000 != 0;
            let r = bits & 0x20_0000 != 0;
            let st = bits & 0x1f_ffff != 0;
            g && (r || st || exp > 0)
        }
        _ => false,
    };
    if up && !(saturate && exp == 0xfe) {
        exp += 1;
    }
    if exp >= 0xff {
        return f64::NAN;
    }
    2f64.powi(exp as i32 - 127)
}
