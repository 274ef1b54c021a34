//! For exported models (`onnxc fold`): a per-channel `x * k + s`, what an
//! inference BatchNormalization with no producer to fuse into becomes, is
//! written back as one BatchNormalization (mean 0, variance 1, epsilon 0,
//! so exact): one node for two. Compiles keep the Mul and Add, which fuse
//! with their neighbours.

use super::batchnorm::{channel_elements, channels_of, split};
use super::{make_const, make_op};
use ir::elements::DType;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::rewrite::{apply_greedily, GreedyConfig, Pattern};
use ir::{Module, OpId, Result, ValueId};
use onnx::OpKind;

pub struct AffineAsBatchNorm;

/// `Add(Mul(x, k), s)` over a float `x` of rank >= 2 with `k`, `s`
/// constant per channel (dim 1) and the result shaped as `x`.
struct ChannelAffine {
    x: ValueId,
    k: Vec<f64>,
    s: Vec<f64>,
    dtype: DType,
}

fn affine_parts(m: &Module, add: OpId) -> Option<ChannelAffine> {
    let (scaled, shift) = split(m, add)?;
    let mul = m
        .defining_op(scaled)
        .filter(|&d| onnx::is(m, d, OpKind::Mul))?;
    let (x, k) = split(m, mul)?;
    let ty = m.value_type(m.result(add, 0)?);
    if m.uses(scaled).len() != 1 || ty != m.value_type(x) {
        return None;
    }
    let dtype = DType::from_type(ty.element_type())
        .filter(|d| matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64))?;
    let shape = ty.shape()?;
    let ch = usize::try_from(*shape.get(1)?).ok().filter(|&c| c > 0)?;
    let k = channels_of(&k, shape.len(), ch)?;
    let s = channels_of(&shift, shape.len(), ch)?;
    Some(ChannelAffine { x, k, s, dtype })
}

impl Pattern for AffineAsBatchNorm {
    fn name(&self) -> &'static str {
        "affine-as-batchnorm"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if !onnx::is(m, op, OpKind::Add) {
            return Ok(false);
        }
        let (Some(a), Some(y)) = (affine_parts(m, op), m.result(op, 0)) else {
            return Ok(false);
        };
        let ch = a.k.len();
        let consts: Option<Vec<ValueId>> = [a.k, a.s, vec![0.0; ch], vec![1.0; ch]]
            .iter()
            .map(|v| make_const(m, op, channel_elements(a.dtype, v, vec![ch as i64])?))
            .collect();
        let Some(consts) = consts else {
            return Ok(false);
        };
        let [scale, bias, mean, var] = consts[..] else {
            return Ok(false);
        };
        let ty = m.value_type(y).clone();
        let new = onnx::ops::BatchNormalization::build(a.x, scale, bias, mean, var).epsilon(0.0);
        let Some(bn) = make_op(m, op, new, ty, "") else {
            return Ok(false);
        };
        m.replace_all_uses(y, bn);
        m.erase_op(op);
        Ok(true)
    }
}

/// The pass `onnxc fold` runs after constant propagation.
struct AffineAsBatchNormPass;

impl Pass for AffineAsBatchNormPass {
    fn name(&self) -> &'static str {
        "affine-as-batchnorm"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let top = m.top();
        let report = apply_greedily(m, top, &[&AffineAsBatchNorm], &GreedyConfig::default())?;
        cx.bump("affine-as-batchnorm.rewrites", report.rewrites as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "affine-as-batchnorm",
        summary: "a per-channel Mul then Add as one BatchNormalization (exported models)",
        create: |_| Ok(Box::new(AffineAsBatchNormPass)),
    }
}
