//! `vector`: register values of static shape (`vector<8xf32>`) for the
//! kernels' inner loops, with MLIR's syntax: loads and stores at memref
//! indices (plain and masked for remainders), broadcast, fused
//! multiply-add, reductions, element extract/insert, shuffles and bit
//! casts. Element-wise arithmetic on vectors is `arith`/`math` on vector
//! types.

use super::{expect_counts, op_error, operand_type, result_type};
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::types::{Type, VectorType};

/// Reduction kinds of `vector.reduction`, by their printed name.
pub const REDUCTION_KINDS: [&str; 10] = [
    "add", "mul", "minui", "minsi", "minimumf", "maxui", "maxsi", "maximumf", "and", "or",
];

/// The `kind` attribute of a reduction: `#vector.kind<add>`.
pub fn kind_attr(kind: &str) -> Attribute {
    Attribute::Opaque(std::sync::Arc::from(
        format!("vector.kind<{kind}>").as_str(),
    ))
}

/// The kind named by a reduction's `kind` attribute.
pub fn reduction_kind(m: &Module, op: OpId) -> Option<&'static str> {
    let Some(Attribute::Opaque(body)) = m.attr(op, "kind") else {
        return None;
    };
    let name = body.strip_prefix("vector.kind<")?.strip_suffix('>')?;
    REDUCTION_KINDS.iter().find(|&&k| k == name).copied()
}

/// The one static position of `vector.extract` / `vector.insert`.
pub fn position(m: &Module, op: OpId) -> Option<i64> {
    match m.attr(op, "static_position")?.as_dense_array()? {
        [p] => Some(*p),
        _ => None,
    }
}

fn vector<'m>(m: &'m Module, op: OpId, t: &'m Type, what: &str) -> Result<&'m VectorType> {
    t.as_vector()
        .ok_or_else(|| op_error(m, op, format!("{what} must be a vector, got {t}")))
}

/// `memref[indices]` starting at operand `at`: index count = memref rank,
/// element types agree with the vector `v`.
fn access(m: &Module, op: OpId, at: usize, n_idx: usize, v: &VectorType) -> Result<()> {
    let mem = operand_type(m, op, at)?;
    let mt = mem
        .as_memref()
        .ok_or_else(|| op_error(m, op, format!("base must be a memref, got {mem}")))?;
    if n_idx != mt.rank() {
        return Err(op_error(m, op, "needs one index per memref dim"));
    }
    for i in 0..n_idx {
        if !operand_type(m, op, at + 1 + i)?.is_index() {
            return Err(op_error(m, op, "indices must be index"));
        }
    }
    if mt.elem != v.elem || v.shape.len() != 1 {
        return Err(op_error(
            m,
            op,
            "the vector must be 1-D with the memref's element type",
        ));
    }
    Ok(())
}

pub(crate) fn verify_load(m: &Module, op: OpId) -> Result<()> {
    let n = m.operands(op).len();
    expect_counts(m, op, n, 1)?;
    let v = vector(m, op, result_type(m, op, 0)?, "result")?;
    access(m, op, 0, n.saturating_sub(1), v)
}

pub(crate) fn verify_store(m: &Module, op: OpId) -> Result<()> {
    let n = m.operands(op).len();
    expect_counts(m, op, n, 0)?;
    let v = vector(m, op, operand_type(m, op, 0)?, "stored value")?;
    access(m, op, 1, n.saturating_sub(2), v)
}

fn mask_of(m: &Module, op: OpId, i: usize, v: &VectorType) -> Result<()> {
    let t = operand_type(m, op, i)?;
    let mv = vector(m, op, t, "mask")?;
    if mv.elem != Type::i1() || mv.shape != v.shape {
        return Err(op_error(
            m,
            op,
            "mask must be a vector of i1 shaped like the value",
        ));
    }
    Ok(())
}

/// `base, indices..., mask, pass_thru` → value.
pub(crate) fn verify_masked_load(m: &Module, op: OpId) -> Result<()> {
    let n = m.operands(op).len();
    expect_counts(m, op, n, 1)?;
    let v = vector(m, op, result_type(m, op, 0)?, "result")?;
    if n < 3 || operand_type(m, op, n - 1)? != result_type(m, op, 0)? {
        return Err(op_error(m, op, "pass_thru must have the result's type"));
    }
    mask_of(m, op, n - 2, v)?;
    access(m, op, 0, n - 3, v)
}

/// `base, indices..., mask, value`.
pub(crate) fn verify_masked_store(m: &Module, op: OpId) -> Result<()> {
    let n = m.operands(op).len();
    expect_counts(m, op, n, 0)?;
    if n < 3 {
        return Err(op_error(m, op, "needs a base, a mask and a value"));
    }
    let v = vector(m, op, operand_type(m, op, n - 1)?, "stored value")?;
    mask_of(m, op, n - 2, v)?;
    access(m, op, 0, n - 3, v)
}

pub(crate) fn verify_broadcast(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let v = vector(m, op, result_type(m, op, 0)?, "result")?;
    if *operand_type(m, op, 0)? != v.elem {
        return Err(op_error(m, op, "source must be the vector's element type"));
    }
    Ok(())
}

/// The same bits, lanes of another width: `vector<4xi8>` to
/// `vector<1xi32>`.
pub(crate) fn verify_bitcast(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let bits = |t: &Type, what: &str| -> Result<u64> {
        let v = vector(m, op, t, what)?;
        let w = v.elem.bit_width().filter(|&w| w > 0 && v.shape.len() == 1);
        let w =
            w.ok_or_else(|| op_error(m, op, format!("{what} must be a 1-D vector of numbers")))?;
        Ok(u64::from(w) * u64::try_from(v.len()).unwrap_or(0))
    };
    if bits(operand_type(m, op, 0)?, "source")? != bits(result_type(m, op, 0)?, "result")? {
        return Err(op_error(
            m,
            op,
            "source and result must have the same bit count",
        ));
    }
    Ok(())
}

pub(crate) fn verify_fma(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 3, 1)?;
    let t = result_type(m, op, 0)?;
    let v = vector(m, op, t, "result")?;
    if !v.elem.is_float() || (0..3).any(|i| operand_type(m, op, i).ok() != Some(t)) {
        return Err(op_error(
            m,
            op,
            "operands and result must be one float vector type",
        ));
    }
    Ok(())
}

pub(crate) fn verify_reduction(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let v = vector(m, op, operand_type(m, op, 0)?, "operand")?;
    if reduction_kind(m, op).is_none() {
        return Err(op_error(m, op, "requires a valid 'kind' attribute"));
    }
    if *result_type(m, op, 0)? != v.elem {
        return Err(op_error(m, op, "result must be the element type"));
    }
    Ok(())
}

pub(crate) fn verify_create_mask(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let v = vector(m, op, result_type(m, op, 0)?, "result")?;
    if !operand_type(m, op, 0)?.is_index() || v.elem != Type::i1() || v.shape.len() != 1 {
        return Err(op_error(
            m,
            op,
            "takes an index and makes a 1-D vector of i1",
        ));
    }
    Ok(())
}

fn check_position(m: &Module, op: OpId, v: &VectorType) -> Result<()> {
    let p = position(m, op);
    if !p.is_some_and(|p| (0..v.len()).contains(&p)) || v.shape.len() != 1 {
        return Err(op_error(
            m,
            op,
            "requires a 'position' within the 1-D vector",
        ));
    }
    Ok(())
}

pub(crate) fn verify_extract(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 1, 1)?;
    let v = vector(m, op, operand_type(m, op, 0)?, "operand")?;
    check_position(m, op, v)?;
    if *result_type(m, op, 0)? != v.elem {
        return Err(op_error(m, op, "result must be the element type"));
    }
    Ok(())
}

pub(crate) fn verify_insert(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 2, 1)?;
    let t = operand_type(m, op, 1)?;
    let v = vector(m, op, t, "destination")?;
    check_position(m, op, v)?;
    if *operand_type(m, op, 0)? != v.elem || result_type(m, op, 0)? != t {
        return Err(op_error(
            m,
            op,
            "inserts an element into a vector of its type",
        ));
    }
    Ok(())
}

pub(crate) fn verify_shuffle(m: &Module, op: OpId) -> Result<()> {
    expect_counts(m, op, 2, 1)?;
    let (a, b) = (operand_type(m, op, 0)?, operand_type(m, op, 1)?);
    let (va, vb) = (vector(m, op, a, "operand")?, vector(m, op, b, "operand")?);
    let r = vector(m, op, result_type(m, op, 0)?, "result")?;
    let mask = m.attr(op, "mask").and_then(Attribute::as_i64_list);
    let n = va.len() + vb.len();
    let ok = va.elem == vb.elem
        && r.elem == va.elem
        && mask
            .is_some_and(|k| k.len() as i64 == r.len() && k.iter().all(|&i| (0..n).contains(&i)));
    if !ok {
        return Err(op_error(
            m,
            op,
            "needs one element type and a mask of in-range positions",
        ));
    }
    Ok(())
}

/// `base, indices..., index_vec, mask, pass_thru` → value: lane `i` reads
/// `base[indices...]` moved by `index_vec[i]` elements (1-D base).
pub(crate) fn verify_gather(m: &Module, op: OpId) -> Result<()> {
    let n = m.operands(op).len();
    expect_counts(m, op, n, 1)?;
    let v = vector(m, op, result_type(m, op, 0)?, "result")?;
    if n < 5 || operand_type(m, op, n - 1)? != result_type(m, op, 0)? {
        return Err(op_error(m, op, "pass_thru must have the result's type"));
    }
    mask_of(m, op, n - 2, v)?;
    let iv = vector(m, op, operand_type(m, op, n - 3)?, "index vector")?;
    if !iv.elem.is_int_or_index() || iv.shape != v.shape {
        return Err(op_error(
            m,
            op,
            "indices must be an integer vector shaped like the result",
        ));
    }
    access(m, op, 0, n - 4, v)
}
