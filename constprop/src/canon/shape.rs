//! Shape arithmetic over partly dynamic shapes: a small integer value
//! whose every element is a constant by the symbolic analysis of
//! `onnx::shape_value` becomes that constant, though its operands are not
//! all constants. `Shape(x)[1:]` of an `x` whose batch alone is dynamic,
//! `Gather(Shape(x), 2)` of a static dim, `Size` of a static slice and the
//! Equal/Where over them exporters write all fold this way.

use super::make_const;
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
