//! Scalar helpers the typed builders do not cover: ONNX Cast semantics,
//! the identities of max/min, accumulation types and mixed-precision
//! multiply-add.

use ir::builder::is_unsigned;
use ir::builder::{CmpF, CmpI};
use ir::dialects::op_error;
use ir::types::FloatKind;
use ir::{Builder, OpId, Result, Signedness, Type, ValueId};

/// The lowest value of `t` (identity of max): -inf for floats.
pub fn lowest(b: &mut Builder<'_>, t: &Type) -> ValueId {
    match t {
        Type::Float(_) => b.const_float(f64::NEG_INFINITY, t.clone()),
        Type::Int { width, sign } => {
            let v = match sign {
                _ if *width == 1 => 0,
                Signedness::Unsigned => 0,
                _ if *width >= 64 => i64::MIN,
                _ => -(1i64 << (width - 1)),
            };
            b.const_int(v, t.clone())
        }
        _ => b.const_index(i64::MIN),
    }
}

/// The highest value of `t` (identity of min): +inf for floats.
pub fn highest(b: &mut Builder<'_>, t: &Type) -> ValueId {
    match t {
        Type::Float(_) => b.const_float(f64::INFINITY, t.clone()),
        Type::Int { width, sign } => {
            let v = match sign {
                _ if *width == 1 => 1,
                Signedness::Unsigned if *width >= 64 => -1,
                Signedness::Unsigned => ((1u64 << width) - 1) as i64,
                _ if *width >= 64 => i64::MAX,
                _ => (1i64 << (width - 1)) - 1,
            };
            b.const_int(v, t.clone())
        }
        _ => b.const_index(i64::MAX),
    }
}

/// The type dot products of `t` values accumulate in: f32 for narrower
/// floats (numpy's f16 and ml_dtypes' bf16 dot products widen), else `t`.
pub fn acc_type(t: &Type) -> Type {
    if t.is_float() && t.bit_width().is_some_and(|w| w < 32) {
        Type::f32()
    } else {
        t.clone()
    }
}

/// The type plain sums of `t` values accumulate in: f32 for f16 only
/// (numpy's f16 reductions widen; ml_dtypes' bf16 adds round each step).
pub fn sum_acc_type(t: &Type) -> Type {
    if t.float_kind() == Some(ir::types::FloatKind::F16) {
        Type::f32()
    } else {
        t.clone()
    }
}

/// Float `x` widened or narrowed to float type `to` (`x` when equal).
pub fn fcast(b: &mut Builder<'_>, x: ValueId, to: &Type) -> ValueId {
    let from = b.m.value_type(x).clone();
    match (from.bit_width(), to.bit_width()) {
        _ if from == *to || !from.is_float() || !to.is_float() => x,
        (Some(f), Some(t)) if f < t => b.extf(x, to.clone()),
        _ => b.truncf(x, to.clone()),
    }
}

/// `acc + x * y` in the type of `acc` (`x`, `y` widened to it).
pub fn mul_acc(b: &mut Builder<'_>, acc: ValueId, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(acc).clone();
    let (x, y) = (fcast(b, x, &t), fcast(b, y, &t));
    let p = b.mul(x, y);
    b.add(acc, p)
}

/// Converts a scalar between element types with ONNX Cast semantics
/// (docs/ONNX_DIALECT.md, "Cast semantics"): float → int truncates and
/// saturates, NaN giving 0; int → int wraps; bool is `!= 0`.
pub fn convert(b: &mut Builder<'_>, op: OpId, x: ValueId, to: &Type) -> Result<ValueId> {
    let from = b.m.value_type(x).clone();
    if from == *to {
        return Ok(x);
    }
    let (fw, tw) = (from.bit_width().unwrap_or(0), to.bit_width().unwrap_or(0));
    let to = to.clone();
    Ok(match (from.is_float(), to.is_float()) {
        (true, true) if fw < tw => b.extf(x, to),
        (true, true) if fw > tw => b.truncf(x, to),
        // f16 ↔ bf16, f8 ↔ f8: through f32 (exact).
        (true, true) if fw <= 16 => {
            let w = b.extf(x, Type::f32());
            b.truncf(w, to)
        }
        (true, true) => return Err(op_error(b.m, op, format!("cannot convert {from} to {to}"))),
        (false, true) if is_unsigned(&from) || fw == 1 => b.uitofp(x, to),
        (false, true) => b.sitofp(x, to),
        (true, false) if tw == 1 => {
            let zero = b.zero(&from);
            b.cmpf(CmpF::Une, x, zero)
        }
        (true, false) => saturating_int(b, x, &to),
        (false, false) if tw == 1 => {
            let zero = b.zero(&from);
            b.cmpi(ir::builder::CmpI::Ne, x, zero)
        }
        (false, false) if fw < tw && (is_unsigned(&from) || fw == 1) => b.extui(x, to),
        (false, false) if fw < tw => b.extsi(x, to),
        (false, false) if fw > tw => b.trunci(x, to),
        (false, false) => b.bitcast(x, to),
    })
}

/// Float `x` truncated toward zero and clamped to integer type `to`'s
/// range, NaN giving 0 (constprop's `cast_value` computes the same). ONNX
/// leaves out-of-range values undefined; `arith.fptosi` would make them
/// poison. The clamp bounds are floats of `x`'s type inside the range; when
/// the range's top is not one of them (i32 from f32, 64-bit targets), the
/// values above the bound are at least 2^(bits-1) and select the top.
fn saturating_int(b: &mut Builder<'_>, x: ValueId, to: &Type) -> ValueId {
    let from = b.m.value_type(x).clone();
    let x = match from.bit_width() {
        Some(w) if w < 32 => b.extf(x, Type::f32()),
        _ => x,
    };
    let ft = b.m.value_type(x).clone();
    let mantissa = if ft == Type::f64() { 53 } else { 24 };
    let unsigned = is_unsigned(to);
    let bits = to.bit_width().unwrap_or(64);
    let (lo, top) = match unsigned {
        true => (0.0, 2f64.powi(bits as i32) - 1.0),
        false => (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        ),
    };
    // The largest float of `ft` not above `top`: `top` itself when exact.
    let exact = (bits - u32::from(!unsigned)) <= mantissa;
    let bound = match exact {
        true => top,
        false => top + 1.0 - 2f64.powi((bits - u32::from(!unsigned)) as i32 - mantissa as i32),
    };
    let is_num = b.cmpf(CmpF::Ord, x, x);
    let zero = b.zero(&ft);
    let v = b.select(is_num, x, zero);
    let (l, h) = (b.constant(&ft, lo), b.constant(&ft, bound));
    let below = b.cmpf(CmpF::Olt, v, l);
    let v = b.select(below, l, v);
    let above = b.cmpf(CmpF::Ogt, v, h);
    let clamped = b.select(above, h, v);
    // Sub-byte targets convert through i32 (exact after the clamp).
    let conv = if bits < 8 { Type::i(32) } else { to.clone() };
    let r = match unsigned {
        true => b.fptoui(clamped, conv),
        false => b.fptosi(clamped, conv),
    };
    let r = if bits < 8 { b.trunci(r, to.clone()) } else { r };
    if exact {
        return r;
    }
    let max = highest(b, to);
    b.select(above, max, r)
}

/// ONNX Cast with its `saturate` and `round_mode` attributes (only the
/// 8- and 4-bit float targets read them): a saturating cast to an f8
/// format clamps to its largest finite value first (NaN stays NaN), so
/// that `arith.truncf`, which overflows to infinity or NaN, never
/// overflows; f8E8M0FNU rounds as `round_mode` says.
pub fn cast(
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
    to: &Type,
    saturate: bool,
    round_mode: &str,
) -> Result<ValueId> {
    let Type::Float(k) = to else {
        return convert(b, op, x, to);
    };
    if *k == FloatKind::F8E8M0FNU {
        return e8m0(b, op, x, saturate, round_mode);
    }
    let Some(max) = largest_finite(*k).filter(|_| saturate) else {
        return convert(b, op, x, to);
    };
    // Clamp where the value is exact: its own float type, f32 for the
    // small formats, f64 for integers.
    let wide = match b.m.value_type(x) {
        Type::Float(f) if f.bits() > 8 => Type::Float(*f),
        Type::Float(_) => Type::f32(),
        _ => Type::f64(),
    };
    let v = convert(b, op, x, &wide)?;
    let (hi, lo) = (b.constant(&wide, max), b.constant(&wide, -max));
    let v = b.minimumf(v, hi);
    let v = b.maximumf(v, lo);
    convert(b, op, v, to)
}

/// The largest finite value of the 8- and 4-bit signed float formats.
fn largest_finite(k: FloatKind) -> Option<f64> {
    Some(match k {
        FloatKind::F8E4M3FN => 448.0,
        FloatKind::F8E4M3FNUZ => 240.0,
        FloatKind::F8E5M2 | FloatKind::F8E5M2FNUZ => 57344.0,
        FloatKind::F4E2M1FN => 6.0,
        _ => return None,
    })
}

/// f8E8M0FNU (a biased power-of-two exponent) from the f32 exponent
/// field, rounded as ONNX's `round_mode`: `up` when any fraction bit is
/// set, `nearest` from the half bit (ties up), `down` never; saturating
/// casts stop at the largest code, 0xFE; infinities and NaN give NaN, 0xFF.
fn e8m0(b: &mut Builder<'_>, op: OpId, x: ValueId, saturate: bool, mode: &str) -> Result<ValueId> {
    let f = convert(b, op, x, &Type::f32())?;
    let i32t = Type::i(32);
    let bits = b.bitcast(f, i32t.clone());
    let mut c = |v: i64| b.const_int(v, i32t.clone());
    let (c23, cff, cfrac, chalf, crest, zero, cfe) = (
        c(23),
        c(0xff),
        c(0x7f_ffff),
        c(0x40_0000),
        c(0x3f_ffff),
        c(0),
        c(0xfe),
    );
    let sh = b.shrui(bits, c23);
    let exp = b.andi(sh, cff);
    let nonzero = |b: &mut Builder<'_>, mask| {
        let v = b.andi(bits, mask);
        b.cmpi(CmpI::Ne, v, zero)
    };
    let up = match mode {
        "up" => nonzero(b, cfrac),
        "nearest" => {
            let g = nonzero(b, chalf);
            let rest = nonzero(b, crest);
            let normal = b.cmpi(CmpI::Ne, exp, zero);
            let tie_up = b.ori(rest, normal);
            b.andi(g, tie_up)
        }
        "down" => b.const_bool(false),
        other => {
            return Err(op_error(b.m, op, format!("unknown round_mode '{other}'")));
        }
    };
    let up = if saturate {
        let below = b.cmpi(CmpI::Ne, exp, cfe);
        b.andi(up, below)
    } else {
        up
    };
    let inc = b.extui(up, i32t);
    let code = b.addi(exp, inc);
    let code = b.minui(code, cff);
    let byte = b.trunci(code, Type::i(8));
    Ok(b.bitcast(byte, Type::Float(FloatKind::F8E8M0FNU)))
}
