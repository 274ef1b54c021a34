//! Version normalization: operands that older opsets gave as attributes
//! become constant operands (the table is [`crate::forms`]), so every op
//! has one form whatever the opset.

use super::{node_diag, small_elements, Importer};
use crate::forms::{Form, Kind, Moved};
use crate::proto::NodeProto;
use ir::elements::{DType, Elements, WideNum};
use ir::{Attribute, Diagnostic, Location, ValueId};

impl Importer<'_> {
    /// Moves the attributes `form` lists into their operands; an older
    /// form without one gets the operand its default stands for.
    pub(super) fn normalize(
        &mut self,
        node: &NodeProto,
        form: &Form,
        version: i64,
        attrs: &mut Vec<(String, Attribute)>,
        operands: &mut Vec<ValueId>,
        loc: &Location,
    ) -> Result<(), Diagnostic> {
        for moved in form.moved {
            let names = moved.names;
            let elements = match attrs.iter().position(|(k, _)| names.contains(&k.as_str())) {
                Some(pos) => {
                    let (name, value) = attrs.remove(pos);
                    self.attr_operand(moved, &name, &value, operands)
                        .map_err(|msg| node_diag(node, msg))?
                }
                None => match moved.absent {
                    Some(v) if version < form.operand_since => {
                        int_elements(&[v], vec![]).map_err(|d| node_diag(node, d.message))?
                    }
                    _ => continue,
                },
            };
            let name = names.first().copied().unwrap_or("");
            let c_loc = match loc {
                Location::Name(n) => Location::name(&format!("{n}.{name}")),
                other => other.clone(),
            };
            let c = self.constant_value(elements, c_loc)?;
            while operands.len() < moved.index {
                let none = self.no_value()?;
                operands.push(none);
            }
            match operands.get_mut(moved.index) {
                Some(slot) => *slot = c,
                None => operands.push(c),
            }
        }
        Ok(())
    }

    /// The constant an attribute moved to an operand holds.
    fn attr_operand(
        &self,
        moved: &Moved,
        name: &str,
        value: &Attribute,
        operands: &[ValueId],
    ) -> Result<Elements, String> {
        let bad = || format!("attribute '{name}' has the wrong kind");
        let made = match moved.kind {
            Kind::Ints => {
                let v = value.as_i64_list().ok_or_else(bad)?;
                int_elements(&v, vec![v.len() as i64])
            }
            Kind::IntAsList => int_elements(&[value.as_int().ok_or_else(bad)?], vec![1]),
            Kind::Int => int_elements(&[value.as_int().ok_or_else(bad)?], vec![]),
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
        };
        made.map_err(|d| format!("attribute '{name}': {}", d.message))
    }
}

/// `i64` values of `shape`.
fn int_elements(v: &[i64], shape: Vec<i64>) -> Result<Elements, Diagnostic> {
    let w: Vec<WideNum> = v.iter().map(|&x| WideNum::from_i64(x)).collect();
    Elements::from_wide(DType::I64, shape, &w).map_err(|e| Diagnostic::error(e.to_string()))
}
