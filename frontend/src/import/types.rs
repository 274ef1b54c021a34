//! ONNX `TypeProto` → IR types.

use super::tensor::{elem_type_from_onnx, onnx_type_name};
use crate::proto::tensor_shape_proto::dimension::Value as Dim;
use crate::proto::type_proto::Value;
use crate::proto::TypeProto;
use ir::{Type, DYN};

/// A tensor type: no shape is unknown rank; a symbolic or missing dim is
/// `?`, and so is a negative one (exporters such as paddle2onnx write -1
/// for "unknown"; [`negative_dims`] tells the importer to warn).
pub fn convert_type(tp: &TypeProto) -> Result<Type, String> {
    let Some(Value::TensorType(t)) = &tp.value else {
        let kind = match &tp.value {
            Some(Value::SequenceType(_)) => "sequence",
            Some(Value::MapType(_)) => "map",
            Some(Value::OptionalType(_)) => "optional",
            Some(Value::SparseTensorType(_)) => "sparse tensor",
            Some(Value::OpaqueType(_)) => "opaque",
            _ => return Err("has no type".into()),
        };
        return Err(format!("unsupported {kind} type"));
    };
    let elem = elem_type_from_onnx(t.elem_type)
        .ok_or_else(|| format!("unsupported dtype {}", onnx_type_name(t.elem_type)))?;
    let Some(shape) = &t.shape else {
        return Ok(Type::unranked_tensor(elem));
    };
    let mut dims = Vec::with_capacity(shape.dim.len());
    for d in &shape.dim {
        dims.push(match d.value {
            Some(Dim::DimValue(v)) if v >= 0 => v,
            Some(Dim::DimValue(_)) | Some(Dim::DimParam(_)) | None => DYN,
        });
    }
    Ok(Type::tensor(dims, elem))
}

/// Whether a `dim_param` names a dim shared by all who use the name: not
/// empty and with a letter in it. Exporters write `?` or `-1` for "any
/// size" (paddle2onnx); such a dim is as unnamed, free of every other.
pub fn names_a_dim(param: &str) -> bool {
    param.chars().any(|c| c.is_alphabetic() || c == '_')
}

/// The `dim_param` names of a value's dims ("" where a dim has none, or
/// one that names no dim), or `None` when it has no symbolic dim.
pub fn dim_params(tp: Option<&TypeProto>) -> Option<Vec<String>> {
    let Some(Value::TensorType(t)) = tp.and_then(|tp| tp.value.as_ref()) else {
        return None;
    };
    let dims = &t.shape.as_ref()?.dim;
    let names: Vec<String> = dims
        .iter()
        .map(|d| match &d.value {
            Some(Dim::DimParam(p)) if names_a_dim(p) => p.clone(),
            _ => String::new(),
        })
        .collect();
    names.iter().any(|n| !n.is_empty()).then_some(names)
}

/// The rank a value's type declares, if any.
pub fn declared_rank(tp: Option<&TypeProto>) -> Option<usize> {
    let Some(Value::TensorType(t)) = tp.and_then(|tp| tp.value.as_ref()) else {
        return None;
    };
    Some(t.shape.as_ref()?.dim.len())
}

/// The declared dims of a tensor type that are negative or zero, as
/// `(index, value)`.
pub fn nonpositive_dims(tp: Option<&TypeProto>) -> Vec<(usize, i64)> {
    let Some(Value::TensorType(t)) = tp.and_then(|tp| tp.value.as_ref()) else {
        return Vec::new();
    };
    let Some(shape) = &t.shape else {
        return Vec::new();
    };
    shape
        .dim
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match d.value {
            Some(Dim::DimValue(v)) if v <= 0 => Some((i, v)),
            _ => None,
        })
        .collect()
}
