//! The inverse of import's version normalization: for opsets before an
//! attribute became an input, constant operands go back to attributes.

use crate::import::legacy::LEGACY_BROADCAST;
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

/// What an op's attributes need in an old opset.
#[derive(Default)]
pub struct LegacyAttrs {
    /// Attributes of the normalized op the old opset does not have.
    pub skip: &'static [&'static str],
    /// Attributes the old opset needs that the normalized op lacks.
    pub add: Vec<(&'static str, Attribute)>,
}

fn with_broadcast(differ: bool) -> LegacyAttrs {
    LegacyAttrs {
        skip: &[],
        add: differ
            .then(|| ("broadcast", Attribute::i64(1)))
            .into_iter()
            .collect(),
    }
}

/// Attributes that an op takes in an old opset (the inverse of import's
/// legacy step, import/legacy.rs).
pub fn legacy_attrs(m: &Module, op: OpId, op_type: &str, opset: i64) -> Result<LegacyAttrs> {
    let shape_of = |i: usize| m.operand(op, i).map(|v| m.value_type(v).shape());
    match op_type {
        "BatchNormalization" | "Dropout" => {}
        _ if opset < 7 && LEGACY_BROADCAST.contains(&op_type) => {
            let differ = shape_of(0) != shape_of(1);
            return Ok(with_broadcast(differ));
        }
        "Gemm" if opset < 7 => {
            let out = m.result(op, 0).map(|v| m.value_type(v).shape());
            let differ = shape_of(2).is_some_and(|c| Some(c) != out);
            return Ok(with_broadcast(differ));
        }
        "Cast" if opset < 6 => {
            let to = m.attr(op, "to").and_then(Attribute::as_int).unwrap_or(0);
            let name = crate::import::tensor::onnx_type_name(i32::try_from(to).unwrap_or(0));
            return Ok(LegacyAttrs {
                skip: &["to"],
                add: vec![("to", Attribute::string(&name))],
            });
        }
        _ => return Ok(LegacyAttrs::default()),
    }
    let training = m.attr(op, "training_mode").and_then(Attribute::as_int) == Some(1);
    let mut add = Vec::new();
    if opset < 7 {
        if training {
            return Err(op_error(
                m,
                op,
                format!("training mode cannot be written for opset {opset}"),
            ));
        }
        add.push(("is_test", Attribute::i64(1)));
    }
    if op_type == "BatchNormalization" && opset < 6 {
        add.push(("consumed_inputs", Attribute::Array(Vec::new().into())));
    }
    let skip: &[&str] = if op_type == "BatchNormalization" && opset < 14 {
        &["training_mode"]
    } else {
        &[]
    };
    Ok(LegacyAttrs { skip, add })
}

/// Results whose ONNX type in `opset` differs from the IR's (normalized)
/// one: no value_info for them. Dropout's mask is a float before opset 10.
pub fn retyped(op_type: &str, result: usize, opset: i64) -> bool {
    const OLD_TYPES: &[(&str, usize, i64)] = &[("Dropout", 1, 10)];
    OLD_TYPES
        .iter()
        .any(|&(t, r, since)| t == op_type && r == result && opset < since)
}
