//! Per-op lowerings of `onnx.*` to memref + scf, sharing a few mechanisms:
//! broadcasting element-wise nests, reduction nests, views for reshapes.

mod conv;
mod elementwise;
mod matmul;
mod pool;
pub mod scalar;
mod shape;
mod window;

use crate::convert::{alloc, memref_type, Lowering};
use ir::dialects::op_error;
use ir::{Attribute, Builder, Module, OpId, Result, Type, ValueId, DYN};

/// Lowers one op at `b` and returns the memrefs of its results.
pub fn lower_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let name = b.m.name(op).as_str();
    let kind = name.strip_prefix("onnx.").unwrap_or(name);
    if let Some(r) = elementwise::lower(cx, b, op, kind)? {
        return Ok(r);
    }
    match kind {
        "Constant" => shape::constant(cx, b, op),
        "Identity" | "Dropout" => shape::identity(cx, b, op),
        "Flatten" | "Reshape" | "Squeeze" | "Unsqueeze" => shape::reshape(cx, b, op),
        "Transpose" => shape::transpose(cx, b, op),
        "MatMul" => matmul::matmul(cx, b, op),
        "Gemm" => matmul::gemm(cx, b, op),
        "Conv" => conv::conv(cx, b, op),
        "MaxPool" | "AveragePool" => pool::pool(cx, b, op, kind),
        "GlobalAveragePool" | "GlobalMaxPool" => pool::global_pool(cx, b, op, kind),
        _ => Err(op_error(b.m, op, "no bufferization for this op yet")),
    }
}

/// The memref type of result `i`.
pub fn result_memref_type(m: &Module, op: OpId, i: usize) -> Result<Type> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    memref_type(m, op, m.value_type(r))
}

/// Allocates the buffer of result `i` given every dim's size.
pub fn alloc_result(b: &mut Builder<'_>, op: OpId, i: usize, dims: &[ValueId]) -> Result<ValueId> {
    let ty = result_memref_type(b.m, op, i)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.len() != dims.len() {
        return Err(op_error(
            b.m,
            op,
            "result rank differs from the computed shape",
        ));
    }
    let dynamic: Vec<ValueId> = shape
        .iter()
        .zip(dims)
        .filter(|(&d, _)| d == DYN)
        .map(|(_, &v)| v)
        .collect();
    Ok(alloc(b, &ty, &dynamic))
}

/// Static shape of a memref value (`DYN` for dynamic dims).
pub fn shape_of(m: &Module, v: ValueId) -> Vec<i64> {
    m.value_type(v)
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default()
}

pub fn elem_of(m: &Module, v: ValueId) -> Type {
    m.value_type(v).element_type().clone()
}

pub fn attr_int(m: &Module, op: OpId, name: &str, default: i64) -> i64 {
    m.attr(op, name)
        .and_then(Attribute::as_int)
        .unwrap_or(default)
}

pub fn attr_float(m: &Module, op: OpId, name: &str, default: f64) -> f64 {
    m.attr(op, name)
        .and_then(Attribute::as_float)
        .unwrap_or(default)
}

pub fn attr_ints(m: &Module, op: OpId, name: &str) -> Option<Vec<i64>> {
    m.attr(op, name).and_then(Attribute::as_i64_list)
}

pub fn attr_str<'m>(m: &'m Module, op: OpId, name: &str) -> Option<&'m str> {
    m.attr(op, name).and_then(Attribute::as_str)
}

/// Constant integer values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_ints(m: &Module, op: OpId, i: usize) -> Option<Vec<i64>> {
    let v = m.operand(op, i)?;
    let def = m.defining_op(v)?;
    if !m.is(def, "onnx.Constant") {
        return None;
    }
    let e = m.attr(def, "value")?.as_elements()?;
    Some(e.iter().map(|w| w.i64()).collect())
}

/// `memref.load m[idx]`.
pub fn load_at(b: &mut Builder<'_>, m: ValueId, idx: &[ValueId]) -> ValueId {
    let elem = elem_of(b.m, m);
    let mut operands = vec![m];
    operands.extend_from_slice(idx);
    b.op1("memref.load", &operands, elem, &[])
}

/// `memref.store v, m[idx]`.
pub fn store_at(b: &mut Builder<'_>, v: ValueId, m: ValueId, idx: &[ValueId]) {
    let mut operands = vec![v, m];
    operands.extend_from_slice(idx);
    b.op("memref.store", &operands, &[], &[]);
}
