//! Activations a producing kernel (GEMM, convolution) applies to its
//! results as it stores them, instead of a separate pass over memory.
//!
//! `Act::apply` is the one definition of each of these activations: the
//! element-wise kernels of the same ops call it too. It builds with the
//! type-generic builder helpers, so it works on scalars and on vectors.

use crate::convert::Lowering;
use ir::builder::CmpF;
use ir::{Builder, Module, OpId, ValueId};
use onnx::{ops, OpKind};

/// An element-wise activation with its attributes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Act {
    None,
    Relu,
    /// `min(max(x, lo), hi)`.
    Clip(f64, f64),
    LeakyRelu(f64),
    /// `clamp(alpha · x + beta, 0, 1)`.
    HardSigmoid(f64, f64),
    /// `x · HardSigmoid(1/6, 1/2)(x)`.
    HardSwish,
    Sigmoid,
}

impl Eq for Act {}
impl std::hash::Hash for Act {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match *self {
            Act::Clip(a, b) | Act::HardSigmoid(a, b) => (a.to_bits(), b.to_bits()).hash(h),
            Act::LeakyRelu(a) => a.to_bits().hash(h),
            Act::None | Act::Relu | Act::HardSwish | Act::Sigmoid => {}
        }
    }
}

impl Act {
    /// `act(x)` for a float scalar or vector `x`.
    pub fn apply(self, b: &mut Builder<'_>, x: ValueId) -> ValueId {
        match self {
            Act::None => x,
            Act::Relu => {
                let zero = b.constant_like(x, 0.0);
                b.max(x, zero)
            }
            Act::Clip(lo, hi) => {
                let (l, h) = (b.constant_like(x, lo), b.constant_like(x, hi));
                let x = b.max(x, l);
                b.min(x, h)
            }
            Act::LeakyRelu(alpha) => {
                let (zero, a) = (b.constant_like(x, 0.0), b.constant_like(x, alpha));
                let pos = b.cmpf(CmpF::Ogt, x, zero);
                let scaled = b.mulf(x, a);
                b.select(pos, x, scaled)
            }
            Act::HardSigmoid(alpha, beta) => {
                let (a, c) = (b.constant_like(x, alpha), b.constant_like(x, beta));
                let ax = b.mulf(a, x);
                let s = b.addf(ax, c);
                Act::Clip(0.0, 1.0).apply(b, s)
            }
            Act::HardSwish => {
                let h = Act::HardSigmoid(1.0 / 6.0, 0.5).apply(b, x);
                b.mulf(x, h)
            }
            Act::Sigmoid => {
                let neg = b.negf(x);
                let e = b.exp(neg);
                let one = b.constant_like(x, 1.0);
                let den = b.addf(one, e);
                b.divf(one, den)
            }
        }
    }

    /// The activation `op` computes, when it is one of these.
    fn of(m: &Module, op: OpId) -> Option<Act> {
        Some(match OpKind::of(m, op)? {
            OpKind::Relu => Act::Relu,
            OpKind::LeakyRelu => Act::LeakyRelu(ops::LeakyRelu::of(m, op).alpha()),
            OpKind::HardSigmoid => {
                let v = ops::HardSigmoid::of(m, op);
                Act::HardSigmoid(v.alpha(), v.beta())
            }
            OpKind::HardSwish => Act::HardSwish,
            OpKind::Sigmoid => Act::Sigmoid,
            OpKind::Clip => {
                let bound = |i: usize, absent: f64| match m.operand(op, i) {
                    Some(v) if !matches!(m.value_type(v), ir::Type::None) => {
                        super::constant_floats(m, op, i).and_then(|f| match f[..] {
                            [x] => Some(x),
                            _ => None,
                        })
                    }
                    _ => Some(absent),
                };
                Act::Clip(bound(1, f64::NEG_INFINITY)?, bound(2, f64::INFINITY)?)
            }
            _ => return None,
        })
    }
}

/// The activation that `producer`'s only consumer applies to its first
/// result, when the producer can apply it instead: the consumer sits in
/// the same block and keeps the float element type.
pub fn fusible_consumer(m: &Module, producer: OpId) -> Option<(OpId, Act)> {
    let r = m.result(producer, 0)?;
    let [u] = m.uses(r) else {
        return None;
    };
    let user = u.op;
    let out = m.result(user, 0)?;
    let same_elem = m.value_type(out).element_type() == m.value_type(r).element_type();
    if m.op_block(user) != m.op_block(producer)
        || !same_elem
        || !m.value_type(r).element_type().is_float()
    {
        return None;
    }
    Some((user, Act::of(m, user)?))
}

/// Records that `consumer`'s result is `out`, computed by its producer's
/// epilogue; the consumer is then not lowered again.
pub fn absorb(cx: &mut Lowering, m: &Module, consumer: OpId, out: ValueId) {
    if let Some(r) = m.result(consumer, 0) {
        cx.bind(r, out);
        cx.absorb(consumer);
    }
}
