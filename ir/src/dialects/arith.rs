//! `arith`: constants, integer and float arithmetic, comparisons, casts.

use super::{expect_counts, op_error, operand_type, result_type, scalar_of, verify_same_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::registry::{OpDef, Syntax, Traits};
use crate::types::Type;

const PURE: Traits = Traits::PURE;
const BIN: Traits = Traits::PURE.union(Traits::SAME_TYPE);
const COMM: Traits = BIN.union(Traits::COMMUTATIVE);

macro_rules! same {
    ($name:literal, $t:expr, $v:ident) => {
        OpDef::new($name, $t, Syntax::SameType).verified($v)
    };
}
macro_rules! cast {
    ($name:literal) => {
        OpDef::new($name, PURE, Syntax::Cast).verified(verify_cast)
    };
}

pub static OPS: [OpDef; 46] = [
    OpDef::new("arith.constant", PURE, Syntax::Custom).verified(verify_constant),
    same!("arith.addf", COMM, float_op),
    same!("arith.subf", BIN, float_op),
    same!("arith.mulf", COMM, float_op),
    same!("arith.divf", BIN, float_op),
    same!("arith.remf", BIN, float_op),
    same!("arith.negf", BIN, float_op),
    same!("arith.maximumf", COMM, float_op),
    same!("arith.minimumf", COMM, float_op),
    same!("arith.maxnumf", COMM, float_op),
    same!("arith.minnumf", COMM, float_op),
    same!("arith.addi", COMM, int_op),
    same!("arith.subi", BIN, int_op),
    same!("arith.muli", COMM, int_op),
    same!("arith.divsi", BIN, int_op),
    same!("arith.divui", BIN, int_op),
    same!("arith.ceildivsi", BIN, int_op),
    same!("arith.ceildivui", BIN, int_op),
    same!("arith.floordivsi", BIN, int_op),
    same!("arith.remsi", BIN, int_op),
    same!("arith.remui", BIN, int_op),
    same!("arith.andi", COMM, int_op),
    same!("arith.ori", COMM, int_op),
    same!("arith.xori", COMM, int_op),
    same!("arith.shli", BIN, int_op),
    same!("arith.shrsi", BIN, int_op),
    same!("arith.shrui", BIN, int_op),
    same!("arith.maxsi", COMM, int_op),
    same!("arith.minsi", COMM, int_op),
    same!("arith.maxui", COMM, int_op),
    same!("arith.minui", COMM, int_op),
    OpDef::new("arith.cmpi", PURE, Syntax::Custom).verified(verify_cmpi),
    OpDef::new("arith.cmpf", PURE, Syntax::Custom).verified(verify_cmpf),
    OpDef::new("arith.select", PURE, Syntax::Custom).verified(verify_select),
    cast!("arith.extf"),
    cast!("arith.truncf"),
    cast!("arith.sitofp"),
    cast!("arith.uitofp"),
    cast!("arith.fptosi"),
    cast!("arith.fptoui"),
    cast!("arith.extsi"),
    cast!("arith.extui"),
    cast!("arith.trunci"),
    cast!("arith.index_cast"),
    cast!("arith.index_castui"),
    cast!("arith.bitcast"),
];

/// `arith.cmpi` predicates, by their integer value.
pub const CMPI_PREDICATES: [&str; 10] = [
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
/// `arith.cmpf` predicates, by their integer value.
pub const CMPF_PREDICATES: [&str; 16] = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];

fn float_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_float, "a float or a shaped type of floats")
}

fn int_op(m: &Module, op: OpId) -> Result<()> {
    verify_same_type(m, op, Type::is_int_or_index, "signless-integer-like")
}

fn verify_constant(m: &Module, op: OpId) -> Result<()> {
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

fn verify_cmp(m: &Module, op: OpId, pred: fn(&Type) -> bool) -> Result<()> {
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

fn verify_cmpi(m: &Module, op: OpId) -> Result<()> {
    predicate(m, op, CMPI_PREDICATES.len())?;
    verify_cmp(m, op, Type::is_int_or_index)
}

fn verify_cmpf(m: &Module, op: OpId) -> Result<()> {
    predicate(m, op, CMPF_PREDICATES.len())?;
    verify_cmp(m, op, Type::is_float)
}

fn verify_select(m: &Module, op: OpId) -> Result<()> {
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

fn verify_cast(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let (from, to) = (
        scalar_of(operand_type(m, op, 0)?),
        scalar_of(result_type(m, op, 0)?),
    );
    let name = m.name(op).as_str();
    let (fw, tw) = (from.bit_width().unwrap_or(0), to.bit_width().unwrap_or(0));
    let ok = match name {
        "arith.extf" => from.is_float() && to.is_float() && fw < tw,
        "arith.truncf" => from.is_float() && to.is_float() && fw > tw,
        "arith.sitofp" | "arith.uitofp" => from.is_int() && to.is_float(),
        "arith.fptosi" | "arith.fptoui" => from.is_float() && to.is_int(),
        "arith.extsi" | "arith.extui" => from.is_int() && to.is_int() && fw < tw,
        "arith.trunci" => from.is_int() && to.is_int() && fw > tw,
        "arith.index_cast" | "arith.index_castui" => {
            (from.is_index() && to.is_int()) || (from.is_int() && to.is_index())
        }
        "arith.bitcast" => fw == tw && fw != 0,
        _ => true,
    };
    if !ok {
        return Err(op_error(m, op, format!("invalid cast from {from} to {to}")));
    }
    Ok(())
}
