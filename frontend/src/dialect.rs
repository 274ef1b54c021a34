//! The `onnx` and `onnx_ml` dialects live in the `onnx` crate (one table
//! of every op); this module re-exports them for the importer's callers.

pub use onnx::dialect::*;
