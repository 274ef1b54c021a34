//! The Attention op (opset 23+): scaled dot-product attention with masks,
//! causal and sliding-window biases, KV cache, GQA and softcap. Values are
//! rounded to the input dtype after each step, as the reference does.

use super::dense::{from_f64s, T};
use super::{attr_f64, attr_i64};
use ir::dialects::op_error;
use ir::elements::{decode, encode, DType, Elements, WideNum};
use ir::{Module, OpId, Result};

/// [B, H, S, D] in row-major f64.
struct Heads {
    b: usize,
    h: usize,
    s: usize,
    d: usize,
    v: Vec<f64>,
}

impl Heads {
    fn at(&self, b: usize, h: usize, s: usize, d: usize) -> f64 {
        self.v[((b * self.h + h) * self.s + s) * self.d + d]
    }
    fn from(t: &T, heads: Option<usize>) -> Option<Heads> {
        let v = t.floats();
        match *t.shape.as_slice() {
            [b, h, s, d] => Some(Heads { b, h, s, d, v }),
            [b, s, hd] => {
                let h = heads?.max(1);
                let d = hd / h;
                let mut out = vec![0.0; v.len()];
                for bi in 0..b {
                    for si in 0..s {
                        for hi in 0..h {
                            for di in 0..d {
                                out[((bi * h + hi) * s + si) * d + di] =
                                    v[(bi * s + si) * hd + hi * d + di];
                            }
                        }
                    }
                }
                Some(Heads { b, h, s, d, v: out })
            }
            _ => None,
        }
    }
    /// Concatenates a cache before `self` along the sequence axis.
    fn after(self, past: Option<Heads>) -> Heads {
        let Some(p) = past else { return self };
        let s = p.s + self.s;
        let mut v = Vec::with_capacity(self.b * self.h * s * self.d);
        for b in 0..self.b {
            for h in 0..self.h {
                for i in 0..s {
                    for d in 0..self.d {
                        v.push(if i < p.s {
                            p.at(b, h, i, d)
                        } else {
                            self.at(b, h, i - p.s, d)
                        });
                    }
                }
            }
        }
        Heads { s, v, ..self }
    }
}

fn rounder(d: DType) -> impl Fn(f64) -> f64 {
    move |x| {
        if d == DType::F64 {
            return x;
        }
        encode(d, WideNum::from_f64(x)).map_or(x, |r| decode(d, r).f64())
    }
}

pub fn fold(
    m: &Module,
    op: OpId,
    kind: &str,
    inputs: &[Option<Elements>],
) -> Result<Option<Vec<Elements>>> {
    if kind != "Attention" {
        return Ok(None);
    }
    let e = |msg: &str| op_error(m, op, msg.to_string());
    let ts: Vec<Option<T>> = inputs.iter().map(|i| i.as_ref().map(T::of)).collect();
    let input = |i: usize| ts.get(i).and_then(Option::as_ref);
    let (Some(q), Some(k), Some(v)) = (input(0), input(1), input(2)) else {
        return Ok(None);
    };
    let dt = q.dtype;
    let rd = rounder(dt);
    let qh = m
        .attr(op, "q_num_heads")
        .and_then(|a| a.as_int())
        .map(|v| v as usize);
    let kvh = m
        .attr(op, "kv_num_heads")
        .and_then(|a| a.as_int())
        .map(|v| v as usize);
    let three_d = q.rank() == 3;
    let qs = Heads::from(q, qh).ok_or_else(|| e("bad Q shape"))?;
    let past_k = input(4).and_then(|t| Heads::from(t, kvh));
    let past_v = input(5).and_then(|t| Heads::from(t, kvh));
    let past_len = past_k.as_ref().map(|p| p.s);
    let ks = Heads::from(k, kvh)
        .ok_or_else(|| e("bad K shape"))?
        .after(past_k);
    let vs = Heads::from(v, kvh)
        .ok_or_else(|| e("bad V shape"))?
        .after(past_v);
    let (b, h, sq, dq) = (qs.b, qs.h, qs.s, qs.d);
    let (skv, dv) = (ks.s, vs.d);
    if ks.d != dq || ks.h == 0 || h % ks.h != 0 {
        return Err(e("Q and K heads do not match"));
    }
    let rep = h / ks.h;
    let scale = m
        .attr(op, "scale")
        .and_then(|a| a.as_float())
        .unwrap_or(1.0 / (dq as f64).sqrt());
    let sqrt_scale = rd(scale.sqrt());
    let causal = attr_i64(m, op, "is_causal", 0) != 0;
    let softcap = attr_f64(m, op, "softcap", 0.0);
    let mode = attr_i64(m, op, "qk_matmul_output_mode", 0);
    let left = attr_i64(m, op, "left_window_size", -1);
    let right = attr_i64(m, op, "right_window_size", -1);
    let nonpad = input(6).map(T::ints);
    let offset = |bi: usize| -> i64 {
        match (&nonpad, past_len) {
            (Some(n), None) => n.get(bi).copied().unwrap_or(0) - sq as i64,
            (_, Some(p)) => p as i64,
            _ => 0,
        }
    };
    // Mask, right-aligned broadcast to [B, H, q, kv]; padded on kv.
    let mask = input(3);
    let mask_bias = |bi: usize, hi: usize, i: usize, j: usize| -> f64 {
        let Some(mk) = mask else { return 0.0 };
        let r = mk.rank();
        let full = [bi, hi, i, j];
        let mkv = mk.shape.last().copied().unwrap_or(1);
        let is_bool = mk.dtype == DType::Bool;
        if j >= mkv && mkv != 1 {
            return f64::NEG_INFINITY;
        }
        let mut off = 0;
        for (k, &d) in mk.shape.iter().enumerate() {
            let idx = full[4 - r + k];
            off = off * d + if d == 1 { 0 } else { idx };
        }
        let val = mk.f(off);
        if is_bool {
            if val != 0.0 {
                0.0
            } else {
                f64::NEG_INFINITY
            }
        } else {
            val
        }
    };
    let mut y = vec![0.0; b * h * sq * dv];
    let mut qk_out = vec![0.0; b * h * sq * skv];
    for bi in 0..b {
        let off = offset(bi);
        for hi in 0..h {
            let kh = hi / rep;
            for i in 0..sq {
                let mut row = vec![0.0; skv];
                let mut bias = vec![0.0; skv];
                for (j, (r, bj)) in row.iter_mut().zip(bias.iter_mut()).enumerate() {
                    let mut acc = 0.0;
                    for d in 0..dq {
                        acc += rd(qs.at(bi, hi, i, d) * sqrt_scale)
                            * rd(ks.at(bi, kh, j, d) * sqrt_scale);
                    }
                    let mut s = rd(acc);
                    if softcap > 0.0 {
                        s = rd(rd(rd(s / softcap).tanh()) * softcap);
                    }
                    *r = s;
                    let mut bv = mask_bias(bi, hi, i, j);
                    let diff = i as i64 + off - j as i64;
                    if causal && diff < 0 {
                        bv = f64::NEG_INFINITY;
                    }
                    if (left >= 0 && diff > left) || (right >= 0 && -diff > right) {
                        bv = f64::NEG_INFINITY;
                    }
                    if let Some(n) = &nonpad {
                        if j as i64 >= n.get(bi).copied().unwrap_or(0) {
                            bv = f64::NEG_INFINITY;
                        }
                    }
                    *bj = rd(bv);
                }
                let with_bias: Vec<f64> = row.iter().zip(&bias).map(|(a, c)| rd(a + c)).collect();
                let mx = with_bias.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let safe = if mx == f64::NEG_INFINITY { 0.0 } else { mx };
                let ex: Vec<f64> = with_bias.iter().map(|x| rd((rd(x - safe)).exp())).collect();
                let sum: f64 = rd(ex.iter().sum::<f64>());
                let sum = if sum == 0.0 { 1.0 } else { sum };
                let all_masked = bias.iter().all(|&x| x == f64::NEG_INFINITY);
                let sm: Vec<f64> = ex
                    .iter()
                    .map(|x| if all_masked { 0.0 } else { rd(x / sum) })
                    .collect();
                for j in 0..skv {
                    qk_out[((bi * h + hi) * sq + i) * skv + j] = match mode {
                        2 => with_bias[j],
                        3 => sm[j],
                        _ => row[j],
                    };
                }
                for d in 0..dv {
                    let acc: f64 = (0..skv).map(|j| sm[j] * vs.at(bi, kh, j, d)).sum();
                    let pos = if three_d {
                        (bi * sq + i) * h * dv + hi * dv + d
                    } else {
                        ((bi * h + hi) * sq + i) * dv + d
                    };
                    y[pos] = acc;
                }
            }
        }
    }
    let y_shape = if three_d {
        vec![b, sq, h * dv]
    } else {
        vec![b, h, sq, dv]
    };
    let mut outs = vec![T::new(dt, y_shape, from_f64s(dt, y))];
    let nres = m.results(op).len();
    if nres > 1 {
        outs.push(T::new(
            k.dtype,
            vec![ks.b, ks.h, ks.s, ks.d],
            from_f64s(k.dtype, ks.v),
        ));
    }
    if nres > 2 {
        outs.push(T::new(
            v.dtype,
            vec![vs.b, vs.h, vs.s, vs.d],
            from_f64s(v.dtype, vs.v),
        ));
    }
    if nres > 3 {
        outs.push(T::new(dt, vec![b, h, sq, skv], from_f64s(dt, qk_out)));
    }
    super::dense::packed(m, op, outs)
}
