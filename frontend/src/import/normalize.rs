//! Version normalization: operands that older opsets gave as attributes
//! become constant operands, so every op has one form whatever the opset.

use super::{node_diag, small_elements, Importer};
use crate::proto::NodeProto;
use ir::elements::DType;
use ir::{Attribute, Diagnostic, Location, ValueId};

/// How an attribute turns into an operand.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Kind {
    /// 1-D `i64` from an INTS attribute.
    Ints,
    /// 1-D `i64` holding one INT attribute (TopK `k`).
    IntAsList,
    /// 1-D `f32` from a FLOATS attribute.
    Floats,
    /// Scalar of operand 0's element type from a FLOAT attribute.
    ScalarLikeInput,
}

/// (attribute names, operand index, kind) moved per op type. Export moves
/// them back for opsets before [`operand_since`].
pub fn moved_attrs(op_type: &str) -> &'static [(&'static [&'static str], usize, Kind)] {
    match op_type {
        "Squeeze" | "Unsqueeze" | "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin"
        | "ReduceProd" | "ReduceL1" | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp"
        | "ReduceSumSquare" => &[(&["axes"], 1, Kind::Ints)],
        "Split" => &[(&["split"], 1, Kind::Ints)],
        "Clip" => &[
            (&["min"], 1, Kind::ScalarLikeInput),
            (&["max"], 2, Kind::ScalarLikeInput),
        ],
        "Pad" => &[
            (&["pads", "paddings"], 1, Kind::Ints),
            (&["value"], 2, Kind::ScalarLikeInput),
        ],
        "Slice" => &[
            (&["starts"], 1, Kind::Ints),
            (&["ends"], 2, Kind::Ints),
            (&["axes"], 3, Kind::Ints),
        ],
        "Upsample" | "Resize" => &[(&["scales"], 1, Kind::Floats)],
        "TopK" => &[(&["k"], 1, Kind::IntAsList)],
        "Dropout" => &[(&["ratio"], 1, Kind::ScalarLikeInput)],
        "Reshape" => &[(&["shape"], 1, Kind::Ints)],
        _ => &[],
    }
}

/// The opset from which the moved attributes of `op_type` are operands.
pub fn operand_since(op_type: &str) -> i64 {
    match op_type {
        "Squeeze" | "Unsqueeze" | "ReduceSum" | "Split" => 13,
        "Dropout" => 12,
        "Reshape" => 5,
        "Clip" | "Pad" => 11,
        "Slice" | "TopK" => 10,
        "Upsample" => 9,
        "Resize" => 1,
        _ if op_type.starts_with("Reduce") => 18,
        _ => 1,
    }
}

impl Importer<'_> {
    pub(super) fn normalize(
        &mut self,
        node: &NodeProto,
        attrs: &mut Vec<(String, Attribute)>,
        operands: &mut Vec<ValueId>,
        loc: &Location,
    ) -> Result<(), Diagnostic> {
        for &(names, index, kind) in moved_attrs(&node.op_type) {
            let Some(pos) = attrs.iter().position(|(k, _)| names.contains(&k.as_str())) else {
                continue;
            };
            let (name, value) = attrs.remove(pos);
            let bad = || node_diag(node, format!("attribute '{name}' has the wrong kind"));
            let elements = match kind {
                Kind::Ints => {
                    let v = value.as_i64_list().ok_or_else(bad)?;
                    ints_elements(&v)
                }
                Kind::IntAsList => {
                    let v = value.as_int().ok_or_else(bad)?;
                    ints_elements(&[v])
                }
                Kind::Floats => {
                    let list = value.as_array().ok_or_else(bad)?;
                    let f: Vec<f64> = list.iter().filter_map(Attribute::as_float).collect();
                    small_elements(DType::F32, vec![f.len() as i64], &f)
                }
                Kind::ScalarLikeInput => {
                    let v = value.as_float().ok_or_else(bad)?;
                    let dtype = operands
                        .first()
                        .and_then(|&x| DType::from_type(self.m.value_type(x).element_type()))
                        .unwrap_or(DType::F32);
                    small_elements(dtype, vec![], &[v])
                }
            }
            .map_err(|d| node_diag(node, format!("attribute '{name}': {}", d.message)))?;
            let c_loc = match loc {
                Location::Name(n) => Location::name(&format!("{n}.{name}")),
                other => other.clone(),
            };
            let c = self.constant_value(elements, c_loc)?;
            while operands.len() < index {
                let none = self.no_value()?;
                operands.push(none);
            }
            match operands.get_mut(index) {
                Some(slot) => *slot = c,
                None => operands.push(c),
            }
        }
        Ok(())
    }
}

fn ints_elements(v: &[i64]) -> Result<ir::elements::Elements, Diagnostic> {
    let w: Vec<ir::elements::WideNum> = v
        .iter()
        .map(|&x| ir::elements::WideNum::from_i64(x))
        .collect();
    ir::elements::Elements::from_wide(DType::I64, vec![v.len() as i64], &w)
        .map_err(|e| Diagnostic::error(e.to_string()))
}
