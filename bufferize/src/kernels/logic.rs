//! Scalar bodies of comparisons, logic, bitwise ops, Where, Clip, Mod, Pow,
//! Mean and CastLike, plugged into the element-wise broadcasting nest.

use super::attr_int;
use super::elementwise::Body;
use super::scalar::{self, constant};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

fn cmp(b: &mut Builder<'_>, rel: &str, x: &[ValueId]) -> Result<ValueId> {
    Ok(scalar::compare(b, rel, x[0], x[1]))
}

fn int_only(b: &Builder<'_>, op: OpId, x: ValueId) -> Result<()> {
    if b.m.value_type(x).is_int() {
        Ok(())
    } else {
        Err(op_error(b.m, op, "expects integer inputs"))
    }
}

fn bin(b: &mut Builder<'_>, op: OpId, name: &str, x: &[ValueId]) -> Result<ValueId> {
    int_only(b, op, x[0])?;
    Ok(b.same(name, &[x[0], x[1]]))
}

/// Python-style modulo for integers: the sign follows the divisor.
fn int_mod(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
    let t = b.m.value_type(x).clone();
    if scalar::is_unsigned(&t) {
        return b.same("arith.remui", &[x, y]);
    }
    let r = b.same("arith.remsi", &[x, y]);
    let zero = constant(b, &t, 0.0);
    let nz = scalar::cmpi(b, "ne", r, zero);
    let rneg = scalar::cmpi(b, "slt", r, zero);
    let yneg = scalar::cmpi(b, "slt", y, zero);
    let differ = b.same("arith.xori", &[rneg, yneg]);
    let fix = b.same("arith.andi", &[nz, differ]);
    let adj = b.same("arith.addi", &[r, y]);
    scalar::select(b, fix, adj, r)
}

/// Float modulo: C fmod, or with the divisor's sign (Python) unless `fmod`.
fn float_mod(b: &mut Builder<'_>, x: ValueId, y: ValueId, fmod: bool) -> ValueId {
    let r = b.same("arith.remf", &[x, y]);
    if fmod {
        return r;
    }
    let t = b.m.value_type(x).clone();
    let zero = constant(b, &t, 0.0);
    let nz = scalar::cmpf(b, "one", r, zero);
    let rneg = scalar::cmpf(b, "olt", r, zero);
    let yneg = scalar::cmpf(b, "olt", y, zero);
    let differ = b.same("arith.xori", &[rneg, yneg]);
    let fix = b.same("arith.andi", &[nz, differ]);
    let adj = b.same("arith.addf", &[r, y]);
    scalar::select(b, fix, adj, r)
}

/// BitShift with the results of C's undefined cases pinned: a shift that
/// is negative or at least the width gives 0 (or the sign for signed right).
fn shift(b: &mut Builder<'_>, op: OpId, x: &[ValueId]) -> Result<ValueId> {
    int_only(b, op, x[0])?;
    let t = b.m.value_type(x[0]).clone();
    let left = super::attr_str(b.m, op, "direction") == Some("LEFT");
    let unsigned = scalar::is_unsigned(&t);
    let name = match (left, unsigned) {
        (true, _) => "arith.shli",
        (false, true) => "arith.shrui",
        (false, false) => "arith.shrsi",
    };
    let width = t.int_width().unwrap_or(64);
    let r = b.same(name, &[x[0], x[1]]);
    let zero = constant(b, &t, 0.0);
    let w = b.const_int(i64::from(width), t.clone());
    let big = scalar::cmpi(b, "uge", x[1], w);
    let fill = if left || unsigned {
        zero
    } else {
        let m1 = b.const_int(-1, t.clone());
        let neg = scalar::cmpi(b, "slt", x[0], zero);
        scalar::select(b, neg, m1, zero)
    };
    Ok(scalar::select(b, big, fill, r))
}

pub(super) fn body_for(kind: &str) -> Option<Body> {
    Some(match kind {
        "Equal" => |b, _, x, _| cmp(b, "eq", x),
        "Greater" => |b, _, x, _| cmp(b, "gt", x),
        "Less" => |b, _, x, _| cmp(b, "lt", x),
        "GreaterOrEqual" => |b, _, x, _| cmp(b, "ge", x),
        "LessOrEqual" => |b, _, x, _| cmp(b, "le", x),
        "And" => |b, o, x, _| bin(b, o, "arith.andi", x),
        "Or" => |b, o, x, _| bin(b, o, "arith.ori", x),
        "Xor" => |b, o, x, _| bin(b, o, "arith.xori", x),
        "BitwiseAnd" => |b, o, x, _| bin(b, o, "arith.andi", x),
        "BitwiseOr" => |b, o, x, _| bin(b, o, "arith.ori", x),
        "BitwiseXor" => |b, o, x, _| bin(b, o, "arith.xori", x),
        "Not" | "BitwiseNot" => |b, o, x, _| {
            int_only(b, o, x[0])?;
            let t = b.m.value_type(x[0]).clone();
            let ones = b.const_int(-1, t);
            Ok(b.same("arith.xori", &[x[0], ones]))
        },
        "BitShift" => |b, o, x, _| shift(b, o, x),
        "Where" => |b, _, x, _| Ok(scalar::select(b, x[0], x[1], x[2])),
        "Clip" => |b, o, x, _| {
            // Omitted bounds are not loaded: x holds only the present ones.
            let has = |b: &Builder<'_>, i: usize| {
                b.m.operand(o, i)
                    .is_some_and(|v| *b.m.value_type(v) != Type::None)
            };
            let mut k = 1;
            let mut v = x[0];
            if has(b, 1) {
                v = scalar::max(b, v, x[k]);
                k += 1;
            }
            if has(b, 2) {
                v = scalar::min(b, v, x[k]);
            }
            Ok(v)
        },
        "Mod" => |b, o, x, _| {
            let t = b.m.value_type(x[0]).clone();
            let fmod = attr_int(b.m, o, "fmod", 0) != 0;
            if t.is_float() || fmod {
                if t.is_float() {
                    Ok(float_mod(b, x[0], x[1], fmod))
                } else if scalar::is_unsigned(&t) {
                    Ok(b.same("arith.remui", &[x[0], x[1]]))
                } else {
                    Ok(b.same("arith.remsi", &[x[0], x[1]]))
                }
            } else {
                Ok(int_mod(b, x[0], x[1]))
            }
        },
        "Pow" => |b, o, x, out| {
            if out.is_float() {
                let y = scalar::convert(b, o, x[1], out)?;
                return Ok(b.same("math.powf", &[x[0], y]));
            }
            let f = Type::f64();
            let xf = scalar::convert(b, o, x[0], &f)?;
            let yf = scalar::convert(b, o, x[1], &f)?;
            let p = b.same("math.powf", &[xf, yf]);
            scalar::convert(b, o, p, out)
        },
        "Mean" => |b, _, x, _| {
            let mut acc = x[0];
            for &v in &x[1..] {
                acc = scalar::add(b, acc, v);
            }
            let t = b.m.value_type(acc).clone();
            let n = constant(b, &t, x.len() as f64);
            Ok(scalar::div(b, acc, n))
        },
        "CastLike" => |b, o, x, out| scalar::convert(b, o, x[0], out),
        _ => return None,
    })
}
