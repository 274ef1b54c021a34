//! Folding of scalar `arith` ops: constant operands evaluated with the
//! op's exact semantics, and algebraic identities that forward an operand.
//!
//! Integers are evaluated at their width (index: 64 bits) in two's
//! complement; what `arith` leaves undefined (division by zero, signed
//! division overflow, shifts by the width or more) is not folded. Floats
//! fold in their own width (f32 arithmetic for f32), IEEE round to nearest,
//! only for f32 and f64; float identities are the exact ones (`x * 1`,
//! `x + -0.0`, `x - 0.0`, `x / 1`), never `x * 0` or `x - x`.

use crate::attr::Attribute;
use crate::module::{Module, OpId, ValueId};
use crate::ops::{ArithOp, CoreOp};
use crate::types::{FloatKind, Signedness, Type};

/// What an op folds to.
#[derive(Clone, Debug, PartialEq)]
pub enum Folded {
    /// A constant of the result type.
    Const(Attribute),
    /// One of the values already there.
    Value(ValueId),
}

/// A scalar constant operand.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    /// Bits of an integer or index, zero-extended from its width.
    Int(u64),
    Float(f64),
}

/// Width of a signless integer or index type.
pub fn int_width(t: &Type) -> Option<u32> {
    match t {
        Type::Index => Some(64),
        Type::Int {
            width,
            sign: Signedness::Signless,
        } if (1..=64).contains(width) => Some(*width),
        _ => None,
    }
}

fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// The value of `bits` (width `w`) as a signed number.
fn signed(bits: u64, w: u32) -> i64 {
    let s = 64 - w;
    ((bits << s) as i64) >> s
}

/// The attribute of an integer result: i1 as 0/1, wider ones sign-extended
/// (how MLIR prints them).
pub fn int_attr(bits: u64, t: &Type) -> Option<Attribute> {
    let w = int_width(t)?;
    let b = bits & mask(w);
    let v = if w == 1 { b as i64 } else { signed(b, w) };
    Some(Attribute::Int(v, t.clone()))
}

fn float_attr(v: f64, t: &Type) -> Option<Attribute> {
    match t.float_kind()? {
        FloatKind::F64 => Some(Attribute::Float(v, t.clone())),
        FloatKind::F32 => Some(Attribute::Float(f64::from(v as f32), t.clone())),
        _ => None,
    }
}

/// The constant `v` holds, if it is a scalar `arith.constant`.
pub fn constant(m: &Module, v: ValueId) -> Option<Scalar> {
    let op = m.defining_op(v).filter(|&o| m.is(o, ArithOp::Constant))?;
    let t = m.value_type(v);
    match m.attr(op, "value")? {
        Attribute::Int(x, _) => Some(Scalar::Int((*x as u64) & mask(int_width(t)?))),
        Attribute::Bool(b) => Some(Scalar::Int(u64::from(*b))),
        Attribute::Float(x, _) => Some(Scalar::Float(*x)),
        _ => None,
    }
}

/// The value of an integer or index constant, sign-extended.
pub fn signed_const(m: &Module, v: ValueId) -> Option<i64> {
    let w = int_width(m.value_type(v))?;
    Some(signed(int_const(m, v)?, w))
}

fn int_const(m: &Module, v: ValueId) -> Option<u64> {
    match constant(m, v)? {
        Scalar::Int(b) => Some(b),
        Scalar::Float(_) => None,
    }
}

fn float_const(m: &Module, v: ValueId) -> Option<f64> {
    match constant(m, v)? {
        Scalar::Float(x) => Some(x),
        Scalar::Int(_) => None,
    }
}

/// How an `arith` op folds; every op has a row, so a new one must choose.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Rule {
    IntBinary,
    FloatBinary,
    IntCast,
    Negf,
    Select,
    Cmpi,
    Cmpf,
    /// Not folded here (float min/max and rem, float casts, constants).
    Keep,
}

fn rule(op: ArithOp) -> Rule {
    use ArithOp as A;
    match op {
        A::Addi | A::Subi | A::Muli | A::Divsi | A::Divui | A::Ceildivsi | A::Ceildivui => {
            Rule::IntBinary
        }
        A::Floordivsi | A::Remsi | A::Remui | A::Andi | A::Ori | A::Xori => Rule::IntBinary,
        A::Shli | A::Shrsi | A::Shrui | A::Maxsi | A::Minsi | A::Maxui | A::Minui => {
            Rule::IntBinary
        }
        A::Addf | A::Subf | A::Mulf | A::Divf => Rule::FloatBinary,
        A::Extsi | A::Extui | A::Trunci | A::IndexCast | A::IndexCastui => Rule::IntCast,
        A::Negf => Rule::Negf,
        A::Select => Rule::Select,
        A::Cmpi => Rule::Cmpi,
        A::Cmpf => Rule::Cmpf,
        A::Constant | A::Remf | A::Maximumf | A::Minimumf | A::Maxnumf | A::Minnumf => Rule::Keep,
        A::Extf | A::Truncf | A::Sitofp | A::Uitofp | A::Fptosi | A::Fptoui | A::Bitcast => {
            Rule::Keep
        }
    }
}

/// Folds `op` if it is a scalar `arith` op with a known result.
pub fn fold(m: &Module, op: OpId) -> Option<Folded> {
    let name = match CoreOp::of(m, op)? {
        CoreOp::Arith(a) => a,
        CoreOp::Builtin(_) | CoreOp::Func(_) | CoreOp::Math(_) | CoreOp::Memref(_) => return None,
        CoreOp::Scf(_) | CoreOp::Cf(_) | CoreOp::Bufferization(_) => return None,
        CoreOp::Vector(_) | CoreOp::X86Vector(_) => return None,
    };
    let r = m.result(op, 0)?;
    let t = m.value_type(r).clone();
    if let Some(f) = identity(m, op, name, &t) {
        return Some(f);
    }
    if t.is_shaped() || m.results(op).len() != 1 {
        return None;
    }
    match rule(name) {
        Rule::Select => {
            let c = int_const(m, m.operand(op, 0)?)?;
            Some(Folded::Value(m.operand(op, if c != 0 { 1 } else { 2 })?))
        }
        Rule::Cmpi => cmpi(m, op),
        Rule::Cmpf => cmpf(m, op),
        Rule::Negf => float_attr(-float_const(m, m.operand(op, 0)?)?, &t).map(Folded::Const),
        Rule::IntCast => int_cast(m, op, name, &t),
        Rule::IntBinary => {
            let w = int_width(&t)?;
            let x = int_const(m, m.operand(op, 0)?)?;
            let y = int_const(m, m.operand(op, 1)?)?;
            int_attr(int_binary(name, x, y, w)?, &t).map(Folded::Const)
        }
        Rule::FloatBinary => {
            let x = float_const(m, m.operand(op, 0)?)?;
            let y = float_const(m, m.operand(op, 1)?)?;
            let v = match t.float_kind()? {
                FloatKind::F32 => f64::from(float_binary32(name, x as f32, y as f32)?),
                FloatKind::F64 => float_binary64(name, x, y)?,
                _ => return None,
            };
            float_attr(v, &t).map(Folded::Const)
        }
        Rule::Keep => None,
    }
}

/// `x op y` on `w`-bit integers; `None` where `arith` is undefined.
pub fn int_binary(name: ArithOp, x: u64, y: u64, w: u32) -> Option<u64> {
    let (sx, sy) = (signed(x, w), signed(y, w));
    let min = signed(1u64 << (w - 1), w);
    let signed_div_ok = y != 0 && !(sx == min && sy == -1);
    let r = match name {
        ArithOp::Addi => x.wrapping_add(y),
        ArithOp::Subi => x.wrapping_sub(y),
        ArithOp::Muli => x.wrapping_mul(y),
        ArithOp::Andi => x & y,
        ArithOp::Ori => x | y,
        ArithOp::Xori => x ^ y,
        ArithOp::Divui if y != 0 => x / y,
        ArithOp::Remui if y != 0 => x % y,
        ArithOp::Ceildivui if y != 0 => x.div_ceil(y),
        ArithOp::Divsi if signed_div_ok => (sx / sy) as u64,
        ArithOp::Remsi if signed_div_ok => (sx % sy) as u64,
        ArithOp::Ceildivsi if signed_div_ok => {
            let q = sx / sy;
            (if sx % sy != 0 && (sx < 0) == (sy < 0) {
                q + 1
            } else {
                q
            }) as u64
        }
        ArithOp::Floordivsi if signed_div_ok => {
            let q = sx / sy;
            (if sx % sy != 0 && (sx < 0) != (sy < 0) {
                q - 1
            } else {
                q
            }) as u64
        }
        ArithOp::Shli if y < u64::from(w) => x << y,
        ArithOp::Shrui if y < u64::from(w) => x >> y,
        ArithOp::Shrsi if y < u64::from(w) => (sx >> y) as u64,
        ArithOp::Maxsi => sx.max(sy) as u64,
        ArithOp::Minsi => sx.min(sy) as u64,
        ArithOp::Maxui => x.max(y),
        ArithOp::Minui => x.min(y),
        _ => return None,
    };
    Some(r & mask(w))
}

fn float_binary32(name: ArithOp, x: f32, y: f32) -> Option<f32> {
    Some(match name {
        ArithOp::Addf => x + y,
        ArithOp::Subf => x - y,
        ArithOp::Mulf => x * y,
        ArithOp::Divf => x / y,
        _ => return None,
    })
}

fn float_binary64(name: ArithOp, x: f64, y: f64) -> Option<f64> {
    Some(match name {
        ArithOp::Addf => x + y,
        ArithOp::Subf => x - y,
        ArithOp::Mulf => x * y,
        ArithOp::Divf => x / y,
        _ => return None,
    })
}

/// Casts between integer widths and index.
fn int_cast(m: &Module, op: OpId, name: ArithOp, t: &Type) -> Option<Folded> {
    let a = m.operand(op, 0)?;
    let from = int_width(m.value_type(a))?;
    let x = int_const(m, a)?;
    let bits = match name {
        ArithOp::Extui | ArithOp::Trunci | ArithOp::IndexCastui => x,
        ArithOp::Extsi | ArithOp::IndexCast => signed(x, from) as u64,
        _ => return None,
    };
    int_attr(bits, t).map(Folded::Const)
}

fn cmpi(m: &Module, op: OpId) -> Option<Folded> {
    let (a, b) = (m.operand(op, 0)?, m.operand(op, 1)?);
    let p = m.attr(op, "predicate")?.as_int()?;
    let t = Type::i1();
    if a == b {
        // eq, sle, sge, ule, uge hold for equal operands; the rest do not.
        let holds = matches!(p, 0 | 3 | 5 | 7 | 9);
        return int_attr(u64::from(holds), &t).map(Folded::Const);
    }
    let w = int_width(m.value_type(a))?;
    let (x, y) = (int_const(m, a)?, int_const(m, b)?);
    let (sx, sy) = (signed(x, w), signed(y, w));
    let r = match p {
        0 => x == y,
        1 => x != y,
        2 => sx < sy,
        3 => sx <= sy,
        4 => sx > sy,
        5 => sx >= sy,
        6 => x < y,
        7 => x <= y,
        8 => x > y,
        9 => x >= y,
        _ => return None,
    };
    int_attr(u64::from(r), &t).map(Folded::Const)
}

fn cmpf(m: &Module, op: OpId) -> Option<Folded> {
    let p = m.attr(op, "predicate")?.as_int()?;
    let (x, y) = (
        float_const(m, m.operand(op, 0)?)?,
        float_const(m, m.operand(op, 1)?)?,
    );
    let unordered = x.is_nan() || y.is_nan();
    let ord = |f: bool| !unordered && f;
    let unord = |f: bool| unordered || f;
    let r = match p {
        0 => false,
        1 => ord(x == y),
        2 => ord(x > y),
        3 => ord(x >= y),
        4 => ord(x < y),
        5 => ord(x <= y),
        6 => ord(x != y),
        7 => !unordered,
        8 => unord(x == y),
        9 => unord(x > y),
        10 => unord(x >= y),
        11 => unord(x < y),
        12 => unord(x <= y),
        13 => unord(x != y),
        14 => unordered,
        15 => true,
        _ => return None,
    };
    int_attr(u64::from(r), &Type::i1()).map(Folded::Const)
}

/// Identities with one constant (or equal) operand: `x + 0`, `x * 1`,
/// `x * 0`, `x & 0`, `x - x`, `select(c, x, x)`, ...
fn identity(m: &Module, op: OpId, name: ArithOp, t: &Type) -> Option<Folded> {
    if name == ArithOp::Select {
        let (a, b) = (m.operand(op, 1)?, m.operand(op, 2)?);
        return (a == b).then_some(Folded::Value(a));
    }
    if m.operands(op).len() != 2 || t.is_shaped() {
        return None;
    }
    let (a, b) = (m.operand(op, 0)?, m.operand(op, 1)?);
    if let Some(w) = int_width(t) {
        return int_identity(m, name, a, b, w, t);
    }
    let y = float_const(m, b)?;
    let neg_zero = y == 0.0 && y.is_sign_negative();
    let keep = match name {
        ArithOp::Addf => neg_zero,
        ArithOp::Subf => y == 0.0 && !neg_zero,
        ArithOp::Mulf | ArithOp::Divf => y == 1.0,
        _ => false,
    };
    keep.then_some(Folded::Value(a))
}

fn int_identity(
    m: &Module,
    name: ArithOp,
    a: ValueId,
    b: ValueId,
    w: u32,
    t: &Type,
) -> Option<Folded> {
    let zero = || int_attr(0, t).map(Folded::Const);
    if a == b {
        return match name {
            ArithOp::Subi | ArithOp::Xori => zero(),
            ArithOp::Andi
            | ArithOp::Ori
            | ArithOp::Maxsi
            | ArithOp::Minsi
            | ArithOp::Maxui
            | ArithOp::Minui => Some(Folded::Value(a)),
            _ => None,
        };
    }
    let ones = mask(w);
    // Constants sit on the right once canonicalized; look at both sides
    // for the commutative ops.
    let commutes = matches!(
        name,
        ArithOp::Addi | ArithOp::Muli | ArithOp::Andi | ArithOp::Ori | ArithOp::Xori
    );
    let sides: &[(ValueId, ValueId)] = if commutes {
        &[(a, b), (b, a)]
    } else {
        &[(a, b)]
    };
    for &(x, c) in sides {
        let Some(k) = int_const(m, c) else { continue };
        let forward = match name {
            ArithOp::Addi
            | ArithOp::Subi
            | ArithOp::Ori
            | ArithOp::Xori
            | ArithOp::Shli
            | ArithOp::Shrui
            | ArithOp::Shrsi => k == 0,
            ArithOp::Muli
            | ArithOp::Divsi
            | ArithOp::Divui
            | ArithOp::Ceildivsi
            | ArithOp::Ceildivui
            | ArithOp::Floordivsi => k == 1,
            ArithOp::Andi => k == ones,
            _ => false,
        };
        if forward {
            return Some(Folded::Value(x));
        }
        let absorbs = match name {
            ArithOp::Muli | ArithOp::Andi => k == 0,
            ArithOp::Ori => k == ones,
            ArithOp::Remsi | ArithOp::Remui => k == 1,
            _ => false,
        };
        if absorbs {
            return int_attr(if name == ArithOp::Ori { ones } else { 0 }, t).map(Folded::Const);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_integer_cases_do_not_fold() {
        let min = 1u64 << 63;
        assert_eq!(int_binary(ArithOp::Divsi, min, u64::MAX, 64), None);
        assert_eq!(int_binary(ArithOp::Remsi, 5, 0, 64), None);
        assert_eq!(int_binary(ArithOp::Shli, 1, 64, 64), None);
        assert_eq!(int_binary(ArithOp::Shli, 1, 8, 8), None);
        assert_eq!(int_binary(ArithOp::Divui, 1, 0, 32), None);
    }

    #[test]
    fn integers_wrap_at_their_width() {
        assert_eq!(int_binary(ArithOp::Addi, u64::MAX, 1, 64), Some(0));
        assert_eq!(int_binary(ArithOp::Muli, 16, 16, 8), Some(0));
        // -7 floordiv 2 = -4, ceildiv = -3 (i32 bits).
        let m7 = (-7i64 as u64) & 0xffff_ffff;
        assert_eq!(
            int_binary(ArithOp::Floordivsi, m7, 2, 32),
            Some((-4i64 as u64) & 0xffff_ffff)
        );
        assert_eq!(
            int_binary(ArithOp::Ceildivsi, m7, 2, 32),
            Some((-3i64 as u64) & 0xffff_ffff)
        );
        assert_eq!(
            int_binary(ArithOp::Floordivsi, 7, (-2i64 as u64) & 0xffff_ffff, 32),
            Some((-4i64 as u64) & 0xffff_ffff)
        );
        assert_eq!(
            int_attr(255, &Type::i(8)),
            Some(Attribute::Int(-1, Type::i(8)))
        );
        assert_eq!(
            int_attr(1, &Type::i1()),
            Some(Attribute::Int(1, Type::i1()))
        );
    }
}
