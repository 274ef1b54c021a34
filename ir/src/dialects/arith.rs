//! `arith`: constants, integer and float arithmetic, comparisons, casts.

use super::{expect_counts, op_error, operand_type, result_type, scalar_of, verify_same_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::ops::{ArithOp, CoreOp};
use crate::types::Type;

/// `arith.cmpi` predicates, by their integer value.
pub const CMPI_PREDICATES: [&str; 10] = [
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
/// `arith.cmpf` predicates, by their integer value.
pub const CMPF_PREDICATES: [&str; 16] = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];

pub(crate) fn float_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_float, "a float or a shaped type of floats")
}

pub(crate) fn int_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_int_or_index, "signless-integer-like")
}

pub(crate) fn verify_constant(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 0, 1)?;
    let ty = result_type(m, op, 0)?;
    let Some(value) = m.attr(op, "value") else {
        return Err(op_error(m, op, "requires a 'value' attribute"));
    };
    let vty = match value {
        Attribute::Int(_, t) | Attribute::Float(_, t) => t.clone(),
        Attribute::Bool(_) => Type::i1(),
        Attribute::Elements(e) => e.tensor_type(),
        _ => {
            return Err(op_error(
                m,
                op,
                "'value' must be a number or dense elements",
            ))
        }
    };
    if vty != *ty {
        return Err(op_error(
            m,
            op,
            format!("value type {vty} differs from result type {ty}"),
        ));
    }
    Ok(())
}

fn predicate(m: &Module, op: OpId, n: usize) -> Result<()> {
    match m.attr(op, "predicate").and_then(Attribute::as_int) {
        Some(p) if (0..n as i64).contains(&p) => Ok(()),
        _ => Err(op_error(m, op, "requires a valid 'predicate' attribute")),
    }
}

pub(crate) fn verify_cmp(m: &Module, op: OpId, pred: fn(&Type) -> bool) -> Result<()> {
    expect_counts(m, op, 2, 1)?;
    let (a, b) = (operand_type(m, op, 0)?, operand_type(m, op, 1)?);
    if a != b || !pred(scalar_of(a)) {
        return Err(op_error(
            m,
            op,
            format!("invalid operand types {a} and {b}"),
        ));
    }
    if *scalar_of(result_type(m, op, 0)?) != Type::i1() {
        return Err(op_error(m, op, "result must be i1"));
    }
    Ok(())
}

pub(crate) fn verify_cmpi(m: &Module, op: OpId) -> Result<()> {
    predicate(m, op, CMPI_PREDICATES.len())?;
    verify_cmp(m, op, Type::is_int_or_index)
}

pub(crate) fn verify_cmpf(m: &Module, op: OpId) -> Result<()> {
    predicate(m, op, CMPF_PREDICATES.len())?;
    verify_cmp(m, op, Type::is_float)
}

pub(crate) fn verify_select(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 3, 1)?;
    if *scalar_of(operand_type(m, op, 0)?) != Type::i1() {
        return Err(op_error(m, op, "condition must be i1"));
    }
    let (a, b, r) = (
        operand_type(m, op, 1)?,
        operand_type(m, op, 2)?,
        result_type(m, op, 0)?,
    );
    if a != b || a != r {
        return Err(op_error(
            m,
            op,
            "true and false values and the result must have one type",
        ));
    }
    Ok(())
}

pub(crate) fn verify_cast(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let (from, to) = (
        scalar_of(operand_type(m, op, 0)?),
        scalar_of(result_type(m, op, 0)?),
    );
    let (fw, tw) = (from.bit_width().unwrap_or(0), to.bit_width().unwrap_or(0));
    let Some(CoreOp::Arith(cast)) = CoreOp::of(m, op) else {
        return Err(op_error(m, op, "is not an arith cast"));
    };
    let ok = match cast {
        ArithOp::Extf => from.is_float() && to.is_float() && fw < tw,
        ArithOp::Truncf => from.is_float() && to.is_float() && fw > tw,
        ArithOp::Sitofp | ArithOp::Uitofp => from.is_int() && to.is_float(),
        ArithOp::Fptosi | ArithOp::Fptoui => from.is_float() && to.is_int(),
        ArithOp::Extsi | ArithOp::Extui => from.is_int() && to.is_int() && fw < tw,
        ArithOp::Trunci => from.is_int() && to.is_int() && fw > tw,
        ArithOp::IndexCast | ArithOp::IndexCastui => {
            (from.is_index() && to.is_int()) || (from.is_int() && to.is_index())
        }
        ArithOp::Bitcast => fw == tw && fw != 0,
        _ => true,
    };
    if !ok {
        return Err(op_error(m, op, format!("invalid cast from {from} to {to}")));
    }
    Ok(())
}
