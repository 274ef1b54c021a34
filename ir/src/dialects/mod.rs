//! The builtin dialects: op tables (traits, syntax, verifier) and shared checks.

pub mod arith;
pub mod bufferization;
pub mod cf;
pub mod func;
pub mod math;
pub mod memref;
pub mod scf;
pub mod vector;
pub mod x86vector;

use crate::diag::{Diagnostic, Result};
use crate::module::{Module, OpId};
use crate::registry::OpDef;
use crate::types::Type;

/// Every op of the dialects that live in `ir`.
pub fn builtin_ops() -> impl Iterator<Item = &'static OpDef> {
    crate::ops::DEFS.iter()
}

/// A diagnostic about `op`, carrying its name and location.
pub fn op_error(m: &Module, op: OpId, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(msg)
        .on_op(m.name(op).as_str())
        .at(m.loc(op).clone())
}

pub fn expect_counts(m: &Module, op: OpId, operands: usize, results: usize) -> Result<()> {
    let (no, nr) = (m.regular_operands(op).len(), m.results(op).len());
    if no != operands || nr != results {
        return Err(op_error(
            m,
            op,
            format!("expects {operands} operands and {results} results, has {no} and {nr}"),
        ));
    }
    Ok(())
}

pub fn operand_type(m: &Module, op: OpId, i: usize) -> Result<&Type> {
    m.operand(op, i)
        .map(|v| m.value_type(v))
        .ok_or_else(|| op_error(m, op, format!("missing operand #{i}")))
}

pub fn result_type(m: &Module, op: OpId, i: usize) -> Result<&Type> {
    m.result(op, i)
        .map(|v| m.value_type(v))
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))
}

/// All operands and results have one type; `pred` says which types are allowed.
pub fn verify_same_type(m: &Module, op: OpId, pred: fn(&Type) -> bool, what: &str) -> Result<()> {
    let first = m
        .operands(op)
        .first()
        .or(m.results(op).first())
        .map(|&v| m.value_type(v).clone());
    let Some(ty) = first else {
        return Ok(());
    };
    for &v in m.operands(op).iter().chain(m.results(op)) {
        if *m.value_type(v) != ty {
            return Err(op_error(
                m,
                op,
                format!(
                    "requires the same type for all operands and results, found {ty} and {}",
                    m.value_type(v)
                ),
            ));
        }
    }
    if !pred(scalar_of(&ty)) {
        return Err(op_error(m, op, format!("operand must be {what}, got {ty}")));
    }
    Ok(())
}

/// Element type for shaped types, the type itself otherwise.
pub fn scalar_of(t: &Type) -> &Type {
    if t.is_shaped() {
        t.element_type()
    } else {
        t
    }
}

pub fn is_memref(t: &Type) -> bool {
    matches!(t, Type::MemRef(_))
}

pub fn expect_memref<'m>(
    m: &'m Module,
    op: OpId,
    t: &'m Type,
    what: &str,
) -> Result<&'m crate::types::MemRefType> {
    t.as_memref()
        .ok_or_else(|| op_error(m, op, format!("{what} must be a memref, got {t}")))
}

pub fn expect_index(m: &Module, op: OpId, i: usize) -> Result<()> {
    let t = operand_type(m, op, i)?;
    if !t.is_index() {
        return Err(op_error(
            m,
            op,
            format!("operand #{i} must be index, got {t}"),
        ));
    }
    Ok(())
}
