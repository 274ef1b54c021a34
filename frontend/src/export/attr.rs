//! IR types and attributes → ONNX `TypeProto` / `AttributeProto`.

use crate::import::tensor::{dtype_to_onnx, elements_to_tensor};
use crate::proto::{
    attribute_proto::AttributeType, tensor_shape_proto, type_proto, AttributeProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::DType;
use ir::{Module, OpId, Result, Type, DYN};

/// An ONNX tensor type for an IR tensor type.
pub fn type_proto(m: &Module, op: OpId, t: &Type) -> Result<TypeProto> {
    let Some(tt) = t.as_tensor() else {
        return Err(op_error(
            m,
            op,
            format!("cannot export a value of type {t}"),
        ));
    };
    let dtype = DType::from_type(&tt.elem)
        .ok_or_else(|| op_error(m, op, format!("cannot export element type {}", tt.elem)))?;
    let shape = tt.shape.as_ref().map(|dims| TensorShapeProto {
        dim: dims
            .iter()
            .enumerate()
            .map(|(i, &d)| tensor_shape_proto::Dimension {
                value: dim_value(tt, i, d),
                denotation: String::new(),
            })
            .collect(),
    });
    Ok(TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: dtype_to_onnx(dtype),
            shape,
        })),
        denotation: String::new(),
    })
}

/// A dim as ONNX writes it: its size, else the symbolic size inference
/// found as a `dim_param` (a symbol by its name, an expression such as
/// `(H - 1) floordiv 2 + 1` as printed), else nothing.
fn dim_value(
    tt: &ir::types::TensorType,
    i: usize,
    d: i64,
) -> Option<tensor_shape_proto::dimension::Value> {
    use tensor_shape_proto::dimension::Value;
    if d != DYN {
        return Some(Value::DimValue(d));
    }
    let e = tt.dims.as_ref()?.get(i)?.as_ref()?;
    Some(Value::DimParam(match e.as_sym() {
        Some(name) => name.to_string(),
        None => e.to_string(),
    }))
}

/// A value's name and type; a foreign value gets the type it was declared
/// with (none when it had none).
pub fn value_info(m: &Module, op: OpId, name: &str, t: &Type) -> Result<ValueInfoProto> {
    let r#type = match crate::foreign::declared(t) {
        Some(declared) => declared,
        None => Some(type_proto(m, op, t)?),
    };
    Ok(ValueInfoProto {
        name: name.to_string(),
        r#type,
        ..ValueInfoProto::default()
    })
}

/// One op attribute as an ONNX attribute (not for subgraphs).
pub fn attribute(m: &Module, op: OpId, name: &str, a: &Attribute) -> Result<AttributeProto> {
    let mut p = AttributeProto {
        name: name.to_string(),
        ..AttributeProto::default()
    };
    let no_form = || op_error(m, op, format!("attribute '{name}' has no ONNX form"));
    let kind = match a {
        Attribute::Int(v, _) => {
            p.i = *v;
            AttributeType::Int
        }
        Attribute::Bool(b) => {
            p.i = i64::from(*b);
            AttributeType::Int
        }
        Attribute::Float(v, _) => {
            p.f = *v as f32;
            AttributeType::Float
        }
        Attribute::String(s) => {
            p.s = s.as_bytes().to_vec();
            AttributeType::String
        }
        Attribute::Elements(e) => {
            p.t = Some(elements_to_tensor("", e));
            AttributeType::Tensor
        }
        Attribute::Type(t) => {
            p.tp = Some(type_proto(m, op, t)?);
            AttributeType::TypeProto
        }
        Attribute::DenseArray(_, v) => {
            p.ints = v.to_vec();
            AttributeType::Ints
        }
        Attribute::Array(items) if items.is_empty() => empty_list_kind(name),
        Attribute::Array(items) => match array(&mut p, items) {
            Some(kind) => kind,
            None => {
                p.type_protos = items
                    .iter()
                    .map(|x| match x {
                        Attribute::Type(t) => type_proto(m, op, t),
                        _ => Err(no_form()),
                    })
                    .collect::<Result<Vec<_>>>()?;
                AttributeType::TypeProtos
            }
        },
        _ => return Err(no_form()),
    };
    p.r#type = kind as i32;
    Ok(p)
}

/// ONNX list attributes of FLOATS and of STRINGS (default and ai.onnx.ml
/// domains). No attribute name has two list kinds across the ops of onnx
/// 1.23, so the name alone tells what an empty list was.
const FLOAT_LISTS: &[&str] = &[
    "activation_alpha",
    "activation_beta",
    "base_values",
    "class_weights",
    "coefficients",
    "imputed_value_floats",
    "intercepts",
    "kernel_params",
    "keys_floats",
    "nodes_hitrates",
    "nodes_values",
    "offset",
    "prob_a",
    "prob_b",
    "rho",
    "scale",
    "scales",
    "support_vectors",
    "target_weights",
    "value_floats",
    "values_floats",
    "weights",
];
const STRING_LISTS: &[&str] = &[
    "activations",
    "cats_strings",
    "classes_strings",
    "classlabels_strings",
    "keys_strings",
    "nodes_modes",
    "pool_strings",
    "stopwords",
    "string_vocabulary",
    "value_strings",
    "values_strings",
];

/// The kind of an empty list attribute (its items cannot tell).
fn empty_list_kind(name: &str) -> AttributeType {
    if FLOAT_LISTS.contains(&name) {
        AttributeType::Floats
    } else if STRING_LISTS.contains(&name) {
        AttributeType::Strings
    } else {
        AttributeType::Ints
    }
}

/// INTS, FLOATS, STRINGS or TENSORS from a non-empty array attribute.
fn array(p: &mut AttributeProto, items: &[Attribute]) -> Option<AttributeType> {
    if let Some(ints) = items
        .iter()
        .map(|x| match x {
            Attribute::Int(v, _) => Some(*v),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
    {
        p.ints = ints;
        return Some(AttributeType::Ints);
    }
    if let Some(fs) = items
        .iter()
        .map(|x| match x {
            Attribute::Float(v, _) => Some(*v as f32),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
    {
        p.floats = fs;
        return Some(AttributeType::Floats);
    }
    if let Some(ss) = items
        .iter()
        .map(Attribute::as_str)
        .collect::<Option<Vec<_>>>()
    {
        p.strings = ss.into_iter().map(|s| s.as_bytes().to_vec()).collect();
        return Some(AttributeType::Strings);
    }
    if let Some(ts) = items
        .iter()
        .map(|x| x.as_elements().map(|e| elements_to_tensor("", e)))
        .collect::<Option<Vec<_>>>()
    {
        p.tensors = ts;
        return Some(AttributeType::Tensors);
    }
    None
}
