//! RotaryEmbedding: the first `rotary_embedding_dim` entries of each head
//! are rotated pairwise by the cos/sin caches (halves, or even/odd entries
//! when `interleaved`); the rest pass through. Input `[B, H, S, D]`, or
//! `[B, S, H·D]` with `num_heads`; caches `[P, R/2]` indexed by
//! `position_ids [B, S]`, or `[B, S, R/2]` without them.

use super::scalar;
use super::{alloc_result, attr_int, elem_of, load_at, shape_of, store_at};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};

pub fn rotary(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let (cos, sin) = (cx.input(b.m, op, 1)?, cx.input(b.m, op, 2)?);
    let pos = cx.optional_input(b.m, op, 3)?;
    let sx = shape_of(b.m, x);
    // Head size D and, for 3-D input, the head count.
    let (head, heads3) = match sx.as_slice() {
        [_, _, _, d] => (*d, None),
        [_, _, hidden] => {
            let h = attr_int(b.m, op, "num_heads", 0);
            if h <= 0 || *hidden == DYN || hidden % h != 0 {
                return Err(op_error(
                    b.m,
                    op,
                    "3-D input needs num_heads dividing the hidden size",
                ));
            }
            (hidden / h, Some(h))
        }
        _ => return Err(op_error(b.m, op, "input must be 3-D or 4-D")),
    };
    if head == DYN {
        return Err(op_error(b.m, op, "needs a static head size"));
    }
    let rot = match attr_int(b.m, op, "rotary_embedding_dim", 0) {
        0 => head,
        r if r > 0 && r <= head && r % 2 == 0 => r,
        _ => return Err(op_error(b.m, op, "invalid rotary_embedding_dim")),
    };
    let half = rot / 2;
    let interleaved = attr_int(b.m, op, "interleaved", 0) != 0;
    let elem = elem_of(b.m, x);
    let dx = dims(b, x);
    let out = alloc_result(b, op, 0, &dx)?;
    let bounds = Bounds::new(b);
    let (head_v, half_v, rot_v) = (b.const_index(head), b.const_index(half), b.const_index(rot));
    let two = b.const_index(2);
    loop_nest(b, &bounds, &dx, &mut |b, ivs| {
        // (batch, seq, d within the head) and the index of entry d' of this head.
        let (n, s, d) = match heads3 {
            Some(_) => {
                let d = b.same("arith.remui", &[ivs[2], head_v]);
                (ivs[0], ivs[1], d)
            }
            None => (ivs[0], ivs[2], ivs[3]),
        };
        let at = |b: &mut Builder<'_>, dd: ValueId| -> Vec<ValueId> {
            let mut idx = ivs.to_vec();
            let last = idx.len() - 1;
            idx[last] = match heads3 {
                Some(_) => {
                    let base = loops::sub(b, ivs[last], d);
                    loops::add(b, base, dd)
                }
                None => dd,
            };
            idx
        };
        let xv = load_at(b, x, ivs);
        // Pair (i, first, second): cache column and the two entries rotated.
        let (i, first, second, is_second) = if interleaved {
            let i = b.same("arith.divui", &[d, two]);
            let e = loops::mul(b, i, two);
            let o = loops::add(b, e, bounds.one);
            let odd = b.same("arith.remui", &[d, two]);
            let is_odd = loops::cmp(b, "ne", odd, bounds.zero);
            (i, e, o, is_odd)
        } else {
            let hi = loops::cmp(b, "sge", d, half_v);
            let dm = loops::sub(b, d, half_v);
            let i = loops::select(b, hi, dm, d);
            let o = loops::add(b, i, half_v);
            (i, i, o, hi)
        };
        let in_rot = loops::cmp(b, "slt", d, rot_v);
        // Clamp so that pass-through entries never index past the caches.
        let i = loops::select(b, in_rot, i, bounds.zero);
        let (first, second) = (
            loops::select(b, in_rot, first, d),
            loops::select(b, in_rot, second, d),
        );
        let cache_idx = match pos {
            Some(p) => {
                let pv = load_at(b, p, &[n, s]);
                let pv = b.op1("arith.index_cast", &[pv], Type::Index, &[]);
                vec![pv, i]
            }
            None => vec![n, s, i],
        };
        let cv = load_at(b, cos, &cache_idx);
        let sv = load_at(b, sin, &cache_idx);
        let (cv, sv) = (scalar::fcast(b, cv, &elem), scalar::fcast(b, sv, &elem));
        let fi = at(b, first);
        let x1 = load_at(b, x, &fi);
        let si = at(b, second);
        let x2 = load_at(b, x, &si);
        // real = cos·x1 - sin·x2; imag = sin·x1 + cos·x2.
        let (a, c) = (scalar::mul(b, cv, x1), scalar::mul(b, sv, x2));
        let real = scalar::sub(b, a, c);
        let (a, c) = (scalar::mul(b, sv, x1), scalar::mul(b, cv, x2));
        let imag = scalar::add(b, a, c);
        let r = scalar::select(b, is_second, imag, real);
        let r = scalar::select(b, in_rot, r, xv);
        store_at(b, r, out, ivs);
    });
    Ok(vec![out])
}
