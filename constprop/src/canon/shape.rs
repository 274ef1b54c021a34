//! Shape arithmetic over partly dynamic shapes: a small integer value
//! whose every element is a constant by the symbolic analysis of
//! `onnx::shape_value` becomes that constant, though its operands are not
//! all constants. `Shape(x)[1:]` of an `x` whose batch alone is dynamic,
//! `Gather(Shape(x), 2)` of a static dim, `Size` of a static slice and the
//! Equal/Where over them exporters write all fold this way.

use super::make_const;
use ir::dim::DimExpr;
use ir::elements::{DType, Elements, WideNum};
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result};
use onnx::shape_value::ShapeValues;
use onnx::OpKind;

pub struct KnownShapeValue;

impl Pattern for KnownShapeValue {
    fn name(&self) -> &'static str {
        "known-shape-value"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        match OpKind::of(m, op) {
            None | Some(OpKind::Constant | OpKind::NoValue) => return Ok(false),
            Some(_) if m.results(op).len() != 1 || !m.is_pure(op) => return Ok(false),
            Some(_) => {}
        }
        let Some(r) = m.result(op, 0) else {
            return Ok(false);
        };
        // The result's own type says its rank and length (0-D or 1-D).
        let ty = m.value_type(r);
        let (Some(shape), Some(dtype)) = (
            ty.shape().map(<[i64]>::to_vec),
            DType::from_type(ty.element_type()),
        ) else {
            return Ok(false);
        };
        if shape.len() > 1 || shape.iter().any(|&d| d < 0) {
            return Ok(false);
        }
        let Some(values) = ShapeValues::new().constants(m, r) else {
            return Ok(false);
        };
        let n: i64 = shape.iter().product();
        if i64::try_from(values.len()).ok() != Some(n) {
            return Ok(false);
        }
        if !values.iter().all(|&v| fits(dtype, v)) {
            return Ok(false);
        }
        let wide: Vec<WideNum> = values.iter().map(|&v| WideNum::from_i64(v)).collect();
        let Ok(e) = Elements::from_wide(dtype, shape, &wide) else {
            return Ok(false);
        };
        let Some(c) = make_const(m, op, e) else {
            return Ok(false);
        };
        m.replace_op(op, &[c]);
        Ok(true)
    }
}

/// Whether `v` is a value of the integer type `t` (the analysis passes
/// integer Casts through, which would wrap a value out of range).
fn fits(t: DType, v: i64) -> bool {
    let (lo, hi): (i64, i64) = match t {
        DType::Bool => (0, 1),
        DType::I8 => (i8::MIN.into(), i8::MAX.into()),
        DType::U8 => (0, u8::MAX.into()),
        DType::I16 => (i16::MIN.into(), i16::MAX.into()),
        DType::U16 => (0, u16::MAX.into()),
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::U32 => (0, u32::MAX.into()),
        DType::I64 => (i64::MIN, i64::MAX),
        DType::U64 => (0, i64::MAX),
        _ => return false,
    };
    (lo..=hi).contains(&v)
}

/// The target of a Reshape or Expand computed at run time from sizes that
/// are known symbolically becomes a constant where every dynamic entry is
/// one the op can take from its input: Reshape's `0` copies the input dim
/// at that index (allowzero = 0), one `-1` infers the rest; Expand's `1`
/// keeps the input dim it is aligned with. `Reshape(x, [N, S, 2, 32])` of
/// `x: [N, S, 64]` is `Reshape(x, [0, 0, 2, 32])`, and the Shape → Gather
/// → Unsqueeze → Concat chain that built the target goes.
pub struct ConstantTarget;

impl Pattern for ConstantTarget {
    fn name(&self) -> &'static str {
        "constant-target"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let kind = OpKind::of(m, op);
        if !matches!(kind, Some(OpKind::Reshape | OpKind::Expand))
            || crate::fold::constant_operand(m, op, 1).is_some()
        {
            return Ok(false);
        }
        let (Some(x), Some(s)) = (m.operand(op, 0), m.operand(op, 1)) else {
            return Ok(false);
        };
        let Some(target) = ShapeValues::new().get(m, s) else {
            return Ok(false);
        };
        let Some(target) = target.into_iter().collect::<Option<Vec<DimExpr>>>() else {
            return Ok(false);
        };
        let input = m.value_type(x).as_tensor().and_then(|t| t.sym_dims());
        let Some(input) = input else {
            return Ok(false);
        };
        let entries = if kind == Some(OpKind::Reshape) {
            let allow_zero = onnx::ops::Reshape::of(m, op).allowzero() != 0;
            reshape_entries(&target, &input, allow_zero)
        } else {
            expand_entries(&target, &input)
        };
        let Some(entries) = entries else {
            return Ok(false);
        };
        let wide: Vec<WideNum> = entries.iter().map(|&v| WideNum::from_i64(v)).collect();
        let Ok(e) = Elements::from_wide(DType::I64, vec![wide.len() as i64], &wide) else {
            return Ok(false);
        };
        let Some(c) = make_const(m, op, e) else {
            return Ok(false);
        };
        m.set_operand(op, 1, c);
        Ok(true)
    }
}

/// Reshape's constant target, if every symbolic entry can be a `0` (the
/// input dim at its index, allowzero = 0) or the one `-1`.
fn reshape_entries(
    target: &[DimExpr],
    input: &[Option<DimExpr>],
    allow_zero: bool,
) -> Option<Vec<i64>> {
    let mut infer_used = target.iter().any(|e| e.as_const() == Some(-1));
    let mut out = Vec::with_capacity(target.len());
    for (i, e) in target.iter().enumerate() {
        if let Some(c) = e.as_const() {
            out.push(c);
        } else if !allow_zero && input.get(i).is_some_and(|d| d.as_ref() == Some(e)) {
            out.push(0);
        } else if !infer_used {
            infer_used = true;
            out.push(-1);
        } else {
            return None;
        }
    }
    Some(out)
}

/// Expand's constant target, if every symbolic entry is the input dim it
/// is aligned with (right-aligned broadcasting), written `1`.
fn expand_entries(target: &[DimExpr], input: &[Option<DimExpr>]) -> Option<Vec<i64>> {
    let lead = target.len().checked_sub(input.len())?;
    target
        .iter()
        .enumerate()
        .map(|(i, e)| match e.as_const() {
            Some(c) => Some(c),
            None => {
                let d = input.get(i.checked_sub(lead)?)?.as_ref()?;
                (d == e).then_some(1)
            }
        })
        .collect()
}
