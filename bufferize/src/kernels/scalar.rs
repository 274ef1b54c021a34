//! Scalar helpers the typed builders do not cover: ONNX Cast semantics,
//! the identities of max/min, accumulation types and mixed-precision
//! multiply-add.

use ir::builder::is_unsigned;
use ir::builder::CmpF;
use ir::dialects::op_error;
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
/// (float→int truncates; bool is `!= 0`).
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
        (true, true) => return Err(op_error(b.m, op, format!("cannot convert {from} to {to}"))),
        (false, true) if is_unsigned(&from) || fw == 1 => b.uitofp(x, to),
        (false, true) => b.sitofp(x, to),
        (true, false) if tw == 1 => {
            let zero = b.zero(&from);
            b.cmpf(CmpF::Une, x, zero)
        }
        (true, false) if is_unsigned(&to) => b.fptoui(x, to),
        (true, false) => b.fptosi(x, to),
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
