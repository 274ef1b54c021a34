//! The `onnx` and `onnx_ml` dialects live in the `onnx` crate (one table
//! of every op); this module re-exports them for the importer's callers.

pub use onnx::dialect::*;

/// Whether `onnx.<op_type>` is a known ONNX operator.
pub fn is_known_op(op_type: &str) -> bool {
    onnx::OpKind::from_model("", op_type).is_some()
}

/// Whether `onnx_ml.<op_type>` is a known `ai.onnx.ml` operator.
pub fn is_known_ml_op(op_type: &str) -> bool {
    onnx::OpKind::from_model("ai.onnx.ml", op_type).is_some()
}
