//! Export: the `onnx` dialect back to a `ModelProto`. Graph input and
//! output names come from the function's `input_names`/`output_names`,
//! constants become initializers (written in their dtype), every other
//! `onnx.*`/`onnx_ml.*` op becomes a node named after its location.

use crate::import::tensor::{dtype_to_onnx, elements_to_tensor};
use crate::proto::{
    attribute_proto::AttributeType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::DType;
use ir::{Diagnostic, Location, Module, OpId, Result, Type, ValueId, DYN};
use std::collections::{HashMap, HashSet};

/// Names values uniquely, preferring the name they came with.
#[derive(Default)]
struct Names {
    of: HashMap<ValueId, String>,
    taken: HashSet<String>,
}

impl Names {
    fn claim(&mut self, v: ValueId, wanted: &str) -> String {
        let base = if wanted.is_empty() { "v" } else { wanted };
        let mut name = base.to_string();
        let mut k = 0;
        while self.taken.contains(&name) {
            k += 1;
            name = format!("{base}_{k}");
        }
        self.taken.insert(name.clone());
        self.of.insert(v, name.clone());
        name
    }
}

fn string_list(m: &Module, f: OpId, attr: &str) -> Vec<String> {
    m.attr(f, attr)
        .and_then(Attribute::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// An ONNX tensor type for an IR tensor type.
fn type_proto(m: &Module, op: OpId, t: &Type) -> Result<TypeProto> {
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
            .map(|&d| tensor_shape_proto::Dimension {
                value: (d != DYN).then_some(tensor_shape_proto::dimension::Value::DimValue(d)),
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

fn value_info(m: &Module, op: OpId, name: &str, t: &Type) -> Result<ValueInfoProto> {
    Ok(ValueInfoProto {
        name: name.to_string(),
        r#type: Some(type_proto(m, op, t)?),
        ..ValueInfoProto::default()
    })
}

fn attribute(m: &Module, op: OpId, name: &str, a: &Attribute) -> Result<AttributeProto> {
    let mut p = AttributeProto {
        name: name.to_string(),
        ..AttributeProto::default()
    };
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
        Attribute::DenseArray(_, v) => {
            p.ints = v.to_vec();
            AttributeType::Ints
        }
        Attribute::Array(items) => {
            if let Some(ints) = items
                .iter()
                .map(Attribute::as_int)
                .collect::<Option<Vec<_>>>()
            {
                p.ints = ints;
                AttributeType::Ints
            } else if let Some(fs) = items
                .iter()
                .map(|x| {
                    matches!(x, Attribute::Float(..))
                        .then(|| x.as_float())
                        .flatten()
                })
                .collect::<Option<Vec<_>>>()
            {
                p.floats = fs.into_iter().map(|f| f as f32).collect();
                AttributeType::Floats
            } else if let Some(ss) = items
                .iter()
                .map(Attribute::as_str)
                .collect::<Option<Vec<_>>>()
            {
                p.strings = ss.into_iter().map(|s| s.as_bytes().to_vec()).collect();
                AttributeType::Strings
            } else {
                return Err(op_error(
                    m,
                    op,
                    format!("attribute '{name}' has no ONNX form"),
                ));
            }
        }
        _ => {
            return Err(op_error(
                m,
                op,
                format!("attribute '{name}' has no ONNX form"),
            ))
        }
    };
    p.r#type = kind as i32;
    Ok(p)
}

fn loc_name(m: &Module, op: OpId) -> String {
    match m.loc(op) {
        Location::Name(n) => n.to_string(),
        _ => String::new(),
    }
}

/// Exports the module's main graph (its first function) as an ONNX model.
pub fn export_model(m: &Module) -> Result<ModelProto> {
    let f = m
        .top_level_ops("func.func")
        .into_iter()
        .next()
        .ok_or_else(|| Diagnostic::error("the module has no function to export"))?;
    let entry = m
        .region(f, 0)
        .and_then(|r| m.entry_block(r))
        .ok_or_else(|| op_error(m, f, "has no body to export"))?;
    let mut names = Names::default();
    let mut graph = GraphProto {
        name: ir::dialects::func::sym_name(m, f)
            .unwrap_or("main_graph")
            .to_string(),
        ..GraphProto::default()
    };
    let input_names = string_list(m, f, "input_names");
    for (i, &a) in m.block_args(entry).iter().enumerate() {
        let wanted = input_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("input_{i}"));
        let name = names.claim(a, &wanted);
        graph.input.push(value_info(m, f, &name, m.value_type(a))?);
    }
    // Results returned by the graph take the output names when they can.
    let output_names = string_list(m, f, "output_names");
    let ret = m
        .last_op(entry)
        .filter(|&t| m.is(t, "func.return"))
        .ok_or_else(|| op_error(m, f, "body does not end with func.return"))?;
    for (i, &v) in m.operands(ret).iter().enumerate() {
        let is_node_result = m.defining_op(v).is_some_and(|d| !m.is(d, "onnx.Constant"));
        if is_node_result && !names.of.contains_key(&v) {
            let wanted = output_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("output_{i}"));
            names.claim(v, &wanted);
        }
    }
    let mut uses_ml = false;
    for op in m.block_ops(entry) {
        let name = m.name(op);
        if op == ret {
            continue;
        }
        let (domain, op_type) = match name.as_str().split_once('.') {
            Some(("onnx", t)) => ("", t),
            Some(("onnx_ml", t)) => {
                uses_ml = true;
                ("ai.onnx.ml", t)
            }
            _ => return Err(op_error(m, op, "cannot be exported to ONNX")),
        };
        match op_type {
            "NoValue" => {
                if let Some(&r) = m.results(op).first() {
                    names.of.insert(r, String::new());
                }
            }
            "Constant" => {
                let (Some(&r), Some(e)) = (
                    m.results(op).first(),
                    m.attr(op, "value").and_then(Attribute::as_elements),
                ) else {
                    return Err(op_error(m, op, "requires a dense 'value'"));
                };
                let n = names.claim(r, &loc_name(m, op));
                graph.initializer.push(elements_to_tensor(&n, e));
            }
            _ => {
                let node_name = loc_name(m, op);
                let mut node = NodeProto {
                    name: node_name.clone(),
                    op_type: op_type.to_string(),
                    domain: domain.to_string(),
                    ..NodeProto::default()
                };
                for &v in m.operands(op) {
                    let n =
                        names.of.get(&v).cloned().ok_or_else(|| {
                            op_error(m, op, "uses a value defined outside the graph")
                        })?;
                    node.input.push(n);
                }
                for (i, &r) in m.results(op).iter().enumerate() {
                    let n = match names.of.get(&r) {
                        Some(n) => n.clone(),
                        None => names.claim(r, &format!("{node_name}:{i}")),
                    };
                    node.output.push(n);
                }
                for (k, a) in m.attrs(op) {
                    node.attribute.push(attribute(m, op, k.as_str(), a)?);
                }
                graph.node.push(node);
            }
        }
    }
    // Outputs that are inputs, constants or returned twice go through Identity.
    let mut used_outputs = HashSet::new();
    for (i, &v) in m.operands(ret).iter().enumerate() {
        let wanted = output_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("output_{i}"));
        let current = names.of.get(&v).cloned().unwrap_or_default();
        let name = if current == wanted && used_outputs.insert(current.clone()) {
            current
        } else {
            let fresh = format!("{wanted}__identity");
            let out = if names.taken.contains(&wanted) {
                fresh
            } else {
                wanted
            };
            names.taken.insert(out.clone());
            used_outputs.insert(out.clone());
            graph.node.push(NodeProto {
                name: format!("{out}_identity"),
                op_type: "Identity".into(),
                input: vec![current],
                output: vec![out.clone()],
                ..NodeProto::default()
            });
            out
        };
        graph
            .output
            .push(value_info(m, ret, &name, m.value_type(v))?);
    }
    let opset = m
        .attr(m.top(), "onnx.opset")
        .and_then(Attribute::as_int)
        .unwrap_or(17);
    let ir_version = m
        .attr(m.top(), "onnx.ir_version")
        .and_then(Attribute::as_int)
        .unwrap_or(8);
    let mut opset_import = vec![OperatorSetIdProto {
        domain: String::new(),
        version: opset,
    }];
    if uses_ml {
        let ml = m
            .attr(m.top(), "onnx.ml_opset")
            .and_then(Attribute::as_int)
            .unwrap_or(3);
        opset_import.push(OperatorSetIdProto {
            domain: "ai.onnx.ml".into(),
            version: ml,
        });
    }
    Ok(ModelProto {
        ir_version,
        opset_import,
        producer_name: "onnxc".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        graph: Some(graph),
        ..ModelProto::default()
    })
}

/// Encodes an exported model.
pub fn encode(model: &ModelProto) -> Vec<u8> {
    prost::Message::encode_to_vec(model)
}
