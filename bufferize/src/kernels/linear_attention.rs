//! LinearAttention: the recurrent form of the ONNX reference, in f32. Per
//! time step the state `[B, H_kv, d_k, d_v]` decays (`gated*`), the value is
//! delta-corrected against what the state retrieves for the key (`*delta`),
//! the key ⊗ value outer product is added, and each query head reads its KV
//! head's state. Inputs are `[B, T, heads·size]`.

use super::scalar;
use super::{alloc_result, elem_of, shape_of};
use crate::convert::{alloc, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// `t[n, s, h·size + d]` as f32.
fn at3(b: &mut Builder<'_>, t: ValueId, size: i64, [n, s, h, d]: [ValueId; 4]) -> ValueId {
    let base = loops::scale_add(b, None, h, size);
    let col = b.add(base, d);
    let v = b.load(t, &[n, s, col]);
    scalar::fcast(b, v, &Type::f32())
}

/// The operands and static sizes: batch, steps, heads, key and value
/// head sizes, and the flags of the decay and beta layouts.
struct Geo {
    q: ValueId,
    k: ValueId,
    v: ValueId,
    past: Option<ValueId>,
    decay: Option<ValueId>,
    beta: Option<ValueId>,
    bs: i64,
    t: i64,
    qh: i64,
    kvh: i64,
    dk: i64,
    dv: i64,
    group: i64,
    scale: f64,
    /// The decay has one entry per key dim (else one per head).
    decay_per_dim: bool,
    /// One beta for every head.
    beta_shared: bool,
}

fn geometry(cx: &Lowering, b: &Builder<'_>, op: OpId) -> Result<Geo> {
    let (q, k, v) = (
        cx.input(b.m, op, 0)?,
        cx.input(b.m, op, 1)?,
        cx.input(b.m, op, 2)?,
    );
    let past = cx.optional_input(b.m, op, 3)?;
    let (decay, beta) = (
        cx.optional_input(b.m, op, 4)?,
        cx.optional_input(b.m, op, 5)?,
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
    let (qh, kvh) = (attrs.q_num_heads(), attrs.kv_num_heads());
    let (sq, sv) = (shape_of(b.m, q), shape_of(b.m, v));
    let ([bs, t, qhd], [_, _, vhd]) = (sq.as_slice(), sv.as_slice()) else {
        return Err(op_error(b.m, op, "query, key and value must be 3-D"));
    };
    let (bs, t) = (*bs, *t);
    let rank3 = |v: Option<ValueId>| v.is_none_or(|v| shape_of(b.m, v).len() == 3);
    if !rank3(Some(k)) || !rank3(decay) || !rank3(beta) {
        return Err(op_error(b.m, op, "key, decay and beta must be 3-D"));
    }
    if qh <= 0 || kvh <= 0 || qh % kvh != 0 || [bs, t, *qhd, *vhd].contains(&DYN) {
        return Err(op_error(
            b.m,
            op,
            "needs static shapes and q_num_heads a multiple of kv_num_heads",
        ));
    }
    let (dk, dv, group) = (qhd / qh, vhd / kvh, qh / kvh);
    // 0 (the default) means 1/sqrt(d_k).
    let scale = Some(attrs.scale())
        .filter(|&s| s != 0.0)
        .unwrap_or(1.0 / (dk as f64).sqrt());
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
        decay_per_dim: decay.is_some_and(|d| shape_of(b.m, d).last() == Some(&(kvh * dk))),
        beta_shared: beta.is_some_and(|d| shape_of(b.m, d).last() == Some(&1)),
    })
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
            let e = if geo.decay_per_dim {
                at3(b, dc, geo.dk, [n, s, g, dm[0]])
            } else {
                at3(b, dc, 1, [n, s, g, bounds.zero])
            };
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
                    let head = if geo.beta_shared { bounds.zero } else { g };
                    let be = at3(b, bt, 1, [n, s, head, bounds.zero]);
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
    let (bs, kvh, dk, dv) = (geo.bs, geo.kvh, geo.dk, geo.dv);
    let elem = elem_of(b.m, geo.q);
    let f32t = Type::f32();
    let bounds = Bounds::new(b);
    let c = |b: &mut Builder<'_>, v: &[i64]| -> Vec<ValueId> {
        v.iter().map(|&d| b.const_index(d)).collect()
    };
    let state_dims = c(b, &[bs, kvh, dk, dv]);
    let state = alloc(b, &Type::memref(vec![bs, kvh, dk, dv], f32t.clone()), &[]);
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
    let vt = alloc(b, &Type::memref(vec![bs, kvh, dv], f32t.clone()), &[]);
    let y_dims = c(b, &[bs, geo.t, geo.qh * dv]);
    let y = alloc_result(b, op, 0, &y_dims)?;
    let group_v = b.const_index(geo.group);
    let t_ub = b.const_index(geo.t);
    let bg = c(b, &[bs, kvh]);
    let (dk_ub, dv_ub) = (b.const_index(dk), b.const_index(dv));
    let read_dims = c(b, &[bs, geo.qh, dv]);
    let scale_c = b.constant(&f32t, geo.scale);
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
            let base = loops::scale_add(b, None, h, dv);
            let col = b.add(base, m);
            b.store(r, y, &[n, s, col]);
        });
        Vec::new()
    });
    let mut out = vec![y];
    if b.m.results(op).len() > 1 {
        let present = alloc_result(b, op, 1, &state_dims)?;
        let pt = super::result_memref_type(b.m, op, 1)?
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
