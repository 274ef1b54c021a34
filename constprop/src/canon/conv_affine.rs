//! Constant scales and shifts next to a Conv go into its weights: a
//! per-output-channel `Mul` or `Add` of a Conv's result (its only use) into
//! the weight and bias (as inference-mode BatchNormalization is), and a
//! uniform `Mul` of a Conv's input into the weight (zero padding scales to
//! zero). ConvNeXt's layer scale and GELU's `* 0.5` before a 1x1 Conv.

use super::batchnorm::{channels_of, into_conv, scale_along, split, Affine};
use super::{make_const, uniform_value};
use crate::fold::constant_operand;
use ir::rewrite::Pattern;
use ir::{Module, OpId, Result, ValueId};
use onnx::OpKind;

pub struct AffineIntoConv;

/// `Mul`/`Add` of a Conv's only result use by per-channel constants.
fn after_conv(m: &mut Module, op: OpId, kind: OpKind) -> Option<ValueId> {
    let (y, c) = split(m, op)?;
    let conv = m.defining_op(y).filter(|&d| onnx::is(m, d, OpKind::Conv))?;
    let r = m.result(op, 0)?;
    if m.uses(y).len() != 1 || m.value_type(r) != m.value_type(y) {
        return None;
    }
    let shape = m.value_type(y).shape()?.to_vec();
    let ch = usize::try_from(*shape.get(1)?).ok().filter(|&c| c > 0)?;
    let v = channels_of(&c, shape.len(), ch)?;
    let affine = match kind {
        OpKind::Mul => Affine {
            k: v,
            shift: vec![0.0; ch],
        },
        _ => Affine {
            k: vec![1.0; ch],
            shift: v,
        },
    };
    into_conv(m, conv, &affine)?;
    Some(y)
}

/// `Conv(x * s, W, B)` → `Conv(x, W * s, B)` for a uniform constant `s`.
fn before_conv(m: &mut Module, conv: OpId) -> Option<()> {
    let xs = m.operand(conv, 0)?;
    let mul = m.defining_op(xs).filter(|&d| onnx::is(m, d, OpKind::Mul))?;
    let (x, s) = split(m, mul)?;
    if m.uses(xs).len() != 1 || m.value_type(x) != m.value_type(xs) {
        return None;
    }
    let s = uniform_value(&s)?;
    let w = constant_operand(m, conv, 1)?;
    let cout = usize::try_from(*w.shape().first()?).ok()?;
    let nw = scale_along(&w, 0, &vec![s; cout])?;
    let wv = make_const(m, conv, nw)?;
    m.set_operand(conv, 0, x);
    m.set_operand(conv, 1, wv);
    Some(())
}

impl Pattern for AffineIntoConv {
    fn name(&self) -> &'static str {
        "affine-into-conv"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        match OpKind::of(m, op) {
            Some(k @ (OpKind::Mul | OpKind::Add)) => {
                let (Some(r), Some(y)) = (m.result(op, 0), after_conv(m, op, k)) else {
                    return Ok(false);
                };
                m.replace_all_uses(r, y);
                m.erase_op(op);
                Ok(true)
            }
            Some(OpKind::Conv) => Ok(before_conv(m, op).is_some()),
            _ => Ok(false),
        }
    }
}
