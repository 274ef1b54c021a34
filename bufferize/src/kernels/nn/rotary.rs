//! RotaryEmbedding: the first `rotary_embedding_dim` entries of each head
//! are rotated pairwise by the cos/sin caches (halves, or even/odd entries
//! when `interleaved`); the rest pass through. Input `[B, H, S, D]`, or
//! `[B, S, H·D]` with `num_heads`; caches `[P, R/2]` indexed by
//! `position_ids [B, S]`, or `[B, S, R/2]` without them.

use crate::convert::{dims, Lowering};
use crate::kernels::{support::alloc_result, support::elem_of};
use crate::kernels::{support::checks, support::scalar};
use crate::loops::{independent_nest_by_work, loop_nest, Bounds, PARALLEL_MIN_WORK};
use ir::builder::{Cmp, CmpI};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The head size D (a runtime value), whether the input is 3-D, and the
/// rotated size (checked against D at run time).
fn head_sizes(
    b: &mut Builder<'_>,
    op: OpId,
    dx: &[ValueId],
    num_heads: Option<i64>,
    rot_attr: i64,
) -> Result<(ValueId, bool, ValueId)> {
    let (head_v, heads3) = match dx.len() {
        4 => (dx[3], false),
        3 => {
            let h = num_heads.unwrap_or(0);
            if h <= 0 {
                return Err(op_error(b.m, op, "3-D input needs num_heads"));
            }
            let hv = b.const_index(h);
            let msg = "num_heads does not divide the hidden size";
            checks::divides(b, op, dx[2], hv, msg)?;
            (b.divui(dx[2], hv), true)
        }
        _ => return Err(op_error(b.m, op, "input must be 3-D or 4-D")),
    };
    let rot_v = match rot_attr {
        0 => head_v,
        r if r > 0 && r % 2 == 0 => {
            let rv = b.const_index(r);
            let msg = "rotary_embedding_dim exceeds the head size";
            checks::compare(b, op, CmpI::Sle, rv, head_v, msg)?;
            rv
        }
        _ => return Err(op_error(b.m, op, "invalid rotary_embedding_dim")),
    };
    Ok((head_v, heads3, rot_v))
}

pub fn rotary(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::RotaryEmbedding::X)?;
    let (cos, sin) = (
        cx.input(b.m, op, ops::RotaryEmbedding::COS_CACHE)?,
        cx.input(b.m, op, ops::RotaryEmbedding::SIN_CACHE)?,
    );
    let pos = cx.optional_input(b.m, op, ops::RotaryEmbedding::POSITION_IDS)?;
    let attrs = ops::RotaryEmbedding::of(b.m, op);
    let interleaved = attrs.interleaved() != 0;
    let (num_heads, rot_attr) = (attrs.num_heads(), attrs.rotary_embedding_dim());
    let dx = dims(b, x);
    let bounds = Bounds::new(b);
    let (head_v, heads3, rot_v) = head_sizes(b, op, &dx, num_heads, rot_attr)?;
    let elem = elem_of(b.m, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let two = b.const_index(2);
    let half_v = b.divui(rot_v, two);
    check_caches(b, op, [cos, sin], pos, (&dx, heads3), half_v)?;
    independent_nest_by_work(b, &bounds, &dx, PARALLEL_MIN_WORK, &mut |b, ivs| {
        // (batch, seq, d within the head) and the index of entry d' of this head.
        let (n, s, d) = if heads3 {
            let d = b.remui(ivs[2], head_v);
            (ivs[0], ivs[1], d)
        } else {
            (ivs[0], ivs[2], ivs[3])
        };
        let at = |b: &mut Builder<'_>, dd: ValueId| -> Vec<ValueId> {
            let mut idx = ivs.to_vec();
            let last = idx.len() - 1;
            idx[last] = if heads3 {
                let base = b.sub(ivs[last], d);
                b.add(base, dd)
            } else {
                dd
            };
            idx
        };
        let xv = b.load(x, ivs);
        // Pair (i, first, second): cache column and the two entries rotated.
        let (i, first, second, is_second) = if interleaved {
            let i = b.divui(d, two);
            let e = b.mul(i, two);
            let o = b.add(e, bounds.one);
            let odd = b.remui(d, two);
            let is_odd = b.cmp(Cmp::Ne, odd, bounds.zero);
            (i, e, o, is_odd)
        } else {
            let hi = b.cmp(Cmp::Ge, d, half_v);
            let dm = b.sub(d, half_v);
            let i = b.select(hi, dm, d);
            let o = b.add(i, half_v);
            (i, i, o, hi)
        };
        let in_rot = b.cmp(Cmp::Lt, d, rot_v);
        // Clamp so that pass-through entries never index past the caches.
        let i = b.select(in_rot, i, bounds.zero);
        let (first, second) = (b.select(in_rot, first, d), b.select(in_rot, second, d));
        let cache_idx = match pos {
            Some(p) => {
                let pv = b.load(p, &[n, s]);
                let pv = b.index_cast(pv, Type::Index);
                vec![pv, i]
            }
            None => vec![n, s, i],
        };
        let cv = b.load(cos, &cache_idx);
        let sv = b.load(sin, &cache_idx);
        let (cv, sv) = (scalar::fcast(b, cv, &elem), scalar::fcast(b, sv, &elem));
        let fi = at(b, first);
        let x1 = b.load(x, &fi);
        let si = at(b, second);
        let x2 = b.load(x, &si);
        // real = cos·x1 - sin·x2; imag = sin·x1 + cos·x2.
        let (a, c) = (b.mul(cv, x1), b.mul(sv, x2));
        let real = b.sub(a, c);
        let (a, c) = (b.mul(sv, x1), b.mul(cv, x2));
        let imag = b.add(a, c);
        let r = b.select(is_second, imag, real);
        let r = b.select(in_rot, r, xv);
        b.store(r, out, ivs);
    });
    Ok(vec![out])
}

/// The caches cover what is read: each is at least half the rotated size
/// wide; with position_ids every position is a row of both (checked
/// position by position, before any is read); without, they are `[B, S,
/// ·]` like the input.
fn check_caches(
    b: &mut Builder<'_>,
    op: OpId,
    caches: [ValueId; 2],
    pos: Option<ValueId>,
    (dx, heads3): (&[ValueId], bool),
    half: ValueId,
) -> Result<()> {
    let seq = if heads3 { dx[1] } else { dx[2] };
    let mut rows = None;
    for c in caches {
        let dc = dims(b, c);
        let Some(&width) = dc.last() else {
            return Err(op_error(b.m, op, "cos_cache and sin_cache need a rank"));
        };
        let msg = "cos_cache or sin_cache is narrower than half the rotated size";
        checks::compare(b, op, CmpI::Sle, half, width, msg)?;
        match pos {
            Some(_) if dc.len() == 2 => {
                rows = Some(rows.map_or(dc[0], |r| b.minui(r, dc[0])));
            }
            None if dc.len() == 3 => {
                let msg = "cos_cache or sin_cache is not [batch, sequence, ·] like the input";
                checks::equal(b, op, dc[0], dx[0], msg)?;
                checks::equal(b, op, dc[1], seq, msg)?;
            }
            _ => {
                return Err(op_error(
                    b.m,
                    op,
                    "cos_cache and sin_cache have the wrong rank",
                ))
            }
        }
    }
    if let (Some(p), Some(rows)) = (pos, rows) {
        let bounds = Bounds::new(b);
        let dp = dims(b, p);
        let msg = "position_ids is not [batch, sequence] like the input";
        match dp[..] {
            [pb, ps] => {
                checks::equal(b, op, pb, dx[0], msg)?;
                checks::equal(b, op, ps, seq, msg)?;
            }
            _ => return Err(op_error(b.m, op, msg)),
        }
        loop_nest(b, &bounds, &dp, &mut |b, ivs| {
            let v = b.load(p, ivs);
            let v = b.index_cast(v, Type::Index);
            let lo = b.cmpi(CmpI::Sge, v, bounds.zero);
            let hi = b.cmpi(CmpI::Slt, v, rows);
            let ok = b.andi(lo, hi);
            checks::assert(
                b,
                op,
                ok,
                "a position is not a row of cos_cache and sin_cache",
            );
        });
    }
    Ok(())
}
