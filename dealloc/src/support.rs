//! What `ownership-based-deallocation` accepts: everything else gets a
//! diagnostic naming the op, never wrong frees.

use crate::alias::returns_fresh;
use crate::ownership::MANUAL_DEALLOCATION;
use crate::regions::is_flaggable;
use ir::dialects::{is_memref, op_error};
use ir::registry::Traits;
use ir::{ArithOp, BufferizationOp, CoreOp, FuncOp, MemrefOp, ScfOp};
use ir::{Module, OpId, Result};

/// Rejects the input the pass cannot deallocate correctly.
pub fn check_supported(m: &Module, f: OpId) -> Result<()> {
    let ops = m.collect_ops(f);
    let body = m.region(f, 0);
    for &op in ops.iter().skip(1) {
        let name = m.name(op).as_str();
        let memref_args = m.operands(op).iter().any(|&v| is_memref(m.value_type(v)));
        let in_body = m.op_block(op).and_then(|b| m.block_parent(b)) == body;
        if memref_args && m.num_successors(op) > 0 && !in_body {
            return Err(op_error(
                m,
                op,
                format!("passing memrefs through '{name}' between blocks of a nested region is not supported"),
            ));
        }
    }
    for &op in ops.iter().skip(1) {
        check_op(m, op)?;
    }
    Ok(())
}

fn check_op(m: &Module, op: OpId) -> Result<()> {
    let name = m.name(op).as_str();
    let memref_results = m.results(op).iter().any(|&r| is_memref(m.value_type(r)));
    let memref_operands = m.operands(op).iter().any(|&v| is_memref(m.value_type(v)));
    match CoreOp::of(m, op) {
        Some(CoreOp::Memref(MemrefOp::Dealloc)) if m.attr(op, MANUAL_DEALLOCATION).is_none() => {
            return Err(op_error(
                m,
                op,
                format!("existing deallocations must carry '{MANUAL_DEALLOCATION}' when ownership-based deallocation runs"),
            ));
        }
        Some(CoreOp::Bufferization(BufferizationOp::Dealloc)) => {
            return Err(op_error(
                m,
                op,
                "the function is already deallocated; run ownership-based-deallocation once",
            ));
        }
        _ => {}
    }
    if memref_results && !produces_known_memref(m, op) {
        let msg = if !m.regions(op).is_empty() {
            format!("memref results of region op '{name}' are not supported (only scf.if, scf.for and scf.while)")
        } else if m.is(op, FuncOp::Call) {
            "calls returning memrefs are only supported for functions defined in this module"
                .to_string()
        } else {
            "produces a memref whose ownership is unknown".to_string()
        };
        return Err(op_error(m, op, msg));
    }
    let structured = (m.is(op, ScfOp::Yield) || m.is(op, ScfOp::Condition))
        && m.parent_op(op).is_some_and(|p| is_flaggable(m, p));
    if memref_operands
        && m.is_terminator(op)
        && m.num_successors(op) == 0
        && !m.is(op, FuncOp::Return)
        && !structured
    {
        let parent = m
            .parent_op(op)
            .map_or_else(String::new, |p| format!(" of '{}'", m.name(p).as_str()));
        return Err(op_error(
            m,
            op,
            format!("passing memrefs through '{name}'{parent} to a parent region is not supported"),
        ));
    }
    Ok(())
}

fn produces_known_memref(m: &Module, op: OpId) -> bool {
    m.has_trait(op, Traits::ALLOCATES)
        || returns_fresh(m, op)
        || m.has_trait(op, Traits::VIEW)
        || m.is(op, MemrefOp::GetGlobal)
        || m.is(op, ArithOp::Select)
        || is_flaggable(m, op)
        || crate::dynamic::is_dynamic_call(m, op)
}

/// The ops under the module's top op for which `keep` holds, in pre-order.
pub fn ops_where(m: &Module, keep: impl Fn(&Module, OpId) -> bool) -> Vec<OpId> {
    m.collect_ops(m.top())
        .into_iter()
        .filter(|&o| keep(m, o))
        .collect()
}

/// `scf.for` and `scf.while`.
pub fn is_loop(m: &Module, op: OpId) -> bool {
    m.is(op, ScfOp::For) || m.is(op, ScfOp::While)
}
