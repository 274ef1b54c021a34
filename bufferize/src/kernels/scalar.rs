//! Scalar arithmetic by element type: picks the `arith`/`math` op for the
//! type's class, so kernels are written once for floats and integers.

use ir::dialects::op_error;
use ir::{Attribute, Builder, OpId, Result, Signedness, Type, ValueId};

pub fn is_float(t: &Type) -> bool {
    t.is_float()
}

/// Unsigned ints, and bool (i1: false < true).
pub fn is_unsigned(t: &Type) -> bool {
    matches!(
        t,
        Type::Int {
            sign: Signedness::Unsigned,
            ..
        } | Type::Int { width: 1, .. }
    )
}

/// A constant of element type `t` (floats exact, ints truncated toward zero).
pub fn constant(b: &mut Builder<'_>, t: &Type, v: f64) -> ValueId {
    if t.is_float() {
        b.const_float(v, t.clone())
    } else if *t == Type::Index {
        b.const_index(v as i64)
    } else {
        b.const_int(v as i64, t.clone())
    }
}

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
        (Some(f), Some(t)) if f < t => b.op1("arith.extf", &[x], to.clone(), &[]),
        _ => b.op1("arith.truncf", &[x], to.clone(), &[]),
    }
}

/// `acc + x * y` in the type of `acc` (`x`, `y` widened to it).
pub fn mul_acc(b: &mut Builder<'_>, acc: ValueId, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(acc).clone();
    let (x, y) = (fcast(b, x, &t), fcast(b, y, &t));
    let p = mul(b, x, y);
    add(b, acc, p)
}

pub fn add(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let name = if b.m.value_type(x).is_float() {
        "arith.addf"
    } else {
        "arith.addi"
    };
    b.same(name, &[x, y])
}

pub fn mul(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let name = if b.m.value_type(x).is_float() {
        "arith.mulf"
    } else {
        "arith.muli"
    };
    b.same(name, &[x, y])
}

/// The max that propagates NaN, as ONNX's Max and MaxPool do.
pub fn max(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(x).clone();
    let name = if t.is_float() {
        "arith.maximumf"
    } else if is_unsigned(&t) {
        "arith.maxui"
    } else {
        "arith.maxsi"
    };
    b.same(name, &[x, y])
}

pub fn min(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(x).clone();
    let name = if t.is_float() {
        "arith.minimumf"
    } else if is_unsigned(&t) {
        "arith.minui"
    } else {
        "arith.minsi"
    };
    b.same(name, &[x, y])
}

/// Converts a scalar between element types with ONNX Cast semantics
/// (float→int truncates; bool is `!= 0`).
pub fn convert(b: &mut Builder<'_>, op: OpId, x: ValueId, to: &Type) -> Result<ValueId> {
    let from = b.m.value_type(x).clone();
    if from == *to {
        return Ok(x);
    }
    let (fw, tw) = (from.bit_width().unwrap_or(0), to.bit_width().unwrap_or(0));
    let name = match (from.is_float(), to.is_float()) {
        (true, true) if fw < tw => "arith.extf",
        (true, true) if fw > tw => "arith.truncf",
        (true, true) => return Err(op_error(b.m, op, format!("cannot convert {from} to {to}"))),
        (false, true) if is_unsigned(&from) || fw == 1 => "arith.uitofp",
        (false, true) => "arith.sitofp",
        (true, false) if tw == 1 => {
            let zero = constant(b, &from, 0.0);
            let p = ir::dialects::arith::CMPF_PREDICATES
                .iter()
                .position(|&n| n == "une")
                .unwrap_or(0);
            return Ok(b.op1(
                "arith.cmpf",
                &[x, zero],
                Type::i1(),
                &[("predicate", Attribute::i64(p as i64))],
            ));
        }
        (true, false) if is_unsigned(to) => "arith.fptoui",
        (true, false) => "arith.fptosi",
        (false, false) if tw == 1 => {
            let zero = constant(b, &from, 0.0);
            return Ok(b.op1(
                "arith.cmpi",
                &[x, zero],
                Type::i1(),
                &[("predicate", Attribute::i64(1))],
            ));
        }
        (false, false) if fw < tw && (is_unsigned(&from) || fw == 1) => "arith.extui",
        (false, false) if fw < tw => "arith.extsi",
        (false, false) if fw > tw => "arith.trunci",
        (false, false) => "arith.bitcast",
    };
    Ok(b.op1(name, &[x], to.clone(), &[]))
}

fn pred_index(list: &[&str], name: &str) -> i64 {
    list.iter().position(|&n| n == name).unwrap_or(0) as i64
}

/// `arith.cmpf <pred>`.
pub fn cmpf(b: &mut Builder<'_>, pred: &str, x: ValueId, y: ValueId) -> ValueId {
    let p = pred_index(&ir::dialects::arith::CMPF_PREDICATES, pred);
    b.op1(
        "arith.cmpf",
        &[x, y],
        Type::i1(),
        &[("predicate", Attribute::i64(p))],
    )
}

/// `arith.cmpi <pred>`.
pub fn cmpi(b: &mut Builder<'_>, pred: &str, x: ValueId, y: ValueId) -> ValueId {
    let p = pred_index(&ir::dialects::arith::CMPI_PREDICATES, pred);
    b.op1(
        "arith.cmpi",
        &[x, y],
        Type::i1(),
        &[("predicate", Attribute::i64(p))],
    )
}

/// An ordered comparison `rel` ∈ {eq, ne, lt, le, gt, ge} picked by type.
pub fn compare(b: &mut Builder<'_>, rel: &str, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(x).clone();
    if t.is_float() {
        let p = match rel {
            "ne" => "une".to_string(),
            r => format!("o{r}"),
        };
        return cmpf(b, &p, x, y);
    }
    let p = match rel {
        "eq" | "ne" => rel.to_string(),
        r if is_unsigned(&t) || t == Type::i1() => format!("u{r}"),
        r => format!("s{r}"),
    };
    cmpi(b, &p, x, y)
}

pub fn select(b: &mut Builder<'_>, c: ValueId, x: ValueId, y: ValueId) -> ValueId {
    let ty = b.m.value_type(x).clone();
    b.op1("arith.select", &[c, x, y], ty, &[])
}

pub fn sub(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let name = if b.m.value_type(x).is_float() {
        "arith.subf"
    } else {
        "arith.subi"
    };
    b.same(name, &[x, y])
}

pub fn div(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(x).clone();
    let name = if t.is_float() {
        "arith.divf"
    } else if is_unsigned(&t) {
        "arith.divui"
    } else {
        "arith.divsi"
    };
    b.same(name, &[x, y])
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
