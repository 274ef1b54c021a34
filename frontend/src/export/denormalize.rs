//! The inverse of import's version normalization: for opsets before an
//! attribute became an input, constant operands go back to attributes;
//! legacy attributes come back for the older forms [`Legacy`] names.

use crate::forms::{Form, Kind, Legacy};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::NumClass;
use ir::{Module, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

/// (operand index, attribute name, kind) that an op of `form` takes as
/// attributes at `opset`.
pub fn moved_back(kind: OpKind, form: &Form, opset: i64) -> Vec<(usize, &'static str, Kind)> {
    if opset >= form.operand_since {
        return Vec::new();
    }
    form.moved
        .iter()
        .map(|m| {
            // Pad-1 called its pads "paddings".
            let name = match (kind, m.names) {
                (OpKind::Pad, ["pads", ..]) if opset < 2 => "paddings",
                _ => m.names.first().copied().unwrap_or(""),
            };
            (m.index, name, m.kind)
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
    let e = onnx::defined_by(m, v, OpKind::Constant)
        .and_then(|d| ops::Constant::of(m, d).value())
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
    let first = || {
        e.iter()
            .next()
            .ok_or_else(|| op_error(m, op, format!("'{name}' operand is empty")))
    };
    Ok(Some(match kind {
        Kind::Ints => Attribute::Array(e.iter().map(|w| Attribute::i64(int(w))).collect()),
        Kind::IntAsList => Attribute::i64(e.iter().next().map_or(0, int)),
        Kind::Int => Attribute::i64(int(first()?)),
        Kind::Floats => Attribute::Array(e.iter().map(float).collect()),
        Kind::ScalarLikeInput => float(first()?),
    }))
}

/// What an op's attributes need in an old opset.
#[derive(Default)]
pub struct LegacyAttrs {
    /// Attributes of the normalized op the old opset does not have, or has
    /// in another form.
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
pub fn legacy_attrs(m: &Module, op: OpId, legacy: Legacy, opset: i64) -> Result<LegacyAttrs> {
    let shape_of = |i: usize| m.operand(op, i).map(|v| m.value_type(v).shape());
    if opset >= legacy.newest_from() {
        return Ok(LegacyAttrs::default());
    }
    Ok(match legacy {
        // Resize and Scan of older forms were refused at import.
        Legacy::None | Legacy::Concat | Legacy::Resize | Legacy::Scan => LegacyAttrs::default(),
        Legacy::Rows2d => rows_2d(m, op, opset)?,
        Legacy::Broadcast => with_broadcast(shape_of(0) != shape_of(1)),
        Legacy::Gemm => {
            let out = m.result(op, 0).map(|v| m.value_type(v).shape());
            with_broadcast(shape_of(2).is_some_and(|c| Some(c) != out))
        }
        Legacy::Cast => {
            let to = ops::Cast::of(m, op).to();
            let name = crate::import::tensor::onnx_type_name(i32::try_from(to).unwrap_or(0));
            LegacyAttrs {
                skip: &["to"],
                add: vec![("to", Attribute::string(&name))],
            }
        }
        // The stored integer `p` written as the float opset 1 had.
        Legacy::FloatP => match m.attr(op, "p").and_then(Attribute::as_int) {
            Some(p) => LegacyAttrs {
                skip: &["p"],
                add: vec![("p", Attribute::Float(p as f64, Type::f32()))],
            },
            None => LegacyAttrs::default(),
        },
        Legacy::BatchNorm => {
            let training = ops::BatchNormalization::of(m, op).training_mode() == 1;
            test_mode(m, op, training, opset, true)?
        }
        Legacy::Dropout => test_mode(m, op, false, opset, false)?,
    })
}

/// Softmax, LogSoftmax, Hardmax: the newest form works along `axis`
/// (default the last), the older one on the input coerced to 2-D at `axis`
/// (default 1); the same when `axis` is the last. Import leaves only such
/// ops; one that says nothing of its axis gets it written unless the older
/// default is the last (2-D input).
fn rows_2d(m: &Module, op: OpId, opset: i64) -> Result<LegacyAttrs> {
    let rank = m
        .operand(op, 0)
        .and_then(|v| m.value_type(v).shape())
        .map(<[i64]>::len);
    let last = rank.and_then(|r| r.checked_sub(1));
    match (m.attr(op, "axis").and_then(Attribute::as_int), rank, last) {
        (None, Some(2), _) => Ok(LegacyAttrs::default()),
        (None, _, Some(last)) => Ok(LegacyAttrs {
            skip: &[],
            add: vec![("axis", Attribute::i64(last as i64))],
        }),
        (Some(a), Some(r), Some(last)) if onnx::axis::normalize(a, r) == Some(last) => {
            Ok(LegacyAttrs::default())
        }
        _ => Err(op_error(
            m,
            op,
            format!(
                "cannot be written for opset {opset}: its axis is not the last of an input of known rank"
            ),
        )),
    }
}

/// BatchNormalization and Dropout: `is_test` before opset 7; BatchNorm's
/// `consumed_inputs` before 6 and no `training_mode` before 14.
fn test_mode(
    m: &Module,
    op: OpId,
    training: bool,
    opset: i64,
    batch_norm: bool,
) -> Result<LegacyAttrs> {
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
    if batch_norm && opset < 6 {
        add.push(("consumed_inputs", Attribute::Array(Vec::new().into())));
    }
    let skip: &[&str] = if batch_norm { &["training_mode"] } else { &[] };
    Ok(LegacyAttrs { skip, add })
}

/// Results whose ONNX type in `opset` differs from the IR's (normalized)
/// one: no value_info for them. Dropout's mask is a float before opset 10.
pub fn retyped(legacy: Legacy, result: usize, opset: i64) -> bool {
    legacy == Legacy::Dropout && result == 1 && opset < 10
}
