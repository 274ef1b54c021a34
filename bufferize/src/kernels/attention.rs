//! Attention (opsets 23-25) as loop nests, in the order of the ONNX
//! reference: Q and K each scaled by sqrt(scale), QKᵀ (f16/bf16 dot
//! products accumulate in f32), softcap, the additive bias (mask, causal
//! frontier, sliding window, non-pad lengths), softmax in
//! `softmax_precision`, fully masked rows zeroed, then P·V. 3-D inputs are
//! read as `[batch, seq, heads·size]`; grouped-query heads share KV heads.

use super::scalar;
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{alloc, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpF};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// Static geometry: batch, heads, lengths and head sizes.
struct Geo {
    batch: i64,
    q_heads: i64,
    kv_heads: i64,
    q_len: i64,
    new_len: i64,
    past: i64,
    head: i64,
    v_head: i64,
    rank3: bool,
}

impl Geo {
    fn total(&self) -> i64 {
        self.past + self.new_len
    }
}

/// `t[b, h, s, d]` of a 4-D tensor, or of a 3-D `[b, s, h·size + d]` one.
fn at4(b: &mut Builder<'_>, t: ValueId, rank3: bool, size: i64, idx: [ValueId; 4]) -> ValueId {
    let [n, h, s, d] = idx;
    if rank3 {
        let base = loops::scale_add(b, None, h, size);
        let col = b.add(base, d);
        b.load(t, &[n, s, col])
    } else {
        b.load(t, &idx)
    }
}

fn geometry(cx: &Lowering, b: &Builder<'_>, op: OpId) -> Result<Geo> {
    let m = &*b.m;
    let shape = |i: usize| -> Result<Vec<i64>> {
        let s = shape_of(m, cx.input(m, op, i)?);
        if s.contains(&DYN) {
            return Err(op_error(m, op, "Attention needs static shapes"));
        }
        Ok(s)
    };
    let (q, k, v) = (shape(0)?, shape(1)?, shape(2)?);
    let past = if cx.has_input(m, op, 4) {
        shape(4)?.get(2).copied().unwrap_or(0)
    } else {
        0
    };
    let bad = || op_error(m, op, "Q, K and V must all be 3-D or all 4-D");
    match (q.as_slice(), k.as_slice(), v.as_slice()) {
        ([bq, sq, hq], [_, sk, hk], [_, _, hv]) => {
            let attrs = ops::Attention::of(m, op);
            let qh = attrs.q_num_heads().unwrap_or(0);
            let kvh = attrs.kv_num_heads().unwrap_or(0);
            if qh <= 0 || kvh <= 0 || hq % qh != 0 || hk % kvh != 0 || hv % kvh != 0 {
                return Err(op_error(
                    m,
                    op,
                    "3-D Attention needs q_num_heads and kv_num_heads dividing the hidden sizes",
                ));
            }
            Ok(Geo {
                batch: *bq,
                q_heads: qh,
                kv_heads: kvh,
                q_len: *sq,
                new_len: *sk,
                past,
                head: hq / qh,
                v_head: hv / kvh,
                rank3: true,
            })
        }
        ([bq, qh, sq, d], [_, kvh, sk, _], [_, _, _, dv]) => Ok(Geo {
            batch: *bq,
            q_heads: *qh,
            kv_heads: *kvh,
            q_len: *sq,
            new_len: *sk,
            past,
            head: *d,
            v_head: *dv,
            rank3: false,
        }),
        _ => Err(bad()),
    }
}

/// The result buffer `i` when the op has that result, else a scratch buffer.
fn output(b: &mut Builder<'_>, op: OpId, i: usize, shape: &[i64], elem: &Type) -> Result<ValueId> {
    let sizes: Vec<ValueId> = shape.iter().map(|&d| b.const_index(d)).collect();
    match b.m.result(op, i) {
        Some(r) if b.m.has_uses(r) => alloc_result(b, op, i, &sizes),
        _ => Ok(alloc(b, &Type::memref(shape.to_vec(), elem.clone()), &[])),
    }
}

/// present = concat(past, new) along the sequence, as `[b, kv_heads, T, d]`.
fn present(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    g: &Geo,
    (new_i, past_i, out_i): (usize, usize, usize),
    size: i64,
) -> Result<ValueId> {
    let new = cx.input(b.m, op, new_i)?;
    let elem = elem_of(b.m, new);
    let out = output(b, op, out_i, &[g.batch, g.kv_heads, g.total(), size], &elem)?;
    let bounds = Bounds::new(b);
    let dims = |b: &mut Builder<'_>, len: i64| -> Vec<ValueId> {
        [g.batch, g.kv_heads, len, size]
            .iter()
            .map(|&d| b.const_index(d))
            .collect()
    };
    if g.past > 0 {
        let past = cx.input(b.m, op, past_i)?;
        let d = dims(b, g.past);
        loop_nest(b, &bounds, &d, &mut |b, ivs| {
            let v = b.load(past, ivs);
            b.store(v, out, ivs);
        });
    }
    let d = dims(b, g.new_len);
    let off = b.const_index(g.past);
    loop_nest(b, &bounds, &d, &mut |b, ivs| {
        let v = at4(b, new, g.rank3, size, [ivs[0], ivs[1], ivs[2], ivs[3]]);
        let s = b.add(ivs[2], off);
        b.store(v, out, &[ivs[0], ivs[1], s, ivs[3]]);
    });
    Ok(out)
}

/// The additive bias of score (n, h, i, j): the mask value, or -inf where
/// the mask, the causal frontier, the window or the non-pad length forbid.
struct Bias {
    mask: Option<(ValueId, Vec<i64>, bool)>,
    causal: bool,
    left: i64,
    right: i64,
    nonpad: Option<ValueId>,
    past: i64,
    q_len: i64,
}

impl Bias {
    fn at(&self, b: &mut Builder<'_>, elem: &Type, idx: [ValueId; 4]) -> ValueId {
        let [n, h, i, j] = idx;
        let zero = b.zero(elem);
        let ninf = scalar::lowest(b, elem);
        let mut allowed = b.const_bool(true);
        let mut value = zero;
        if let Some((mask, shape, boolean)) = &self.mask {
            // Right-aligned broadcast; the key axis is padded with -inf.
            let r = shape.len();
            let full = [n, h, i, j];
            let z = b.const_index(0);
            let len = b.const_index(shape.last().copied().unwrap_or(1));
            let inside = b.cmp(Cmp::Lt, j, len);
            let mut midx = Vec::with_capacity(r);
            for (k, &d) in shape.iter().enumerate() {
                let v = full[4 - r + k];
                midx.push(if k + 1 == r {
                    b.select(inside, v, z)
                } else if d == 1 {
                    z
                } else {
                    v
                });
            }
            let mv = b.load(*mask, &midx);
            allowed = b.andi(allowed, inside);
            if *boolean {
                allowed = b.andi(allowed, mv);
            } else {
                value = scalar::fcast(b, mv, elem);
            }
        }
        // Key positions are offset by the cache (or the non-pad length).
        let offset = match self.nonpad {
            Some(np) if self.past == 0 => {
                let len = b.load(np, &[n]);
                let len = b.index_cast(len, Type::Index);
                let q = b.const_index(self.q_len);
                Some(b.sub(len, q))
            }
            _ => None,
        };
        let offset = offset.unwrap_or_else(|| b.const_index(self.past));
        let frontier = b.add(i, offset);
        if self.causal {
            let ok = b.cmp(Cmp::Le, j, frontier);
            allowed = b.andi(allowed, ok);
        }
        let diff = b.sub(frontier, j);
        if self.left >= 0 {
            let l = b.const_index(self.left);
            let ok = b.cmp(Cmp::Le, diff, l);
            allowed = b.andi(allowed, ok);
        }
        if self.right >= 0 {
            let r = b.const_index(-self.right);
            let ok = b.cmp(Cmp::Ge, diff, r);
            allowed = b.andi(allowed, ok);
        }
        if let Some(np) = self.nonpad {
            let len = b.load(np, &[n]);
            let len = b.index_cast(len, Type::Index);
            let ok = b.cmp(Cmp::Lt, j, len);
            allowed = b.andi(allowed, ok);
        }
        b.select(allowed, value, ninf)
    }
}

/// The attention mask operand: the buffer, its static shape and whether
/// it is boolean (else additive).
fn mask(cx: &Lowering, b: &Builder<'_>, op: OpId) -> Result<Option<(ValueId, Vec<i64>, bool)>> {
    if !cx.has_input(b.m, op, 3) {
        return Ok(None);
    }
    let mv = cx.input(b.m, op, 3)?;
    let shape = shape_of(b.m, mv);
    if shape.is_empty() || shape.len() > 4 || shape.contains(&DYN) {
        return Err(op_error(b.m, op, "attn_mask must be static of rank 1 to 4"));
    }
    let boolean = elem_of(b.m, mv).int_width() == Some(1);
    Ok(Some((mv, shape, boolean)))
}

/// What the three phases share: the geometry, the operands and the
/// buffers of the scores, in `elem` and in softmax precision `sp`.
struct Plan<'a> {
    g: &'a Geo,
    elem: Type,
    sp: Type,
    /// `qk_matmul_output_mode`: which stage `qk_out` records.
    mode: i64,
    softcap: f64,
    scale: f64,
    q: ValueId,
    pk: ValueId,
    pv: ValueId,
    qk_out: ValueId,
    logits: ValueId,
    probs: ValueId,
    bias: Bias,
    /// Query heads per KV head.
    group_v: ValueId,
}

pub fn attention(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let g = geometry(cx, b, op)?;
    let q = cx.input(b.m, op, 0)?;
    let elem = elem_of(b.m, q);
    if !elem.is_float() {
        return Err(op_error(b.m, op, "Attention expects float inputs"));
    }
    let pk = present(cx, b, op, &g, (1, 4, 1), g.head)?;
    let pv = present(cx, b, op, &g, (2, 5, 2), g.v_head)?;
    let attrs = ops::Attention::of(b.m, op);
    let bias = Bias {
        mask: mask(cx, b, op)?,
        causal: attrs.is_causal() != 0,
        left: attrs.left_window_size(),
        right: attrs.right_window_size(),
        nonpad: cx.optional_input(b.m, op, 6)?,
        past: g.past,
        q_len: g.q_len,
    };
    let scale = attrs
        .scale()
        .unwrap_or_else(|| 1.0 / (g.head as f64).sqrt());
    let sp = match attrs.softmax_precision().unwrap_or(0) {
        1 => Type::f32(),
        10 => Type::Float(ir::types::FloatKind::F16),
        11 => Type::f64(),
        16 => Type::Float(ir::types::FloatKind::BF16),
        _ => elem.clone(),
    };
    let (mode, softcap) = (attrs.qk_matmul_output_mode(), attrs.softcap());
    let scores_shape = [g.batch, g.q_heads, g.q_len, g.total()];
    let qk_out = output(b, op, 3, &scores_shape, &elem)?;
    // Logits with bias in softmax precision, then probabilities in `elem`.
    let logits = alloc(b, &Type::memref(scores_shape.to_vec(), sp.clone()), &[]);
    let probs = alloc(b, &Type::memref(scores_shape.to_vec(), elem.clone()), &[]);
    let bounds = Bounds::new(b);
    let group = if g.q_heads != g.kv_heads && g.kv_heads > 0 && g.q_heads % g.kv_heads == 0 {
        g.q_heads / g.kv_heads
    } else {
        1
    };
    let plan = Plan {
        g: &g,
        elem,
        sp,
        mode,
        softcap,
        scale,
        q,
        pk,
        pv,
        qk_out,
        logits,
        probs,
        bias,
        group_v: b.const_index(group),
    };
    let all = scores(b, &plan, &bounds);
    softmax_rows(b, &plan, &bounds, &all);
    let y = weighted_values(b, op, &plan, &bounds)?;
    let mut out = vec![y, pk, pv, qk_out];
    out.truncate(b.m.results(op).len());
    Ok(out)
}

/// Scores `Q·Kᵀ` (Q and K scaled by sqrt(scale)), softcapped, into
/// `qk_out` as the mode asks and with the bias into the logits. Returns
/// the constant bounds of the score dims.
fn scores(b: &mut Builder<'_>, p: &Plan<'_>, bounds: &Bounds) -> Vec<ValueId> {
    let (g, elem) = (p.g, &p.elem);
    let acc_ty = scalar::acc_type(elem);
    let sq = b.constant(elem, p.scale.sqrt());
    let all: Vec<ValueId> = [g.batch, g.q_heads, g.q_len, g.total()]
        .iter()
        .map(|&d| b.const_index(d))
        .collect();
    let head_ub = b.const_index(g.head);
    loop_nest(b, bounds, &all, &mut |b, ivs| {
        let (n, h, i, j) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let kh = b.divui(h, p.group_v);
        let init = b.zero(&acc_ty);
        let dot = reduce_nest(b, bounds, &[head_ub], init, &mut |b, d, acc| {
            let qv = at4(b, p.q, g.rank3, g.head, [n, h, i, d[0]]);
            let kv = b.load(p.pk, &[n, kh, j, d[0]]);
            let qs = b.mul(qv, sq);
            let ks = b.mul(kv, sq);
            scalar::mul_acc(b, acc, qs, ks)
        });
        let mut s = scalar::fcast(b, dot, elem);
        if p.softcap > 0.0 {
            let c = b.constant(elem, p.softcap);
            let d = b.div(s, c);
            let th = b.tanh(d);
            s = b.mul(th, c);
        }
        let bv = p.bias.at(b, elem, [n, h, i, j]);
        let with_bias = b.add(s, bv);
        match p.mode {
            0 | 1 => b.store(s, p.qk_out, ivs),
            2 => b.store(with_bias, p.qk_out, ivs),
            _ => {}
        }
        let l = scalar::fcast(b, with_bias, &p.sp);
        b.store(l, p.logits, ivs);
    });
    all
}

/// Softmax of each row of the logits into the probabilities; rows whose
/// bias is -inf everywhere become 0.
fn softmax_rows(b: &mut Builder<'_>, p: &Plan<'_>, bounds: &Bounds, all: &[ValueId]) {
    let (elem, sp) = (&p.elem, &p.sp);
    let rows = &all[..3];
    let key_ub = [all[3]];
    let sum_ty = scalar::sum_acc_type(sp);
    loop_nest(b, bounds, rows, &mut |b, r| {
        let at = |j: ValueId| vec![r[0], r[1], r[2], j];
        let lo = scalar::lowest(b, sp);
        let mx = reduce_nest(b, bounds, &key_ub, lo, &mut |b, j, acc| {
            let v = b.load(p.logits, &at(j[0]));
            b.max(acc, v)
        });
        let lo_e = scalar::lowest(b, elem);
        let bmax = reduce_nest(b, bounds, &key_ub, lo_e, &mut |b, j, acc| {
            let v = p.bias.at(b, elem, [r[0], r[1], r[2], j[0]]);
            b.max(acc, v)
        });
        let ninf = scalar::lowest(b, sp);
        let masked_row = b.cmpf(CmpF::Oeq, mx, ninf);
        let zero = b.zero(sp);
        let safe = b.select(masked_row, zero, mx);
        let z = b.zero(&sum_ty);
        let sum = reduce_nest(b, bounds, &key_ub, z, &mut |b, j, acc| {
            let v = b.load(p.logits, &at(j[0]));
            let d = b.sub(v, safe);
            let e = b.exp(d);
            b.store(e, p.logits, &at(j[0]));
            let e = scalar::fcast(b, e, &sum_ty);
            b.add(acc, e)
        });
        let sum = scalar::fcast(b, sum, sp);
        let one = b.one(sp);
        let is_zero = b.cmpf(CmpF::Oeq, sum, zero);
        let sum = b.select(is_zero, one, sum);
        let ninf_e = scalar::lowest(b, elem);
        let dead = b.cmpf(CmpF::Oeq, bmax, ninf_e);
        loop_nest(b, bounds, &key_ub, &mut |b, j| {
            let idx = at(j[0]);
            let e = b.load(p.logits, &idx);
            let pr = b.div(e, sum);
            let pr = b.select(dead, zero, pr);
            let pr = scalar::fcast(b, pr, elem);
            b.store(pr, p.probs, &idx);
            if p.mode == 3 {
                b.store(pr, p.qk_out, &idx);
            }
        });
    });
}

/// Y = P · V, in the layout of Q.
fn weighted_values(
    b: &mut Builder<'_>,
    op: OpId,
    p: &Plan<'_>,
    bounds: &Bounds,
) -> Result<ValueId> {
    let g = p.g;
    let y_shape = if g.rank3 {
        vec![g.batch, g.q_len, g.q_heads * g.v_head]
    } else {
        vec![g.batch, g.q_heads, g.q_len, g.v_head]
    };
    let y_sizes: Vec<ValueId> = y_shape.iter().map(|&d| b.const_index(d)).collect();
    let y = alloc_result(b, op, 0, &y_sizes)?;
    let ubs: Vec<ValueId> = [g.batch, g.q_heads, g.q_len, g.v_head]
        .iter()
        .map(|&d| b.const_index(d))
        .collect();
    let t_ub = [b.const_index(g.total())];
    let acc_ty = scalar::acc_type(&p.elem);
    loop_nest(b, bounds, &ubs, &mut |b, ivs| {
        let (n, h, i, d) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let kh = b.divui(h, p.group_v);
        let init = b.zero(&acc_ty);
        let acc = reduce_nest(b, bounds, &t_ub, init, &mut |b, j, acc| {
            let pr = b.load(p.probs, &[n, h, i, j[0]]);
            let v = b.load(p.pv, &[n, kh, j[0], d]);
            scalar::mul_acc(b, acc, pr, v)
        });
        let r = scalar::fcast(b, acc, &p.elem);
        if g.rank3 {
            let base = loops::scale_add(b, None, h, g.v_head);
            let col = b.add(base, d);
            b.store(r, y, &[n, i, col]);
        } else {
            b.store(r, y, ivs);
        }
    });
    Ok(y)
}
