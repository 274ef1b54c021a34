//! Folding kernels: an `onnx.*` op whose operands are all constants becomes
//! constants. Views (Transpose, reshapes, Expand) never copy; arithmetic is
//! computed in `WideNum` and stored in the result's dtype.

mod attention;
mod data;
mod dense;
pub mod elementwise;
mod lazy_map;
mod linalg;
mod misc;
mod nn;
mod reduce;
mod rnn;
mod unary;
mod views;

pub use lazy_map::{with_lazy_min, DEFAULT_LAZY_MIN};

use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::{DType, Elements};
use ir::{Module, OpId, Result, Type};

/// Constant value of operand `i`, if it comes from `onnx.Constant`.
pub fn constant_operand(m: &Module, op: OpId, i: usize) -> Option<Elements> {
    let v = m.operand(op, i)?;
    let def = m.defining_op(v)?;
    if !m.is(def, "onnx.Constant") {
        return None;
    }
    m.attr(def, "value")?.as_elements().cloned()
}

/// True for an operand that is an omitted optional input.
pub fn is_none(m: &Module, op: OpId, i: usize) -> bool {
    m.operand(op, i)
        .is_some_and(|v| *m.value_type(v) == Type::None)
}

/// The dtype of result `i` from its tensor type.
pub fn result_dtype(m: &Module, op: OpId, i: usize) -> Result<DType> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    DType::from_type(m.value_type(r).element_type())
        .ok_or_else(|| op_error(m, op, format!("no constant dtype for {}", m.value_type(r))))
}

pub fn attr_i64(m: &Module, op: OpId, name: &str, default: i64) -> i64 {
    m.attr(op, name)
        .and_then(Attribute::as_int)
        .unwrap_or(default)
}

/// The model's default-domain opset (semantics changed across versions).
pub fn opset(m: &Module) -> i64 {
    m.attr(m.top(), "onnx.opset")
        .and_then(Attribute::as_int)
        .unwrap_or(21)
}

pub fn attr_f64(m: &Module, op: OpId, name: &str, default: f64) -> f64 {
    m.attr(op, name)
        .and_then(Attribute::as_float)
        .unwrap_or(default)
}

pub fn attr_str(m: &Module, op: OpId, name: &str) -> Option<String> {
    m.attr(op, name)
        .and_then(Attribute::as_str)
        .map(str::to_string)
}

pub fn attr_ints(m: &Module, op: OpId, name: &str) -> Option<Vec<i64>> {
    m.attr(op, name).and_then(Attribute::as_i64_list)
}

/// Axis `a` (negative counts from the back) of a rank-`rank` tensor.
pub fn norm_axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    (0..r).contains(&v).then_some(v as usize)
}

/// The `axes` attribute as axes of a rank-`rank` tensor (every axis when
/// it is absent); `None` when one is out of range.
pub fn attr_axes(m: &Module, op: OpId, rank: usize) -> Option<Vec<usize>> {
    match attr_ints(m, op, "axes") {
        Some(a) => a.iter().map(|&v| norm_axis(v, rank)).collect(),
        None => Some((0..rank).collect()),
    }
}

/// Folds `op` if every non-optional operand is constant and the op is known.
/// `Ok(None)`: nothing to do.
pub fn fold_op(m: &Module, op: OpId) -> Result<Option<Vec<Elements>>> {
    let n = m.operands(op).len();
    let mut inputs = Vec::with_capacity(n);
    for i in 0..n {
        if is_none(m, op, i) {
            inputs.push(None);
            continue;
        }
        match constant_operand(m, op, i) {
            Some(e) => inputs.push(Some(e)),
            None => return Ok(None),
        }
    }
    let kind = m.name(op).as_str().trim_start_matches("onnx.");
    if let Some(r) = views::fold(m, op, kind, &inputs)? {
        return Ok(Some(r));
    }
    for f in [
        data::fold,
        reduce::fold,
        linalg::fold,
        nn::fold,
        attention::fold,
        misc::fold,
        rnn::fold,
        elementwise::fold,
    ] {
        if let Some(r) = f(m, op, kind, &inputs)? {
            return Ok(Some(r));
        }
    }
    Ok(None)
}
