//! What onnxc does not know, carried through a fold verbatim: nodes of
//! other domains or of unknown operators become `onnx.Foreign` holding the
//! encoded `NodeProto`; values of types it cannot import (string tensors,
//! sequences, maps) get `!onnx.foreign<HEX>`, the encoded `TypeProto`
//! (`!onnx.foreign` when none was declared). Only
//! `ImportOptions::keep_foreign` imports them; export writes them back.

use crate::proto::{GraphProto, NodeProto, TypeProto};
use ir::elements::{pool, DType, Elements};
use ir::Type;
use prost::Message;
use std::collections::HashMap;
use std::sync::Arc;

const TYPE_NAME: &str = "onnx.foreign";

/// The type of a value whose ONNX type `tp` onnxc cannot import.
pub fn type_of(tp: Option<&TypeProto>) -> Type {
    match tp {
        Some(tp) => Type::Opaque(Arc::from(format!(
            "{TYPE_NAME}<{}>",
            to_hex(&tp.encode_to_vec())
        ))),
        None => Type::Opaque(Arc::from(TYPE_NAME)),
    }
}

/// Whether `t` stands for a type onnxc does not know.
pub fn is_foreign(t: &Type) -> bool {
    declared(t).is_some()
}

/// The ONNX type a foreign type stands for: `Some(None)` when none was
/// declared, `None` when `t` is not foreign.
pub fn declared(t: &Type) -> Option<Option<TypeProto>> {
    let Type::Opaque(body) = t else {
        return None;
    };
    let rest = body.strip_prefix(TYPE_NAME)?;
    if rest.is_empty() {
        return Some(None);
    }
    let hex = rest.strip_prefix('<')?.strip_suffix('>')?;
    let bytes = from_hex(hex)?;
    TypeProto::decode(bytes.as_slice()).ok().map(Some)
}

/// The node as `onnx.Foreign` keeps it: everything but its inputs,
/// outputs and name, which the IR holds.
pub fn node_payload(node: &NodeProto) -> Result<Elements, ir::elements::ElementsError> {
    let kept = NodeProto {
        input: Vec::new(),
        output: Vec::new(),
        name: String::new(),
        ..node.clone()
    };
    let bytes = kept.encode_to_vec();
    let len = bytes.len() as i64;
    Elements::from_bytes(DType::U8, vec![len], pool::heap(bytes))
}

/// The node a payload holds.
pub fn node_of_payload(e: &Elements) -> Option<NodeProto> {
    NodeProto::decode(e.contiguous_bytes()?).ok()
}

/// Outer names the node's subgraphs use, in first-use order.
pub fn captures(node: &NodeProto) -> Vec<String> {
    let mut out = Vec::new();
    for a in &node.attribute {
        for g in a.g.iter().chain(&a.graphs) {
            crate::import::order::free_names(g, &mut out);
        }
    }
    out
}

/// Renames the outer values the node's subgraphs use (`old → new`).
pub fn rename_captures(node: &mut NodeProto, renames: &HashMap<String, String>) {
    for a in &mut node.attribute {
        for g in a.g.iter_mut().chain(a.graphs.iter_mut()) {
            rename_in_graph(g, renames);
        }
    }
}

fn rename_in_graph(g: &mut GraphProto, renames: &HashMap<String, String>) {
    // A name the subgraph defines itself shadows the outer one.
    let local: std::collections::HashSet<String> = g
        .input
        .iter()
        .map(|v| v.name.clone())
        .chain(g.initializer.iter().map(|t| t.name.clone()))
        .chain(g.node.iter().flat_map(|n| n.output.iter().cloned()))
        .collect();
    let renames: HashMap<String, String> = renames
        .iter()
        .filter(|(old, _)| !local.contains(*old))
        .map(|(o, n)| (o.clone(), n.clone()))
        .collect();
    for node in &mut g.node {
        for input in &mut node.input {
            if let Some(new) = renames.get(input.as_str()) {
                input.clone_from(new);
            }
        }
        rename_captures(node, &renames);
    }
    for out in &mut g.output {
        if let Some(new) = renames.get(out.name.as_str()) {
            out.name.clone_from(new);
        }
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| char::from(c).to_digit(16);
    s.as_bytes()
        .chunks(2)
        .map(|p| match p {
            [h, l] => Some((digit(*h)? * 16 + digit(*l)?) as u8),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::type_proto;

    #[test]
    fn foreign_types_round_trip_through_their_name() {
        let tp = TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: 8, // STRING
                shape: None,
            })),
            denotation: String::new(),
        };
        let t = type_of(Some(&tp));
        assert_eq!(declared(&t), Some(Some(tp)));
        assert_eq!(declared(&type_of(None)), Some(None));
        assert_eq!(declared(&Type::f32()), None);
        assert_eq!(declared(&Type::Opaque(Arc::from("onnx.foreign<0g>"))), None);
    }
}
