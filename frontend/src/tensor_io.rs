//! Single-tensor `.pb` files (ONNX backend test data, numpy_helper output).

use crate::import::tensor::{elements_to_tensor, tensor_to_elements};
use crate::load::{map_file, parent_dir, ExternalData};
use crate::proto::TensorProto;
use ir::elements::Elements;
use ir::Diagnostic;
use prost::Message;
use std::path::Path;

/// Reads a serialized `TensorProto`; returns its name and values.
pub fn read_tensor_pb(path: &Path) -> Result<(String, Elements), Diagnostic> {
    let fail = |msg: String| Diagnostic::error(format!("{}: {msg}", path.display()));
    let bytes = map_file(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let t = TensorProto::decode(bytes).map_err(|e| fail(format!("malformed TensorProto: {e}")))?;
    let external = ExternalData::new(parent_dir(path));
    let e = tensor_to_elements(&t, Some(&external)).map_err(|d| fail(d.message))?;
    Ok((t.name, e))
}

/// Writes `e` as a `TensorProto` with little-endian `raw_data`.
pub fn write_tensor_pb(path: &Path, name: &str, e: &Elements) -> Result<(), Diagnostic> {
    let bytes = elements_to_tensor(name, e).encode_to_vec();
    std::fs::write(path, bytes)
        .map_err(|err| Diagnostic::error(format!("cannot write '{}': {err}", path.display())))
}
