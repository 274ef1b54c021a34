//! Interpolation shared by Resize and GridSample: f64 coordinate helpers,
//! the per-dim taps of linear and cubic sampling, and the sum over their
//! tensor product (each output element is Σ Π weights · input).

use crate::kernels::support::scalar;
use ir::builder::CmpF;
use ir::{Builder, OpId, Result, Type, ValueId};

pub fn f64c(b: &mut Builder<'_>, v: f64) -> ValueId {
    b.const_float(v, Type::f64())
}

pub fn idx_to_f(b: &mut Builder<'_>, i: ValueId) -> ValueId {
    let v = b.index_cast(i, Type::i64());
    b.sitofp(v, Type::f64())
}

pub fn f_to_idx(b: &mut Builder<'_>, f: ValueId) -> ValueId {
    let v = b.fptosi(f, Type::i64());
    b.index_cast(v, Type::Index)
}

/// One neighbour along a dim: its index, its weight, and (when it may fall
/// outside and must then count as 0) whether it counts.
#[derive(Clone, Copy)]
pub struct Tap {
    pub idx: ValueId,
    pub w: ValueId,
    pub keep: Option<ValueId>,
}

/// Cubic convolution weight (coefficient `a`) of a tap at distance `t`.
fn cubic_weight(b: &mut Builder<'_>, a: f64, t: ValueId) -> ValueId {
    let x = b.absf(t);
    let (one, two) = (f64c(b, 1.0), f64c(b, 2.0));
    let x2 = b.mulf(x, x);
    let x3 = b.mulf(x2, x);
    // |x| <= 1: (a+2)|x|³ - (a+3)|x|² + 1
    let (c1, c2) = (f64c(b, a + 2.0), f64c(b, a + 3.0));
    let t1 = b.mulf(c1, x3);
    let t2 = b.mulf(c2, x2);
    let near = b.subf(t1, t2);
    let near = b.addf(near, one);
    // 1 < |x| < 2: a|x|³ - 5a|x|² + 8a|x| - 4a
    let (ca, c5, c8, c4) = (
        f64c(b, a),
        f64c(b, 5.0 * a),
        f64c(b, 8.0 * a),
        f64c(b, 4.0 * a),
    );
    let f1 = b.mulf(ca, x3);
    let f2 = b.mulf(c5, x2);
    let f3 = b.mulf(c8, x);
    let far = b.subf(f1, f2);
    let far = b.addf(far, f3);
    let far = b.subf(far, c4);
    let le1 = b.cmpf(CmpF::Ole, x, one);
    let lt2 = b.cmpf(CmpF::Olt, x, two);
    let zero = f64c(b, 0.0);
    let w = b.select(lt2, far, zero);
    b.select(le1, near, w)
}

/// Linear (`cubic_a` = None: 2 taps) or cubic (4 taps) neighbours of source
/// coordinate `xo`: unclamped indices `floor(xo) + k` and their weights.
pub fn taps(b: &mut Builder<'_>, cubic_a: Option<f64>, xo: ValueId) -> Vec<(ValueId, ValueId)> {
    let fl = b.floor(xo);
    let i0 = f_to_idx(b, fl);
    let Some(a) = cubic_a else {
        let one = f64c(b, 1.0);
        let one_i = b.const_index(1);
        let r = b.subf(xo, fl);
        let w0 = b.subf(one, r);
        let i1 = b.add(i0, one_i);
        return vec![(i0, w0), (i1, r)];
    };
    (-1i64..=2)
        .map(|k| {
            let kv = b.const_index(k);
            let i = b.add(i0, kv);
            let kf = f64c(b, k as f64);
            let p = b.addf(fl, kf);
            let t = b.subf(xo, p);
            (i, cubic_weight(b, a, t))
        })
        .collect()
}

/// Σ over the tensor product of `per_dim` taps of `Π w · x[lead..., idx...]`,
/// in f64; a tap whose `keep` is false adds nothing.
pub fn weighted_sum(
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
    lead: &[ValueId],
    per_dim: &[Vec<Tap>],
) -> Result<ValueId> {
    let one = f64c(b, 1.0);
    let mut acc = f64c(b, 0.0);
    let total: usize = per_dim.iter().map(Vec::len).product();
    for k in 0..total {
        // Mixed-radix digits of k pick one tap per dim (last dim fastest).
        let mut rest = k;
        let mut picked: Vec<Tap> = Vec::with_capacity(per_dim.len());
        for taps in per_dim.iter().rev() {
            picked.push(taps[rest % taps.len()]);
            rest /= taps.len();
        }
        let mut w = one;
        let mut keep: Option<ValueId> = None;
        for t in &picked {
            w = b.mulf(w, t.w);
            if let Some(kd) = t.keep {
                keep = Some(match keep {
                    Some(k) => b.andi(k, kd),
                    None => kd,
                });
            }
        }
        let mut idx = lead.to_vec();
        idx.extend(picked.iter().rev().map(|t| t.idx));
        let v = b.load(x, &idx);
        let vf = scalar::convert(b, op, v, &Type::f64())?;
        let t = b.mulf(w, vf);
        let s = b.addf(acc, t);
        acc = match keep {
            Some(k) => b.select(k, s, acc),
            None => s,
        };
    }
    Ok(acc)
}
