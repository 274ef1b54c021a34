//! The Attention op: scaled dot-product attention with masks, causal and
//! sliding-window biases, KV cache, GQA and softcap (values are rounded to
//! the input dtype after each step, as the reference does); and
//! RotaryEmbedding.

use super::dense::{from_f64s, T};
use super::{Fold, Op};
use ir::elements::{decode, encode, DType, WideNum};
use onnx::ops;

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

/// One row of attention scores: query `i` of head `hi` in batch `bi`
/// against every key.
struct Scoring<'a> {
    qs: &'a Heads,
    ks: &'a Heads,
    rd: &'a dyn Fn(f64) -> f64,
    sqrt_scale: f64,
    softcap: f64,
    causal: bool,
    left: i64,
    right: i64,
    mask: Option<&'a T>,
    nonpad: Option<Vec<i64>>,
}

/// A row's raw scores, the scores with the biases, and the softmax.
struct Row {
    raw: Vec<f64>,
    biased: Vec<f64>,
    softmax: Vec<f64>,
}

impl Scoring<'_> {
    /// The mask's bias at (bi, hi, i, j), right-aligned broadcast to
    /// [B, H, q, kv]; padded on kv.
    fn mask_bias(&self, bi: usize, hi: usize, i: usize, j: usize) -> f64 {
        let Some(mk) = self.mask else { return 0.0 };
        let r = mk.rank();
        let full = [bi, hi, i, j];
        let mkv = mk.shape.last().copied().unwrap_or(1);
        if j >= mkv && mkv != 1 {
            return f64::NEG_INFINITY;
        }
        let mut off = 0;
        for (k, &d) in mk.shape.iter().enumerate() {
            let idx = full[4 - r + k];
            off = off * d + if d == 1 { 0 } else { idx };
        }
        let val = mk.f(off);
        match (mk.dtype == DType::Bool, val != 0.0) {
            (true, true) => 0.0,
            (true, false) => f64::NEG_INFINITY,
            (false, _) => val,
        }
    }

    /// The bias of key `j` for query `i` (mask, causal, window, padding);
    /// `off` is the query's position offset.
    fn bias(&self, (bi, hi, i): (usize, usize, usize), j: usize, off: i64) -> f64 {
        let mut bv = self.mask_bias(bi, hi, i, j);
        let diff = i as i64 + off - j as i64;
        if self.causal && diff < 0 {
            bv = f64::NEG_INFINITY;
        }
        if (self.left >= 0 && diff > self.left) || (self.right >= 0 && -diff > self.right) {
            bv = f64::NEG_INFINITY;
        }
        if let Some(n) = &self.nonpad {
            if j as i64 >= n.get(bi).copied().unwrap_or(0) {
                bv = f64::NEG_INFINITY;
            }
        }
        (self.rd)(bv)
    }

    fn row(&self, (bi, hi, i): (usize, usize, usize), kh: usize, off: i64) -> Row {
        let rd = self.rd;
        let skv = self.ks.s;
        let mut raw = vec![0.0; skv];
        let mut bias = vec![0.0; skv];
        for (j, (r, bj)) in raw.iter_mut().zip(bias.iter_mut()).enumerate() {
            let mut acc = 0.0;
            for d in 0..self.qs.d {
                acc += rd(self.qs.at(bi, hi, i, d) * self.sqrt_scale)
                    * rd(self.ks.at(bi, kh, j, d) * self.sqrt_scale);
            }
            let mut s = rd(acc);
            if self.softcap > 0.0 {
                s = rd(rd(rd(s / self.softcap).tanh()) * self.softcap);
            }
            *r = s;
            *bj = self.bias((bi, hi, i), j, off);
        }
        let biased: Vec<f64> = raw.iter().zip(&bias).map(|(a, c)| rd(a + c)).collect();
        let mx = biased.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let safe = if mx == f64::NEG_INFINITY { 0.0 } else { mx };
        let ex: Vec<f64> = biased.iter().map(|x| rd((rd(x - safe)).exp())).collect();
        let sum: f64 = rd(ex.iter().sum::<f64>());
        let sum = if sum == 0.0 { 1.0 } else { sum };
        let all_masked = bias.iter().all(|&x| x == f64::NEG_INFINITY);
        let softmax = ex
            .iter()
            .map(|x| if all_masked { 0.0 } else { rd(x / sum) })
            .collect();
        Row {
            raw,
            biased,
            softmax,
        }
    }
}

pub fn attention(o: Op) -> Fold {
    let ts = o.dense();
    let (Some(q), Some(k), Some(v)) = (ts.get(0), ts.get(1), ts.get(2)) else {
        return Ok(None);
    };
    let view = ops::Attention::of(o.m, o.op);
    let dt = q.dtype;
    let rd = rounder(dt);
    let qh = view.q_num_heads().map(|v| v as usize);
    let kvh = view.kv_num_heads().map(|v| v as usize);
    let three_d = q.rank() == 3;
    let qs = Heads::from(q, qh).ok_or_else(|| o.err("bad Q shape"))?;
    let past_k = ts.get(4).and_then(|t| Heads::from(t, kvh));
    let past_v = ts.get(5).and_then(|t| Heads::from(t, kvh));
    let past_len = past_k.as_ref().map(|p| p.s);
    let ks = Heads::from(k, kvh)
        .ok_or_else(|| o.err("bad K shape"))?
        .after(past_k);
    let vs = Heads::from(v, kvh)
        .ok_or_else(|| o.err("bad V shape"))?
        .after(past_v);
    let (b, h, sq, dq) = (qs.b, qs.h, qs.s, qs.d);
    let (skv, dv) = (ks.s, vs.d);
    if ks.d != dq || ks.h == 0 || h % ks.h != 0 {
        return Err(o.err("Q and K heads do not match"));
    }
    let rep = h / ks.h;
    let scale = view.scale().unwrap_or(1.0 / (dq as f64).sqrt());
    let nonpad = ts.get(6).map(T::ints);
    let offset = |bi: usize| -> i64 {
        match (&nonpad, past_len) {
            (Some(n), None) => n.get(bi).copied().unwrap_or(0) - sq as i64,
            (_, Some(p)) => p as i64,
            _ => 0,
        }
    };
    let scoring = Scoring {
        qs: &qs,
        ks: &ks,
        rd: &rd,
        sqrt_scale: rd(scale.sqrt()),
        softcap: view.softcap(),
        causal: view.is_causal() != 0,
        left: view.left_window_size(),
        right: view.right_window_size(),
        mask: ts.get(3),
        nonpad: nonpad.clone(),
    };
    let mode = view.qk_matmul_output_mode();
    let mut y = vec![0.0; b * h * sq * dv];
    let mut qk_out = vec![0.0; b * h * sq * skv];
    for bi in 0..b {
        let off = offset(bi);
        for hi in 0..h {
            let kh = hi / rep;
            for i in 0..sq {
                let row = scoring.row((bi, hi, i), kh, off);
                let shown = match mode {
                    2 => &row.biased,
                    3 => &row.softmax,
                    _ => &row.raw,
                };
                let at = ((bi * h + hi) * sq + i) * skv;
                qk_out[at..at + skv].copy_from_slice(shown);
                for d in 0..dv {
                    let acc: f64 = (0..skv).map(|j| row.softmax[j] * vs.at(bi, kh, j, d)).sum();
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
    let nres = o.nres();
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
    o.packed(outs)
}

/// The rotated pair (x1, x2) → (c·x1 − s·x2, s·x1 + c·x2) at one index.
fn rotate(real: bool, (c, sn): (f64, f64), (x1, x2): (f64, f64)) -> f64 {
    if real {
        f32r(c * x1) - f32r(sn * x2)
    } else {
        f32r(sn * x1) + f32r(c * x2)
    }
}

fn f32r(v: f64) -> f64 {
    f64::from(v as f32)
}

/// For rotary index `di`: the cache column, the two input indices of the
/// pair and whether `di` is its real part.
fn rotary_pair(di: usize, half: usize, interleaved: bool) -> (usize, usize, usize, bool) {
    if interleaved {
        (di / 2, di / 2 * 2, di / 2 * 2 + 1, di.is_multiple_of(2))
    } else if di < half {
        (di, di, di + half, true)
    } else {
        (di - half, di - half, di, false)
    }
}

pub fn rotary(o: Op) -> Fold {
    let ts = o.dense();
    let Some(x) = ts.get(0) else { return Ok(None) };
    let dtype = o.dtype(0)?;
    let (cos, sin) = (
        ts.get(1).ok_or_else(|| o.err("cos"))?,
        ts.get(2).ok_or_else(|| o.err("sin"))?,
    );
    let pos = ts.get(3).map(T::ints);
    let view = ops::RotaryEmbedding::of(o.m, o.op);
    let four = x.rank() == 4;
    // Logical layout [b, s, h, d] over the stored one.
    let (b, sq, h, d) = match *x.shape.as_slice() {
        [b, h, s, d] if four => (b, s, h, d),
        [b, s, hid] => {
            let h = view.num_heads().unwrap_or(0).max(1) as usize;
            (b, s, h, hid / h)
        }
        _ => return Ok(None),
    };
    let rdim = match view.rotary_embedding_dim() {
        0 => d,
        r => r as usize,
    };
    let half = rdim / 2;
    let inter = view.interleaved() != 0;
    let at = |bi: usize, si: usize, hi: usize, di: usize| -> usize {
        if four {
            ((bi * h + hi) * sq + si) * d + di
        } else {
            ((bi * sq + si) * h + hi) * d + di
        }
    };
    let (cf, sf, xf) = (cos.floats(), sin.floats(), x.floats());
    let mut y = xf.clone();
    for bi in 0..b {
        for si in 0..sq {
            let row = match &pos {
                Some(p) => {
                    usize::try_from(*p.get(bi * sq + si).ok_or_else(|| o.err("position_ids"))?)
                        .map_err(|_| o.err("position"))?
                }
                None => bi * sq + si,
            };
            for hi in 0..h {
                for di in 0..rdim {
                    let (j, x1i, x2i, real) = rotary_pair(di, half, inter);
                    let (c, sn) = (
                        *cf.get(row * half + j).ok_or_else(|| o.err("cos cache"))?,
                        *sf.get(row * half + j).ok_or_else(|| o.err("sin cache"))?,
                    );
                    let pair = (xf[at(bi, si, hi, x1i)], xf[at(bi, si, hi, x2i)]);
                    y[at(bi, si, hi, di)] = rotate(real, (c, sn), pair);
                }
            }
        }
    }
    o.packed(vec![x.with_floats(dtype, y)])
}
