//! One direction of a recurrent cell: X · Wᵀ for every step at once, then
//! the time loop (h · Rᵀ, the gates, the new state and Y).

use super::products::{multiply, weights, Product, Weights};
use super::{act, Cell, Ctx, Outputs};
use crate::convert::{alloc, Lowering};
use crate::kernels::linalg::gemm;
use crate::loops::{loop_nest, Bounds};
use ir::builder::Cmp;
use ir::{Builder, OpId, Type, ValueId};
use onnx::ops;

/// The buffers of one direction's recurrence.
struct Dir {
    dir: usize,
    d: ValueId,
    reverse: bool,
    /// The state h and LSTM's cell state, [batch, hidden].
    h: ValueId,
    cst: ValueId,
    h_next: ValueId,
    /// X · Wᵀ: a row per (step, batch entry) in X's order (flat).
    xg: ValueId,
    /// h · Rᵀ of the current step: a row per batch entry (flat).
    hg: ValueId,
    /// The width of those rows, `gates · hidden`.
    gh: ValueId,
    /// R's rows: all gates, or GRU's z and r, then h.
    r: Vec<Weights>,
    /// GRU with the reset before the product: act(r) ⊙ h, [batch, hidden].
    rh: Option<ValueId>,
}

/// Direction `dir`: initial states, the input products, the time loop,
/// the final states.
pub(super) fn direction(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    (c, op): (&Ctx, OpId),
    bounds: &Bounds,
    outs: &Outputs,
    dir: usize,
) {
    let (batch, hidden) = (c.batch, c.hidden);
    let state_ty = Type::memref(vec![ir::DYN, ir::DYN], c.elem.clone());
    let mk = |b: &mut Builder<'_>| alloc(b, &state_ty, &[batch, hidden]);
    let d = b.const_index(dir as i64);
    let (h, cst) = (mk(b), mk(b));
    let zero = b.zero(&c.elem);
    let state_idx = |ivs: &[ValueId]| match c.batch_first {
        true => [ivs[0], d, ivs[1]],
        false => [d, ivs[0], ivs[1]],
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
    let gates = c.cell.gates();
    let reset_first = c.cell == Cell::Gru && !c.lbr;
    let r = match reset_first {
        true => vec![(0, 2), (2, 1)],
        false => vec![(0, gates)],
    };
    let r = r
        .into_iter()
        // R of each RNN kind
        .map(|g| weights(cx, b, c, (op, ops::RNN::R), dir, g))
        .collect();
    let g = b.const_index(gates);
    let gh = b.muli(g, hidden);
    let xg = input_products(cx, b, (c, op), dir, gh);
    let flat_ty = Type::memref(vec![ir::DYN], c.elem.clone());
    let hg_len = b.muli(batch, gh);
    let st = Dir {
        dir,
        d,
        reverse: c.reverse || dir == 1,
        h,
        cst,
        h_next: mk(b),
        xg,
        hg: alloc(b, &flat_ty, &[hg_len]),
        gh,
        r,
        rh: reset_first.then(|| mk(b)),
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

/// X · Wᵀ for every step and batch entry: one product over the sequence.
fn input_products(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    (c, op): (&Ctx, OpId),
    dir: usize,
    gh: ValueId,
) -> ValueId {
    // W of each RNN kind
    let w = weights(cx, b, c, (op, ops::RNN::W), dir, (0, c.cell.gates()));
    let rows = b.muli(c.seq, c.batch);
    let len = b.muli(rows, gh);
    let flat_ty = Type::memref(vec![ir::DYN], c.elem.clone());
    let xg = alloc(b, &flat_ty, &[len]);
    let x_len = b.muli(rows, c.input);
    let x = gemm::flat(b, c.x, x_len);
    let c_off = b.const_index(0);
    let p = Product {
        a: x,
        rows,
        c: xg,
        c_off,
        ldc: gh,
    };
    multiply(b, c, &w, &p);
    xg
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
            crate::kernels::support::index::to_index(b, v)
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

/// One time step: h · Rᵀ, then the new state (and Y).
fn time_step(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    st: &Dir,
    y: Option<ValueId>,
    step: ValueId,
) {
    let dims = [c.batch, c.hidden];
    let state_len = b.muli(c.batch, c.hidden);
    let h = gemm::flat(b, st.h, state_len);
    let c_off = b.const_index(0);
    let p = Product {
        a: h,
        rows: c.batch,
        c: st.hg,
        c_off,
        ldc: st.gh,
    };
    multiply(b, c, &st.r[0], &p);
    if let (Some(rh), Some(r_h)) = (st.rh, st.r.get(1)) {
        reset_state(b, c, bounds, st, (step, rh));
        let two = b.const_index(2);
        let p = Product {
            a: gemm::flat(b, rh, state_len),
            c_off: b.muli(two, c.hidden),
            ..p
        };
        multiply(b, c, r_h, &p);
    }
    loop_nest(b, bounds, &dims, &mut |b, ivs| {
        let (t, active) = time_of(b, c, bounds, st, step, ivs[0]);
        let hv = match c.cell {
            Cell::Rnn => {
                let p = gate(b, c, st, 0, (t, ivs));
                act(b, c, st.dir, 0, p)
            }
            Cell::Gru => gru_state(b, c, st, (t, ivs)),
            Cell::Lstm => lstm_state(b, c, st, (t, ivs), active),
        };
        let hold = b.load(st.h, ivs);
        let hkeep = b.select(active, hv, hold);
        b.store(hkeep, st.h_next, ivs);
        let zero = b.zero(&c.elem);
        let hv = b.select(active, hv, zero);
        if let Some(yb) = y {
            // Past its length an entry's Y is zero, at every later step.
            let t = b.select(active, t, step);
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

/// GRU's act(r) ⊙ h into `rh`, the A of the h gate's product.
fn reset_state(
    b: &mut Builder<'_>,
    c: &Ctx,
    bounds: &Bounds,
    st: &Dir,
    (step, rh): (ValueId, ValueId),
) {
    loop_nest(b, bounds, &[c.batch, c.hidden], &mut |b, ivs| {
        let (t, _) = time_of(b, c, bounds, st, step, ivs[0]);
        let rp = gate(b, c, st, 1, (t, ivs));
        let r = act(b, c, st.dir, 0, rp);
        let hv = b.load(st.h, ivs);
        let v = b.mul(r, hv);
        b.store(v, rh, ivs);
    });
}

/// Gate `g`'s two terms at (t, batch entry, j): x · W + Wb and h · R + Rb.
fn terms(
    b: &mut Builder<'_>,
    c: &Ctx,
    st: &Dir,
    g: i64,
    (t, ivs): (ValueId, &[ValueId]),
) -> (ValueId, ValueId) {
    let (bi, j) = (ivs[0], ivs[1]);
    let g = b.const_index(g);
    let col = b.muli(g, c.hidden);
    let col = b.addi(col, j);
    let row = match c.batch_first {
        true => b.muli(bi, c.seq),
        false => b.muli(t, c.batch),
    };
    let row = b.addi(row, if c.batch_first { t } else { bi });
    let at = b.muli(row, st.gh);
    let at = b.addi(at, col);
    let mut x = b.load(st.xg, &[at]);
    let at = b.muli(bi, st.gh);
    let at = b.addi(at, col);
    let mut h = b.load(st.hg, &[at]);
    if let Some(bias) = c.bias {
        let wb = b.load(bias, &[st.d, col]);
        x = b.add(x, wb);
        let rcol = b.addi(st.gh, col);
        let rb = b.load(bias, &[st.d, rcol]);
        h = b.add(h, rb);
    }
    (x, h)
}

/// Gate `g`'s pre-activation.
fn gate(b: &mut Builder<'_>, c: &Ctx, st: &Dir, g: i64, at: (ValueId, &[ValueId])) -> ValueId {
    let (x, h) = terms(b, c, st, g, at);
    b.add(x, h)
}

/// GRU: h' = (1 - z) ⊙ act(x·W_h + Wb_h + r ⊙ (h·R_h + Rb_h)) + z ⊙ h
/// with `linear_before_reset`, else the h product was of r ⊙ h.
fn gru_state(b: &mut Builder<'_>, c: &Ctx, st: &Dir, at: (ValueId, &[ValueId])) -> ValueId {
    let dir = st.dir;
    let zp = gate(b, c, st, 0, at);
    let z = act(b, c, dir, 0, zp);
    let hold = b.load(st.h, at.1);
    let (x, h) = terms(b, c, st, 2, at);
    let pre = if c.lbr {
        let rp = gate(b, c, st, 1, at);
        let r = act(b, c, dir, 0, rp);
        let rs = b.mul(r, h);
        b.add(x, rs)
    } else {
        b.add(x, h)
    };
    let ht = act(b, c, dir, 1, pre);
    let one = b.one(&c.elem);
    let omz = b.sub(one, z);
    let a = b.mul(omz, ht);
    let bz = b.mul(z, hold);
    b.add(a, bz)
}

/// LSTM (gates i, o, f, c): the new cell state (stored, kept where
/// inactive) and the new h.
fn lstm_state(
    b: &mut Builder<'_>,
    c: &Ctx,
    st: &Dir,
    at: (ValueId, &[ValueId]),
    active: ValueId,
) -> ValueId {
    let (dir, ivs) = (st.dir, at.1);
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
    let ip = gate(b, c, st, 0, at);
    let ip = peep(b, 0, ip, cold);
    let i = act(b, c, dir, 0, ip);
    let fp = gate(b, c, st, 2, at);
    let fp = peep(b, 2, fp, cold);
    let f = act(b, c, dir, 0, fp);
    let cp = gate(b, c, st, 3, at);
    let ct = act(b, c, dir, 1, cp);
    let fc = b.mul(f, cold);
    let ic = b.mul(i, ct);
    let cnew = b.add(fc, ic);
    let keep = b.select(active, cnew, cold);
    b.store(keep, st.cst, ivs);
    let op_ = gate(b, c, st, 1, at);
    let op_ = peep(b, 1, op_, cnew);
    let o = act(b, c, dir, 0, op_);
    let hc = act(b, c, dir, 2, cnew);
    b.mul(o, hc)
}
