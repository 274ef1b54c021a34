//! Canonicalizations that make folding happen: Shape/Size of static shapes,
//! BatchNormalization folded into a preceding Conv/Gemm/MatMul or turned
//! into a per-channel scale and shift, neutral-constant removal (x+0, x*1,
//! x-0, x/1), constants to the right of Add/Mul and reassociation of
//! constant Add/Sub and Mul/Div chains on both sides (`reassociate`).

mod affine_bn;
mod batchnorm;
mod chains;
mod conv_affine;
mod gemm;
mod nop;
mod qdq;
mod reassociate;
mod repeats;
mod rnn;
mod shape;
mod shrink;
pub use affine_bn::{pass_info as affine_bn_pass, AffineAsBatchNorm};
pub use batchnorm::FoldBatchNorm;
pub use chains::FuseChains;
pub use conv_affine::AffineIntoConv;
pub use gemm::MatMulAddToGemm;
pub use nop::{known_dims, same_shape, ForwardNop};
pub use qdq::{pass_info as fuse_qdq_pass, FuseQdq};
pub use reassociate::{ConstantsRight, Reassociate};
pub use repeats::{pass_info as expand_repeats_pass, ExpandRepeats};
pub use rnn::{is_zero, ZeroRecurrentInputs};
pub use shape::{ConstantTarget, KnownShapeValue};
pub use shrink::ShrinkBroadcastOperands;

use crate::fold::constant_operand;
use ir::attr::Attribute;
use ir::elements::{DType, Elements, WideNum};
use ir::rewrite::Pattern;
use ir::{InsertPoint, Module, OpId, OpSpec, Result, Sym, Type, ValueId};
use onnx::{ops, OpKind};

/// Inserts `onnx.Constant` holding `e` before `before`.
pub fn make_const(m: &mut Module, before: OpId, e: Elements) -> Option<ValueId> {
    let loc = m.loc(before).clone();
    let c = m.create_op(
        Sym::new(OpKind::Constant.ir_name()),
        OpSpec {
            result_types: vec![e.tensor_type()],
            attrs: vec![(Sym::new("value"), Attribute::Elements(e))],
            loc,
            ..OpSpec::default()
        },
    );
    m.insert(c, InsertPoint::Before(before));
    m.result(c, 0)
}

/// Inserts an int64 `onnx.Constant` of `shape` holding `values` before
/// `before`.
pub fn make_i64s(m: &mut Module, before: OpId, shape: Vec<i64>, values: &[i64]) -> Option<ValueId> {
    let wide: Vec<WideNum> = values.iter().map(|&v| WideNum::from_i64(v)).collect();
    let e = Elements::from_wide(DType::I64, shape, &wide).ok()?;
    make_const(m, before, e)
}

/// Inserts a one-result op (a typed builder's, `ops::Add::build(a, b)`)
/// before `before`; `suffix` keeps the ONNX node names of ops made from
/// one op distinct.
pub(crate) fn make_op(
    m: &mut Module,
    before: OpId,
    new: impl Into<onnx::NewOp>,
    ty: Type,
    suffix: &str,
) -> Option<ValueId> {
    let loc = match m.loc(before) {
        ir::Location::Name(n) if !suffix.is_empty() => ir::Location::name(&format!("{n}/{suffix}")),
        l => l.clone(),
    };
    let o = new
        .into()
        .insert(m, InsertPoint::Before(before), vec![ty], loc);
    m.result(o, 0)
}

/// `Shape`/`Size` of a value whose type has a static shape.
pub struct StaticShape;

impl Pattern for StaticShape {
    fn name(&self) -> &'static str {
        "static-shape"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let is_size = match OpKind::of(m, op) {
            Some(OpKind::Size) => true,
            Some(OpKind::Shape) => false,
            _ => return Ok(false),
        };
        let Some(x) = m.operand(op, 0) else {
            return Ok(false);
        };
        let Some(shape) = m.value_type(x).shape().map(<[i64]>::to_vec) else {
            return Ok(false);
        };
        if shape.iter().any(|&d| d < 0) {
            return Ok(false);
        }
        let e = if is_size {
            let n: i64 = shape.iter().product();
            Elements::from_wide(DType::I64, vec![], &[WideNum::from_i64(n)])
        } else {
            let r = shape.len() as i64;
            let v = ops::Shape::of(m, op);
            let s = onnx::axis::clamp_index(v.start(), r) as usize;
            let t = onnx::axis::clamp_index(v.end().unwrap_or(r), r) as usize;
            let dims: Vec<WideNum> = shape[s..t.max(s)]
                .iter()
                .map(|&d| WideNum::from_i64(d))
                .collect();
            Elements::from_wide(DType::I64, vec![dims.len() as i64], &dims)
        };
        let Ok(e) = e else { return Ok(false) };
        let Some(c) = make_const(m, op, e) else {
            return Ok(false);
        };
        m.replace_op(op, &[c]);
        Ok(true)
    }
}

/// Constants up to this many elements are scanned for one repeated value
/// (exporters store all-ones scales and all-zeros biases densely).
const MAX_SCANNED: usize = 1 << 16;

/// The value every element of `e` has, if they all have one.
pub fn uniform_value(e: &Elements) -> Option<f64> {
    let class = e.dtype().class();
    let first = e.get(0)?.to_f64(class);
    if e.is_splat() {
        return Some(first);
    }
    if e.len() > MAX_SCANNED {
        return None;
    }
    e.iter().all(|w| w.to_f64(class) == first).then_some(first)
}

/// x+0, 0+x, x-0, x*1, 1*x, x/1, x^1, x and true, x or false forward x
/// when the (ranked) types agree.
pub struct NeutralOperand;

impl Pattern for NeutralOperand {
    fn name(&self) -> &'static str {
        "neutral-operand"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let (neutral, commutes) = match OpKind::of(m, op) {
            Some(OpKind::Add | OpKind::Or) => (0.0, true),
            Some(OpKind::Sub) => (0.0, false),
            Some(OpKind::Mul | OpKind::And) => (1.0, true),
            Some(OpKind::Div | OpKind::Pow) => (1.0, false),
            _ => return Ok(false),
        };
        let Some(r) = m.result(op, 0) else {
            return Ok(false);
        };
        let sides: &[(usize, usize)] = if commutes {
            &[(1, 0), (0, 1)]
        } else {
            &[(1, 0)]
        };
        for &(c, other) in sides {
            let Some(e) = constant_operand(m, op, c) else {
                continue;
            };
            if uniform_value(&e) != Some(neutral) {
                continue;
            }
            let Some(x) = m.operand(op, other) else {
                continue;
            };
            // Equal unranked types say nothing: the constant may broadcast
            // x to a larger shape.
            let ranked = m.value_type(x).shape().is_some();
            if ranked && m.value_type(x) == m.value_type(r) {
                m.replace_all_uses(r, x);
                m.erase_op(op);
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `If` with a constant condition: the taken branch's ops move before it
/// and its yielded values replace the results.
pub struct ConstantIf;

impl Pattern for ConstantIf {
    fn name(&self) -> &'static str {
        "constant-if"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !onnx::is(m, op, OpKind::If) {
            return Ok(false);
        }
        let Some(cond) = constant_operand(m, op, 0).and_then(|e| e.get(0)) else {
            return Ok(false);
        };
        let branch = usize::from(cond.u64() == 0);
        let Some(block) = m.region(op, branch).and_then(|r| m.entry_block(r)) else {
            return Ok(false);
        };
        if !m.block_args(block).is_empty() {
            return Ok(false);
        }
        let ops: Vec<OpId> = m.block_ops(block).collect();
        let Some((&yield_op, body)) = ops.split_last() else {
            return Ok(false);
        };
        if !onnx::is(m, yield_op, OpKind::Yield)
            || m.operands(yield_op).len() != m.results(op).len()
        {
            return Ok(false);
        }
        let values = m.operands(yield_op).to_vec();
        for &o in body {
            m.move_to(o, InsertPoint::Before(op));
        }
        m.replace_op(op, &values);
        Ok(true)
    }
}
