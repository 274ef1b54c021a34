//! Scalar bodies of comparisons, logic and bitwise ops, Where, Clip, Mod,
//! Pow and Mean, plugged into the element-wise broadcasting nest.

use crate::kernels::elementwise::{first, two};
use crate::kernels::support::scalar;
use ir::builder::{is_unsigned, Cmp, CmpF, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

fn compare(b: &mut Builder<'_>, op: OpId, p: Cmp, x: &[ValueId]) -> Result<ValueId> {
    let (x, y) = two(b, op, x)?;
    Ok(b.cmp(p, x, y))
}

fn int_only(b: &Builder<'_>, op: OpId, x: ValueId) -> Result<()> {
    if b.m.value_type(x).is_int() {
        Ok(())
    } else {
        Err(op_error(b.m, op, "expects integer inputs"))
    }
}

/// A bitwise op on two integer operands.
fn bitwise(
    b: &mut Builder<'_>,
    op: OpId,
    x: &[ValueId],
    f: fn(&mut Builder<'_>, ValueId, ValueId) -> ValueId,
) -> Result<ValueId> {
    let (x, y) = two(b, op, x)?;
    int_only(b, op, x)?;
    Ok(f(b, x, y))
}

/// Python-style modulo for integers: the sign follows the divisor.
fn int_mod(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    if is_unsigned(b.m.value_type(x)) {
        return b.remui(x, y);
    }
    let r = b.remsi(x, y);
    let zero = b.constant_like(x, 0.0);
    let nz = b.cmpi(CmpI::Ne, r, zero);
    let rneg = b.cmpi(CmpI::Slt, r, zero);
    let yneg = b.cmpi(CmpI::Slt, y, zero);
    let differ = b.xori(rneg, yneg);
    let fix = b.andi(nz, differ);
    let adj = b.addi(r, y);
    b.select(fix, adj, r)
}

/// Float modulo: C fmod, or with the divisor's sign (Python) unless `fmod`.
fn float_mod(b: &mut Builder<'_>, x: ValueId, y: ValueId, fmod: bool) -> ValueId {
    let r = b.remf(x, y);
    if fmod {
        return r;
    }
    let zero = b.constant_like(x, 0.0);
    let nz = b.cmpf(CmpF::One, r, zero);
    let rneg = b.cmpf(CmpF::Olt, r, zero);
    let yneg = b.cmpf(CmpF::Olt, y, zero);
    let differ = b.xori(rneg, yneg);
    let fix = b.andi(nz, differ);
    let adj = b.addf(r, y);
    b.select(fix, adj, r)
}

pub fn equal(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    compare(b, op, Cmp::Eq, x)
}
pub fn greater(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    compare(b, op, Cmp::Gt, x)
}
pub fn greater_or_equal(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    compare(b, op, Cmp::Ge, x)
}
pub fn less(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    compare(b, op, Cmp::Lt, x)
}
pub fn less_or_equal(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    compare(b, op, Cmp::Le, x)
}

/// And and BitwiseAnd (bool is i1).
pub fn and(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    bitwise(b, op, x, |b, p, q| b.andi(p, q))
}
pub fn or(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    bitwise(b, op, x, |b, p, q| b.ori(p, q))
}
pub fn xor(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    bitwise(b, op, x, |b, p, q| b.xori(p, q))
}

/// Not and BitwiseNot: xor with all ones.
pub fn not(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let x = first(b, op, x)?;
    int_only(b, op, x)?;
    let t = b.m.value_type(x).clone();
    let ones = b.const_int(-1, t);
    Ok(b.xori(x, ones))
}

/// BitShift with the results of C's undefined cases pinned: a shift that
/// is negative or at least the width gives 0 (or the sign for signed right).
pub fn bit_shift(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let (x, s) = two(b, op, x)?;
    int_only(b, op, x)?;
    let t = b.m.value_type(x).clone();
    let left = ops::BitShift::of(b.m, op).direction() == "LEFT";
    let unsigned = is_unsigned(&t);
    let r = match (left, unsigned) {
        (true, _) => b.shli(x, s),
        (false, true) => b.shrui(x, s),
        (false, false) => b.shrsi(x, s),
    };
    let width = t.int_width().unwrap_or(64);
    let zero = b.zero(&t);
    let w = b.const_int(i64::from(width), t.clone());
    let big = b.cmpi(CmpI::Uge, s, w);
    let fill = if left || unsigned {
        zero
    } else {
        let m1 = b.const_int(-1, t.clone());
        let neg = b.cmpi(CmpI::Slt, x, zero);
        b.select(neg, m1, zero)
    };
    Ok(b.select(big, fill, r))
}

pub fn where_(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    match x {
        [c, p, q, ..] => Ok(b.select(*c, *p, *q)),
        _ => Err(op_error(b.m, op, "expects three inputs")),
    }
}

/// Clip: omitted bounds are not loaded, `x` holds only the present ones.
pub fn clip(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let has = |b: &Builder<'_>, i: usize| {
        b.m.operand(op, i)
            .is_some_and(|v| *b.m.value_type(v) != Type::None)
    };
    let mut rest = x.iter().skip(1).copied();
    let mut v = first(b, op, x)?;
    if has(b, ops::Clip::MIN) {
        if let Some(lo) = rest.next() {
            v = b.max(v, lo);
        }
    }
    if has(b, ops::Clip::MAX) {
        if let Some(hi) = rest.next() {
            v = b.min(v, hi);
        }
    }
    Ok(v)
}

pub fn modulo(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let (x, y) = two(b, op, x)?;
    let t = b.m.value_type(x).clone();
    let fmod = ops::Mod::of(b.m, op).fmod() != 0;
    Ok(if t.is_float() {
        float_mod(b, x, y, fmod)
    } else if !fmod {
        int_mod(b, x, y)
    } else if is_unsigned(&t) {
        b.remui(x, y)
    } else {
        b.remsi(x, y)
    })
}

/// Pow in the float result type; integer powers go through f64.
pub fn pow(b: &mut Builder<'_>, op: OpId, x: &[ValueId], out: &Type) -> Result<ValueId> {
    let (x, y) = two(b, op, x)?;
    if out.is_float() {
        let y = scalar::convert(b, op, y, out)?;
        return Ok(b.powf(x, y));
    }
    let f = Type::f64();
    let xf = scalar::convert(b, op, x, &f)?;
    let yf = scalar::convert(b, op, y, &f)?;
    let p = b.powf(xf, yf);
    scalar::convert(b, op, p, out)
}

pub fn mean(b: &mut Builder<'_>, op: OpId, x: &[ValueId], _: &Type) -> Result<ValueId> {
    let mut acc = first(b, op, x)?;
    for &v in x.iter().skip(1) {
        acc = b.add(acc, v);
    }
    let n = b.constant_like(acc, x.len() as f64);
    Ok(b.div(acc, n))
}
