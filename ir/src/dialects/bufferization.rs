//! `bufferization`: ownership-based deallocation and clones.

use super::{expect_counts, expect_memref, op_error, operand_type, result_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::types::Type;

/// Operand groups of a `bufferization.dealloc`: (memrefs, conditions, retained).
pub fn dealloc_groups(m: &Module, op: OpId) -> Option<(usize, usize, usize)> {
    let seg = m.attr(op, "operandSegmentSizes")?.as_dense_array()?;
    // i32 segments: negative or huge values (hostile text) are malformed.
    let n = |x: i64| u32::try_from(x).ok().map(|v| v as usize);
    match seg {
        [a, b, c] => Some((n(*a)?, n(*b)?, n(*c)?)),
        _ => None,
    }
}

pub(crate) fn verify_dealloc(m: &Module, op: OpId) -> Result<()> {
    let Some((n, c, r)) = dealloc_groups(m, op) else {
        return Err(op_error(
            m,
            op,
            "requires operandSegmentSizes = array<i32: memrefs, conditions, retained>",
        ));
    };
    if n + c + r != m.operands(op).len() {
        return Err(op_error(
            m,
            op,
            "operand segment sizes do not add up to the operand count",
        ));
    }
    if n != c {
        return Err(op_error(
            m,
            op,
            "must have the same number of conditions as memrefs to deallocate",
        ));
    }
    for i in 0..n {
        expect_memref(m, op, operand_type(m, op, i)?, "deallocated value")?;
    }
    for i in n..n + c {
        if *operand_type(m, op, i)? != Type::i1() {
            return Err(op_error(m, op, "conditions must be i1"));
        }
    }
    for i in n + c..n + c + r {
        expect_memref(m, op, operand_type(m, op, i)?, "retained value")?;
    }
    if m.results(op).len() != r
        || m.results(op)
            .iter()
            .any(|&v| *m.value_type(v) != Type::i1())
    {
        return Err(op_error(
            m,
            op,
            "must have one i1 result per retained value",
        ));
    }
    Ok(())
}

pub(crate) fn verify_clone(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let a = expect_memref(m, op, operand_type(m, op, 0)?, "input")?;
    let b = expect_memref(m, op, result_type(m, op, 0)?, "output")?;
    if a.elem != b.elem || a.shape != b.shape {
        return Err(op_error(m, op, "input and output types must match"));
    }
    Ok(())
}

/// Builds the segment attribute for a dealloc with `n` memrefs and `r` retained.
pub fn segment_attr(n: usize, r: usize) -> Attribute {
    Attribute::DenseArray(
        Type::i(32),
        std::sync::Arc::from([n as i64, n as i64, r as i64].as_slice()),
    )
}
