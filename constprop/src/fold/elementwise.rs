//! Element-wise folding with NumPy broadcasting, computed in `WideNum`:
//! arithmetic, comparisons, logic, bitwise, Where, Clip and casts.

use super::dense::{convert, pack, wide_of};
use super::unary::{self, Unary};
use super::{lazy_map, Fold, Op};
use ir::elements::{DType, Elements, NumClass, WideNum};
use ir::{Module, OpId, Result};
use onnx::ops;
use std::sync::Arc;

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

fn broadcast_all(o: Op, xs: &[&Elements]) -> Result<Broadcast> {
    broadcast_values(xs).ok_or_else(|| o.err("operand shapes are not broadcast-compatible"))
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

/// Values computed on the broadcast `core` as the result (broadcast to
/// `full`), in `dtype`.
fn expand(
    o: Op,
    dtype: DType,
    (full, core): (&[i64], &[i64]),
    vals: &[WideNum],
    saturate: bool,
) -> Fold {
    let e = expand_values(dtype, full, core, vals, saturate).map_err(|e| o.err(e))?;
    Ok(Some(vec![e]))
}

/// The four arithmetic operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

impl Arith {
    /// `a ∘ b` in class `c` (integers wrap; integer division by 0 is 0).
    pub fn apply(self, c: NumClass, a: WideNum, b: WideNum) -> WideNum {
        match self {
            Arith::Add => arith(c, a, b, |p, q| p + q, i64::wrapping_add, u64::wrapping_add),
            Arith::Sub => arith(c, a, b, |p, q| p - q, i64::wrapping_sub, u64::wrapping_sub),
            Arith::Mul => arith(c, a, b, |p, q| p * q, i64::wrapping_mul, u64::wrapping_mul),
            Arith::Div => arith(
                c,
                a,
                b,
                |p, q| p / q,
                |p, q| p.checked_div(q).unwrap_or(0),
                |p, q| p.checked_div(q).unwrap_or(0),
            ),
        }
    }
}

/// Add/Sub/Mul/Div of two constants outside any op (canonicalizations),
/// keeping broadcasts compact.
pub fn apply_arith(op: Arith, a: &Elements, b: &Elements, dtype: DType) -> Option<Elements> {
    let c = a.dtype().class();
    if b.dtype().class() != c || dtype.class() != c {
        return None;
    }
    let (full, core, vals) = broadcast_values(&[a, b])?;
    let out: Vec<WideNum> = vals[0]
        .iter()
        .zip(&vals[1])
        .map(|(&x, &y)| op.apply(c, x, y))
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

/// The comparisons.
#[derive(Clone, Copy)]
pub enum Cmp {
    Equal,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// The two-operand element-wise ops.
#[derive(Clone, Copy)]
pub enum Binary {
    Arith(Arith),
    Max,
    Min,
    Mod,
    Pow,
    BitShift,
    And,
    Or,
    Xor,
    Cmp(Cmp),
    PRelu,
}

/// A two-operand kernel (shared by eager and lazy folds).
pub type BinaryFn = Arc<dyn Fn(WideNum, WideNum) -> WideNum + Send + Sync>;

/// Mod: the remainder with the divisor's sign, or C's `fmod`.
fn modulo(c: NumClass, fmod: bool) -> BinaryFn {
    Arc::new(move |a, b| match c {
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

fn pow(c: NumClass, cb: NumClass) -> BinaryFn {
    Arc::new(move |a, b| {
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
    })
}

fn bit_shift(c: NumClass, left: bool) -> BinaryFn {
    if c == NumClass::Signed {
        return Arc::new(move |a, b| {
            let (x, s) = (a.i64(), b.i64());
            let wide = !(0..64).contains(&s);
            WideNum::from_i64(match (left, wide) {
                (true, true) => 0,
                (true, false) => x.wrapping_shl(s as u32),
                (false, true) => x >> 63,
                (false, false) => x >> s,
            })
        });
    }
    Arc::new(move |a, b| {
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

fn compare(c: NumClass, how: Cmp) -> BinaryFn {
    use std::cmp::Ordering::*;
    Arc::new(move |a, b| {
        let o = cmp(c, a, b);
        bool_of(match how {
            Cmp::Equal => o == Some(Equal),
            Cmp::Less => o == Some(Less),
            Cmp::LessOrEqual => matches!(o, Some(Less | Equal)),
            Cmp::Greater => o == Some(Greater),
            Cmp::GreaterOrEqual => matches!(o, Some(Greater | Equal)),
        })
    })
}

impl Binary {
    /// The kernel on operands of classes `ca`, `cb` (attributes from `op`).
    pub(super) fn kernel(self, m: &Module, op: OpId, ca: NumClass, cb: NumClass) -> BinaryFn {
        let c = ca;
        match self {
            Binary::Arith(a) => Arc::new(move |x, y| a.apply(c, x, y)),
            Binary::Max => Arc::new(move |a, b| {
                arith(c, a, b, |x, y| nan_or(x, y, f64::max), i64::max, u64::max)
            }),
            Binary::Min => Arc::new(move |a, b| {
                arith(c, a, b, |x, y| nan_or(x, y, f64::min), i64::min, u64::min)
            }),
            Binary::Mod => modulo(c, ops::Mod::of(m, op).fmod() != 0),
            Binary::Pow => pow(c, cb),
            Binary::BitShift => bit_shift(c, ops::BitShift::of(m, op).direction() == "LEFT"),
            Binary::And => Arc::new(|a, b| WideNum::from_u64(a.u64() & b.u64())),
            Binary::Or => Arc::new(|a, b| WideNum::from_u64(a.u64() | b.u64())),
            Binary::Xor => Arc::new(|a, b| WideNum::from_u64(a.u64() ^ b.u64())),
            Binary::Cmp(how) => compare(c, how),
            Binary::PRelu => Arc::new(move |a, b| {
                if cmp(c, a, wide_of(c, 0.0)) == Some(std::cmp::Ordering::Less) {
                    Arith::Mul.apply(c, a, b)
                } else {
                    a
                }
            }),
        }
    }
}

/// The variadic ops: Sum, Mean, Max and Min of any number of operands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Variadic {
    Sum,
    Mean,
    Max,
    Min,
}

impl Variadic {
    /// The two-operand op folding the operands.
    fn pairwise(self) -> Binary {
        match self {
            Variadic::Sum | Variadic::Mean => Binary::Arith(Arith::Add),
            Variadic::Max => Binary::Max,
            Variadic::Min => Binary::Min,
        }
    }
}

/// Cast of one value to `to` (docs/ONNX_DIALECT.md, "Cast semantics"):
/// bool is `!= 0`; integers wrap (the packing keeps the low bits); float →
/// integer truncates toward zero and saturates to `to`'s range, NaN giving
/// 0, where ONNX leaves out-of-range values undefined. The bufferized
/// kernel (`scalar::convert`) computes the same.
pub fn cast_value(v: WideNum, from: NumClass, to: DType) -> WideNum {
    let tc = to.class();
    if to == DType::Bool {
        return bool_of(match from {
            NumClass::Float => v.f64() != 0.0,
            _ => v.u64() != 0,
        });
    }
    if from == NumClass::Float && tc != NumClass::Float {
        return saturating_int(v.f64(), to);
    }
    convert(v, from, tc)
}

/// `x` truncated toward zero and clamped to integer type `to`'s range (NaN
/// is 0: Rust's float → int `as` saturates the same way at 64 bits).
fn saturating_int(x: f64, to: DType) -> WideNum {
    let bits = to.bits().min(64);
    if to.class() == NumClass::Unsigned {
        let max = u64::MAX >> (64 - bits);
        WideNum::from_u64((x as u64).min(max))
    } else {
        let max = i64::MAX >> (64 - bits);
        WideNum::from_i64((x as i64).clamp(-max - 1, max))
    }
}

/// `k` folded over all operands (divided by their count for `mean`).
fn nary(o: Op, xs: &[&Elements], k: &BinaryFn, mean: bool) -> Fold {
    let Some(first) = xs.first() else {
        return Ok(None);
    };
    let ca = first.dtype().class();
    let dtype = o.dtype(0)?;
    let (shape, core, vals) = broadcast_all(o, xs)?;
    let Some((acc, rest)) = vals.split_first() else {
        return Ok(None);
    };
    let mut acc = acc.clone();
    for v in rest {
        for (a, &b) in acc.iter_mut().zip(v) {
            *a = k(*a, b);
        }
    }
    if mean {
        let n = xs.len() as f64;
        for a in &mut acc {
            *a = wide_of(ca, a.to_f64(ca) / n);
        }
    }
    expand(o, dtype, (&shape, &core), &acc, true)
}

/// A lazy result as the fold.
fn lazy(e: Option<Elements>) -> Option<Fold> {
    e.map(|e| Ok(Some(vec![e])))
}

pub fn binary(o: Op, b: Binary) -> Fold {
    let [Some(x), Some(y)] = o.inputs else {
        return Ok(None);
    };
    let k = b.kernel(o.m, o.op, x.dtype().class(), y.dtype().class());
    if let Some(r) = lazy(lazy_map::binary(o, x, y, &k)) {
        return r;
    }
    nary(o, &[x, y], &k, false)
}

pub fn variadic(o: Op, v: Variadic) -> Fold {
    let xs: Vec<&Elements> = o.inputs.iter().flatten().collect();
    let Some(first) = xs.first() else {
        return Ok(None);
    };
    if xs.len() != o.inputs.len() {
        return Ok(None);
    }
    let ca = first.dtype().class();
    let cb = xs.get(1).map_or(ca, |x| x.dtype().class());
    let k = v.pairwise().kernel(o.m, o.op, ca, cb);
    if let (&[x, y], false) = (xs.as_slice(), v == Variadic::Mean) {
        if let Some(r) = lazy(lazy_map::binary(o, x, y, &k)) {
            return r;
        }
    }
    nary(o, &xs, &k, v == Variadic::Mean)
}

/// A one-operand op on a broadcast view computes on its core only.
fn unary_core(o: Op, x: &Elements) -> Result<(Vec<i64>, Vec<i64>, Vec<WideNum>)> {
    let (full, core, mut v) = broadcast_all(o, &[x])?;
    Ok((full, core, v.pop().unwrap_or_default()))
}

/// Cast of operand 0 to the result's dtype.
fn cast_to(o: Op, saturate: bool, round_mode: &str) -> Fold {
    if let Some(r) = lazy(lazy_map::cast(o)) {
        return r;
    }
    let Some(x) = o.input(0) else { return Ok(None) };
    let ca = x.dtype().class();
    let to = o.dtype(0)?;
    let (full, core, xv) = unary_core(o, x)?;
    let mut vals: Vec<WideNum> = xv.into_iter().map(|v| cast_value(v, ca, to)).collect();
    if to == DType::F8E8M0FNU {
        for v in &mut vals {
            *v = WideNum::from_f64(e8m0_value(v.f64(), round_mode, saturate));
        }
    }
    expand(o, to, (&full, &core), &vals, saturate)
}

pub fn cast(o: Op) -> Fold {
    let v = ops::Cast::of(o.m, o.op);
    cast_to(o, v.saturate() != 0, v.round_mode())
}

pub fn cast_like(o: Op) -> Fold {
    let v = ops::CastLike::of(o.m, o.op);
    cast_to(o, v.saturate() != 0, v.round_mode())
}

/// Where.
pub fn select(o: Op) -> Fold {
    if let Some(r) = lazy(lazy_map::select(o)) {
        return r;
    }
    let xs: Vec<&Elements> = o.inputs.iter().flatten().collect();
    if xs.len() != 3 {
        return Ok(None);
    }
    let dtype = o.dtype(0)?;
    let (shape, core, v) = broadcast_all(o, &xs)?;
    let vals: Vec<WideNum> = (0..v[0].len())
        .map(|i| if v[0][i].u64() != 0 { v[1][i] } else { v[2][i] })
        .collect();
    expand(o, dtype, (&shape, &core), &vals, true)
}

/// Clip's bounds: operands 1 and 2 when present.
fn clip_bounds(o: Op) -> (Option<WideNum>, Option<WideNum>) {
    let bound = |i: usize| o.input(i).and_then(|e| e.get(0));
    (bound(1), bound(2))
}

pub fn clip(o: Op) -> Fold {
    let Some(x) = o.input(0) else { return Ok(None) };
    let ca = x.dtype().class();
    let (lo, hi) = clip_bounds(o);
    if let Some(r) = lazy(lazy_map::clip(o, lo, hi)) {
        return r;
    }
    let dtype = o.dtype(0)?;
    let (full, core, xv) = unary_core(o, x)?;
    let vals: Vec<WideNum> = xv.into_iter().map(|v| clip_value(ca, v, lo, hi)).collect();
    expand(o, dtype, (&full, &core), &vals, true)
}

pub fn unary(o: Op, u: Unary) -> Fold {
    let [Some(x)] = o.inputs else {
        return Ok(None);
    };
    let Some(k) = unary::kernel(o.m, o.op, u, x.dtype().class()) else {
        return Ok(None);
    };
    if let Some(r) = lazy(lazy_map::unary(o, x, k.clone())) {
        return r;
    }
    let dtype = o.dtype(0)?;
    let (full, core, xv) = unary_core(o, x)?;
    let vals: Vec<WideNum> = xv.into_iter().map(|v| k(v)).collect();
    expand(o, dtype, (&full, &core), &vals, true)
}

pub(super) fn clip_value(
    ca: NumClass,
    v: WideNum,
    lo: Option<WideNum>,
    hi: Option<WideNum>,
) -> WideNum {
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
