//! LinearAttention: the recurrent form of the ONNX reference, in f32. Per
//! time step the state `[B, H_kv, d_k, d_v]` decays (`gated*`), the value is
//! delta-corrected against what the state retrieves for the key (`*delta`),
//! the key ⊗ value outer product is added, and each query head reads its KV
//! head's state. Inputs are `[B, T, heads·size]`.

use crate::convert::{dims, Lowering};
use crate::kernels::nn::attention::per_head;
use crate::kernels::{
    support::alloc_result, support::alloc_sized, support::checks, support::elem_of,
    support::scalar, support::shape_of,
};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// `t[n, s, h·size + d]` as f32.
fn at3(b: &mut Builder<'_>, t: ValueId, size: ValueId, [n, s, h, d]: [ValueId; 4]) -> ValueId {
    let base = b.muli(h, size);
    let col = b.add(base, d);
    let v = b.load(t, &[n, s, col]);
    scalar::fcast(b, v, &Type::f32())
}

/// The operands and sizes (runtime values but the head counts): batch,
/// steps, heads, key and value head sizes, and the layouts of the decay
/// and beta.
struct Geo {
    q: ValueId,
    k: ValueId,
    v: ValueId,
    past: Option<ValueId>,
    decay: Option<ValueId>,
    beta: Option<ValueId>,
    bs: ValueId,
    t: ValueId,
    qh: i64,
    kvh: i64,
    dk: ValueId,
    dv: ValueId,
    group: i64,
    /// The `scale` attribute; 0 means 1/sqrt(d_k).
    scale: f64,
    /// The decay has one entry per key dim (else one per head).
    decay_per_dim: Flag,
    /// One beta for every head.
    beta_shared: Flag,
}

/// A condition known now or only at run time.
#[derive(Clone, Copy)]
enum Flag {
    Known(bool),
    Runtime(ValueId),
}

impl Flag {
    /// `x == y` of two sizes.
    fn equal(b: &mut Builder<'_>, x: ValueId, y: ValueId) -> Flag {
        match (b.index_value(x), b.index_value(y)) {
            (Some(p), Some(q)) => Flag::Known(p == q),
            _ => Flag::Runtime(b.cmpi(CmpI::Eq, x, y)),
        }
    }

    /// `x` when the condition holds, else `y`.
    fn pick(self, b: &mut Builder<'_>, x: ValueId, y: ValueId) -> ValueId {
        match self {
            Flag::Known(c) => {
                if c {
                    x
                } else {
                    y
                }
            }
            Flag::Runtime(c) => b.select(c, x, y),
        }
    }
}

fn geometry(cx: &Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Geo> {
    let (q, k, v) = (
        cx.input(b.m, op, ops::LinearAttention::QUERY)?,
        cx.input(b.m, op, ops::LinearAttention::KEY)?,
        cx.input(b.m, op, ops::LinearAttention::VALUE)?,
    );
    let past = cx.optional_input(b.m, op, ops::LinearAttention::PAST_STATE)?;
    let (decay, beta) = (
        cx.optional_input(b.m, op, ops::LinearAttention::DECAY)?,
        cx.optional_input(b.m, op, ops::LinearAttention::BETA)?,
    );
    let attrs = ops::LinearAttention::of(b.m, op);
    let (gating, delta) = match attrs.update_rule() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        other => return Err(op_error(b.m, op, format!("unknown update_rule '{other}'"))),
    };
    if gating != decay.is_some() || delta != beta.is_some() {
        return Err(op_error(
            b.m,
            op,
            "decay/beta inputs do not fit the update_rule",
        ));
    }
    let (qh, kvh, scale) = (attrs.q_num_heads(), attrs.kv_num_heads(), attrs.scale());
    let rank3 = |v: Option<ValueId>| v.is_none_or(|v| shape_of(b.m, v).len() == 3);
    if !rank3(Some(q)) || !rank3(Some(k)) || !rank3(Some(v)) || !rank3(decay) || !rank3(beta) {
        return Err(op_error(
            b.m,
            op,
            "query, key, value, decay and beta must be 3-D",
        ));
    }
    if qh <= 0 || kvh <= 0 || qh % kvh != 0 {
        return Err(op_error(
            b.m,
            op,
            "needs q_num_heads a multiple of kv_num_heads",
        ));
    }
    let (dq, dkey, dval) = (dims(b, q), dims(b, k), dims(b, v));
    let (bs, t) = (dq[0], dq[1]);
    let dk = per_head(b, op, dq[2], qh, "the query's hidden size")?;
    let dv = per_head(b, op, dval[2], kvh, "the value's hidden size")?;
    let kvh_v = b.const_index(kvh);
    let key_hidden = b.muli(kvh_v, dk);
    checks::equal(
        b,
        op,
        dkey[2],
        key_hidden,
        "the key's hidden size differs from kv_num_heads × d_k",
    )?;
    for (i, d) in [(1, &dkey), (2, &dval)] {
        checks::equal(
            b,
            op,
            d[0],
            bs,
            &format!("input {i} dim 0 differs from the query's"),
        )?;
        checks::equal(
            b,
            op,
            d[1],
            t,
            &format!("input {i} dim 1 differs from the query's"),
        )?;
    }
    let (decay_per_dim, beta_shared) = layouts(b, (decay, beta), key_hidden);
    let group = qh / kvh;
    Ok(Geo {
        q,
        k,
        v,
        past,
        decay,
        beta,
        bs,
        t,
        qh,
        kvh,
        dk,
        dv,
        group,
        scale,
        decay_per_dim,
        beta_shared,
    })
}

/// Whether the decay has one entry per key dim (its last dim is
/// `key_hidden`) and whether one beta serves every head (last dim 1).
fn layouts(
    b: &mut Builder<'_>,
    (decay, beta): (Option<ValueId>, Option<ValueId>),
    key_hidden: ValueId,
) -> (Flag, Flag) {
    let one = b.const_index(1);
    let mut last_is = |v: Option<ValueId>, n: ValueId| match v {
        Some(v) => {
            let d = dims(b, v)[2];
            Flag::equal(b, d, n)
        }
        None => Flag::Known(false),
    };
    (last_is(decay, key_hidden), last_is(beta, one))
}

/// The index constants and scratch buffers of the recurrence: the state
/// `[B, H_kv, d_k, d_v]` and the corrected values `[B, H_kv, d_v]`.
struct Rec<'a> {
    g: &'a Geo,
    bounds: &'a Bounds,
    state: ValueId,
    vt: ValueId,
    dk_ub: ValueId,
    dv_ub: ValueId,
}

impl Rec<'_> {
    /// state *= exp(decay), per head or per key dim.
    fn decay(&self, b: &mut Builder<'_>, dc: ValueId, [n, s, g]: [ValueId; 3]) {
        let (geo, bounds) = (self.g, self.bounds);
        loop_nest(b, bounds, &[self.dk_ub, self.dv_ub], &mut |b, dm| {
            let size = geo.decay_per_dim.pick(b, geo.dk, bounds.one);
            let d = geo.decay_per_dim.pick(b, dm[0], bounds.zero);
            let e = at3(b, dc, size, [n, s, g, d]);
            let e = b.exp(e);
            let idx = [n, g, dm[0], dm[1]];
            let st = b.load(self.state, &idx);
            let r = b.mul(st, e);
            b.store(r, self.state, &idx);
        });
    }

    /// v_t, delta-corrected: beta · (v - Sᵀk).
    fn values(&self, b: &mut Builder<'_>, [n, s, g]: [ValueId; 3]) {
        let (geo, bounds) = (self.g, self.bounds);
        let f32t = Type::f32();
        loop_nest(b, bounds, &[self.dv_ub], &mut |b, m| {
            let vv = at3(b, geo.v, geo.dv, [n, s, g, m[0]]);
            let r = match geo.beta {
                Some(bt) => {
                    let z = b.zero(&f32t);
                    let got = reduce_nest(b, bounds, &[self.dk_ub], z, &mut |b, d, acc| {
                        let st = b.load(self.state, &[n, g, d[0], m[0]]);
                        let kv = at3(b, geo.k, geo.dk, [n, s, g, d[0]]);
                        scalar::mul_acc(b, acc, st, kv)
                    });
                    let head = geo.beta_shared.pick(b, bounds.zero, g);
                    let be = at3(b, bt, bounds.one, [n, s, head, bounds.zero]);
                    let diff = b.sub(vv, got);
                    b.mul(be, diff)
                }
                None => vv,
            };
            b.store(r, self.vt, &[n, g, m[0]]);
        });
    }

    /// state += k ⊗ v_t.
    fn accumulate(&self, b: &mut Builder<'_>, [n, s, g]: [ValueId; 3]) {
        let geo = self.g;
        loop_nest(b, self.bounds, &[self.dk_ub, self.dv_ub], &mut |b, dm| {
            let kv = at3(b, geo.k, geo.dk, [n, s, g, dm[0]]);
            let vv = b.load(self.vt, &[n, g, dm[1]]);
            let idx = [n, g, dm[0], dm[1]];
            let st = b.load(self.state, &idx);
            let r = scalar::mul_acc(b, st, kv, vv);
            b.store(r, self.state, &idx);
        });
    }
}

pub fn linear_attention(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let geo = geometry(cx, b, op)?;
    let (bs, dk, dv) = (geo.bs, geo.dk, geo.dv);
    let elem = elem_of(b.m, geo.q);
    let f32t = Type::f32();
    let bounds = Bounds::new(b);
    let (kvh, qh) = (b.const_index(geo.kvh), b.const_index(geo.qh));
    let state_dims = [bs, kvh, dk, dv];
    if let Some(p) = geo.past {
        let dp = dims(b, p);
        if dp.len() != 4 {
            return Err(op_error(b.m, op, "past_state must be 4-D"));
        }
        for (k, (&have, &want)) in dp.iter().zip(&state_dims).enumerate() {
            let msg = format!("past_state dim {k} does not fit the query, key and value");
            checks::equal(b, op, have, want, &msg)?;
        }
    }
    let state = alloc_sized(b, &f32t, &state_dims);
    loop_nest(b, &bounds, &state_dims, &mut |b, ivs| {
        let s = match geo.past {
            Some(p) => {
                let v = b.load(p, ivs);
                scalar::fcast(b, v, &f32t)
            }
            None => b.zero(&f32t),
        };
        b.store(s, state, ivs);
    });
    let vt = alloc_sized(b, &f32t, &[bs, kvh, dv]);
    let hidden = b.muli(qh, dv);
    let y = alloc_result(b, op, 0, &[bs, geo.t, hidden])?;
    let group_v = b.const_index(geo.group);
    let t_ub = geo.t;
    let bg = [bs, kvh];
    let (dk_ub, dv_ub) = (dk, dv);
    let read_dims = [bs, qh, dv];
    // 0 (the default) means 1/sqrt(d_k).
    let scale_c = match (geo.scale, b.index_value(dk)) {
        (s, _) if s != 0.0 => b.constant(&f32t, s),
        (_, Some(d)) => b.constant(&f32t, 1.0 / (d as f64).sqrt()),
        _ => {
            let df = crate::kernels::signal::interp::idx_to_f(b, dk);
            let r = b.sqrt(df);
            let one = crate::kernels::signal::interp::f64c(b, 1.0);
            let v = b.divf(one, r);
            scalar::fcast(b, v, &f32t)
        }
    };
    let rec = Rec {
        g: &geo,
        bounds: &bounds,
        state,
        vt,
        dk_ub,
        dv_ub,
    };
    b.scf_for(bounds.zero, t_ub, bounds.one, &[], |b, s, _| {
        loop_nest(b, &bounds, &bg, &mut |b, ng| {
            let nsg = [ng[0], s, ng[1]];
            if let Some(dc) = geo.decay {
                rec.decay(b, dc, nsg);
            }
            rec.values(b, nsg);
            rec.accumulate(b, nsg);
        });
        // o[n, s, h·d_v + m] = scale · Σ_d q · S[kv head of h].
        loop_nest(b, &bounds, &read_dims, &mut |b, ivs| {
            let (n, h, m) = (ivs[0], ivs[1], ivs[2]);
            let g = b.divui(h, group_v);
            let z = b.zero(&f32t);
            let sum = reduce_nest(b, &bounds, &[dk_ub], z, &mut |b, d, acc| {
                let qv = at3(b, geo.q, dk, [n, s, h, d[0]]);
                let st = b.load(state, &[n, g, d[0], m]);
                scalar::mul_acc(b, acc, qv, st)
            });
            let r = b.mul(scale_c, sum);
            let r = scalar::fcast(b, r, &elem);
            let base = b.muli(h, dv);
            let col = b.add(base, m);
            b.store(r, y, &[n, s, col]);
        });
        Vec::new()
    });
    let mut out = vec![y];
    if b.m.results(op).len() > 1 {
        let present = alloc_result(b, op, 1, &state_dims)?;
        let pt = crate::kernels::support::result_memref_type(b.m, op, 1)?
            .element_type()
            .clone();
        loop_nest(b, &bounds, &state_dims, &mut |b, ivs| {
            let v = b.load(state, ivs);
            let v = scalar::fcast(b, v, &pt);
            b.store(v, present, ivs);
        });
        out.push(present);
    }
    Ok(out)
}
