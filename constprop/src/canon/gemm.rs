//! `MatMul(a, W) + c` with constant `W` and a bias `c` Gemm can broadcast
//! becomes one `Gemm(a, W, c)`. A 2-D `a` always; an `a` of higher rank
//! with static dims when the sum only feeds Reshapes and `a` feeds other
//! projections: then `a` is viewed as `[M, K]` (one view for all of them,
//! by CSE: Q, K and V of one hidden state) and the Gemm's result reshaped
//! back, a Reshape that merges into the consumer's.

use super::make_op;
use crate::fold::constant_operand;
use ir::elements::{DType, NumClass};
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, Type, ValueId};
use onnx::OpKind;

pub struct MatMulAddToGemm;

fn i64s(m: &mut Module, before: OpId, v: &[i64]) -> Option<ValueId> {
    super::make_i64s(m, before, vec![v.len() as i64], v)
}

/// Whether a bias of `shape` broadcasts to Gemm's `[M, n]` along rows.
fn row_bias(shape: &[i64], n: i64) -> bool {
    matches!(shape, [] | [1] | [1, 1]) || shape == [n] || shape == [1, n]
}

fn fuse(m: &mut Module, add: OpId) -> Option<ValueId> {
    let (y, ci) = match (constant_operand(m, add, 0), constant_operand(m, add, 1)) {
        (None, Some(_)) => (m.operand(add, 0)?, 1),
        (Some(_), None) => (m.operand(add, 1)?, 0),
        _ => return None,
    };
    let mm = m
        .defining_op(y)
        .filter(|&d| onnx::is(m, d, OpKind::MatMul))?;
    let (a, w, c) = (m.operand(mm, 0)?, m.operand(mm, 1)?, m.operand(add, ci)?);
    let we = constant_operand(m, mm, 1)?;
    let r = m.result(add, 0)?;
    let (&[k, n], Some(dt)) = (we.shape(), DType::from_type(m.value_type(r).element_type())) else {
        return None;
    };
    let a_shape = m.value_type(a).shape()?.to_vec();
    let y_shape = m.value_type(y).shape()?.to_vec();
    let bias = constant_operand(m, add, ci)?;
    if m.uses(y).len() != 1
        || dt.class() != NumClass::Float
        || !row_bias(bias.shape(), n)
        || m.value_type(r) != m.value_type(y)
        || a_shape.last() != Some(&k)
    {
        return None;
    }
    let elem = m.value_type(r).element_type().clone();
    match a_shape.len() {
        2 => make_op(
            m,
            add,
            onnx::ops::Gemm::build(a, w, Some(c)),
            m.value_type(r).clone(),
            "",
        ),
        rank if rank > 2 => {
            let static_dims = a_shape.iter().chain(&y_shape).all(|&d| d >= 0);
            let into_reshapes = m
                .users(r)
                .iter()
                .all(|&u| onnx::is(m, u, OpKind::Reshape) && m.operand(u, 0) == Some(r));
            // The rows view only pays when sibling projections share it.
            let projections = m
                .users(a)
                .iter()
                .filter(|&&u| onnx::is(m, u, OpKind::MatMul) && constant_operand(m, u, 1).is_some())
                .count();
            if !static_dims || !into_reshapes || projections < 2 {
                return None;
            }
            let rows: i64 = a_shape[..rank - 1].iter().product();
            let flat = i64s(m, add, &[rows, k])?;
            let a2 = make_op(
                m,
                add,
                onnx::ops::Reshape::build(a, flat),
                Type::tensor(vec![rows, k], elem.clone()),
                "rows",
            )?;
            let g = make_op(
                m,
                add,
                onnx::ops::Gemm::build(a2, w, Some(c)),
                Type::tensor(vec![rows, n], elem),
                "gemm",
            )?;
            let back = i64s(m, add, &y_shape)?;
            make_op(
                m,
                add,
                onnx::ops::Reshape::build(g, back),
                m.value_type(r).clone(),
                "",
            )
        }
        _ => None,
    }
}

impl Pattern for MatMulAddToGemm {
    fn name(&self) -> &'static str {
        "matmul-add-to-gemm"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !onnx::is(m, op, OpKind::Add) {
            return Ok(false);
        }
        let (Some(r), Some(v)) = (m.result(op, 0), fuse(m, op)) else {
            return Ok(false);
        };
        m.replace_all_uses(r, v);
        m.erase_op(op);
        Ok(true)
    }
}
