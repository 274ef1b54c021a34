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
    let op = m.defining_op(v).filter(|&o| m.is(o, "arith.constant"))?;
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

/// Folds `op` if it is a scalar `arith` op with a known result.
pub fn fold(m: &Module, op: OpId) -> Option<Folded> {
    let name = m.name(op).as_str();
    let r = m.result(op, 0)?;
    let t = m.value_type(r).clone();
    if let Some(f) = identity(m, op, name, &t) {
        return Some(f);
    }
    if t.is_shaped() || m.results(op).len() != 1 {
        return None;
    }
    match name {
        "arith.select" => {
            let c = int_const(m, m.operand(op, 0)?)?;
            return Some(Folded::Value(m.operand(op, if c != 0 { 1 } else { 2 })?));
        }
        "arith.cmpi" => return cmpi(m, op),
        "arith.cmpf" => return cmpf(m, op),
        _ => {}
    }
    if m.operands(op).len() == 1 {
        return cast(m, op, name, &t);
    }
    let (a, b) = (m.operand(op, 0)?, m.operand(op, 1)?);
    if let Some(w) = int_width(&t) {
        let x = int_const(m, a)?;
        let y = int_const(m, b)?;
        return int_attr(int_binary(name, x, y, w)?, &t).map(Folded::Const);
    }
    let (x, y) = (float_const(m, a)?, float_const(m, b)?);
    let v = match (t.float_kind()?, name) {
        (FloatKind::F32, _) => f64::from(float_binary32(name, x as f32, y as f32)?),
        (FloatKind::F64, _) => float_binary64(name, x, y)?,
        _ => return None,
    };
    float_attr(v, &t).map(Folded::Const)
}

/// `x op y` on `w`-bit integers; `None` where `arith` is undefined.
pub fn int_binary(name: &str, x: u64, y: u64, w: u32) -> Option<u64> {
    let (sx, sy) = (signed(x, w), signed(y, w));
    let min = signed(1u64 << (w - 1), w);
    let signed_div_ok = y != 0 && !(sx == min && sy == -1);
    let r = match name {
        "arith.addi" => x.wrapping_add(y),
        "arith.subi" => x.wrapping_sub(y),
        "arith.muli" => x.wrapping_mul(y),
        "arith.andi" => x & y,
        "arith.ori" => x | y,
        "arith.xori" => x ^ y,
        "arith.divui" if y != 0 => x / y,
        "arith.remui" if y != 0 => x % y,
        "arith.ceildivui" if y != 0 => x.div_ceil(y),
        "arith.divsi" if signed_div_ok => (sx / sy) as u64,
        "arith.remsi" if signed_div_ok => (sx % sy) as u64,
        "arith.ceildivsi" if signed_div_ok => {
            let q = sx / sy;
            (if sx % sy != 0 && (sx < 0) == (sy < 0) {
                q + 1
            } else {
                q
            }) as u64
        }
        "arith.floordivsi" if signed_div_ok => {
            let q = sx / sy;
            (if sx % sy != 0 && (sx < 0) != (sy < 0) {
                q - 1
            } else {
                q
            }) as u64
        }
        "arith.shli" if y < u64::from(w) => x << y,
        "arith.shrui" if y < u64::from(w) => x >> y,
        "arith.shrsi" if y < u64::from(w) => (sx >> y) as u64,
        "arith.maxsi" => sx.max(sy) as u64,
        "arith.minsi" => sx.min(sy) as u64,
        "arith.maxui" => x.max(y),
        "arith.minui" => x.min(y),
        _ => return None,
    };
    Some(r & mask(w))
}

fn float_binary32(name: &str, x: f32, y: f32) -> Option<f32> {
    Some(match name {
        "arith.addf" => x + y,
        "arith.subf" => x - y,
        "arith.mulf" => x * y,
        "arith.divf" => x / y,
        _ => return None,
    })
}

fn float_binary64(name: &str, x: f64, y: f64) -> Option<f64> {
    Some(match name {
        "arith.addf" => x + y,
        "arith.subf" => x - y,
        "arith.mulf" => x * y,
        "arith.divf" => x / y,
        _ => return None,
    })
}

/// Casts between integer widths and index.
fn cast(m: &Module, op: OpId, name: &str, t: &Type) -> Option<Folded> {
    let a = m.operand(op, 0)?;
    if name == "arith.negf" {
        let x = float_const(m, a)?;
        return float_attr(-x, t).map(Folded::Const);
    }
    let from = int_width(m.value_type(a))?;
    let x = int_const(m, a)?;
    let bits = match name {
        "arith.extui" | "arith.trunci" | "arith.index_castui" => x,
        "arith.extsi" | "arith.index_cast" => signed(x, from) as u64,
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
fn identity(m: &Module, op: OpId, name: &str, t: &Type) -> Option<Folded> {
    if name == "arith.select" {
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
        "arith.addf" => neg_zero,
        "arith.subf" => y == 0.0 && !neg_zero,
        "arith.mulf" | "arith.divf" => y == 1.0,
        _ => false,
    };
    keep.then_some(Folded::Value(a))
}

fn int_identity(
    m: &Module,
    name: &str,
    a: ValueId,
    b: ValueId,
    w: u32,
    t: &Type,
) -> Option<Folded> {
    let zero = || int_attr(0, t).map(Folded::Const);
    if a == b {
        return match name {
            "arith.subi" | "arith.xori" => zero(),
            "arith.andi" | "arith.ori" | "arith.maxsi" | "arith.minsi" | "arith.maxui"
            | "arith.minui" => Some(Folded::Value(a)),
            _ => None,
        };
    }
    let ones = mask(w);
    // Constants sit on the right once canonicalized; look at both sides
    // for the commutative ops.
    let commutes = matches!(
        name,
        "arith.addi" | "arith.muli" | "arith.andi" | "arith.ori" | "arith.xori"
    );
    let sides: &[(ValueId, ValueId)] = if commutes {
        &[(a, b), (b, a)]
    } else {
        &[(a, b)]
    };
    for &(x, c) in sides {
        let Some(k) = int_const(m, c) else { continue };
        let forward = match name {
            "arith.addi" | "arith.subi" | "arith.ori" | "arith.xori" | "arith.shli"
            | "arith.shrui" | "arith.shrsi" => k == 0,
            "arith.muli" | "arith.divsi" | "arith.divui" | "arith.ceildivsi"
            | "arith.ceildivui" | "arith.floordivsi" => k == 1,
            "arith.andi" => k == ones,
            _ => false,
        };
        if forward {
            return Some(Folded::Value(x));
        }
        let absorbs = match name {
            "arith.muli" | "arith.andi" => k == 0,
            "arith.ori" => k == ones,
            "arith.remsi" | "arith.remui" => k == 1,
            _ => false,
        };
        if absorbs {
            return int_attr(if name == "arith.ori" { ones } else { 0 }, t).map(Folded::Const);
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
        assert_eq!(int_binary("arith.divsi", min, u64::MAX, 64), None);
        assert_eq!(int_binary("arith.remsi", 5, 0, 64), None);
        assert_eq!(int_binary("arith.shli", 1, 64, 64), None);
        assert_eq!(int_binary("arith.shli", 1, 8, 8), None);
        assert_eq!(int_binary("arith.divui", 1, 0, 32), None);
    }

    #[test]
    fn integers_wrap_at_their_width() {
        assert_eq!(int_binary("arith.addi", u64::MAX, 1, 64), Some(0));
        assert_eq!(int_binary("arith.muli", 16, 16, 8), Some(0));
        // -7 floordiv 2 = -4, ceildiv = -3 (i32 bits).
        let m7 = (-7i64 as u64) & 0xffff_ffff;
        assert_eq!(
            int_binary("arith.floordivsi", m7, 2, 32),
            Some((-4i64 as u64) & 0xffff_ffff)
        );
        assert_eq!(
            int_binary("arith.ceildivsi", m7, 2, 32),
            Some((-3i64 as u64) & 0xffff_ffff)
        );
        assert_eq!(
            int_binary("arith.floordivsi", 7, (-2i64 as u64) & 0xffff_ffff, 32),
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
