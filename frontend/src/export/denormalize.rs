//! The inverse of import's version normalization: for opsets before an
//! attribute became an input, constant operands go back to attributes.

use crate::import::normalize::{moved_attrs, operand_since, Kind};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::NumClass;
use ir::{Module, OpId, Result, Type, ValueId};

/// (operand index, attribute name, kind) that `op_type` takes as
/// attributes at `opset`.
pub fn moved_back(op_type: &str, opset: i64) -> Vec<(usize, &'static str, Kind)> {
    if opset >= operand_since(op_type) {
        return Vec::new();
    }
    moved_attrs(op_type)
        .iter()
        .map(|&(names, index, kind)| {
            // Pad-1 called its pads "paddings".
            let name = match (op_type, names) {
                ("Pad", ["pads", ..]) if opset < 2 => "paddings",
                _ => names.first().copied().unwrap_or(""),
            };
            (index, name, kind)
        })
        .collect()
}

/// Whether operand `v` is absent (`onnx.NoValue`).
pub fn is_none(m: &Module, v: ValueId) -> bool {
    matches!(m.value_type(v), Type::None)
}

/// The attribute an operand in a moved-back slot stands for; `None` for an
/// absent operand.
pub fn operand_attr(
    m: &Module,
    op: OpId,
    v: ValueId,
    name: &str,
    kind: Kind,
    opset: i64,
) -> Result<Option<Attribute>> {
    if is_none(m, v) {
        return Ok(None);
    }
    let e = m
        .defining_op(v)
        .filter(|&d| m.is(d, "onnx.Constant"))
        .and_then(|d| m.attr(d, "value"))
        .and_then(Attribute::as_elements)
        .ok_or_else(|| {
            op_error(
                m,
                op,
                format!(
                    "cannot be written for opset {opset}: its '{name}' operand is not a constant"
                ),
            )
        })?;
    let class = e.dtype().class();
    let int = |w: ir::elements::WideNum| match class {
        NumClass::Float => w.f64() as i64,
        NumClass::Signed => w.i64(),
        NumClass::Unsigned => w.u64() as i64,
    };
    let float = |w: ir::elements::WideNum| Attribute::Float(w.to_f64(class), Type::f32());
    Ok(Some(match kind {
        Kind::Ints => Attribute::Array(e.iter().map(|w| Attribute::i64(int(w))).collect()),
        Kind::IntAsList => Attribute::i64(e.iter().next().map_or(0, int)),
        Kind::Floats => Attribute::Array(e.iter().map(float).collect()),
        Kind::ScalarLikeInput => e
            .iter()
            .next()
            .map(float)
            .ok_or_else(|| op_error(m, op, format!("'{name}' operand is empty")))?,
    }))
}
