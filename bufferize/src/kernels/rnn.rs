//! RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts;
//! optional bias, initial states, peepholes, clip; GRU's
//! linear_before_reset). Each time step computes every gate's
//! pre-activation into a [batch, hidden] scratch buffer, then combines.

use super::{alloc_result, elem_of};
use crate::convert::{alloc, dims, Lowering};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::Cmp;
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

/// `X[t, b, i]` in either layout.
fn x_at(b: &mut Builder<'_>, c: &Ctx, t: ValueId, bi: ValueId, i: ValueId) -> ValueId {
    let idx = if c.batch_first {
        [bi, t, i]
    } else {
        [t, bi, i]
    };
    b.load(c.x, &idx)
}

/// Pre-activation of gate `g` at (b, j), with the recurrent term taken
/// from `h` (scaled element-wise by `rscale` when given, GRU's r ⊙ h).
#[allow(clippy::too_many_arguments)]
fn gate(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    d: ValueId,
    g: i64,
    t: ValueId,
    bj: [ValueId; 2],
    h: Option<(ValueId, Option<ValueId>)>,
    with_rb: bool,
) -> ValueId {
    let [bi, j] = bj;
    let gh = b.const_index(g);
    let base = b.mul(gh, c.hidden);
    let row = b.add(base, j);
    let zero = b.zero(&c.elem);
    let mut acc = reduce_nest(b, bounds, &[c.input], zero, &mut |b, i, acc| {
        let xv = x_at(b, c, t, bi, i[0]);
        let wv = b.load(c.w, &[d, row, i[0]]);
        let p = b.mul(xv, wv);
        b.add(acc, p)
    });
    if let Some((hb, rs)) = h {
        let rec = reduce_nest(b, bounds, &[c.hidden], zero, &mut |b, k, acc| {
            let mut hv = b.load(hb, &[bi, k[0]]);
            if let Some(r) = rs {
                let rv = b.load(r, &[bi, k[0]]);
                hv = b.mul(hv, rv);
            }
            let rw = b.load(c.r, &[d, row, k[0]]);
            let p = b.mul(hv, rw);
            b.add(acc, p)
        });
        acc = b.add(acc, rec);
    }
    if let Some(bb) = c.bias {
        let wb = b.load(bb, &[d, row]);
        acc = b.add(acc, wb);
        if with_rb {
            let groups = b.const_index(c.cell.gates());
            let off = b.mul(groups, c.hidden);
            let rrow = b.add(off, row);
            let rb = b.load(bb, &[d, rrow]);
            acc = b.add(acc, rb);
        }
    }
    acc
}

/// GRU's recurrent bias of the h gate (added inside the reset product).
fn gru_rbh(b: &mut Builder<'_>, c: &Ctx, d: ValueId, j: ValueId) -> ValueId {
    match c.bias {
        Some(bb) => {
            let k = b.const_index(5);
            let off = b.mul(k, c.hidden);
            let row = b.add(off, j);
            b.load(bb, &[d, row])
        }
        None => b.zero(&c.elem),
    }
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
    let seq_lens = opt(cx, b, 4)?;
    let x = cx.input(b.m, op, 0)?;
    let elem = elem_of(b.m, x);
    if !elem.is_float() {
        return Err(op_error(b.m, op, "expects a floating-point input"));
    }
    let r = cx.input(b.m, op, 2)?;
    if super::shape_of(b.m, x).len() != 3 || super::shape_of(b.m, r).len() != 3 {
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
    let w = cx.input(b.m, op, 1)?;
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
        bias: opt(cx, b, 3)?,
        peep: if lstm { opt(cx, b, 7)? } else { None },
        acts,
        clip,
        lbr,
        batch_first,
        hidden,
        input: dx[2],
        elem,
        seq,
        batch,
        seq_lens,
        ndir,
        reverse,
        h0: opt(cx, b, 5)?,
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
        .map(|i| i < nres && super::result_memref_type(b.m, op, i).is_ok())
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
        direction(b, &c, &bounds, &outs, dir);
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

/// The buffers of one direction's recurrence: the state (h, c), the gate
/// pre-activations and the next h.
struct Dir {
    dir: usize,
    d: ValueId,
    reverse: bool,
    h: ValueId,
    cst: ValueId,
    gates: Vec<ValueId>,
    h_next: ValueId,
}

/// Direction `dir`: initial states, the time loop, the final states.
fn direction(b: &mut Builder<'_>, c: &Ctx, bounds: &Bounds, outs: &Outputs, dir: usize) {
    let (batch, hidden) = (c.batch, c.hidden);
    let scratch_ty = Type::memref(vec![ir::DYN, ir::DYN], c.elem.clone());
    let mk = |b: &mut Builder<'_>| alloc(b, &scratch_ty, &[batch, hidden]);
    let d = b.const_index(dir as i64);
    let h = mk(b);
    let cst = mk(b);
    let zero = b.zero(&c.elem);
    let state_idx = |ivs: &[ValueId]| {
        if c.batch_first {
            [ivs[0], d, ivs[1]]
        } else {
            [d, ivs[0], ivs[1]]
        }
    };
    for (init, buf) in [(c.h0, h), (c.c0, cst)] {
        loop_nest(b, bounds, &[batch, hidden], &mut |b, ivs| {
            let v = match init {
                Some(i) => b.load(i, &state_idx(ivs)),
                None => zero,
            };
            b.store(v, buf, ivs);
        });
    }
    let gates: Vec<ValueId> = (0..c.cell.gates()).map(|_| mk(b)).collect();
    let st = Dir {
        dir,
        d,
        reverse: c.reverse || dir == 1,
        h,
        cst,
        gates,
        h_next: mk(b),
    };
    loop_nest(b, bounds, &[c.seq], &mut |b, step| {
        time_step(b, c, bounds, &st, outs.y, step[0]);
    });
    for (out, src) in [(outs.yh, h), (outs.yc, cst)] {
        let Some(o) = out else { continue };
        loop_nest(b, bounds, &[batch, hidden], &mut |b, ivs| {
            let v = b.load(src, ivs);
            b.store(v, o, &state_idx(ivs));
        });
    }
}

/// Batch entry `bi` runs for its own length: its time index at `step`
/// and whether it is still active.
fn time_of(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    st: &Dir,
    step: ValueId,
    bi: ValueId,
) -> (ValueId, ValueId) {
    let len = match c.seq_lens {
        Some(l) => {
            let v = b.load(l, &[bi]);
            super::build::to_index(b, v)
        }
        None => c.seq,
    };
    let active = b.cmp(Cmp::Lt, step, len);
    let t = if st.reverse {
        let last = b.sub(len, bounds.one);
        let t = b.sub(last, step);
        b.select(active, t, bounds.zero)
    } else {
        step
    };
    (t, active)
}

/// One time step: the gate pre-activations, then the new state (and Y).
fn time_step(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    st: &Dir,
    y: Option<ValueId>,
    step: ValueId,
) {
    let dims = [c.batch, c.hidden];
    // Phase 1: gate pre-activations (GRU's h gate waits for r).
    for (g, &gb) in st.gates.iter().enumerate() {
        if c.cell == Cell::Gru && g == 2 {
            continue;
        }
        loop_nest(b, bounds, &dims, &mut |b, ivs| {
            let (t, _) = time_of(b, c, bounds, st, step, ivs[0]);
            let bj = [ivs[0], ivs[1]];
            let v = gate(
                b,
                c,
                bounds,
                st.d,
                g as i64,
                t,
                bj,
                Some((st.h, None)),
                true,
            );
            b.store(v, gb, ivs);
        });
    }
    // Phase 2: the new state.
    loop_nest(b, bounds, &dims, &mut |b, ivs| {
        let (t, active) = time_of(b, c, bounds, st, step, ivs[0]);
        let hv = match c.cell {
            Cell::Rnn => {
                let p = b.load(st.gates[0], ivs);
                act(b, c, st.dir, 0, p)
            }
            Cell::Gru => gru_state(b, c, bounds, st, ivs, t),
            Cell::Lstm => lstm_state(b, c, st, ivs, active),
        };
        let hold = b.load(st.h, ivs);
        let hkeep = b.select(active, hv, hold);
        b.store(hkeep, st.h_next, ivs);
        let zero = b.zero(&c.elem);
        let hv = b.select(active, hv, zero);
        if let Some(yb) = y {
            let idx = if c.batch_first {
                vec![ivs[0], t, st.d, ivs[1]]
            } else {
                vec![t, st.d, ivs[0], ivs[1]]
            };
            b.store(hv, yb, &idx);
        }
    });
    b.copy(st.h_next, st.h);
}

/// GRU: h' = (1 - z) ⊙ act(x·W_h + r ⊙ (h·R_h + Rb_h)) + z ⊙ h, or with
/// the reset applied before the product unless `linear_before_reset`.
fn gru_state(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    st: &Dir,
    ivs: &[ValueId],
    t: ValueId,
) -> ValueId {
    let (dir, d, bj) = (st.dir, st.d, [ivs[0], ivs[1]]);
    let zp = b.load(st.gates[0], ivs);
    let z = act(b, c, dir, 0, zp);
    let hold = b.load(st.h, ivs);
    let pre = if c.lbr {
        let px = gate(b, c, bounds, d, 2, t, bj, None, false);
        let ph = gate_rec_only(b, c, bounds, d, bj, st.h, None);
        let rb = gru_rbh(b, c, d, ivs[1]);
        let rp = b.load(st.gates[1], ivs);
        let r = act(b, c, dir, 0, rp);
        let s = b.add(ph, rb);
        let rs = b.mul(r, s);
        b.add(px, rs)
    } else {
        let px = gate(b, c, bounds, d, 2, t, bj, None, true);
        let ph = gate_rec_only(b, c, bounds, d, bj, st.h, Some((st.gates[1], dir)));
        b.add(px, ph)
    };
    let ht = act(b, c, dir, 1, pre);
    let one = b.one(&c.elem);
    let omz = b.sub(one, z);
    let a = b.mul(omz, ht);
    let bz = b.mul(z, hold);
    b.add(a, bz)
}

/// LSTM: the new cell state (stored, kept where inactive) and the new h.
fn lstm_state(b: &mut Builder<'_>, c: &Ctx, st: &Dir, ivs: &[ValueId], active: ValueId) -> ValueId {
    let dir = st.dir;
    let cold = b.load(st.cst, ivs);
    // Peephole k (i, o, f) adds P[k·hidden + j] ⊙ cell state.
    let peep = |b: &mut Builder<'_>, k: i64, v: ValueId, cv: ValueId| match c.peep {
        Some(p) => {
            let kk = b.const_index(k);
            let off = b.mul(kk, c.hidden);
            let col = b.add(off, ivs[1]);
            let pv = b.load(p, &[st.d, col]);
            let m = b.mul(pv, cv);
            b.add(v, m)
        }
        None => v,
    };
    let ip = b.load(st.gates[0], ivs);
    let ip = peep(b, 0, ip, cold);
    let i = act(b, c, dir, 0, ip);
    let fp = b.load(st.gates[2], ivs);
    let fp = peep(b, 2, fp, cold);
    let f = act(b, c, dir, 0, fp);
    let cp = b.load(st.gates[3], ivs);
    let ct = act(b, c, dir, 1, cp);
    let fc = b.mul(f, cold);
    let ic = b.mul(i, ct);
    let cnew = b.add(fc, ic);
    let keep = b.select(active, cnew, cold);
    b.store(keep, st.cst, ivs);
    let op_ = b.load(st.gates[1], ivs);
    let op_ = peep(b, 1, op_, cnew);
    let o = act(b, c, dir, 0, op_);
    let hc = act(b, c, dir, 2, cnew);
    b.mul(o, hc)
}

/// Σ_k h[b,k] (⊙ act(r)[b,k]) · R_h[j, k] for GRU's h gate.
fn gate_rec_only(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    d: ValueId,
    bj: [ValueId; 2],
    h: ValueId,
    reset: Option<(ValueId, usize)>,
) -> ValueId {
    let [bi, j] = bj;
    let two = b.const_index(2);
    let base = b.mul(two, c.hidden);
    let row = b.add(base, j);
    let zero = b.zero(&c.elem);
    reduce_nest(b, bounds, &[c.hidden], zero, &mut |b, k, acc| {
        let mut hv = b.load(h, &[bi, k[0]]);
        if let Some((rbuf, dir)) = reset {
            let rp = b.load(rbuf, &[bi, k[0]]);
            let r = act(b, c, dir, 0, rp);
            hv = b.mul(hv, r);
        }
        let rw = b.load(c.r, &[d, row, k[0]]);
        let p = b.mul(hv, rw);
        b.add(acc, p)
    })
}
