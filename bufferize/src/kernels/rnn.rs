//! RNN, GRU and LSTM (forward, reverse, bidirectional; both layouts;
//! optional bias, initial states, peepholes, clip; GRU's
//! linear_before_reset). Each time step computes every gate's
//! pre-activation into a [batch, hidden] scratch buffer, then combines.

use super::scalar::{self, constant};
use super::{alloc_result, attr_int, attr_str, elem_of, load_at, store_at};
use crate::convert::{alloc, dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Attribute, Builder, OpId, Result, Type, ValueId};

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

fn activation(b: &mut Builder<'_>, name: &str, x: ValueId) -> ValueId {
    let t = b.m.value_type(x).clone();
    match name {
        "Relu" => {
            let z = constant(b, &t, 0.0);
            scalar::max(b, x, z)
        }
        "Sigmoid" => {
            let n = b.same("arith.negf", &[x]);
            let e = b.same("math.exp", &[n]);
            let one = constant(b, &t, 1.0);
            let d = scalar::add(b, one, e);
            scalar::div(b, one, d)
        }
        _ => b.same("math.tanh", &[x]),
    }
}

struct Ctx {
    cell: Cell,
    x: ValueId,
    w: ValueId,
    r: ValueId,
    bias: Option<ValueId>,
    peep: Option<ValueId>,
    acts: Vec<String>,
    clip: Option<f64>,
    lbr: bool,
    batch_first: bool,
    hidden: ValueId,
    input: ValueId,
    elem: Type,
}

/// `X[t, b, i]` in either layout.
fn x_at(b: &mut Builder<'_>, c: &Ctx, t: ValueId, bi: ValueId, i: ValueId) -> ValueId {
    let idx = if c.batch_first {
        [bi, t, i]
    } else {
        [t, bi, i]
    };
    load_at(b, c.x, &idx)
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
    let base = loops::mul(b, gh, c.hidden);
    let row = loops::add(b, base, j);
    let zero = constant(b, &c.elem, 0.0);
    let mut acc = reduce_nest(b, bounds, &[c.input], zero, &mut |b, i, acc| {
        let xv = x_at(b, c, t, bi, i[0]);
        let wv = load_at(b, c.w, &[d, row, i[0]]);
        let p = scalar::mul(b, xv, wv);
        scalar::add(b, acc, p)
    });
    if let Some((hb, rs)) = h {
        let rec = reduce_nest(b, bounds, &[c.hidden], zero, &mut |b, k, acc| {
            let mut hv = load_at(b, hb, &[bi, k[0]]);
            if let Some(r) = rs {
                let rv = load_at(b, r, &[bi, k[0]]);
                hv = scalar::mul(b, hv, rv);
            }
            let rw = load_at(b, c.r, &[d, row, k[0]]);
            let p = scalar::mul(b, hv, rw);
            scalar::add(b, acc, p)
        });
        acc = scalar::add(b, acc, rec);
    }
    if let Some(bb) = c.bias {
        let wb = load_at(b, bb, &[d, row]);
        acc = scalar::add(b, acc, wb);
        if with_rb {
            let groups = b.const_index(match c.cell {
                Cell::Rnn => 1,
                Cell::Gru => 3,
                Cell::Lstm => 4,
            });
            let off = loops::mul(b, groups, c.hidden);
            let rrow = loops::add(b, off, row);
            let rb = load_at(b, bb, &[d, rrow]);
            acc = scalar::add(b, acc, rb);
        }
    }
    acc
}

/// GRU's recurrent bias of the h gate (added inside the reset product).
fn gru_rbh(b: &mut Builder<'_>, c: &Ctx, d: ValueId, j: ValueId) -> ValueId {
    match c.bias {
        Some(bb) => {
            let k = b.const_index(5);
            let off = loops::mul(b, k, c.hidden);
            let row = loops::add(b, off, j);
            load_at(b, bb, &[d, row])
        }
        None => constant(b, &c.elem, 0.0),
    }
}

fn clip(b: &mut Builder<'_>, c: &Ctx, v: ValueId) -> ValueId {
    match c.clip {
        Some(l) => {
            let hi = constant(b, &c.elem, l);
            let lo = constant(b, &c.elem, -l);
            let v = scalar::max(b, v, lo);
            scalar::min(b, v, hi)
        }
        None => v,
    }
}

fn act(b: &mut Builder<'_>, c: &Ctx, dir: usize, k: usize, v: ValueId) -> ValueId {
    let per = match c.cell {
        Cell::Rnn => 1,
        Cell::Gru => 2,
        Cell::Lstm => 3,
    };
    let name = c.acts.get(dir * per + k).cloned().unwrap_or_default();
    let v = clip(b, c, v);
    activation(b, &name, v)
}

pub fn rnn(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId, kind: &str) -> Result<Vec<ValueId>> {
    let cell = match kind {
        "GRU" => Cell::Gru,
        "LSTM" => Cell::Lstm,
        _ => Cell::Rnn,
    };
    let opt = |cx: &Lowering, b: &Builder<'_>, i: usize| -> Result<Option<ValueId>> {
        cx.optional_input(b.m, op, i)
    };
    let seq_lens = opt(cx, b, 4)?;
    let x = cx.input(b.m, op, 0)?;
    let elem = elem_of(b.m, x);
    if !elem.is_float() {
        return Err(op_error(b.m, op, "expects a floating-point input"));
    }
    let direction = attr_str(b.m, op, "direction")
        .unwrap_or("forward")
        .to_string();
    let ndir = if direction == "bidirectional" { 2 } else { 1 };
    let defaults: &[&str] = match cell {
        Cell::Rnn => &["Tanh"],
        Cell::Gru => &["Sigmoid", "Tanh"],
        Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
    };
    let acts: Vec<String> = match b.m.attr(op, "activations").and_then(Attribute::as_array) {
        Some(a) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        None => (0..ndir)
            .flat_map(|_| defaults.iter().map(|s| s.to_string()))
            .collect(),
    };
    if let Some(bad) = acts
        .iter()
        .find(|a| !matches!(a.as_str(), "Sigmoid" | "Tanh" | "Relu"))
    {
        return Err(op_error(
            b.m,
            op,
            format!("activation '{bad}' is not supported"),
        ));
    }
    let batch_first = attr_int(b.m, op, "layout", 0) != 0;
    let dx = dims(b, x);
    let (seq, batch) = if batch_first {
        (dx[1], dx[0])
    } else {
        (dx[0], dx[1])
    };
    let w = cx.input(b.m, op, 1)?;
    let hidden_size = attr_int(b.m, op, "hidden_size", 0);
    let hidden = if hidden_size > 0 {
        b.const_index(hidden_size)
    } else {
        dims(b, cx.input(b.m, op, 2)?)[2]
    };
    let c = Ctx {
        cell,
        x,
        w,
        r: cx.input(b.m, op, 2)?,
        bias: opt(cx, b, 3)?,
        peep: if cell == Cell::Lstm {
            opt(cx, b, 7)?
        } else {
            None
        },
        acts,
        clip: b.m.attr(op, "clip").and_then(Attribute::as_float),
        lbr: attr_int(b.m, op, "linear_before_reset", 0) != 0,
        batch_first,
        hidden,
        input: dx[2],
        elem: elem.clone(),
    };
    let h0 = opt(cx, b, 5)?;
    let c0 = if cell == Cell::Lstm {
        opt(cx, b, 6)?
    } else {
        None
    };
    let nd = b.const_index(ndir as i64);
    let nres = b.m.results(op).len();
    let ranked: Vec<bool> = (0..3)
        .map(|i| super::result_memref_type(b.m, op, i).is_ok())
        .collect();
    let ranked = |i: usize| ranked[i];
    let y = if nres > 0 && ranked(0) {
        let sizes = if batch_first {
            vec![batch, seq, nd, hidden]
        } else {
            vec![seq, nd, batch, hidden]
        };
        Some(alloc_result(b, op, 0, &sizes)?)
    } else {
        None
    };
    let state_sizes = if batch_first {
        vec![batch, nd, hidden]
    } else {
        vec![nd, batch, hidden]
    };
    let yh = if nres > 1 && ranked(1) {
        Some(alloc_result(b, op, 1, &state_sizes)?)
    } else {
        None
    };
    let yc = if nres > 2 && ranked(2) {
        Some(alloc_result(b, op, 2, &state_sizes)?)
    } else {
        None
    };
    let bounds = Bounds::new(b);
    let scratch_ty = Type::memref(vec![ir::DYN, ir::DYN], elem.clone());
    let mk = |b: &mut Builder<'_>| alloc(b, &scratch_ty, &[batch, hidden]);
    let ngates = match cell {
        Cell::Rnn => 1,
        Cell::Gru => 3,
        Cell::Lstm => 4,
    };
    for dir in 0..ndir {
        let reverse = direction == "reverse" || dir == 1;
        let d = b.const_index(dir as i64);
        let h = mk(b);
        let cst = mk(b);
        let zero = constant(b, &elem, 0.0);
        let st = |b: &mut Builder<'_>, init: Option<ValueId>, buf: ValueId| {
            loop_nest(b, &bounds, &[batch, hidden], &mut |b, ivs| {
                let v = match init {
                    Some(i) => {
                        let idx = if batch_first {
                            [ivs[0], d, ivs[1]]
                        } else {
                            [d, ivs[0], ivs[1]]
                        };
                        load_at(b, i, &idx)
                    }
                    None => zero,
                };
                store_at(b, v, buf, ivs);
            });
        };
        st(b, h0, h);
        st(b, c0, cst);
        let gates: Vec<ValueId> = (0..ngates).map(|_| mk(b)).collect();
        let ctx = &c;
        let h_next = mk(b);
        loop_nest(b, &bounds, &[seq], &mut |b, step| {
            // Batch entry `bi` runs for its own length: (time index, active).
            let step = step[0];
            let time = |b: &mut Builder<'_>, bi: ValueId| -> (ValueId, ValueId) {
                let len = match seq_lens {
                    Some(l) => {
                        let v = load_at(b, l, &[bi]);
                        super::build::to_index(b, v)
                    }
                    None => seq,
                };
                let active = loops::cmp(b, "slt", step, len);
                let t = if reverse {
                    let last = loops::sub(b, len, bounds.one);
                    let t = loops::sub(b, last, step);
                    loops::select(b, active, t, bounds.zero)
                } else {
                    step
                };
                (t, active)
            };
            // Phase 1: gate pre-activations (GRU's h gate waits for r).
            for (g, &gb) in gates.iter().enumerate() {
                if ctx.cell == Cell::Gru && g == 2 {
                    continue;
                }
                loop_nest(b, &bounds, &[batch, hidden], &mut |b, ivs| {
                    let (t, _) = time(b, ivs[0]);
                    let v = gate(
                        b,
                        ctx,
                        &bounds,
                        d,
                        g as i64,
                        t,
                        [ivs[0], ivs[1]],
                        Some((h, None)),
                        true,
                    );
                    store_at(b, v, gb, ivs);
                });
            }
            // Phase 2: the new state.
            loop_nest(b, &bounds, &[batch, hidden], &mut |b, ivs| {
                let (t, active) = time(b, ivs[0]);
                let hv = match ctx.cell {
                    Cell::Rnn => {
                        let p = load_at(b, gates[0], ivs);
                        act(b, ctx, dir, 0, p)
                    }
                    Cell::Gru => {
                        let zp = load_at(b, gates[0], ivs);
                        let z = act(b, ctx, dir, 0, zp);
                        let hold = load_at(b, h, ivs);
                        let pre = if ctx.lbr {
                            let px = gate(b, ctx, &bounds, d, 2, t, [ivs[0], ivs[1]], None, false);
                            let ph = gate_rec_only(b, ctx, &bounds, d, [ivs[0], ivs[1]], h, None);
                            let rb = gru_rbh(b, ctx, d, ivs[1]);
                            let rp = load_at(b, gates[1], ivs);
                            let r = act(b, ctx, dir, 0, rp);
                            let s = scalar::add(b, ph, rb);
                            let rs = scalar::mul(b, r, s);
                            scalar::add(b, px, rs)
                        } else {
                            let px = gate(b, ctx, &bounds, d, 2, t, [ivs[0], ivs[1]], None, true);
                            let ph = gate_rec_only(
                                b,
                                ctx,
                                &bounds,
                                d,
                                [ivs[0], ivs[1]],
                                h,
                                Some((gates[1], dir)),
                            );
                            scalar::add(b, px, ph)
                        };
                        let ht = act(b, ctx, dir, 1, pre);
                        let one = constant(b, &ctx.elem, 1.0);
                        let omz = scalar::sub(b, one, z);
                        let a = scalar::mul(b, omz, ht);
                        let bz = scalar::mul(b, z, hold);
                        scalar::add(b, a, bz)
                    }
                    Cell::Lstm => {
                        let cold = load_at(b, cst, ivs);
                        let peep =
                            |b: &mut Builder<'_>, k: i64, v: ValueId, cv: ValueId| match ctx.peep {
                                Some(p) => {
                                    let kk = b.const_index(k);
                                    let off = loops::mul(b, kk, ctx.hidden);
                                    let col = loops::add(b, off, ivs[1]);
                                    let pv = load_at(b, p, &[d, col]);
                                    let m = scalar::mul(b, pv, cv);
                                    scalar::add(b, v, m)
                                }
                                None => v,
                            };
                        let ip = load_at(b, gates[0], ivs);
                        let ip = peep(b, 0, ip, cold);
                        let i = act(b, ctx, dir, 0, ip);
                        let fp = load_at(b, gates[2], ivs);
                        let fp = peep(b, 2, fp, cold);
                        let f = act(b, ctx, dir, 0, fp);
                        let cp = load_at(b, gates[3], ivs);
                        let ct = act(b, ctx, dir, 1, cp);
                        let fc = scalar::mul(b, f, cold);
                        let ic = scalar::mul(b, i, ct);
                        let cnew = scalar::add(b, fc, ic);
                        let keep = scalar::select(b, active, cnew, cold);
                        store_at(b, keep, cst, ivs);
                        let op_ = load_at(b, gates[1], ivs);
                        let op_ = peep(b, 1, op_, cnew);
                        let o = act(b, ctx, dir, 0, op_);
                        let hc = act(b, ctx, dir, 2, cnew);
                        scalar::mul(b, o, hc)
                    }
                };
                let hold = load_at(b, h, ivs);
                let hkeep = scalar::select(b, active, hv, hold);
                store_at(b, hkeep, h_next, ivs);
                let zero = constant(b, &ctx.elem, 0.0);
                let hv = scalar::select(b, active, hv, zero);
                if let Some(yb) = y {
                    let idx = if batch_first {
                        vec![ivs[0], t, d, ivs[1]]
                    } else {
                        vec![t, d, ivs[0], ivs[1]]
                    };
                    store_at(b, hv, yb, &idx);
                }
            });
            b.op("memref.copy", &[h_next, h], &[], &[]);
        });
        for (out, src) in [(yh, h), (yc, cst)] {
            let Some(o) = out else { continue };
            loop_nest(b, &bounds, &[batch, hidden], &mut |b, ivs| {
                let v = load_at(b, src, ivs);
                let idx = if batch_first {
                    [ivs[0], d, ivs[1]]
                } else {
                    [d, ivs[0], ivs[1]]
                };
                store_at(b, v, o, &idx);
            });
        }
    }
    // An omitted output (unranked, unused) gets a placeholder.
    let any = y
        .or(yh)
        .or(yc)
        .ok_or_else(|| op_error(b.m, op, "no output to compute"))?;
    Ok([y, yh, yc]
        .into_iter()
        .take(nres)
        .map(|v| v.unwrap_or(any))
        .collect())
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
    let base = loops::mul(b, two, c.hidden);
    let row = loops::add(b, base, j);
    let zero = constant(b, &c.elem, 0.0);
    reduce_nest(b, bounds, &[c.hidden], zero, &mut |b, k, acc| {
        let mut hv = load_at(b, h, &[bi, k[0]]);
        if let Some((rbuf, dir)) = reset {
            let rp = load_at(b, rbuf, &[bi, k[0]]);
            let r = act(b, c, dir, 0, rp);
            hv = scalar::mul(b, hv, r);
        }
        let rw = load_at(b, c.r, &[d, row, k[0]]);
        let p = scalar::mul(b, hv, rw);
        scalar::add(b, acc, p)
    })
}
