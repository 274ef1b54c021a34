//! ONNX node attributes → IR attributes (see docs/ONNX_DIALECT.md).

use super::tensor::tensor_to_elements;
use super::types::convert_type;
use crate::load::ExternalData;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::AttributeProto;
use ir::{Attribute, Diagnostic, Type};
use std::sync::Arc;

/// The attribute's kind; old writers leave `type` unset, so guess it from
/// the field that holds a value.
pub fn attr_kind(a: &AttributeProto) -> AttributeType {
    let declared = AttributeType::try_from(a.r#type).unwrap_or(AttributeType::Undefined);
    if declared != AttributeType::Undefined {
        return declared;
    }
    if a.t.is_some() {
        AttributeType::Tensor
    } else if a.g.is_some() {
        AttributeType::Graph
    } else if !a.floats.is_empty() {
        AttributeType::Floats
    } else if !a.ints.is_empty() {
        AttributeType::Ints
    } else if !a.strings.is_empty() {
        AttributeType::Strings
    } else if !a.tensors.is_empty() {
        AttributeType::Tensors
    } else if !a.graphs.is_empty() {
        AttributeType::Graphs
    } else if !a.s.is_empty() {
        AttributeType::String
    } else if a.f != 0.0 {
        AttributeType::Float
    } else {
        AttributeType::Int
    }
}

fn string_attr(bytes: &[u8]) -> Attribute {
    Attribute::String(Arc::from(String::from_utf8_lossy(bytes).as_ref()))
}

/// Converts one attribute. Errors are phrased for the caller to prefix with
/// the node; subgraphs are refused here.
pub fn convert_attr(
    a: &AttributeProto,
    external: Option<&ExternalData>,
) -> Result<Attribute, Diagnostic> {
    let err = |msg: &str| Diagnostic::error(format!("attribute '{}': {msg}", a.name));
    if !a.ref_attr_name.is_empty() {
        return Err(err("attribute references are only valid inside functions"));
    }
    Ok(match attr_kind(a) {
        AttributeType::Int => Attribute::i64(a.i),
        AttributeType::Float => Attribute::Float(f64::from(a.f), Type::f32()),
        AttributeType::String => string_attr(&a.s),
        AttributeType::Ints => {
            Attribute::Array(a.ints.iter().map(|&v| Attribute::i64(v)).collect())
        }
        AttributeType::Floats => Attribute::Array(
            a.floats
                .iter()
                .map(|&v| Attribute::Float(f64::from(v), Type::f32()))
                .collect(),
        ),
        AttributeType::Strings => {
            Attribute::Array(a.strings.iter().map(|s| string_attr(s)).collect())
        }
        AttributeType::Tensor => {
            let t =
                a.t.as_ref()
                    .ok_or_else(|| err("TENSOR attribute without a tensor"))?;
            Attribute::Elements(tensor_to_elements(t, external).map_err(|d| err(&d.message))?)
        }
        AttributeType::Tensors => {
            let mut items = Vec::with_capacity(a.tensors.len());
            for t in &a.tensors {
                items.push(Attribute::Elements(
                    tensor_to_elements(t, external).map_err(|d| err(&d.message))?,
                ));
            }
            Attribute::Array(items.into())
        }
        AttributeType::TypeProto => {
            let tp =
                a.tp.as_ref()
                    .ok_or_else(|| err("TYPE_PROTO attribute without a type"))?;
            Attribute::Type(convert_type(tp).map_err(|m| err(&m))?)
        }
        AttributeType::TypeProtos => {
            let mut items = Vec::with_capacity(a.type_protos.len());
            for tp in &a.type_protos {
                items.push(Attribute::Type(convert_type(tp).map_err(|m| err(&m))?));
            }
            Attribute::Array(items.into())
        }
        AttributeType::Graph | AttributeType::Graphs => {
            return Err(err("unsupported subgraph attribute here"));
        }
        AttributeType::SparseTensor | AttributeType::SparseTensors => {
            return Err(err("unsupported sparse tensor attribute"));
        }
        AttributeType::Undefined => return Err(err("attribute has no value")),
    })
}
