//! Attention (opsets 23-25) as loop nests, in the order of the ONNX
//! reference: Q and K each scaled by sqrt(scale), QKᵀ (f16/bf16 dot
//! products accumulate in f32), softcap, the additive bias (mask, causal
//! frontier, sliding window, non-pad lengths), softmax in
//! `softmax_precision`, fully masked rows zeroed, then P·V. 3-D inputs are
//! read as `[batch, seq, heads·size]`; grouped-query heads share KV heads.

mod products;

use crate::convert::{dims, Lowering};
use crate::kernels::signal::interp::{f64c, idx_to_f};
use crate::kernels::support::scalar;
use crate::kernels::{
    support::alloc_result, support::alloc_sized, support::checks, support::elem_of,
    support::shape_of,
};
use crate::loops::{independent_nest_by_work, loop_nest, reduce_nest, Bounds, PARALLEL_MIN_WORK};
use ir::builder::{Cmp, CmpF};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The geometry, every size a runtime value: batch, heads, lengths (the
/// cache's, the new keys', their total) and head sizes.
struct Geo {
    batch: ValueId,
    q_heads: ValueId,
    kv_heads: ValueId,
    q_len: ValueId,
    new_len: ValueId,
    past: Option<ValueId>,
    total: ValueId,
    head: ValueId,
    v_head: ValueId,
    rank3: bool,
}

/// `t[b, h, s, d]` of a 4-D tensor, or of a 3-D `[b, s, h·size + d]` one.
fn at4(b: &mut Builder<'_>, t: ValueId, rank3: bool, size: ValueId, idx: [ValueId; 4]) -> ValueId {
    let [n, h, s, d] = idx;
    if rank3 {
        let base = b.muli(h, size);
        let col = b.add(base, d);
        b.load(t, &[n, s, col])
    } else {
        b.load(t, &idx)
    }
}

/// `hidden / heads` for a 3-D input, checked to divide at run time.
pub(crate) fn per_head(
    b: &mut Builder<'_>,
    op: OpId,
    hidden: ValueId,
    heads: i64,
    what: &str,
) -> Result<ValueId> {
    let h = b.const_index(heads);
    let msg = format!("{what} is not a multiple of its head count");
    checks::divides(b, op, hidden, h, &msg)?;
    Ok(b.divui(hidden, h))
}

fn geometry(cx: &Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Geo> {
    let (q, k, v) = (
        cx.input(b.m, op, ops::Attention::Q)?,
        cx.input(b.m, op, ops::Attention::K)?,
        cx.input(b.m, op, ops::Attention::V)?,
    );
    let (dq, dk, dv) = (dims(b, q), dims(b, k), dims(b, v));
    let attrs = ops::Attention::of(b.m, op);
    let (qh, kvh) = (
        attrs.q_num_heads().unwrap_or(0),
        attrs.kv_num_heads().unwrap_or(0),
    );
    // (heads, length, head size) of Q, K and V.
    let (gq, gk, gv, rank3) = match (dq.len(), dk.len(), dv.len()) {
        (3, 3, 3) => {
            if qh <= 0 || kvh <= 0 {
                let msg = "3-D Attention needs q_num_heads and kv_num_heads";
                return Err(op_error(b.m, op, msg));
            }
            let (hq, hk) = (b.const_index(qh), b.const_index(kvh));
            let d = per_head(b, op, dq[2], qh, "Q's hidden size")?;
            let dk_ = per_head(b, op, dk[2], kvh, "K's hidden size")?;
            let dv_ = per_head(b, op, dv[2], kvh, "V's hidden size")?;
            ([hq, dq[1], d], [hk, dk[1], dk_], [hk, dv[1], dv_], true)
        }
        (4, 4, 4) => (
            [dq[1], dq[2], dq[3]],
            [dk[1], dk[2], dk[3]],
            [dv[1], dv[2], dv[3]],
            false,
        ),
        _ => return Err(op_error(b.m, op, "Q, K and V must all be 3-D or all 4-D")),
    };
    checks::equal(b, op, dk[0], dq[0], "K's batch differs from Q's")?;
    checks::equal(b, op, dv[0], dq[0], "V's batch differs from Q's")?;
    checks::equal(b, op, gk[2], gq[2], "K's head size differs from Q's")?;
    checks::equal(b, op, gv[0], gk[0], "V's head count differs from K's")?;
    checks::equal(b, op, gv[1], gk[1], "V's sequence length differs from K's")?;
    let msg = "the query heads are not a multiple of the key/value heads";
    checks::divides(b, op, gq[0], gk[0], msg)?;
    let past = match cx.optional_input(b.m, op, ops::Attention::PAST_KEY)? {
        Some(pk) => {
            let dp = dims(b, pk);
            if dp.len() != 4 {
                return Err(op_error(b.m, op, "past_key must be 4-D"));
            }
            Some(dp[2])
        }
        None => None,
    };
    let total = match past {
        Some(p) => b.addi(p, gk[1]),
        None => gk[1],
    };
    Ok(Geo {
        batch: dq[0],
        q_heads: gq[0],
        kv_heads: gk[0],
        q_len: gq[1],
        new_len: gk[1],
        past,
        total,
        head: gq[2],
        v_head: gv[2],
        rank3,
    })
}

/// The result buffer `i` when the op has that result, else a scratch buffer.
fn output(
    b: &mut Builder<'_>,
    op: OpId,
    i: usize,
    sizes: &[ValueId],
    elem: &Type,
) -> Result<ValueId> {
    match b.m.result(op, i) {
        Some(r) if b.m.has_uses(r) => alloc_result(b, op, i, sizes),
        _ => Ok(alloc_sized(b, elem, sizes)),
    }
}

/// present = concat(past, new) along the sequence, as `[b, kv_heads, T, d]`.
fn present(
    cx: &Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    g: &Geo,
    (new_i, past_i, out_i): (usize, usize, usize),
    size: ValueId,
) -> Result<ValueId> {
    let new = cx.input(b.m, op, new_i)?;
    let elem = elem_of(b.m, new);
    let out = output(b, op, out_i, &[g.batch, g.kv_heads, g.total, size], &elem)?;
    let bounds = Bounds::new(b);
    let offset = match g.past {
        Some(len) => {
            let past = cx.input(b.m, op, past_i)?;
            let dp = dims(b, past);
            let want = [g.batch, g.kv_heads, len, size];
            for (k, (&have, &w)) in dp.iter().zip(&want).enumerate() {
                let msg = format!("input {past_i} dim {k} does not fit the keys and values");
                checks::equal(b, op, have, w, &msg)?;
            }
            loop_nest(b, &bounds, &want, &mut |b, ivs| {
                let v = b.load(past, ivs);
                b.store(v, out, ivs);
            });
            len
        }
        None => bounds.zero,
    };
    let d = [g.batch, g.kv_heads, g.new_len, size];
    loop_nest(b, &bounds, &d, &mut |b, ivs| {
        let v = at4(b, new, g.rank3, size, [ivs[0], ivs[1], ivs[2], ivs[3]]);
        let s = b.add(ivs[2], offset);
        b.store(v, out, &[ivs[0], ivs[1], s, ivs[3]]);
    });
    Ok(out)
}

/// The attention mask: its buffer, static shape and sizes, and whether it
/// is boolean (else additive).
struct Mask {
    buf: ValueId,
    shape: Vec<i64>,
    sizes: Vec<ValueId>,
    boolean: bool,
}

/// The additive bias of score (n, h, i, j): the mask value, or -inf where
/// the mask, the causal frontier, the window or the non-pad length forbid.
struct Bias {
    mask: Option<Mask>,
    causal: bool,
    left: i64,
    right: i64,
    nonpad: Option<ValueId>,
    /// The cache length (0 without one).
    past: ValueId,
    has_past: bool,
    q_len: ValueId,
}

impl Bias {
    fn at(&self, b: &mut Builder<'_>, elem: &Type, idx: [ValueId; 4]) -> ValueId {
        let [n, h, i, j] = idx;
        let zero = b.zero(elem);
        let ninf = scalar::lowest(b, elem);
        let mut allowed = b.const_bool(true);
        let mut value = zero;
        if let Some(mk) = &self.mask {
            // Right-aligned broadcast; the key axis is padded with -inf.
            let r = mk.shape.len();
            let full = [n, h, i, j];
            let z = b.const_index(0);
            let one = b.const_index(1);
            let len = mk.sizes[r - 1];
            let inside = b.cmp(Cmp::Lt, j, len);
            let mut midx = Vec::with_capacity(r);
            for (k, &d) in mk.shape.iter().enumerate() {
                let v = full[4 - r + k];
                midx.push(if k + 1 == r {
                    b.select(inside, v, z)
                } else if d == 1 {
                    z
                } else if d == ir::DYN {
                    let is1 = b.cmp(Cmp::Eq, mk.sizes[k], one);
                    b.select(is1, z, v)
                } else {
                    v
                });
            }
            let mv = b.load(mk.buf, &midx);
            allowed = b.andi(allowed, inside);
            if mk.boolean {
                allowed = b.andi(allowed, mv);
            } else {
                value = scalar::fcast(b, mv, elem);
            }
        }
        // Key positions are offset by the cache (or the non-pad length).
        let offset = match self.nonpad {
            Some(np) if !self.has_past => {
                let len = b.load(np, &[n]);
                let len = b.index_cast(len, Type::Index);
                Some(b.sub(len, self.q_len))
            }
            _ => None,
        };
        let offset = offset.unwrap_or(self.past);
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

/// The attention mask operand, of rank 1 to 4.
fn mask(cx: &Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Option<Mask>> {
    let Some(buf) = cx.optional_input(b.m, op, ops::Attention::ATTN_MASK)? else {
        return Ok(None);
    };
    let shape = shape_of(b.m, buf);
    if shape.is_empty() || shape.len() > 4 {
        return Err(op_error(b.m, op, "attn_mask must have rank 1 to 4"));
    }
    let boolean = elem_of(b.m, buf).int_width() == Some(1);
    let sizes = dims(b, buf);
    Ok(Some(Mask {
        buf,
        shape,
        sizes,
        boolean,
    }))
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
    /// The `scale` attribute (default 1/sqrt(head size)).
    scale: Option<f64>,
    q: ValueId,
    pk: ValueId,
    pv: ValueId,
    qk_out: ValueId,
    logits: ValueId,
    probs: ValueId,
    bias: Bias,
    /// Query heads per KV head.
    group_v: ValueId,
    /// The products' GEMM, for f32 and f64.
    gemm: Option<crate::kernels::linalg::gemm::Isa>,
}

pub fn attention(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let g = geometry(cx, b, op)?;
    let q = cx.input(b.m, op, ops::Attention::Q)?;
    let elem = elem_of(b.m, q);
    if !elem.is_float() {
        return Err(op_error(b.m, op, "Attention expects float inputs"));
    }
    let pk = present(
        cx,
        b,
        op,
        &g,
        (ops::Attention::K, ops::Attention::PAST_KEY, 1),
        g.head,
    )?;
    let pv = present(
        cx,
        b,
        op,
        &g,
        (ops::Attention::V, ops::Attention::PAST_VALUE, 2),
        g.v_head,
    )?;
    let mask = mask(cx, b, op)?;
    let nonpad = cx.optional_input(b.m, op, ops::Attention::NONPAD_KV_SEQLEN)?;
    let zero = b.const_index(0);
    let attrs = ops::Attention::of(b.m, op);
    let bias = Bias {
        mask,
        causal: attrs.is_causal() != 0,
        left: attrs.left_window_size(),
        right: attrs.right_window_size(),
        nonpad,
        past: g.past.unwrap_or(zero),
        has_past: g.past.is_some(),
        q_len: g.q_len,
    };
    let scale = attrs.scale();
    let sp = match attrs.softmax_precision().unwrap_or(0) {
        1 => Type::f32(),
        10 => Type::Float(ir::types::FloatKind::F16),
        11 => Type::f64(),
        16 => Type::Float(ir::types::FloatKind::BF16),
        _ => elem.clone(),
    };
    let (mode, softcap) = (attrs.qk_matmul_output_mode(), attrs.softcap());
    let scores_shape = [g.batch, g.q_heads, g.q_len, g.total];
    let qk_out = output(b, op, 3, &scores_shape, &elem)?;
    // Logits with bias in softmax precision, then probabilities in `elem`.
    let logits = alloc_sized(b, &sp, &scores_shape);
    let probs = alloc_sized(b, &elem, &scores_shape);
    let bounds = Bounds::new(b);
    // Checked to divide (geometry).
    let group_v = b.divui(g.q_heads, g.kv_heads);
    let gemm = products::on_gemm(&elem).then_some(cx.gemm);
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
        group_v,
        gemm,
    };
    let all = scores(b, &plan, &bounds);
    let lanes = crate::kernels::support::vector_lanes(&plan.elem, cx.vector_bits);
    if plan.sp == plan.elem && plan.mode != 3 && lanes > 0 {
        // Vector rows; a fully masked row (-inf throughout) gives zeros.
        let norm = (crate::kernels::nn::softmax::Norm::Softmax, true);
        crate::kernels::nn::softmax::rows_into(cx, b, (plan.logits, plan.probs), norm, lanes);
    } else {
        softmax_rows(b, &plan, &bounds, &all);
    }
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
    // sqrt(scale), the scale defaulting to 1/sqrt(head size).
    let sq = match (p.scale, b.index_value(g.head)) {
        (Some(s), _) => b.constant(elem, s.sqrt()),
        (None, Some(h)) => b.constant(elem, (h as f64).powf(-0.25)),
        (None, None) => {
            let hf = idx_to_f(b, g.head);
            let r = b.sqrt(hf);
            let r = b.sqrt(r);
            let one = f64c(b, 1.0);
            let v = b.divf(one, r);
            scalar::fcast(b, v, elem)
        }
    };
    let all = vec![g.batch, g.q_heads, g.q_len, g.total];
    // On the GEMM: the raw products into the probabilities' buffer first
    // (the softmax overwrites them), scaled here by sqrt(scale)².
    if let Some(isa) = p.gemm {
        products::scores(b, isa, p, p.probs);
    }
    let sq2 = b.mul(sq, sq);
    let head_ub = g.head;
    // Element by element (the bias, softcap and casts): on threads, for
    // the GEMM's share on two cores was smaller than this loop's.
    independent_nest_by_work(b, bounds, &all, PARALLEL_MIN_WORK, &mut |b, ivs| {
        let (n, h, i, j) = (ivs[0], ivs[1], ivs[2], ivs[3]);
        let dot = match p.gemm {
            Some(_) => {
                let raw = b.load(p.probs, ivs);
                b.mul(raw, sq2)
            }
            None => {
                let kh = b.divui(h, p.group_v);
                let init = b.zero(&acc_ty);
                reduce_nest(b, bounds, &[head_ub], init, &mut |b, d, acc| {
                    let qv = at4(b, p.q, g.rank3, g.head, [n, h, i, d[0]]);
                    let kv = b.load(p.pk, &[n, kh, j, d[0]]);
                    let qs = b.mul(qv, sq);
                    let ks = b.mul(kv, sq);
                    scalar::mul_acc(b, acc, qs, ks)
                })
            }
        };
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

/// Softmax of each row of the logits into the probabilities, element by
/// element (a softmax precision other than the inputs' type, or the
/// probabilities recorded); rows whose bias is -inf everywhere become 0.
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
    let y_sizes = if g.rank3 {
        let hidden = b.muli(g.q_heads, g.v_head);
        vec![g.batch, g.q_len, hidden]
    } else {
        vec![g.batch, g.q_heads, g.q_len, g.v_head]
    };
    let y = alloc_result(b, op, 0, &y_sizes)?;
    if let Some(isa) = p.gemm {
        products::weighted_values(b, isa, p, y);
        return Ok(y);
    }
    let ubs = [g.batch, g.q_heads, g.q_len, g.v_head];
    let t_ub = [g.total];
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
            let base = b.muli(h, g.v_head);
            let col = b.add(base, d);
            b.store(r, y, &[n, i, col]);
        } else {
            b.store(r, y, ivs);
        }
    });
    Ok(y)
}
