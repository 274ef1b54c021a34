//! LinearAttention: the recurrent form of the ONNX reference, in f32. Per
//! time step the state `[B, H_kv, d_k, d_v]` decays (`gated*`), the value is
//! delta-corrected against what the state retrieves for the key (`*delta`),
//! the key ⊗ value outer product is added, and each query head reads its KV
//! head's state. Inputs are `[B, T, heads·size]`.

use super::scalar::{self, constant};
use super::{alloc_result, attr_float, attr_int, attr_str, elem_of, load_at, shape_of, store_at};
use crate::convert::{alloc, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

/// `t[n, s, h·size + d]` as f32.
fn at3(b: &mut Builder<'_>, t: ValueId, size: i64, [n, s, h, d]: [ValueId; 4]) -> ValueId {
    let base = loops::scale_add(b, None, h, size);
    let col = loops::add(b, base, d);
    let v = load_at(b, t, &[n, s, col]);
    scalar::fcast(b, v, &Type::f32())
}

pub fn linear_attention(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
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
    let rule = attr_str(b.m, op, "update_rule").unwrap_or("gated_delta");
    let (gating, delta) = match rule {
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
    let qh = attr_int(b.m, op, "q_num_heads", 0);
    let kvh = attr_int(b.m, op, "kv_num_heads", 0);
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
    let scale = Some(attr_float(b.m, op, "scale", 0.0))
        .filter(|&s| s != 0.0)
        .unwrap_or(1.0 / (dk as f64).sqrt());
    let elem = elem_of(b.m, q);
    let f32t = Type::f32();
    let bounds = Bounds::new(b);
    let c = |b: &mut Builder<'_>, v: &[i64]| -> Vec<ValueId> {
        v.iter().map(|&d| b.const_index(d)).collect()
    };
    let state_dims = c(b, &[bs, kvh, dk, dv]);
    let state = alloc(b, &Type::memref(vec![bs, kvh, dk, dv], f32t.clone()), &[]);
    loop_nest(b, &bounds, &state_dims, &mut |b, ivs| {
        let s = match past {
            Some(p) => {
                let v = load_at(b, p, ivs);
                scalar::fcast(b, v, &f32t)
            }
            None => constant(b, &f32t, 0.0),
        };
        store_at(b, s, state, ivs);
    });
    let vt = alloc(b, &Type::memref(vec![bs, kvh, dv], f32t.clone()), &[]);
    let y_dims = c(b, &[bs, t, qh * dv]);
    let y = alloc_result(b, op, 0, &y_dims)?;
    let decay_per_dim = decay.is_some_and(|d| shape_of(b.m, d).last() == Some(&(kvh * dk)));
    let beta_shared = beta.is_some_and(|d| shape_of(b.m, d).last() == Some(&1));
    let group_v = b.const_index(group);
    let t_ub = b.const_index(t);
    let bg = c(b, &[bs, kvh]);
    let (dk_ub, dv_ub) = (b.const_index(dk), b.const_index(dv));
    let read_dims = c(b, &[bs, qh, dv]);
    let scale_c = constant(b, &f32t, scale);
    b.scf_for(bounds.zero, t_ub, bounds.one, &[], |b, s, _| {
        loop_nest(b, &bounds, &bg, &mut |b, ng| {
            let (n, g) = (ng[0], ng[1]);
            if let Some(dc) = decay {
                // state *= exp(decay), per head or per key dim.
                loop_nest(b, &bounds, &[dk_ub, dv_ub], &mut |b, dm| {
                    let e = if decay_per_dim {
                        at3(b, dc, dk, [n, s, g, dm[0]])
                    } else {
                        at3(b, dc, 1, [n, s, g, bounds.zero])
                    };
                    let e = b.same("math.exp", &[e]);
                    let idx = [n, g, dm[0], dm[1]];
                    let st = load_at(b, state, &idx);
                    let r = scalar::mul(b, st, e);
                    store_at(b, r, state, &idx);
                });
            }
            // v_t, delta-corrected: beta · (v - Sᵀk).
            loop_nest(b, &bounds, &[dv_ub], &mut |b, m| {
                let vv = at3(b, v, dv, [n, s, g, m[0]]);
                let r = match beta {
                    Some(bt) => {
                        let z = constant(b, &f32t, 0.0);
                        let got = reduce_nest(b, &bounds, &[dk_ub], z, &mut |b, d, acc| {
                            let st = load_at(b, state, &[n, g, d[0], m[0]]);
                            let kv = at3(b, k, dk, [n, s, g, d[0]]);
                            scalar::mul_acc(b, acc, st, kv)
                        });
                        let head = if beta_shared { bounds.zero } else { g };
                        let be = at3(b, bt, 1, [n, s, head, bounds.zero]);
                        let diff = scalar::sub(b, vv, got);
                        scalar::mul(b, be, diff)
                    }
                    None => vv,
                };
                store_at(b, r, vt, &[n, g, m[0]]);
            });
            // state += k ⊗ v_t.
            loop_nest(b, &bounds, &[dk_ub, dv_ub], &mut |b, dm| {
                let kv = at3(b, k, dk, [n, s, g, dm[0]]);
                let vv = load_at(b, vt, &[n, g, dm[1]]);
                let idx = [n, g, dm[0], dm[1]];
                let st = load_at(b, state, &idx);
                let r = scalar::mul_acc(b, st, kv, vv);
                store_at(b, r, state, &idx);
            });
        });
        // o[n, s, h·d_v + m] = scale · Σ_d q · S[kv head of h].
        loop_nest(b, &bounds, &read_dims, &mut |b, ivs| {
            let (n, h, m) = (ivs[0], ivs[1], ivs[2]);
            let g = b.same("arith.divui", &[h, group_v]);
            let z = constant(b, &f32t, 0.0);
            let sum = reduce_nest(b, &bounds, &[dk_ub], z, &mut |b, d, acc| {
                let qv = at3(b, q, dk, [n, s, h, d[0]]);
                let st = load_at(b, state, &[n, g, d[0], m]);
                scalar::mul_acc(b, acc, qv, st)
            });
            let r = scalar::mul(b, scale_c, sum);
            let r = scalar::fcast(b, r, &elem);
            let base = loops::scale_add(b, None, h, dv);
            let col = loops::add(b, base, m);
            store_at(b, r, y, &[n, s, col]);
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
            let v = load_at(b, state, ivs);
            let v = scalar::fcast(b, v, &pt);
            store_at(b, v, present, ivs);
        });
        out.push(present);
    }
    Ok(out)
}
