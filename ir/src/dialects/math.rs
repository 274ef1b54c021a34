//! `math`: transcendental and rounding functions over floats and integers.

use super::verify_same_type;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::types::Type;

pub(crate) fn float_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_float, "a float or a shaped type of floats")
}

pub(crate) fn int_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_int, "a signless integer")
}
