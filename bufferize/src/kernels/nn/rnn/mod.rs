//! RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts;
//! optional bias, initial states, peepholes, clip; GRU's
//! linear_before_reset). The input's products with W for every step are
//! one GEMM per direction before the time loop; each step then multiplies
//! the state by R (a GEMM of `batch` rows; two for GRU's reset before the
//! product) and combines the gates element-wise (`step`).

mod products;
mod step;

use crate::convert::{dims, Lowering};
use crate::kernels::{support::alloc_result, support::elem_of};
use crate::loops::Bounds;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, Type, ValueId};
use onnx::{ops, OpKind};

/// The recurrent cell: RNN, GRU or LSTM.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    /// Gates per direction: W and R stack `gates · hidden` rows.
    fn gates(self) -> i64 {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }
    /// The activations one direction uses, by default.
    fn default_activations(self) -> &'static [Act] {
        match self {
            Cell::Rnn => &[Act::Tanh],
            Cell::Gru => &[Act::Sigmoid, Act::Tanh],
            Cell::Lstm => &[Act::Sigmoid, Act::Tanh, Act::Tanh],
        }
    }
}

/// The activations supported in `activations` (named after ONNX ops).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Act {
    Sigmoid,
    Tanh,
    Relu,
}

impl Act {
    fn parse(name: &str) -> Option<Act> {
        [
            (OpKind::Sigmoid, Act::Sigmoid),
            (OpKind::Tanh, Act::Tanh),
            (OpKind::Relu, Act::Relu),
        ]
        .into_iter()
        .find(|(k, _)| k.name() == name)
        .map(|(_, a)| a)
    }

    fn apply(self, b: &mut Builder<'_>, x: ValueId) -> ValueId {
        let t = b.m.value_type(x).clone();
        match self {
            Act::Relu => {
                let z = b.zero(&t);
                b.max(x, z)
            }
            Act::Sigmoid => {
                let n = b.negf(x);
                let e = b.exp(n);
                let one = b.one(&t);
                let d = b.add(one, e);
                b.div(one, d)
            }
            Act::Tanh => b.tanh(x),
        }
    }
}

/// The attributes every cell shares, read through its typed view.
struct Attrs<'m> {
    direction: &'m str,
    activations: Option<Vec<&'m str>>,
    clip: Option<f64>,
    hidden_size: Option<i64>,
    layout: i64,
    linear_before_reset: bool,
}

impl<'m> Attrs<'m> {
    fn of(m: &'m Module, op: OpId, cell: Cell) -> Attrs<'m> {
        macro_rules! shared {
            ($v:expr, $activations:expr, $lbr:expr) => {
                Attrs {
                    direction: $v.direction(),
                    activations: $activations,
                    clip: $v.clip(),
                    hidden_size: $v.hidden_size(),
                    layout: $v.layout(),
                    linear_before_reset: $lbr,
                }
            };
        }
        match cell {
            Cell::Rnn => {
                let v = ops::RNN::of(m, op);
                shared!(v, Some(v.activations()), false)
            }
            Cell::Gru => {
                let v = ops::GRU::of(m, op);
                shared!(v, v.activations(), v.linear_before_reset() != 0)
            }
            Cell::Lstm => {
                let v = ops::LSTM::of(m, op);
                shared!(v, v.activations(), false)
            }
        }
    }
}

struct Ctx {
    cell: Cell,
    x: ValueId,
    w: ValueId,
    r: ValueId,
    bias: Option<ValueId>,
    peep: Option<ValueId>,
    acts: Vec<Act>,
    clip: Option<f64>,
    lbr: bool,
    batch_first: bool,
    hidden: ValueId,
    input: ValueId,
    elem: Type,
    gemm: crate::kernels::linalg::gemm::Isa,
    seq: ValueId,
    batch: ValueId,
    seq_lens: Option<ValueId>,
    /// Directions: 1, or 2 for bidirectional.
    ndir: usize,
    /// The single direction runs backwards.
    reverse: bool,
    h0: Option<ValueId>,
    c0: Option<ValueId>,
}

fn clip(b: &mut Builder<'_>, c: &Ctx, v: ValueId) -> ValueId {
    match c.clip {
        Some(l) => {
            let hi = b.constant(&c.elem, l);
            let lo = b.constant(&c.elem, -l);
            let v = b.max(v, lo);
            b.min(v, hi)
        }
        None => v,
    }
}

/// Activation `k` of direction `dir` applied to `v` after the clip.
fn act(b: &mut Builder<'_>, c: &Ctx, dir: usize, k: usize, v: ValueId) -> ValueId {
    let per = c.cell.default_activations().len();
    let a = c.acts.get(dir * per + k).copied().unwrap_or(Act::Tanh);
    let v = clip(b, c, v);
    a.apply(b, v)
}

/// Reads the operands and attributes; emits the dims of X (and of R when
/// `hidden_size` is absent).
fn context(cx: &Lowering, b: &mut Builder<'_>, op: OpId, cell: Cell) -> Result<Ctx> {
    let opt = |cx: &Lowering, b: &Builder<'_>, i: usize| -> Result<Option<ValueId>> {
        cx.optional_input(b.m, op, i)
    };
    // RNN's input positions, the same in GRU and LSTM
    let seq_lens = opt(cx, b, ops::RNN::SEQUENCE_LENS)?;
    let x = cx.input(b.m, op, ops::RNN::X)?;
    let elem = elem_of(b.m, x);
    if !elem.is_float() {
        return Err(op_error(b.m, op, "expects a floating-point input"));
    }
    let r = cx.input(b.m, op, ops::RNN::R)?;
    if crate::kernels::support::shape_of(b.m, x).len() != 3
        || crate::kernels::support::shape_of(b.m, r).len() != 3
    {
        return Err(op_error(b.m, op, "expects X and R of rank 3"));
    }
    let attrs = Attrs::of(b.m, op, cell);
    let ndir = if attrs.direction == "bidirectional" {
        2
    } else {
        1
    };
    let reverse = attrs.direction == "reverse";
    let acts: Vec<Act> = match &attrs.activations {
        Some(names) => names
            .iter()
            .map(|&n| {
                Act::parse(n)
                    .ok_or_else(|| op_error(b.m, op, format!("activation '{n}' is not supported")))
            })
            .collect::<Result<_>>()?,
        None => (0..ndir)
            .flat_map(|_| cell.default_activations().iter().copied())
            .collect(),
    };
    let batch_first = attrs.layout != 0;
    let (clip, lbr, hidden_size) = (
        attrs.clip,
        attrs.linear_before_reset,
        attrs.hidden_size.filter(|&h| h > 0),
    );
    let dx = dims(b, x);
    let (seq, batch) = if batch_first {
        (dx[1], dx[0])
    } else {
        (dx[0], dx[1])
    };
    let w = cx.input(b.m, op, ops::RNN::W)?;
    let hidden = match hidden_size {
        Some(h) => b.const_index(h),
        None => dims(b, r)[2],
    };
    let lstm = cell == Cell::Lstm;
    Ok(Ctx {
        cell,
        x,
        w,
        r,
        bias: opt(cx, b, ops::RNN::B)?,
        peep: if lstm { opt(cx, b, 7)? } else { None },
        acts,
        clip,
        lbr,
        batch_first,
        hidden,
        input: dx[2],
        elem,
        gemm: cx.gemm,
        seq,
        batch,
        seq_lens,
        ndir,
        reverse,
        h0: opt(cx, b, ops::RNN::INITIAL_H)?,
        c0: if lstm { opt(cx, b, 6)? } else { None },
    })
}

/// The result buffers Y, Y_h and Y_c (`None` when absent or unranked).
struct Outputs {
    y: Option<ValueId>,
    yh: Option<ValueId>,
    yc: Option<ValueId>,
}

fn outputs(b: &mut Builder<'_>, op: OpId, c: &Ctx) -> Result<Outputs> {
    let nd = b.const_index(c.ndir as i64);
    let (batch, seq, hidden) = (c.batch, c.seq, c.hidden);
    let nres = b.m.results(op).len();
    let ranked: Vec<bool> = (0..3)
        .map(|i| i < nres && crate::kernels::support::result_memref_type(b.m, op, i).is_ok())
        .collect();
    let y = if ranked[0] {
        let sizes = if c.batch_first {
            vec![batch, seq, nd, hidden]
        } else {
            vec![seq, nd, batch, hidden]
        };
        Some(alloc_result(b, op, 0, &sizes)?)
    } else {
        None
    };
    let state_sizes = if c.batch_first {
        vec![batch, nd, hidden]
    } else {
        vec![nd, batch, hidden]
    };
    let yh = if ranked[1] {
        Some(alloc_result(b, op, 1, &state_sizes)?)
    } else {
        None
    };
    let yc = if ranked[2] {
        Some(alloc_result(b, op, 2, &state_sizes)?)
    } else {
        None
    };
    Ok(Outputs { y, yh, yc })
}

pub fn rnn(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId, cell: Cell) -> Result<Vec<ValueId>> {
    let c = context(cx, b, op, cell)?;
    let outs = outputs(b, op, &c)?;
    let bounds = Bounds::new(b);
    for dir in 0..c.ndir {
        step::direction(cx, b, (&c, op), &bounds, &outs, dir);
    }
    // An omitted output (unranked, unused) gets a placeholder.
    let Outputs { y, yh, yc } = outs;
    let any = y
        .or(yh)
        .or(yc)
        .ok_or_else(|| op_error(b.m, op, "no output to compute"))?;
    Ok([y, yh, yc]
        .into_iter()
        .take(b.m.results(op).len())
        .map(|v| v.unwrap_or(any))
        .collect())
}
