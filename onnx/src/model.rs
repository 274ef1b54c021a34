//! The model opsets the importer records on the module. Only export reads
//! them back: imported ops are in their newest form whatever the model's
//! opset, so no other stage needs to know it.

use ir::{Attribute, Module};

/// Module attribute: the model's default-domain (`ai.onnx`) opset.
pub const OPSET_ATTR: &str = "onnx.opset";
/// Module attribute: the model's `ai.onnx.ml` opset, when it imports one.
pub const ML_OPSET_ATTR: &str = "onnx.ml_opset";

/// The default-domain opset written for a module that records none (IR not
/// imported from a model, e.g. hand-written): 17, what export has always
/// written for such modules and an opset every runtime the tests use runs.
pub const FALLBACK_OPSET: i64 = 17;
/// The `ai.onnx.ml` opset written when the module records none.
pub const FALLBACK_ML_OPSET: i64 = 3;

fn module_int(m: &Module, name: &str) -> Option<i64> {
    m.attr(m.top(), name).and_then(Attribute::as_int)
}

/// The default-domain opset to write `m` back as: the imported model's,
/// else [`FALLBACK_OPSET`].
pub fn model_opset(m: &Module) -> i64 {
    module_int(m, OPSET_ATTR).unwrap_or(FALLBACK_OPSET)
}

/// The `ai.onnx.ml` opset to write `m` back as: the imported model's, else
/// [`FALLBACK_ML_OPSET`].
pub fn model_ml_opset(m: &Module) -> i64 {
    module_int(m, ML_OPSET_ATTR).unwrap_or(FALLBACK_ML_OPSET)
}
