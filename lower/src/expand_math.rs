//! `expand-math`: f32 `math.exp`, `math.tanh`, `math.erf` and `math.powf`
//! with a small constant integer (or ½) exponent become arith ops, on
//! scalars and vectors alike. LLVM would otherwise call libm once per
//! element (per lane of a vector), which no loop around it can vectorize:
//! GPT-2's tanh GELU spent half its time in `powf`, `tanhf` and `expm1f`.
//!
//! * exp: `x = n·ln2 + r` with `|r| ≤ ln2/2` (ln2 split in two for an exact
//!   `n·ln2_hi`), `eʳ` by its Taylor polynomial to degree 7 (truncation
//!   below 1e-8 relative), times `2ⁿ` built from exponent bits in two
//!   halves, so results that overflow give inf and tiny ones go through
//!   denormals to 0. NaN is passed through.
//! * tanh: `x·P(x²)` (Taylor to degree 15) for `|x| < 0.55`, else
//!   `1 - 2/(e^{2|x|} + 1)` with the sign of `x`.
//! * erf: `(2/√π)·x·Q(x²)` (Taylor to degree 13) for `|x| < 0.5`, else
//!   Abramowitz & Stegun 7.1.26 (`1 - t·P(t)·e^{-x²}`, `t = 1/(1 + p|x|)`,
//!   absolute error below 1.5e-7) with the sign of `x`.
//! * powf: exponents -4..=4 as products (and a reciprocal), ½ as `sqrt`.
//!
//! f64 and the other functions keep their libm calls.

use ir::attr::Attribute;
use ir::builder::CmpF;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{ArithOp, CoreOp, MathOp, VectorOp};
use ir::{Builder, InsertPoint, Module, OpId, Result, Type, ValueId};

pub struct ExpandMath;

impl Pass for ExpandMath {
    fn name(&self) -> &'static str {
        "expand-math"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let top = m.top();
        let mut expanded = 0u64;
        for op in m.collect_ops(top) {
            if m.is_erased(op) || !is_f32(m, op) {
                continue;
            }
            let Some(&x) = m.operands(op).first() else {
                continue;
            };
            let mut b = Builder::new(m, InsertPoint::Before(op));
            let y = match CoreOp::of(b.m, op) {
                Some(CoreOp::Math(MathOp::Exp)) => Some(exp(&mut b, x)),
                Some(CoreOp::Math(MathOp::Tanh)) => Some(tanh(&mut b, x)),
                Some(CoreOp::Math(MathOp::Erf)) => Some(erf(&mut b, x)),
                Some(CoreOp::Math(MathOp::Powf)) => power(&mut b, op, x),
                _ => None,
            };
            let (Some(y), Some(r)) = (y, m.result(op, 0)) else {
                continue;
            };
            m.replace_all_uses(r, y);
            m.erase_op(op);
            expanded += 1;
        }
        cx.bump("expand-math.expanded", expanded);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "expand-math",
        summary: "f32 exp, tanh, erf and constant-exponent powf as arith ops (vectorizable)",
        create: |_| Ok(Box::new(ExpandMath)),
    }
}

fn is_f32(m: &Module, op: OpId) -> bool {
    m.result(op, 0)
        .is_some_and(|r| *m.value_type(r).element_type() == Type::f32())
}

/// `c` in `x`'s shape.
fn splat(b: &mut Builder<'_>, x: ValueId, c: f64) -> ValueId {
    b.constant_like(x, c)
}

/// `c[0] + y·(c[1] + y·(...))`.
fn horner(b: &mut Builder<'_>, y: ValueId, coeffs: &[f64]) -> ValueId {
    let mut acc = splat(b, y, coeffs.last().copied().unwrap_or(0.0));
    for &c in coeffs.iter().rev().skip(1) {
        let k = splat(b, y, c);
        // A product and a sum, not `math.fma`: the backend fuses them
        // where the CPU has FMA (both carry `contract`); on x86-64-v2 a
        // fused op would be a libm call per lane.
        let p = b.mulf(acc, y);
        acc = b.addf(p, k);
    }
    acc
}

/// The integer type of `x`'s shape (i32 lanes for f32 lanes).
fn int_like(b: &Builder<'_>, x: ValueId) -> Type {
    match b.m.value_type(x).as_vector() {
        Some(v) => Type::vector(v.shape.iter().product(), Type::i(32)),
        None => Type::i(32),
    }
}

/// `2ⁿ` for integer `n` in [-126, 127], from the exponent bits.
fn pow2(b: &mut Builder<'_>, n: ValueId, float: &Type) -> ValueId {
    let bias = b.constant_like(n, 127.0);
    let e = b.addi(n, bias);
    let shift = b.constant_like(n, 23.0);
    let bits = b.shli(e, shift);
    b.bitcast(bits, float.clone())
}

pub(crate) fn exp(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let ty = b.m.value_type(x).clone();
    let (lo, hi) = (splat(b, x, -104.0), splat(b, x, 88.8));
    let xc = b.maxnumf(x, lo);
    let xc = b.minnumf(xc, hi);
    let log2e = splat(b, x, std::f64::consts::LOG2_E);
    let scaled = b.mulf(xc, log2e);
    let nf = b.roundeven(scaled);
    // r = x - n·ln2, with ln2 = hi + lo and n·hi exact.
    let (ln2_hi, ln2_lo) = (splat(b, x, 0.693_359_375), splat(b, x, -2.121_944_4e-4));
    let nh = b.mulf(nf, ln2_hi);
    let r = b.subf(xc, nh);
    let nl = b.mulf(nf, ln2_lo);
    let r = b.subf(r, nl);
    let taylor = [
        1.0,
        1.0,
        0.5,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
    ];
    let p = horner(b, r, &taylor);
    // 2ⁿ in two halves: n ∈ [-150, 128] splits into normal exponents.
    let ity = int_like(b, x);
    let n = b.fptosi(nf, ity);
    let one = b.constant_like(n, 1.0);
    let n1 = b.shrsi(n, one);
    let n2 = b.subi(n, n1);
    let (s1, s2) = (pow2(b, n1, &ty), pow2(b, n2, &ty));
    let y = b.mulf(p, s1);
    let y = b.mulf(y, s2);
    let nan = b.cmpf(CmpF::Uno, x, x);
    b.select(nan, x, y)
}

/// `x·P(x²)` with `P`'s coefficients from the constant term up: an odd
/// function's series.
fn odd_series(b: &mut Builder<'_>, x: ValueId, coeffs: &[f64]) -> ValueId {
    let x2 = b.mulf(x, x);
    let p = horner(b, x2, coeffs);
    b.mulf(x, p)
}

/// An odd function: `small` where `|x| < cut`, else `large_abs` (its value
/// at `|x|`) with the sign of `x`.
fn odd_piecewise(
    b: &mut Builder<'_>,
    x: ValueId,
    cut: f64,
    small: ValueId,
    large_abs: ValueId,
) -> ValueId {
    let ax = b.absf(x);
    let large = b.copysign(large_abs, x);
    let cut = splat(b, x, cut);
    let is_small = b.cmpf(CmpF::Olt, ax, cut);
    b.select(is_small, small, large)
}

fn tanh(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    let series = [
        1.0,
        -1.0 / 3.0,
        2.0 / 15.0,
        -17.0 / 315.0,
        62.0 / 2835.0,
        -1382.0 / 155_925.0,
        21844.0 / 6_081_075.0,
        -929_569.0 / 638_512_875.0,
    ];
    let small = odd_series(b, x, &series);
    // Larger |x|: 1 - 2/(e^{2|x|} + 1), signed.
    let ax = b.absf(x);
    let two = splat(b, x, 2.0);
    let twice = b.mulf(ax, two);
    let e = exp(b, twice);
    let one = splat(b, x, 1.0);
    let den = b.addf(e, one);
    let q = b.divf(two, den);
    let t = b.subf(one, q);
    odd_piecewise(b, x, 0.55, small, t)
}

fn erf(b: &mut Builder<'_>, x: ValueId) -> ValueId {
    // Small |x|: (2/√π)·x·Q(x²), the series of erf.
    let k = std::f64::consts::FRAC_2_SQRT_PI;
    let series = [
        k,
        -k / 3.0,
        k / 10.0,
        -k / 42.0,
        k / 216.0,
        -k / 1320.0,
        k / 9360.0,
    ];
    let small = odd_series(b, x, &series);
    // |x| ≥ 0.5: Abramowitz & Stegun 7.1.26, signed.
    let ax = b.absf(x);
    let x2 = b.mulf(x, x);
    let (p, one) = (splat(b, x, 0.327_591_1), splat(b, x, 1.0));
    let px = b.mulf(p, ax);
    let den = b.addf(one, px);
    let t = b.divf(one, den);
    let a = [
        0.0,
        0.254_829_592,
        -0.284_496_736,
        1.421_413_741,
        -1.453_152_027,
        1.061_405_429,
    ];
    let poly = horner(b, t, &a);
    let neg = b.negf(x2);
    let e = exp(b, neg);
    let tail = b.mulf(poly, e);
    let v = b.subf(one, tail);
    odd_piecewise(b, x, 0.5, small, v)
}

/// `x^c` for a constant `c` in -4..=4 or ½.
fn power(b: &mut Builder<'_>, op: OpId, x: ValueId) -> Option<ValueId> {
    let c = constant_value(b.m, b.m.operand(op, 1)?)?;
    if c == 0.5 {
        return Some(b.sqrt(x));
    }
    if c.fract() != 0.0 || !(-4.0..=4.0).contains(&c) {
        return None;
    }
    let k = c.abs() as u32;
    let mut y = splat(b, x, 1.0);
    for _ in 0..k {
        y = b.mulf(y, x);
    }
    if c < 0.0 {
        let one = splat(b, x, 1.0);
        y = b.divf(one, y);
    }
    Some(y)
}

/// The value of an `arith.constant` float scalar or splat, or of a
/// `vector.broadcast` of one.
fn constant_value(m: &Module, v: ValueId) -> Option<f64> {
    let d = m.defining_op(v)?;
    if m.is(d, VectorOp::Broadcast) {
        return constant_value(m, m.operand(d, 0)?);
    }
    if !m.is(d, ArithOp::Constant) {
        return None;
    }
    match m.attr(d, "value")? {
        Attribute::Float(f, _) => Some(*f),
        Attribute::Elements(e) if e.is_splat() => e.iter().next().map(|w| w.f64()),
        _ => None,
    }
}
