//! `math`: transcendental and rounding functions over floats and integers.

use super::verify_same_type;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::registry::{OpDef, Syntax, Traits};
use crate::types::Type;

const T: Traits = Traits::PURE.union(Traits::SAME_TYPE);

macro_rules! f {
    ($name:literal) => {
        OpDef::new($name, T, Syntax::SameType).verified(float_op)
    };
}
macro_rules! i {
    ($name:literal) => {
        OpDef::new($name, T, Syntax::SameType).verified(int_op)
    };
}

pub static OPS: [OpDef; 36] = [
    f!("math.absf"),
    f!("math.acos"),
    f!("math.acosh"),
    f!("math.asin"),
    f!("math.asinh"),
    f!("math.atan"),
    f!("math.atan2"),
    f!("math.atanh"),
    f!("math.cbrt"),
    f!("math.ceil"),
    f!("math.copysign"),
    f!("math.cos"),
    f!("math.cosh"),
    f!("math.erf"),
    f!("math.exp"),
    f!("math.exp2"),
    f!("math.expm1"),
    f!("math.floor"),
    f!("math.fma"),
    f!("math.log"),
    f!("math.log10"),
    f!("math.log1p"),
    f!("math.log2"),
    f!("math.powf"),
    f!("math.round"),
    f!("math.roundeven"),
    f!("math.rsqrt"),
    f!("math.sin"),
    f!("math.sinh"),
    f!("math.sqrt"),
    f!("math.tan"),
    f!("math.tanh"),
    f!("math.trunc"),
    i!("math.absi"),
    i!("math.ctpop"),
    i!("math.ctlz"),
];

fn float_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_float, "a float or a shaped type of floats")
}

fn int_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_int, "a signless integer")
}
