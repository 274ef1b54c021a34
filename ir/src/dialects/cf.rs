//! `cf`: unstructured control flow between blocks.

use super::{op_error, operand_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::types::Type;

/// Successor arguments must match the target block's arguments.
pub(crate) fn verify_branch(m: &Module, op: OpId) -> Result<()> {
    for i in 0..m.num_successors(op) {
        let Some((block, range)) = m.successor(op, i) else {
            continue;
        };
        let args: Vec<&Type> = m.operands(op)[range]
            .iter()
            .map(|&v| m.value_type(v))
            .collect();
        let params: Vec<&Type> = m
            .block_args(block)
            .iter()
            .map(|&v| m.value_type(v))
            .collect();
        if args != params {
            return Err(op_error(
                m,
                op,
                format!("branch arguments do not match the arguments of successor #{i}"),
            ));
        }
        if m.block_parent(block) != m.op_block(op).and_then(|b| m.block_parent(b)) {
            return Err(op_error(m, op, "successor must be in the same region"));
        }
    }
    Ok(())
}

pub(crate) fn verify_cond_br(m: &Module, op: OpId) -> Result<()> {
    if m.num_successors(op) != 2
        || m.regular_operands(op).len() != 1
        || *operand_type(m, op, 0)? != Type::i1()
    {
        return Err(op_error(
            m,
            op,
            "expects an i1 condition and two successors",
        ));
    }
    verify_branch(m, op)
}

pub(crate) fn verify_assert(m: &Module, op: OpId) -> Result<()> {
    if m.operands(op).len() != 1 || *operand_type(m, op, 0)? != Type::i1() {
        return Err(op_error(m, op, "expects one i1 operand"));
    }
    if m.attr(op, "msg").and_then(Attribute::as_str).is_none() {
        return Err(op_error(m, op, "requires a 'msg' string attribute"));
    }
    Ok(())
}
