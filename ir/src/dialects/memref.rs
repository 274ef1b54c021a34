//! `memref`: buffers, views, loads and stores, globals.

use super::{expect_counts, expect_index, expect_memref, op_error, operand_type, result_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::ops::MemrefOp;
use crate::types::{Type, DYN};

/// Marks a `memref.copy` into a slot (a subview) of a fresh buffer that
/// only such copies write, their slots pairwise disjoint (Concat's
/// inputs): the dealloc stage's `write-into-destination` may then compute
/// the source in the slot.
pub const DISJOINT_SLOT: &str = "onnxc.disjoint_slot";

/// Static entries of a `array<i64: ...>` attribute (`DYN` marks an SSA operand).
pub fn static_list(m: &Module, op: OpId, name: &str) -> Vec<i64> {
    m.attr(op, name)
        .and_then(Attribute::as_i64_list)
        .unwrap_or_default()
}

fn count_dyn(list: &[i64]) -> usize {
    list.iter().filter(|&&d| d == DYN).count()
}

pub(crate) fn verify_alloc(m: &Module, op: OpId) -> Result<()> {
    let ty = result_type(m, op, 0)?;
    let mt = expect_memref(m, op, ty, "result")?;
    let dyn_dims = count_dyn(&mt.shape);
    let n = m.operands(op).len();
    // MLIR also allows symbol operands for affine layouts; we have none.
    if n != dyn_dims {
        return Err(op_error(
            m,
            op,
            format!("dimension operand count does not equal memref dynamic dimension count ({n} vs {dyn_dims})"),
        ));
    }
    for i in 0..n {
        expect_index(m, op, i)?;
    }
    Ok(())
}

pub(crate) fn verify_realloc(m: &Module, op: OpId) -> Result<()> {
    let src = expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    let dst = expect_memref(m, op, result_type(m, op, 0)?, "result")?;
    if src.rank() != 1 || dst.rank() != 1 {
        return Err(op_error(m, op, "source and result must be 1-D memrefs"));
    }
    if src.elem != dst.elem {
        return Err(op_error(m, op, "source and result element types differ"));
    }
    let need = usize::from(dst.shape[0] == DYN);
    if m.operands(op).len() != 1 + need {
        return Err(op_error(
            m,
            op,
            "a dynamic result size needs exactly one size operand",
        ));
    }
    Ok(())
}

pub(crate) fn verify_dealloc(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 0)?;
    expect_memref(m, op, operand_type(m, op, 0)?, "operand")?;
    Ok(())
}

pub(crate) fn verify_indices(m: &Module, op: OpId, memref_index: usize) -> Result<()> {
    let mt = expect_memref(m, op, operand_type(m, op, memref_index)?, "operand")?;
    let n = m.operands(op).len() - memref_index - 1;
    if n != mt.rank() {
        return Err(op_error(
            m,
            op,
            format!("incorrect number of indices: {n} for rank {}", mt.rank()),
        ));
    }
    for i in memref_index + 1..m.operands(op).len() {
        expect_index(m, op, i)?;
    }
    Ok(())
}

pub(crate) fn verify_load(m: &Module, op: OpId) -> Result<()> {
    verify_indices(m, op, 0)?;
    let mt = expect_memref(m, op, operand_type(m, op, 0)?, "operand")?;
    if *result_type(m, op, 0)? != mt.elem {
        return Err(op_error(m, op, "result type must match the element type"));
    }
    Ok(())
}

pub(crate) fn verify_store(m: &Module, op: OpId) -> Result<()> {
    verify_indices(m, op, 1)?;
    let mt = expect_memref(m, op, operand_type(m, op, 1)?, "operand")?;
    if *operand_type(m, op, 0)? != mt.elem {
        return Err(op_error(m, op, "value type must match the element type"));
    }
    Ok(())
}

pub(crate) fn verify_copy(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 2, 0)?;
    let a = expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    let b = expect_memref(m, op, operand_type(m, op, 1)?, "target")?;
    if a.elem != b.elem || a.rank() != b.rank() {
        return Err(op_error(
            m,
            op,
            "source and target must have the same element type and rank",
        ));
    }
    Ok(())
}

pub(crate) fn verify_cast(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let a = expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    let b = expect_memref(m, op, result_type(m, op, 0)?, "result")?;
    let dims_ok = a.rank() == b.rank()
        && a.shape
            .iter()
            .zip(&b.shape)
            .all(|(&x, &y)| x == y || x == DYN || y == DYN);
    if a.elem != b.elem || !dims_ok {
        return Err(op_error(
            m,
            op,
            "operand type and result type are cast incompatible",
        ));
    }
    Ok(())
}

pub(crate) fn verify_subview(m: &Module, op: OpId) -> Result<()> {
    let src = expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    expect_memref(m, op, result_type(m, op, 0)?, "result")?;
    verify_mixed_lists(m, op, src.rank(), src.rank(), "the source rank")
}

/// Offsets/sizes/strides given as static lists with `DYN` entries, each
/// dynamic entry an operand after the source, in that order.
pub(crate) fn verify_mixed_lists(
    m: &Module,
    op: OpId,
    offsets: usize,
    rank: usize,
    what: &str,
) -> Result<()> {
    let (o, s, st) = (
        static_list(m, op, "static_offsets"),
        static_list(m, op, "static_sizes"),
        static_list(m, op, "static_strides"),
    );
    if o.len() != offsets || s.len() != rank || st.len() != rank {
        return Err(op_error(
            m,
            op,
            format!("expected {offsets} offsets and sizes/strides of {what}"),
        ));
    }
    let want = 1 + count_dyn(&o) + count_dyn(&s) + count_dyn(&st);
    if m.operands(op).len() != want {
        return Err(op_error(
            m,
            op,
            "dynamic offset/size/stride operand count mismatch",
        ));
    }
    Ok(())
}

pub(crate) fn verify_dim(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 2, 1)?;
    expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    expect_index(m, op, 1)?;
    if !result_type(m, op, 0)?.is_index() {
        return Err(op_error(m, op, "result must be index"));
    }
    Ok(())
}

pub(crate) fn verify_reinterpret(m: &Module, op: OpId) -> Result<()> {
    let src = expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    let dst = expect_memref(m, op, result_type(m, op, 0)?, "result")?;
    if src.elem != dst.elem {
        return Err(op_error(m, op, "element types differ"));
    }
    verify_mixed_lists(m, op, 1, dst.rank(), "the result rank")
}

pub(crate) fn verify_global(m: &Module, op: OpId) -> Result<()> {
    if m.attr(op, "sym_name").and_then(Attribute::as_str).is_none() {
        return Err(op_error(m, op, "requires a 'sym_name' attribute"));
    }
    let Some(ty) = m.attr(op, "type").and_then(Attribute::as_type) else {
        return Err(op_error(m, op, "requires a memref 'type' attribute"));
    };
    let mt = expect_memref(m, op, ty, "type")?;
    if !mt.has_static_shape() {
        return Err(op_error(m, op, "type must have a static shape"));
    }
    if let Some(Attribute::Elements(e)) = m.attr(op, "initial_value") {
        if e.shape() != mt.shape.as_slice() || e.tensor_type().element_type() != &mt.elem {
            return Err(op_error(
                m,
                op,
                format!("initial value type {} does not match {ty}", e.tensor_type()),
            ));
        }
    }
    Ok(())
}

pub(crate) fn verify_get_global(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 0, 1)?;
    let Some(name) = m.attr(op, "name").and_then(Attribute::as_symbol) else {
        return Err(op_error(m, op, "requires a 'name' symbol reference"));
    };
    let Some(g) = m.lookup_symbol(name).filter(|&g| m.is(g, MemrefOp::Global)) else {
        return Err(op_error(
            m,
            op,
            format!("'{name}' does not reference a valid global memref"),
        ));
    };
    let gty = m.attr(g, "type").and_then(Attribute::as_type);
    if gty != Some(result_type(m, op, 0)?) {
        return Err(op_error(
            m,
            op,
            "result type does not match the type of the global",
        ));
    }
    Ok(())
}

pub(crate) fn verify_reshape(m: &Module, op: OpId) -> Result<()> {
    let src = expect_memref(m, op, operand_type(m, op, 0)?, "source")?;
    let dst = expect_memref(m, op, result_type(m, op, 0)?, "result")?;
    if src.elem != dst.elem {
        return Err(op_error(m, op, "element types differ"));
    }
    let Some(Attribute::Array(groups)) = m.attr(op, "reassociation") else {
        return Err(op_error(m, op, "requires a 'reassociation' attribute"));
    };
    let small = if m.is(op, MemrefOp::CollapseShape) {
        dst
    } else {
        src
    };
    if groups.len() != small.rank() {
        return Err(op_error(
            m,
            op,
            "one reassociation group per dimension of the smaller rank expected",
        ));
    }
    Ok(())
}

/// True if the type is a memref with the given element type.
pub fn is_memref_of(t: &Type, elem: &Type) -> bool {
    t.as_memref().is_some_and(|m| m.elem == *elem)
}
