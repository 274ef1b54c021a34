//! `scf`: structured control flow (for, if, while).

use super::{expect_index, op_error, operand_type};
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::ops::{CoreOp, ScfOp};
use crate::types::Type;

/// Marks an `scf.for` without results whose iterations are independent
/// (they write disjoint memory and share no scratch buffer), so they may
/// run on several threads (`lower-parallel` in the lower crate).
pub const PARALLEL: &str = "onnxc.parallel";

/// `() -> index`: how many threads a parallel region started here would
/// get (1 inside a running one); kernels split their work by it. Defined
/// by the LLVM emitter.
pub const NUM_THREADS_FN: &str = "__onnxc_num_threads";

fn types_of(m: &Module, vals: &[crate::module::ValueId]) -> Vec<Type> {
    vals.iter().map(|&v| m.value_type(v).clone()).collect()
}

fn single_block(m: &Module, op: OpId, i: usize) -> Result<crate::module::BlockId> {
    let r = m
        .region(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing region #{i}")))?;
    match m.region_blocks(r) {
        [b] => Ok(*b),
        _ => Err(op_error(
            m,
            op,
            format!("region #{i} must have exactly one block"),
        )),
    }
}

/// Operands of the terminator of `block` (what it yields).
fn yielded(m: &Module, block: crate::module::BlockId) -> Vec<Type> {
    m.last_op(block)
        .map(|t| types_of(m, m.operands(t)))
        .unwrap_or_default()
}

pub(crate) fn verify_for(m: &Module, op: OpId) -> Result<()> {
    let n = m.operands(op).len();
    if n < 3 {
        return Err(op_error(m, op, "expects lower bound, upper bound and step"));
    }
    let iv_ty = operand_type(m, op, 0)?.clone();
    if !iv_ty.is_int_or_index()
        || operand_type(m, op, 1)? != &iv_ty
        || operand_type(m, op, 2)? != &iv_ty
    {
        return Err(op_error(
            m,
            op,
            "bounds and step must share one integer or index type",
        ));
    }
    let body = single_block(m, op, 0)?;
    let inits = types_of(m, &m.operands(op)[3..]);
    let args = types_of(m, m.block_args(body));
    let results = types_of(m, m.results(op));
    if args.first() != Some(&iv_ty) || args[1..] != inits[..] || inits != results {
        return Err(op_error(
            m,
            op,
            "induction variable, iter_args and results must match the init values",
        ));
    }
    if yielded(m, body) != results {
        return Err(op_error(
            m,
            op,
            "yielded values must match the loop results",
        ));
    }
    Ok(())
}

pub(crate) fn verify_if(m: &Module, op: OpId) -> Result<()> {
    if m.operands(op).len() != 1 || *operand_type(m, op, 0)? != Type::i1() {
        return Err(op_error(m, op, "expects one i1 condition"));
    }
    let results = types_of(m, m.results(op));
    let then_b = single_block(m, op, 0)?;
    if yielded(m, then_b) != results {
        return Err(op_error(m, op, "then region must yield the result types"));
    }
    let else_r = m.region(op, 1);
    match else_r.map(|r| m.region_blocks(r).len()) {
        Some(0) | None if !results.is_empty() => {
            return Err(op_error(
                m,
                op,
                "must have an else region when it has results",
            ));
        }
        Some(0) | None => {}
        Some(_) => {
            let else_b = single_block(m, op, 1)?;
            if yielded(m, else_b) != results {
                return Err(op_error(m, op, "else region must yield the result types"));
            }
        }
    }
    Ok(())
}

pub(crate) fn verify_while(m: &Module, op: OpId) -> Result<()> {
    let before = single_block(m, op, 0)?;
    let after = single_block(m, op, 1)?;
    let inits = types_of(m, m.operands(op));
    if types_of(m, m.block_args(before)) != inits {
        return Err(op_error(
            m,
            op,
            "before region arguments must match the init values",
        ));
    }
    let results = types_of(m, m.results(op));
    let cond = m.last_op(before).filter(|&t| m.is(t, ScfOp::Condition));
    let Some(cond) = cond else {
        return Err(op_error(m, op, "before region must end with scf.condition"));
    };
    let forwarded = types_of(m, m.operands(cond).get(1..).unwrap_or(&[]));
    if forwarded != results || types_of(m, m.block_args(after)) != results {
        return Err(op_error(
            m,
            op,
            "scf.condition arguments, after region arguments and results must match",
        ));
    }
    if yielded(m, after) != inits {
        return Err(op_error(
            m,
            op,
            "after region must yield the init value types",
        ));
    }
    Ok(())
}

pub(crate) fn verify_yield(m: &Module, op: OpId) -> Result<()> {
    // Upstream's region ops that yield, for IR read back from mlir-opt.
    const UPSTREAM: [&str; 2] = ["scf.execute_region", "scf.index_switch"];
    let parent = m.parent_op(op);
    let ours = parent.and_then(|p| CoreOp::of(m, p));
    let upstream = parent.is_some_and(|p| UPSTREAM.contains(&m.name(p).as_str()));
    match ours {
        Some(CoreOp::Scf(ScfOp::For | ScfOp::If | ScfOp::While)) => Ok(()),
        _ if upstream => Ok(()),
        _ => Err(op_error(
            m,
            op,
            "expects parent op to be scf.for, scf.if or scf.while",
        )),
    }
}

pub(crate) fn verify_condition(m: &Module, op: OpId) -> Result<()> {
    if !m.parent_op(op).is_some_and(|p| m.is(p, ScfOp::While)) {
        return Err(op_error(m, op, "expects parent op to be scf.while"));
    }
    if m.operands(op).is_empty() || *operand_type(m, op, 0)? != Type::i1() {
        return Err(op_error(m, op, "first operand must be an i1 condition"));
    }
    Ok(())
}

/// Checks the `index`-typed bounds of a for loop (used by builders).
pub fn check_index_bounds(m: &Module, op: OpId) -> Result<()> {
    for i in 0..3 {
        expect_index(m, op, i)?;
    }
    Ok(())
}
