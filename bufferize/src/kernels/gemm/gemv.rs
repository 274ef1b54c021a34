//! The product with one row (M = 1) and B a matrix of contiguous rows:
//! every element of B is used once, so packing it would only copy it. B
//! is read in place, `GEMV_VECS` vectors of columns at a time, each
//! column block a sum over K of a broadcast A element times B's row
//! segment, then the epilogue; threads take disjoint column blocks. Only
//! the block that reaches past N loads and stores under lane masks.

use super::micro::epilogue;
use super::{Params, Variant};
use ir::{Builder, ValueId};

/// Vectors of columns per block.
const GEMV_VECS: i64 = 4;

pub(super) fn gemv(b: &mut Builder<'_>, v: &Variant, p: &Params) {
    let vw = v.blocking.vw;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let width = b.const_index(vw * GEMV_VECS);
    let blocks = b.ceildivsi(p.n, width);
    let work = b.muli(p.n, p.k);
    let (parts, per) = super::split(b, work, blocks);
    b.scf_parallel_for(zero, parts, one, |b, t| {
        let first = b.muli(t, per);
        let next = b.addi(first, per);
        let last = b.minsi(next, blocks);
        b.scf_for(first, last, one, &[], |b, blk, _| {
            let j0 = b.muli(blk, width);
            let end = b.addi(j0, width);
            let whole = b.cmp(ir::builder::Cmp::Le, end, p.n);
            b.scf_if(
                whole,
                &[],
                &mut |b| {
                    block(b, v, p, j0, false);
                    Vec::new()
                },
                Some(&mut |b| {
                    block(b, v, p, j0, true);
                    Vec::new()
                }),
            );
            Vec::new()
        });
    });
}

/// Columns `j0 .. j0 + GEMV_VECS · vw` of C's one row; `edge`: some of
/// them lie past N.
fn block(b: &mut Builder<'_>, v: &Variant, p: &Params, j0: ValueId, edge: bool) {
    let vw = v.blocking.vw;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let vzero = {
        let z = b.zero(&v.elem);
        b.broadcast(z, vw)
    };
    let cols: Vec<_> = (0..GEMV_VECS)
        .map(|k| {
            let off = b.const_index(k * vw);
            b.addi(j0, off)
        })
        .collect();
    let masks: Vec<_> = cols
        .iter()
        .map(|&c| {
            let left = b.subi(p.n, c);
            b.create_mask(left, vw)
        })
        .collect();
    let rs = p.b_args.first().copied().unwrap_or(one);
    let inits = vec![vzero; cols.len()];
    let lp = b.scf_for(zero, p.k, one, &inits, |b, k, acc| {
        let at = b.muli(k, p.a_cs);
        let at = b.addi(p.a_off, at);
        let x = b.load(p.a, &[at]);
        let xb = b.broadcast(x, vw);
        let row = b.muli(k, rs);
        let row = b.addi(p.b_off, row);
        cols.iter()
            .zip(&masks)
            .zip(acc)
            .map(|((&c, &mask), &a)| {
                let at = b.addi(row, c);
                let bv = match edge {
                    true => b.masked_load(p.b, &[at], mask, vzero),
                    false => b.vload(p.b, &[at], vw),
                };
                b.vfma(xb, bv, a)
            })
            .collect()
    });
    let sums = b.m.results(lp).to_vec();
    for ((&c, &mask), &s) in cols.iter().zip(&masks).zip(&sums) {
        let y = epilogue(b, v, p, s, zero, c, mask);
        let at = b.addi(p.c_off, c);
        match edge {
            true => b.masked_store(y, p.c, &[at], mask),
            false => b.vstore(y, p.c, &[at]),
        }
    }
}
