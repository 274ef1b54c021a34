//! Activations a producing kernel (GEMM, convolution) applies to its
//! results as it stores them, instead of a separate pass over memory.
//!
//! `Act::apply` is the one definition of each of these activations: the
//! element-wise kernels of the same ops call it too. It builds with the
//! type-generic builder helpers, so it works on scalars and on vectors.

use crate::convert::Lowering;
use ir::builder::CmpF;
use ir::{Builder, Module, OpId, Result, ValueId};
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
                        crate::kernels::support::constant_floats(m, op, i).and_then(|f| match f[..]
                        {
                            [x] => Some(x),
                            _ => None,
                        })
                    }
                    _ => Some(absent),
                };
                Act::Clip(
                    bound(ops::Clip::MIN, f64::NEG_INFINITY)?,
                    bound(ops::Clip::MAX, f64::INFINITY)?,
                )
            }
            _ => return None,
        })
    }
}

/// The consumers a producer computes in its epilogue: an activation, or
/// (for convolutions) a residual `Add` of another value of the result's
/// shape, optionally followed by an activation.
#[derive(Clone)]
pub struct Fused {
    /// Absorbed consumers, in order; the last one's result is the
    /// producer's buffer.
    consumers: Vec<OpId>,
    act: Act,
    /// Which operand of the residual `Add` (the first consumer) is the
    /// other value.
    residual: Option<usize>,
}

impl Fused {
    /// The activation that `producer`'s only consumer applies to its
    /// first result, when the producer can apply it instead: the consumer
    /// sits in the same block and keeps the float element type.
    pub fn of(m: &Module, producer: OpId) -> Fused {
        match consumer_act(m, producer) {
            Some((op, act)) => Fused {
                consumers: vec![op],
                act,
                residual: None,
            },
            None => Fused {
                consumers: Vec::new(),
                act: Act::None,
                residual: None,
            },
        }
    }

    /// [`Fused::of`], or `producer + other` then an optional activation
    /// when the only consumer is an `Add` of a value of the same type that
    /// is computed before the producer (ResNet's skip connection).
    pub fn with_residual(m: &Module, producer: OpId) -> Fused {
        let Some((add, other)) = residual_add(m, producer) else {
            return Fused::of(m, producer);
        };
        let mut consumers = vec![add];
        let act = match consumer_act(m, add) {
            Some((op, act)) => {
                consumers.push(op);
                act
            }
            None => Act::None,
        };
        Fused {
            consumers,
            act,
            residual: Some(other),
        }
    }

    /// What the producer applies last (`Act::None` without one).
    pub fn act(&self) -> Act {
        self.act
    }

    /// The buffer of the residual value the producer adds, if any.
    pub fn residual(&self, cx: &Lowering, m: &Module) -> Result<Option<ValueId>> {
        match (self.residual, self.consumers.first()) {
            (Some(i), Some(&add)) => cx.input(m, add, i).map(Some),
            _ => Ok(None),
        }
    }

    /// Records that the last consumer's result is `out`, which the
    /// producer computed; the consumers are then not lowered again.
    pub fn bind(&self, cx: &mut Lowering, m: &Module, out: ValueId) {
        let Some(&last) = self.consumers.last() else {
            return;
        };
        if let Some(r) = m.result(last, 0) {
            cx.bind(r, out);
            for &c in &self.consumers {
                cx.absorb(c);
            }
        }
    }
}

/// `producer`'s only user, when it is in the same block and keeps a float
/// element type.
fn only_user(m: &Module, producer: OpId) -> Option<OpId> {
    let r = m.result(producer, 0)?;
    let [u] = m.uses(r) else {
        return None;
    };
    let user = u.op;
    let out = m.result(user, 0)?;
    let same_elem = m.value_type(out).element_type() == m.value_type(r).element_type();
    let float = m.value_type(r).element_type().is_float();
    (m.op_block(user) == m.op_block(producer) && same_elem && float).then_some(user)
}

fn consumer_act(m: &Module, producer: OpId) -> Option<(OpId, Act)> {
    let user = only_user(m, producer)?;
    Some((user, Act::of(m, user)?))
}

/// The `Add` consuming `producer`'s result and the index of its other
/// operand: the result's shape (no broadcast), and defined before
/// the producer (an argument, or an earlier op of an enclosing block), so
/// its buffer exists when the producer runs.
/// Whether a Conv producing one of `add`'s operands adds it as its
/// residual (the Add is then computed by that Conv's epilogue).
pub fn absorbs_residual(m: &Module, add: OpId) -> bool {
    m.operands(add).iter().any(|&v| {
        m.defining_op(v).is_some_and(|p| {
            OpKind::of(m, p) == Some(OpKind::Conv)
                && residual_add(m, p).is_some_and(|(a, _)| a == add)
        })
    })
}

fn residual_add(m: &Module, producer: OpId) -> Option<(OpId, usize)> {
    let add = only_user(m, producer)?;

    if OpKind::of(m, add) != Some(OpKind::Add) {
        return None;
    }
    let r = m.result(producer, 0)?;
    let ops = m.operands(add);
    let i = ops.iter().position(|&v| v != r)?;
    let other = ops[i];
    // Same element type and shape (an argument may already be a memref);
    // dynamic dims are checked equal at run time by the producer.
    let same = |v: ValueId| {
        let (a, t) = (m.value_type(v), m.value_type(r));
        a.element_type() == t.element_type() && a.shape().is_some() && a.shape() == t.shape()
    };
    if ops.len() != 2 || !same(other) || !same(m.result(add, 0)?) {
        return None;
    }
    let ok = match m.defining_op(other) {
        None => true,
        Some(d) => earlier(m, d, producer),
    };
    ok.then_some((add, i))
}

/// `a` comes before `b`: earlier in `b`'s block or in one enclosing it.
fn earlier(m: &Module, a: OpId, b: OpId) -> bool {
    let mut at = b;
    loop {
        match (m.op_block(a), m.op_block(at)) {
            (Some(ba), Some(bb)) if ba == bb => {
                return m.block_ops(ba).take_while(|&o| o != at).any(|o| o == a);
            }
            _ => match m.parent_op(at) {
                Some(p) => at = p,
                None => return false,
            },
        }
    }
}
