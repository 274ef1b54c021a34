//! CausalConvWithState: a depthwise 1-D convolution over the input left-
//! padded with `past_state` (or zeros), an optional fused SiLU computed in
//! f32, and the last `k - 1` padded positions as `present_state`.

use crate::convert::{dims, Lowering};
use crate::kernels::{support::alloc_result, support::checks, support::elem_of, support::scalar};
use crate::loops::{loop_nest, reduce_nest, Bounds};
use ir::builder::{Cmp, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

pub fn causal_conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::CausalConvWithState::INPUT)?;
    let w = cx.input(b.m, op, ops::CausalConvWithState::WEIGHT)?;
    let bias = cx.optional_input(b.m, op, ops::CausalConvWithState::BIAS)?;
    let past = cx.optional_input(b.m, op, ops::CausalConvWithState::PAST_STATE)?;
    let silu = match ops::CausalConvWithState::of(b.m, op).activation() {
        "none" => false,
        "silu" | "swish" => true,
        other => return Err(op_error(b.m, op, format!("unknown activation '{other}'"))),
    };
    let (dx, dw) = (dims(b, x), dims(b, w));
    let (&[n, c, len], &[wc, one, k]) = (dx.as_slice(), dw.as_slice()) else {
        return Err(op_error(
            b.m,
            op,
            "expects input [B, C, L] and weight [C, 1, K]",
        ));
    };
    let bounds = Bounds::new(b);
    checks::equal(b, op, wc, c, "the weight has not one filter per channel")?;
    checks::equal(b, op, one, bounds.one, "the weight's dim 1 is not 1")?;
    checks::compare(b, op, CmpI::Sge, k, bounds.one, "the kernel is empty")?;
    let lead = b.subi(k, bounds.one);
    if let Some(ps) = past {
        let dp = dims(b, ps);
        if dp.len() != 3 {
            return Err(op_error(b.m, op, "past_state must be [B, C, K-1]"));
        }
        for (i, (&have, &want)) in dp.iter().zip(&[n, c, lead]).enumerate() {
            let msg = format!("past_state dim {i} differs from [B, C, K-1]'s");
            checks::equal(b, op, have, want, &msg)?;
        }
    }
    let elem = elem_of(b.m, x);
    let zero_v = b.zero(&elem);
    // Position p of the padded input [B, C, K-1+L].
    let padded = |b: &mut Builder<'_>, nn: ValueId, cc: ValueId, p: ValueId| {
        let in_x = b.cmp(Cmp::Ge, p, lead);
        let xi = b.sub(p, lead);
        let xi = b.select(in_x, xi, bounds.zero);
        let xv = b.load(x, &[nn, cc, xi]);
        let pv = match past {
            Some(ps) => {
                let pi = b.select(in_x, bounds.zero, p);
                b.load(ps, &[nn, cc, pi])
            }
            None => zero_v,
        };
        b.select(in_x, xv, pv)
    };
    let out_dims = [n, c, len];
    let out = alloc_result(b, op, 0, &out_dims)?;
    let acc_ty = scalar::acc_type(&elem);
    let taps = [k];
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let init = match bias {
            Some(bv) => {
                let v = b.load(bv, &[ivs[1]]);
                scalar::fcast(b, v, &acc_ty)
            }
            None => b.zero(&acc_ty),
        };
        let s = reduce_nest(b, &bounds, &taps, init, &mut |b, t, acc| {
            let p = b.add(ivs[2], t[0]);
            let xv = padded(b, ivs[0], ivs[1], p);
            let wv = b.load(w, &[ivs[1], bounds.zero, t[0]]);
            scalar::mul_acc(b, acc, xv, wv)
        });
        let mut r = scalar::fcast(b, s, &elem);
        if silu {
            // x · sigmoid(x) in f32, as the reference.
            let f = Type::f32();
            let xf = scalar::fcast(b, r, &f);
            let neg = b.negf(xf);
            let e = b.exp(neg);
            let one = b.one(&f);
            let den = b.add(one, e);
            let sig = b.div(one, den);
            let y = b.mul(xf, sig);
            r = scalar::fcast(b, y, &elem);
        }
        b.store(r, out, ivs);
    });
    let mut results = vec![out];
    if b.m.results(op).len() > 1 {
        let state_dims = [n, c, lead];
        let state = alloc_result(b, op, 1, &state_dims)?;
        let shift = len;
        loop_nest(b, &bounds, &state_dims, &mut |b, ivs| {
            let p = b.add(ivs[2], shift);
            let v = padded(b, ivs[0], ivs[1], p);
            b.store(v, state, ivs);
        });
        results.push(state);
    }
    Ok(results)
}
